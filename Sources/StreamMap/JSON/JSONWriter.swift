/// The one canonical compact JSON writer. Everything StreamMap emits goes through it, so both engines produce
/// the same bytes.
///
/// Rules (documented in README.md, "Output format"):
/// - no insignificant whitespace; object members in the value's order; numbers as their exact source text;
/// - strings are UTF-8 (Swift strings are always valid UTF-8; raw byte input must be validated by the caller);
/// - escaped: `"` → `\"`, `\` → `\\`, and the control characters U+0000–U+001F: `\b \f \n \r \t` for those five,
///   `\u00XX` with lowercase hex for the rest. Nothing else is escaped: `/`, DEL (U+007F), U+2028/U+2029 and all
///   non-ASCII characters are written as raw UTF-8.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8] = []

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

    public mutating func removeAll(keepingCapacity: Bool = true) { bytes.removeAll(keepingCapacity: keepingCapacity) }

    @inline(__always) public mutating func writeRaw(_ byte: UInt8) { bytes.append(byte) }
    public mutating func writeRaw(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
    public mutating func writeRaw(_ raw: [UInt8]) { bytes.append(contentsOf: raw) }
    public mutating func writeNull() { writeLiteral(0x6C6C_756E, count: 4) }
    public mutating func writeBool(_ b: Bool) {
        if b { writeLiteral(0x6575_7274, count: 4) } else { writeLiteral(0x65_736C_6166, count: 5) }
    }

    /// Appends the first `count` bytes of `word`, little-end first (`null`, `true`, `false`) without allocating.
    @inline(__always)
    private mutating func writeLiteral(_ word: UInt64, count: Int) {
        withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
    public mutating func writeNumber(_ n: JSONNumber) { bytes.append(contentsOf: n.text.utf8) }

    public mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { writeString(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Writes a quoted, escaped string from bytes that are already known to be valid UTF-8.
    public mutating func writeString(utf8 raw: UnsafeRawBufferPointer) {
        bytes.append(0x22)
        var runStart = 0
        var i = 0
        let n = raw.count
        while i < n {
            // 8 bytes at a time while none needs escaping.
            while i + 8 <= n && !Self.needsEscape(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
            guard i < n else { break }
            let b = raw[i]
            if b < 0x20 || b == 0x22 || b == 0x5C {
                if runStart < i { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[runStart..<i])) }
                appendEscape(b)
                runStart = i + 1
            }
            i += 1
        }
        if runStart < n { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[runStart...])) }
        bytes.append(0x22)
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of the word is a control character, `"` or `\` (SWAR: exact for "any", no false negatives).
    @inline(__always)
    private static func needsEscape(_ w: UInt64) -> Bool {
        let control = (w &- ones &* 0x20) & ~w & highs
        let quote = ((w ^ (ones &* 0x22)) &- ones) & ~(w ^ (ones &* 0x22)) & highs
        let backslash = ((w ^ (ones &* 0x5C)) &- ones) & ~(w ^ (ones &* 0x5C)) & highs
        return control | quote | backslash != 0
    }

    private mutating func appendEscape(_ b: UInt8) {
        bytes.append(0x5C)
        switch b {
        case 0x22: bytes.append(0x22)
        case 0x5C: bytes.append(0x5C)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
        }
    }

    private enum Frame {
        case array([JSONValue], next: Int)
        case object(JSONObject, next: Int)
    }

    /// Writes a whole value without recursion (an explicit stack), so depth is bounded by memory, not the stack.
    public mutating func write(_ value: JSONValue) {
        var stack: [Frame] = []
        var current: JSONValue? = value
        while true {
            if let v = current {
                current = nil
                switch v {
                case .null: writeNull()
                case .bool(let b): writeBool(b)
                case .number(let n): writeNumber(n)
                case .string(let s): writeString(s)
                case .array(let a):
                    bytes.append(UInt8(ascii: "["))
                    stack.append(.array(a, next: 0))
                case .object(let o):
                    bytes.append(UInt8(ascii: "{"))
                    stack.append(.object(o, next: 0))
                }
            }
            guard let top = stack.popLast() else { return }
            switch top {
            case .array(let a, let next):
                if next == a.count {
                    bytes.append(UInt8(ascii: "]"))
                } else {
                    if next > 0 { bytes.append(UInt8(ascii: ",")) }
                    stack.append(.array(a, next: next + 1))
                    current = a[next]
                }
            case .object(let o, let next):
                if next == o.count {
                    bytes.append(UInt8(ascii: "}"))
                } else {
                    if next > 0 { bytes.append(UInt8(ascii: ",")) }
                    let entry = o.entries[next]
                    writeString(entry.key)
                    bytes.append(UInt8(ascii: ":"))
                    stack.append(.object(o, next: next + 1))
                    current = entry.value
                }
            }
        }
    }
}
