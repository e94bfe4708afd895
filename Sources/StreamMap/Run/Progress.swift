/// The progress line on standard error: records, rejected, bytes read (of the total when the input size is known),
/// throughput and an ETA. Redrawn at most 4 times a second, first after a quarter second (quick runs show
/// nothing), cleared before every other message and at exit.
package struct ProgressDisplay {
    /// The total input size when every input is a regular file (ETA and percentage), else nil.
    package var totalBytes: Int?
    private var lastDraw: Double
    package let interval: Double
    package static let defaultInterval = 0.25

    package init(totalBytes: Int?, interval: Double = defaultInterval) {
        self.totalBytes = totalBytes
        self.interval = interval
        lastDraw = monotonicSeconds()
    }

    /// Redraws when the last redraw is old enough.
    package mutating func tick(_ stats: RunStats, console: Console) {
        let now = monotonicSeconds()
        guard now - lastDraw >= interval else { return }
        lastDraw = now
        console.write(Array(("\r\u{1B}[K" + Self.line(stats, totalBytes: totalBytes, elapsed: now - stats.started)).utf8))
        console.flush()  // on screen now, even when standard error is not a terminal (`--progress` forced on)
        console.progressShown = true
    }

    package static func line(_ stats: RunStats, totalBytes: Int?, elapsed: Double) -> String {
        let rate = elapsed > 0 ? Double(stats.bytesIn) / elapsed : 0
        var text = "streammap: \(grouped(stats.recordsIn)) record\(stats.recordsIn == 1 ? "" : "s")"
        if stats.recordsFiltered > 0 { text += " (\(grouped(stats.recordsFiltered)) filtered)" }
        if stats.recordsRejected > 0 { text += " (\(grouped(stats.recordsRejected)) rejected)" }
        text += ", \(size(stats.bytesIn))"
        if let totalBytes, totalBytes > 0 {
            let percent = min(100, stats.bytesIn * 100 / totalBytes)
            text += " of \(size(totalBytes)) (\(percent)%)"
        }
        text += ", \(fixed(rate / 1e6, 1)) MB/s"
        if let totalBytes, rate > 0, totalBytes > stats.bytesIn {
            text += ", ETA " + duration(Double(totalBytes - stats.bytesIn) / rate)
        }
        return text
    }

    /// 1234567 → "1,234,567".
    package static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }

    /// Bytes in decimal units: "512 B", "12.3 MB", "1.02 GB".
    package static func size(_ bytes: Int) -> String {
        let b = Double(bytes)
        if b < 1e3 { return "\(bytes) B" }
        if b < 1e6 { return fixed(b / 1e3, 1) + " kB" }
        if b < 1e9 { return fixed(b / 1e6, 1) + " MB" }
        return fixed(b / 1e9, 2) + " GB"
    }

    /// Seconds as "m:ss" or "h:mm:ss".
    package static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        if s >= 3600 { return "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" }
        return "\(s / 60):\(two(s % 60))"
    }
}
