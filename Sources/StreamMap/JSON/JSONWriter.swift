#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJSONScan

/// The one canonical compact JSON writer. Everything StreamMap emits goes through it, so both engines produce
/// the same bytes.
///
/// Rules (documented in README.md, "Output format"):
/// - no insignificant whitespace; object members in the value's order; numbers as their exact source text;
/// - strings are UTF-8 (Swift strings are always valid UTF-8; raw byte input must be validated by the caller);
/// - escaped: `"` → `\"`, `\` → `\\`, and the control characters U+0000–U+001F: `\b \f \n \r \t` for those five,
///   `\u00XX` with lowercase hex for the rest. Nothing else is escaped: `/`, DEL (U+007F), U+2028/U+2029 and all
///   non-ASCII characters are written as raw UTF-8.
public struct JSONWriter: Sendable, ByteAppending {
    /// The text written so far, as UTF-8. The writer keeps no other state: separators (`,` `:`) and brackets of
    /// hand-written containers are the caller's, through `writeRaw`.
    public var bytes: [UInt8] = []

    /// An empty writer with room for `capacity` bytes.
    public init(reservingCapacity capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// The compact text of a value.
    public static func string(_ value: JSONValue) -> String {
        var w = JSONWriter()
        w.write(value)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// The compact bytes of a value.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var w = JSONWriter()
        w.write(value)
        return w.bytes
    }

    /// Empties ``bytes``, keeping the buffer's capacity by default (one writer reused record after record).
    public mutating func removeAll(keepingCapacity: Bool = true) { bytes.removeAll(keepingCapacity: keepingCapacity) }

    /// Appends one byte as it is (`,`, `:`, `[`…): nothing is checked or escaped.
    @inline(__always) public mutating func writeRaw(_ byte: UInt8) { bytes.append(byte) }
    @inline(__always) mutating func append(_ byte: UInt8) { bytes.append(byte) }
    @inline(__always) mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
    /// Appends bytes as they are, such as JSON text already in canonical form: nothing is checked or escaped.
    public mutating func writeRaw(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
    /// Appends bytes as they are: nothing is checked or escaped.
    public mutating func writeRaw(_ raw: [UInt8]) { bytes.append(contentsOf: raw) }
    /// Writes `null`.
    public mutating func writeNull() { appendNull() }
    /// Writes `true` or `false`.
    public mutating func writeBool(_ b: Bool) { appendBool(b) }
    /// Writes the number's exact text.
    public mutating func writeNumber(_ n: JSONNumber) { bytes.append(contentsOf: n.text.utf8) }

    /// Writes `s` quoted and escaped (see the rules above).
    public mutating func writeString(_ s: String) { appendString(s) }

    /// Writes a quoted, escaped string from bytes that are already known to be valid UTF-8.
    public mutating func writeString(utf8 raw: UnsafeRawBufferPointer) { JSONEscaping.writeString(raw, to: &self) }

    /// Writes a string event's text: quoted as it is when `verbatim` (lexed in place, so already valid JSON string text), escaped otherwise.
    mutating func writeString(utf8 raw: UnsafeRawBufferPointer, verbatim: Bool) {
        JSONEscaping.writeString(raw, verbatim: verbatim, to: &self)
    }

    /// Writes a whole value without recursion (an explicit stack), so depth is bounded by memory, not the stack.
    public mutating func write(_ value: JSONValue) { appendValue(value) }
}

private enum ValueFrame {
    case array([JSONValue], next: Int)
    case object(JSONObject, next: Int)
}

extension ByteAppending {
    /// The canonical text of a whole value, without recursion (an explicit stack), so depth is bounded by memory,
    /// not the stack: what `JSONWriter.write` writes, for any byte destination.
    mutating func appendValue(_ value: JSONValue) {
        var stack: [ValueFrame] = []
        var current: JSONValue? = value
        while true {
            if let v = current {
                current = nil
                switch v {
                case .null: appendNull()
                case .bool(let b): appendBool(b)
                case .number(let n):
                    var text = n.text
                    text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
                case .string(let s): appendString(s)
                case .array(let a):
                    append(UInt8(ascii: "["))
                    stack.append(.array(a, next: 0))
                case .object(let o):
                    append(UInt8(ascii: "{"))
                    stack.append(.object(o, next: 0))
                }
            }
            guard let top = stack.popLast() else { return }
            switch top {
            case .array(let a, let next):
                if next == a.count {
                    append(UInt8(ascii: "]"))
                } else {
                    if next > 0 { append(UInt8(ascii: ",")) }
                    stack.append(.array(a, next: next + 1))
                    current = a[next]
                }
            case .object(let o, let next):
                if next == o.count {
                    append(UInt8(ascii: "}"))
                } else {
                    if next > 0 { append(UInt8(ascii: ",")) }
                    let entry = o.entries[next]
                    appendString(entry.key)
                    append(UInt8(ascii: ":"))
                    stack.append(.object(o, next: next + 1))
                    current = entry.value
                }
            }
        }
    }

    /// A string, quoted and escaped.
    mutating func appendString(_ s: String) {
        var s = s
        s.withUTF8 { JSONEscaping.writeString(UnsafeRawBufferPointer($0), to: &self) }
    }
}

/// Where `JSONEscaping` writes: the canonical writer, or a sink's scratch buffer.
protocol ByteAppending {
    mutating func append(_ byte: UInt8)
    mutating func append(_ raw: UnsafeRawBufferPointer)
    /// The first `count` bytes of `word`, little-end first (`null`, `true`, `false`), without allocating.
    mutating func appendLiteral(_ word: UInt64, count: Int)
    /// `"`, the bytes as they are, `"`.
    mutating func appendQuoted(_ raw: UnsafeRawBufferPointer)
    /// An integer's decimal digits, `-` first when negative.
    mutating func appendDecimal(_ n: Int64)
}

extension ByteAppending {
    mutating func appendQuoted(_ raw: UnsafeRawBufferPointer) {
        append(0x22)
        append(raw)
        append(0x22)
    }

    mutating func appendLiteral(_ word: UInt64, count: Int) {
        withUnsafeBytes(of: word.littleEndian) { append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    mutating func appendNull() { appendLiteral(0x6C6C_756E, count: 4) }

    mutating func appendDecimal(_ n: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var v = n.magnitude
            var i = 20
            repeat {
                i -= 1
                digits[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            } while v != 0
            if n < 0 { append(UInt8(ascii: "-")) }
            append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digits)[i...]))
        }
    }

    mutating func appendBool(_ b: Bool) {
        if b { appendLiteral(0x6575_7274, count: 4) } else { appendLiteral(0x65_736C_6166, count: 5) }
    }
}

/// The one string escaping of the canonical form (see `JSONWriter`), for any byte destination.
enum JSONEscaping {
    /// A quoted string: as it is when `verbatim` (text that needs no escaping: a string lexed in place from valid
    /// JSON holds no `"`, `\\` or control character), escaped otherwise.
    @inline(__always)
    static func writeString<Out: ByteAppending>(_ raw: UnsafeRawBufferPointer, verbatim: Bool, to out: inout Out) {
        guard verbatim else { return writeString(raw, to: &out) }
        out.appendQuoted(raw)
    }

