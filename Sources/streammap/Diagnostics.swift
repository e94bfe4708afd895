#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard error: one line per message, `streammap: ` first, control characters escaped so that a message never
/// drives the terminal (grep-friendly: `streammap: events.ndjson:42: /user/age: expected integer, found string "x"`).
/// Shares the terminal line with the progress display, which it clears before writing.
///
/// On a terminal each message is written at once; otherwise (a file, a pipe) messages are gathered and written
/// in blocks of 64 KiB and when the console goes away, as C's stdio does: a run that rejects many records would
/// otherwise spend a system call per message.
final class Console {
    let fd: Int32 = 2
    /// The progress line is on screen.
    var progressShown = false
    private let immediate = isatty(2) != 0
    private var pending: [UInt8] = []
    private static let blockSize = 1 << 16

    deinit { flush() }

    /// Writes what is gathered.
    func flush() {
        guard !pending.isEmpty else { return }
        _ = FileOutput(fd: fd, name: "<stderr>").writeAll(pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// `streammap: <message>`, escaped.
    func error(_ message: String) {
        clearProgress()
        guard !immediate else {
            write(Array(("streammap: " + Self.escape(message) + "\n").utf8))
            return
        }
        pending.append(contentsOf: Self.prefix)
        pending.append(contentsOf: Self.escape(message).utf8)
        pending.append(0x0A)
        if pending.count >= Self.blockSize { flush() }
    }

    private static let prefix = Array("streammap: ".utf8)

    /// A line written as is (the JSON of `--stats`).
    func line(_ text: String) {
        clearProgress()
        write(Array((text + "\n").utf8))
    }

    func clearProgress() {
        guard progressShown else { return }
        progressShown = false
        write(Array("\r\u{1B}[K".utf8))
    }

    func write(_ bytes: [UInt8]) {
        guard !immediate else {
            _ = FileOutput(fd: fd, name: "<stderr>").writeAll(bytes)
            return
        }
        pending += bytes
        if pending.count >= Self.blockSize { flush() }
    }

    /// Control characters (U+0000–U+001F, U+007F–U+009F) as `\u00XX`; a backslash stays as it is.
    static func escape(_ s: String) -> String {
        // Most messages have nothing to escape: U+007F–U+009F are 0x7F or 0xC2 0x80–0x9F in UTF-8.
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }
        }
        if plain ?? !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }) { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            if u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0) {
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(u)
            }
        }
        return out
    }

    /// `strerror(errno)` as a string.
    static func describe(errno code: Int32) -> String { String(cString: strerror(code)) }
}

/// An errno value as an error.
struct Errno: Error, Equatable {
    let code: Int32
    var description: String { Console.describe(errno: code) }
}
