import StreamMap

/// Compressed test inputs, made with the library's own compressor.
public enum Compressing {
    /// `text` as `compression` at level 1, in `pieces` members, frames or streams of about equal size, one after
    /// another (at least one, also for empty text).
    public static func compressed(_ text: [UInt8], _ compression: Compression, pieces: Int = 1) -> [UInt8] {
        var out: [UInt8] = []
        let step = max(1, text.count / max(1, pieces))
        var start = 0
        repeat {
            let end = pieces <= 1 ? text.count : min(text.count, start + step)
            let c = OutputCompressor(compression, level: 1)
            _ = text[start..<end].withUnsafeBytes { c.compress($0) { out.append(contentsOf: $0); return true } }
            c.finish { out.append(contentsOf: $0); return true }
            start = end
        } while start < text.count
        return out
    }
}