    /// A quoted, escaped string from bytes that are already known to be valid UTF-8.
    @inline(__always)
    static func writeString<Out: ByteAppending>(_ raw: UnsafeRawBufferPointer, to out: inout Out) {
        let first = firstToEscape(raw, from: 0)
        guard first < raw.count else { return out.appendQuoted(raw) }
        writeEscaped(raw, from: first, to: &out)
    }

    /// The bytes of a block that `writeEscaped` fills before it appends them.
    private static let blockBytes = 1024

    /// `writeString` of a text with an escape at `first`: what it writes goes out through a block on the stack, so
    /// a text dense with escapes (a rejected record's JSON text, a `\"` every few bytes) costs an append per block
    /// rather than two per escape. From `first` on, the C escaper (`cjsonscan_escape_text`) writes 32 bytes at a
    /// time from a mask of those to escape.
    private static func writeEscaped<Out: ByteAppending>(_ raw: UnsafeRawBufferPointer, from first: Int, to out: inout Out) {
        let n = raw.count
        let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: blockBytes) { block in
            let p = block.baseAddress!
            p[0] = 0x22
            var o = 1
            // The bytes before `first`, which need no escape: in the block, or straight out when they are many.
            if first > blockBytes / 2 {
                out.append(UnsafeRawBufferPointer(start: p, count: o))
                out.append(UnsafeRawBufferPointer(start: base, count: first))
                o = 0
            } else if first > 0 {
                memcpy(p + o, base, first)
                o += first
            }
            var i = first
            while i < n {
                if blockBytes - o < escapeRoom {
                    out.append(UnsafeRawBufferPointer(start: p, count: o))
                    o = 0
                }
                var consumed = 0
                o += cjsonscan_escape_text(base + i, n - i, p + o, blockBytes - o, &consumed)
                i += consumed
            }
            p[o] = 0x22  // (the escaper leaves at least 32 bytes of room)
            out.append(UnsafeRawBufferPointer(start: p, count: o + 1))
        }
    }

