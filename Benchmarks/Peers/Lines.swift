// Shared by the Swift peers (compiled together: swiftc -O -parse-as-library Lines.swift MapTweets….swift).
// Reads NDJSON in 1 MiB blocks (memory stays flat), hands each non-empty line over with its 1-based number,
// and buffers standard output.
import Foundation

func forEachLine(path: String, _ body: (UnsafeRawBufferPointer, Int) -> Void) {
    guard let file = fopen(path, "rb") else {
        perror(path)
        exit(3)
    }
    defer { fclose(file) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var length = 0
    var lineNumber = 0
    while true {
        if length == buffer.count { buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count)) }
        let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress! + length, 1, $0.count - length, file) }
        length += n
        var start = 0
        buffer.withUnsafeBytes { raw in
            while start < length, let nl = raw[start..<length].firstIndex(of: 0x0A) {
                lineNumber += 1
                var end = nl
                if end > start && raw[end - 1] == 0x0D { end -= 1 }
                if end > start { body(UnsafeRawBufferPointer(rebasing: raw[start..<end]), lineNumber) }
                start = nl + 1
            }
            if n == 0 && start < length {
                lineNumber += 1
                body(UnsafeRawBufferPointer(rebasing: raw[start..<length]), lineNumber)
                start = length
            }
        }
        if n == 0 { break }
        buffer.withUnsafeMutableBytes { raw in
            if start > 0 { raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: length - start) }
        }
        length -= start
    }
}

struct Output {
    private var buffer: [UInt8] = []
    init() { buffer.reserveCapacity(1 << 16) }
    mutating func writeLine(_ data: Data) {
        buffer.append(contentsOf: data)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }
    mutating func flush() {
        buffer.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, stdout) }
        buffer.removeAll(keepingCapacity: true)
        fflush(stdout)
    }
}

func reportReject(_ line: Int) { fputs("\(line)\n", stderr) }

/// Twitter's created_at ("Sun Aug 31 00:29:15 +0000 2014"), as users write it with Foundation.
func twitterDateFormatter() -> DateFormatter {
    let f = DateFormatter()
    f.locale = Locale(identifier: "en_US_POSIX")
    f.timeZone = TimeZone(secondsFromGMT: 0)
    f.dateFormat = "EEE MMM dd HH:mm:ss Z yyyy"
    return f
}

func epochMilliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
