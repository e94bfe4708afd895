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
/// otherwise spend a system call per message. One thread writes to it at a time, so its state is not checked for
/// exclusive access at run time.
package final class Console {
    package let fd: Int32

    /// Standard error, or another descriptor (tests); `colour` decided by the environment unless given.
    package init(fd: Int32 = 2, colour: Bool? = nil) {
        self.fd = fd
        immediate = isatty(fd) != 0
        self.colour = colour ?? Console.usesColour(environment: { getenv($0).map { String(cString: $0) } }, terminal: isatty(fd) != 0)
    }
    /// The progress line is on screen.
    @exclusivity(unchecked) package var progressShown = false
    private let immediate: Bool
    /// Record messages show their location in bold and their label (`warning: `, `invalid JSON: `) in colour.
    package let colour: Bool

    /// Colour on a terminal, never when `NO_COLOR` is set (no-color.org), and also off a terminal when
    /// `CLICOLOR_FORCE` is set (to anything but 0).
    package static func usesColour(environment: (String) -> String?, terminal: Bool) -> Bool {
        if let noColour = environment("NO_COLOR"), !noColour.isEmpty { return false }
        if let force = environment("CLICOLOR_FORCE"), !force.isEmpty, force != "0" { return true }
        return terminal
    }
    /// What is gathered (a buffer without an array's checks: a record message is many small pieces).
    @exclusivity(unchecked) private var pending = ByteBuffer(capacity: blockSize + 4096)
    private static let blockSize = 1 << 16

    deinit {
        flush()
        pending.deallocate()
        for i in 0..<endCount { ends[i].bytes.deallocate() }
        ends.deinitialize(count: endCount)
        ends.deallocate()
    }

    /// Writes what is gathered.
    package func flush() {
        guard pending.count > 0 else { return }
        _ = FileOutput(fd: fd, name: "<stderr>").writeAll(pending.bytes)
        pending.removeAll()
    }

    /// `streammap: <message>`, escaped (`appendEscaped`).
    package func error(_ message: String) {
        clearProgress()
        Self.append(Self.prefix, to: &pending)
        var m = message
        m.withUTF8 { Self.appendEscaped($0, to: &pending) }
        pending.append(0x0A)
        if immediate || pending.count >= Self.blockSize { flush() }
    }

    private static let prefix = Array("streammap: ".utf8)
    // SGR sequences: bold, bold yellow, bold red, reset.
    private static let bold: [UInt8] = [0x1B] + Array("[1m".utf8)
    private static let yellow: [UInt8] = [0x1B] + Array("[1;33m".utf8)
    private static let red: [UInt8] = [0x1B] + Array("[1;31m".utf8)
    private static let plain: [UInt8] = [0x1B] + Array("[0m".utf8)

    @inline(__always)
    private static func append(_ bytes: [UInt8], to out: inout ByteBuffer) {
        bytes.withUnsafeBytes { out.append($0) }
    }

    /// The last input named in a record message: its name, and the start of its lines (`streammap: `, bold on a
    /// terminal, the name escaped, `:`) — a run names the same input for thousands of messages.
    @exclusivity(unchecked) private var nameCache: (name: String, head: [UInt8]) = ("", [])

    /// The end of a record message as last written at each place of a record's list of errors: what it was written
    /// from, and its bytes (`/pointer: `, the label, the message escaped, the newline). A run that rejects many
    /// records mostly repeats their errors — the same field absent, record after record — so most ends are copied,
    /// not escaped again. Found by the error itself when it is a copy of the one kept (`MapError.sameError`: no
    /// reference counted), else by its path and message compared with the kept one's (the label by its address: a
    /// miss at worst).
    private struct WrittenEnd {
        var error: MapError
        var label: UnsafePointer<UInt8>
        var bytes: ByteBuffer
    }
    /// The kept ends, by place (`keptEnds` of room; the first `endCount` made).
    private let ends = UnsafeMutablePointer<WrittenEnd>.allocate(capacity: Console.keptEnds)
    @exclusivity(unchecked) private var endCount = 0
    /// Places of a record's list whose ends are kept (the rest are written each time).
    private static let keptEnds = 32

    /// The messages about a rejected record, one line for each fatal error of `failure` in order —
    /// `streammap: NAME:LINE: /pointer: LABELmessage`, without `/pointer: ` at the root, the label `invalid JSON: `
    /// for a syntax error and none for the others: the same bytes as
    /// `error("\(name):\(line): \(source.pointer): \(label)\(message)")` for each, written straight into the buffer
    /// (the pointer, the line's digits and the escaping done on bytes, no string built), because a run can report
    /// millions of them. The location is written once; the end of a line is copied from the last one written at the
    /// same place of a record's list when it says the same (`WrittenEnd`). The errors are read where they are
    /// (`RecordFailure.listedErrors`), not copied.
    package func recordMessages(input name: String, line: Int, failure: RecordFailure) {
        clearProgress()
        var place = RecordMessagePlace()
        if let lead = failure.leadingError {
            withUnsafePointer(to: lead) { appendRecordMessage($0, label: nil, at: &place, input: name, line: line) }
        }
        failure.listedErrors.withUnsafeBufferPointer { errors in
            for i in errors.indices where errors[i].isFatal {
                appendRecordMessage(errors.baseAddress! + i, label: nil, at: &place, input: name, line: line)
            }
        }
        if immediate || pending.count >= Self.blockSize { flush() }
    }

    /// `recordMessages` for a mapped record's warnings: every one, labelled `warning: `.
    package func recordMessages(input name: String, line: Int, warnings: [MapError]) {
        clearProgress()
        var place = RecordMessagePlace()
        warnings.withUnsafeBufferPointer { warnings in
            for i in warnings.indices {
                appendRecordMessage(warnings.baseAddress! + i, label: "warning: ", at: &place, input: name, line: line)
            }
        }
        if immediate || pending.count >= Self.blockSize { flush() }
    }

    /// Where a record's next message goes: its place in the record's list, and the record's `NAME:LINE: ` where it
    /// was first written in `pending` (not flushed within a record, so still there for the next lines).
    private struct RecordMessagePlace {
        var index = 0
        var head = 0..<0
    }

    /// One line of a record's messages: `error` at `place`, labelled `label` (nil: `invalid JSON: ` for a syntax
    /// error, none for the others). `error` is read where it is: an error passed by value is copied on its way.
    private func appendRecordMessage(_ error: UnsafePointer<MapError>, label: StaticString?, at place: inout RecordMessagePlace,
                                     input name: String, line: Int) {
        if place.index == 0 {
            let start = pending.count
            appendHead(input: name, line: line)
            place.head = start..<pending.count
        } else {
            pending.reserve(place.head.count)
            pending.end.update(from: pending.base + place.head.lowerBound, count: place.head.count)
            pending.end += place.head.count
        }
        let label = label ?? (error.pointee.code == .syntax ? "invalid JSON: " : "")
        if place.index < Self.keptEnds {
            appendKeptEnd(place.index, error: error, label: label)
        } else {
            Self.appendRecordMessageEnd(to: &pending, source: error.pointee.sourcePath, label: label,
                                        message: error.pointee.message, colour: colour)
        }
        place.index += 1
    }

    /// `streammap: NAME:LINE: `, bold on a terminal.
    private func appendHead(input name: String, line: Int) {
        if name != nameCache.name {
            var head = ByteBuffer(capacity: name.utf8.count + 32)
            Self.append(Self.prefix, to: &head)
            if colour { Self.append(Self.bold, to: &head) }
            var n = name
            n.withUTF8 { Self.appendEscaped($0, to: &head) }
            head.append(UInt8(ascii: ":"))
            nameCache = (name, Array(head.bytes))
            head.deallocate()
        }
        Self.append(nameCache.head, to: &pending)
        pending.appendDecimal(Int64(line))
        pending.append(UInt8(ascii: ":"))
        if colour { Self.append(Self.plain, to: &pending) }
        pending.append(UInt8(ascii: " "))
    }

    /// The end of a record message at `place`: the last one there copied if it was written from the same error, or
    /// from one with the same path and message, with the same label; else written and kept.
    private func appendKeptEnd(_ place: Int, error: UnsafePointer<MapError>, label: StaticString) {
        let kept = ends + place
        if place < endCount, kept.pointee.label == label.utf8Start {
            let keptError = UnsafeRawPointer(kept).advanced(by: Self.errorOffset).assumingMemoryBound(to: MapError.self)
            if MapError.sameError(keptError, error) || Self.sameEnd(keptError.pointee, error.pointee) {
                pending.append(kept.pointee.bytes.bytes)
                return
            }
        }
        let start = pending.count
        Self.appendRecordMessageEnd(to: &pending, source: error.pointee.sourcePath, label: label,
                                    message: error.pointee.message, colour: colour)
        let written = UnsafeRawBufferPointer(rebasing: pending.bytes[start...])
        if place < endCount {
            kept.pointee.error = error.pointee
            kept.pointee.label = label.utf8Start
            kept.pointee.bytes.reset(keeping: 1024)  // (what a long message made it hold goes with the next one)
            kept.pointee.bytes.append(written)
        } else if place == endCount {  // (places come in order from 0: a new one is the next)
            var bytes = ByteBuffer(capacity: written.count)
            bytes.append(written)
            kept.initialize(to: WrittenEnd(error: error.pointee, label: label.utf8Start, bytes: bytes))
            endCount += 1
        }
    }

    /// Whether two errors' ends say the same: the same path and the same message, byte for byte.
    @inline(never)
    private static func sameEnd(_ a: MapError, _ b: MapError) -> Bool {
        a.sourcePath == b.sourcePath && bytesEqual(a.message, b.message)
    }

    /// Where a `WrittenEnd` holds its error.
    private static let errorOffset = MemoryLayout<WrittenEnd>.offset(of: \.error)!

    /// The end of a record message: `/pointer: ` (none at the root), the label, the message escaped, a newline.
    private static func appendRecordMessageEnd(to out: inout ByteBuffer, source: JSONPath, label: StaticString, message: String,
                                               colour: Bool) {
        if !source.isRoot {
            source.components.withUnsafeBufferPointer { steps in
                for i in steps.indices {
                    out.append(UInt8(ascii: "/"))
                    switch steps[i] {
                    case .index(let i): out.appendDecimal(Int64(i))
                    case .key(let k): appendEscaped(k, to: &out, pointerStep: true)
                    }
                }
            }
            out.append(UInt8(ascii: ":"))
            out.append(UInt8(ascii: " "))
        }
        if colour && label.utf8CodeUnitCount > 0 {
            append(label.utf8Start.pointee == UInt8(ascii: "w") ? yellow : red, to: &out)
            label.withUTF8Buffer { out.append(UnsafeRawBufferPointer($0)) }
            append(plain, to: &out)
        } else {
            label.withUTF8Buffer { out.append(UnsafeRawBufferPointer($0)) }
        }
        appendEscaped(message, to: &out)
        out.append(0x0A)
    }

    /// `appendEscaped` of a string's UTF-8, read in place when the string holds it contiguously (a native string
    /// does), without copying the string to make it so.
    @inline(__always)
    private static func appendEscaped(_ text: String, to out: inout ByteBuffer, pointerStep: Bool = false) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { appendEscaped($0, to: &out, pointerStep: pointerStep) }
        if done == nil {
            var copy = text
            copy.withUTF8 { appendEscaped($0, to: &out, pointerStep: pointerStep) }
        }
    }

    /// `bytes` (valid UTF-8) with control characters escaped, so that a message never drives the terminal:
    /// U+0000–U+001F and U+007F–U+009F as `\u00XX` (a backslash stays as it is).
    /// As a JSON Pointer step (`pointerStep`), also `~` → `~0` and `/` → `~1` (RFC 6901).
    package static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout ByteBuffer, pointerStep: Bool = false) {
        var runStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            i = firstToEscape(bytes, from: i, pointerStep: pointerStep)
            guard i < n else { break }
            let b = bytes[i]
            let width: Int
            if b < 0x20 || b == 0x7F {
                width = 1
            } else if b == 0xC2 && i + 1 < n && bytes[i + 1] < 0xA0 {  // U+0080–U+009F
                width = 2
            } else if pointerStep && (b == UInt8(ascii: "~") || b == UInt8(ascii: "/")) {
                width = 0
            } else {
                i += 1
                continue
            }
            if runStart < i { out.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[runStart..<i])) }
            if width == 0 {
                out.append(UInt8(ascii: "~"))
                out.append(b == UInt8(ascii: "~") ? UInt8(ascii: "0") : UInt8(ascii: "1"))
                i += 1
            } else {
                let value = width == 1 ? b : bytes[i + 1]
                let hex: StaticString = "0123456789abcdef"
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "u"))
                out.append(UInt8(ascii: "0"))
                out.append(UInt8(ascii: "0"))
                out.append(hex.utf8Start[Int(value >> 4)])
                out.append(hex.utf8Start[Int(value & 0xF)])
                i += width
            }
            runStart = i
        }
        if runStart < n { out.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[runStart..<n])) }
    }

    /// The index of the first byte at or after `start` that `appendEscaped` may have to rewrite (a control
    /// character, DEL, 0xC2 — the lead byte of U+0080–U+00BF —, and `~` `/` for a pointer step), or `bytes.count`:
    /// 8 bytes at a time, the last few in a word of their own. Most text has none.
    private static func firstToEscape(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, pointerStep: Bool) -> Int {
        let n = bytes.count
        var i = start
        if let base = bytes.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            // The high bit of each byte equal to `c` (exact for the lowest marked byte: borrows only go upwards).
            @inline(__always) func equal(_ w: UInt64, _ c: UInt8) -> UInt64 {
                let x = w ^ (ones &* UInt64(c))
                return (x &- ones) & ~x
            }
            while i + 8 <= n {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                var mask = ((w &- ones &* 0x20) & ~w) | equal(w, 0x7F) | equal(w, 0xC2)
                if pointerStep { mask |= equal(w, UInt8(ascii: "~")) | equal(w, UInt8(ascii: "/")) }
                mask &= highs
                if mask != 0 { return i + mask.trailingZeroBitCount >> 3 }
                i += 8
            }
            if i < n {
                // The last 1–7 bytes, in a word padded with spaces (which nothing escapes).
                var w: UInt64 = ones &* 0x20
                withUnsafeMutableBytes(of: &w) { $0.baseAddress!.copyMemory(from: base + i, byteCount: n - i) }
                var mask = ((w &- ones &* 0x20) & ~w) | equal(w, 0x7F) | equal(w, 0xC2)
                if pointerStep { mask |= equal(w, UInt8(ascii: "~")) | equal(w, UInt8(ascii: "/")) }
                mask &= highs
                if mask != 0 { return i + mask.trailingZeroBitCount >> 3 }
            }
        }
        return n
    }

    /// A line written as is (the JSON of `--stats`).
    package func line(_ text: String) {
        clearProgress()
        write(Array((text + "\n").utf8))
    }

    package func clearProgress() {
        guard progressShown else { return }
        progressShown = false
        write(Array("\r\u{1B}[K".utf8))
    }

    package func write(_ bytes: [UInt8]) {
        guard !immediate else {
            _ = FileOutput(fd: fd, name: "<stderr>").writeAll(bytes)
            return
        }
        Self.append(bytes, to: &pending)
        if pending.count >= Self.blockSize { flush() }
    }

    /// `strerror(errno)` as a string.
    package static func describe(errno code: Int32) -> String { String(cString: strerror(code)) }
}

/// An errno value as an error.
package struct Errno: Error, Equatable {
    package let code: Int32
    package var description: String { Console.describe(errno: code) }
}