    /// The room `cjsonscan_escape_text` needs to go on (a chunk's worst case and its copies' overrun).
    static let escapeRoom = 224

    /// The index of the first byte at or after `i` that needs escaping, or `raw.count`: 8 bytes at a time, then
    /// byte by byte.
    @inline(__always)
    static func firstToEscape(_ raw: UnsafeRawBufferPointer, from start: Int) -> Int {
        let n = raw.count
        var i = start
        while i + 8 <= n {
            let mask = escapeMask(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if mask != 0 { return i + mask.trailingZeroBitCount >> 3 }
            i += 8
        }
        guard i < n else { return n }
        while i < n {
            let b = raw[i]
            if b < 0x20 || b == 0x22 || b == 0x5C { return i }
            i += 1
        }
        return n
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte that is a control character, `"` or `\\`. The borrows can mark a byte above a true
    /// one, never below it: the lowest mark is exact.
    @inline(__always)
    private static func escapeMask(_ w: UInt64) -> UInt64 {
        let control = (w &- ones &* 0x20) & ~w
        let q = w ^ (ones &* 0x22)
        let bs = w ^ (ones &* 0x5C)
        return (control | ((q &- ones) & ~q) | ((bs &- ones) & ~bs)) & highs
    }
}

/// A growable byte buffer without copy-on-write checks, for writers that append in small pieces many times over
/// (an engine's partial results, copied text, the command line's messages).
/// Its owner frees it (`deallocate`).
package struct ByteBuffer: ByteAppending {
    package private(set) var base: UnsafeMutablePointer<UInt8>
    package private(set) var count = 0
    private var capacity: Int

    package init(capacity: Int = 4096) {
        self.capacity = Swift.max(capacity, 16)
        base = Self.allocate(self.capacity)
    }

    package func deallocate() { free(base) }

    /// The buffer's memory comes from `malloc` and grows by `realloc`: a large buffer then grows by remapping its
    /// pages, not by copying them into a second buffer while the first is still held.
    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<UInt8> {
        guard let memory = malloc(capacity) else { fatalError("out of memory (\(capacity) bytes)") }
        return memory.assumingMemoryBound(to: UInt8.self)
    }

    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    package mutating func removeAll() { count = 0 }

    mutating func removeLast(_ n: Int) { count -= n }

    /// Empty, and back to `capacity` if it grew far beyond it (a huge value once should not hold memory forever).
    mutating func reset(keeping limit: Int) {
        count = 0
        guard capacity > limit else { return }
        free(base)
        base = Self.allocate(limit)
        capacity = limit
    }

    /// Room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if _slowPath(count + n > capacity) { grow(n) }
    }

    @inline(never)
    private mutating func grow(_ n: Int) {
        var newCapacity = capacity * 2
        while newCapacity < count + n { newCapacity *= 2 }
        guard let grown = realloc(base, newCapacity) else { fatalError("out of memory (\(newCapacity) bytes)") }
        base = grown.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    /// Where the next byte goes. Writing there needs room (`reserve`); setting it commits what was written.
    var end: UnsafeMutablePointer<UInt8> {
        @inline(__always) get { base + count }
        @inline(__always) set { count = newValue - base }
    }

    /// `"`, the text escaped (see `JSONEscaping`), `"`: the bytes before the first escape copied whole, the rest
    /// escaped by the C escaper (`cjsonscan_escape_text`) straight into the buffer.
    mutating func appendEscaped(_ raw: UnsafeRawBufferPointer) {
        let n = raw.count
        var i = JSONEscaping.firstToEscape(raw, from: 0)
        reserve(i + 2)
        base[count] = 0x22
        count += 1
        Self.copy(UnsafeRawBufferPointer(rebasing: raw[..<i]), to: UnsafeMutableRawPointer(base + count))
        count += i
        if i < n {
            let text = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            while i < n {
                // Room for the rest if escapes are few (it stops early otherwise) and for a chunk at worst.
                reserve(n - i + JSONEscaping.escapeRoom)
                var consumed = 0
                count += cjsonscan_escape_text(text + i, n - i, base + count, capacity - count, &consumed)
                i += consumed
            }
        }
        reserve(1)
        base[count] = 0x22
        count += 1
    }

    @inline(__always)
    package mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    package mutating func append(_ raw: UnsafeRawBufferPointer) {
        reserve(raw.count)
        Self.copy(raw, to: UnsafeMutableRawPointer(base + count))
        count += raw.count
    }

    /// `n` in decimal, as `String(n)` writes it.
    package mutating func appendDecimal(_ n: Int64) {
        reserve(20)
        if n < 0 { append(UInt8(ascii: "-")) }
        var v = n.magnitude
        var digits = 1
        var scale: UInt64 = 10
        while digits < 20 && v >= scale { digits += 1; scale = scale &* 10 }
        var p = base + count + digits
        count += digits
        repeat {
            p -= 1
            p.pointee = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
        } while v > 0
    }

    /// One check for room instead of three.
    @inline(__always)
    mutating func appendQuoted(_ raw: UnsafeRawBufferPointer) {
        reserve(raw.count + 2)
        let start = UnsafeMutableRawPointer(base + count)
        start.storeBytes(of: 0x22, as: UInt8.self)
        Self.copy(raw, to: start + 1)
        (start + 1 + raw.count).storeBytes(of: 0x22, as: UInt8.self)
        count += raw.count + 2
    }

    /// Copies `raw` to `destination`. Most pieces of JSON text are short: up to 16 bytes move as two overlapping
    /// words (or half-words, or single bytes) that cover exactly the piece, up to 64 as 16-byte blocks (the last
    /// one overlapping), which is much cheaper than a call to `memcpy`; longer ones go to `memcpy`. Nothing is
    /// read or written outside the piece.
    @inline(__always)
    static func copy(_ raw: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) {
        guard let source = raw.baseAddress else { return }
        let n = raw.count
        switch n {
        case 8...16:
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            destination.storeBytes(of: head, as: UInt64.self)
            destination.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
        case 4..<8:
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            destination.storeBytes(of: head, as: UInt32.self)
            destination.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
        case 1..<4:
            destination.storeBytes(of: source.load(as: UInt8.self), as: UInt8.self)
            destination.storeBytes(of: source.load(fromByteOffset: n >> 1, as: UInt8.self), toByteOffset: n >> 1, as: UInt8.self)
            destination.storeBytes(of: source.load(fromByteOffset: n - 1, as: UInt8.self), toByteOffset: n - 1, as: UInt8.self)
        case 0:
            return
        case 17...64:
            var i = 0
            repeat {
                destination.storeBytes(of: source.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self), toByteOffset: i, as: SIMD16<UInt8>.self)
                i += 16
            } while i + 16 < n
            destination.storeBytes(of: source.loadUnaligned(fromByteOffset: n - 16, as: SIMD16<UInt8>.self), toByteOffset: n - 16, as: SIMD16<UInt8>.self)
        default:
            destination.copyMemory(from: source, byteCount: n)
        }
    }

    /// One unaligned 8-byte store, then `count` advances by the literal's length.
    @inline(__always)
    mutating func appendLiteral(_ word: UInt64, count n: Int) {
        reserve(8)
        UnsafeMutableRawPointer(base + count).storeBytes(of: word.littleEndian, as: UInt64.self)
        count += n
    }
}

/// The canonical writer's calls on a byte buffer (a sink's result is written as `JSONWriter` would write it).
extension ByteBuffer {
    @inline(__always) mutating func writeRaw(_ byte: UInt8) { append(byte) }
    @inline(__always) mutating func writeRaw(_ raw: UnsafeRawBufferPointer) { append(raw) }
    mutating func writeNull() { appendNull() }
    mutating func writeBool(_ b: Bool) { appendBool(b) }
    /// A string event's text: quoted as it is when `verbatim` (lexed in place, so already valid JSON string text), escaped otherwise.
    @inline(__always)
    mutating func writeString(utf8 raw: UnsafeRawBufferPointer, verbatim: Bool) {
        if verbatim { appendQuoted(raw) } else { appendEscaped(raw) }
    }
    mutating func write(_ value: JSONValue) { appendValue(value) }
}
