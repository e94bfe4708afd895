/// Corrects yajl 2.1 where it is laxer than RFC 8259, before yajl sees the bytes (README, "Robustness"):
///
/// - `\f` (U+000C) and `\v` (U+000B) outside strings: yajl takes them for whitespace; JSON allows only space, tab,
///   LF and CR. Rejected.
/// - `\u` escapes that are lone or mismatched UTF-16 surrogates (`\uD800`, `\uDC00`, `\uD888\u1234`): yajl turns
///   them into `?`, invalid UTF-8 or a wrong character without a word. Rejected: a record is never changed
///   silently.
///
/// Invalid UTF-8 in strings is rejected by the strict validator the engines apply to every string and key.
/// The scanner keeps its state across chunks, so the verdict does not depend on how input is split.
struct StrictJSONScanner {
    struct Violation: Error {
        var offset: Int
        var message: String
    }

    private enum Escape {
        case none
        case backslash
        case unicode(digits: Int, value: UInt32, start: Int)
    }

    private var inString = false
    private var escape = Escape.none
    /// A high surrogate escape waiting for its low half: where it started, and its value.
    private var pendingHigh: (start: Int, value: UInt32)?
    /// Absolute offset of the chunk's first byte.
    private var base = 0

    /// The first violation in `chunk` (offset within the chunk and message), advancing the state past the chunk.
    mutating func scan(_ chunk: UnsafeRawBufferPointer) -> (index: Int, message: String)? {
        defer { base += chunk.count }
        var i = 0
        let n = chunk.count
        while i < n {
            let b = chunk[i]
            if !inString {
                if b == UInt8(ascii: "\"") {
                    inString = true
                } else if b == 0x0B || b == 0x0C {
                    return (i, b == 0x0C ? "form feed (\\f) is not JSON whitespace" : "vertical tab (\\v) is not JSON whitespace")
                }
                i += 1
                continue
            }
            switch escape {
            case .none:
                if b == UInt8(ascii: "\\") {
                    escape = .backslash
                } else {
                    if let high = pendingHigh { return (max(0, high.start - base), Self.lone(high.value)) }
                    if b == UInt8(ascii: "\"") { inString = false }
                }
            case .backslash:
                if b == UInt8(ascii: "u") {
                    escape = .unicode(digits: 0, value: 0, start: base + i - 1)
                } else {
                    escape = .none
                    if let high = pendingHigh { return (max(0, high.start - base), Self.lone(high.value)) }
                }
            case .unicode(let digits, let value, let start):
                guard let d = Self.hexValue(b) else {
                    escape = .none  // yajl reports the malformed escape itself
                    i += 1
                    continue
                }
                let v = value << 4 | d
                if digits < 3 {
                    escape = .unicode(digits: digits + 1, value: v, start: start)
                } else {
                    escape = .none
                    if let violation = complete(v, start: start) { return (max(0, violation.offset - base), violation.message) }
                }
            }
            i += 1
        }
        return nil
    }

    private mutating func complete(_ v: UInt32, start: Int) -> Violation? {
        switch v {
        case 0xD800...0xDBFF:
            if let high = pendingHigh { return Violation(offset: high.start, message: Self.lone(high.value)) }
            pendingHigh = (start, v)
        case 0xDC00...0xDFFF:
            guard pendingHigh != nil else { return Violation(offset: start, message: Self.lone(v)) }
            pendingHigh = nil
        default:
            if let high = pendingHigh { return Violation(offset: high.start, message: Self.lone(high.value)) }
        }
        return nil
    }

    private static func lone(_ v: UInt32) -> String {
        let hex = String(v, radix: 16, uppercase: true)
        return "lone surrogate \\u\(hex) in a string: not a Unicode character"
    }

    private static func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
