/// Corrects yajl 2.1 where it is laxer than RFC 8259, before yajl sees the bytes (README, "Robustness"):
///
/// - `\f` (U+000C) and `\v` (U+000B) outside strings: yajl takes them for whitespace; JSON allows only space, tab,
///   LF and CR. Rejected.
/// - `\u` escapes that are lone or mismatched UTF-16 surrogates (`\uD800`, `\uDC00`, `\uD888\u1234`): yajl turns
///   them into `?`, invalid UTF-8 or a wrong character without a word. Rejected: a record is never changed
///   silently.
///
/// - Strings and keys must be valid UTF-8 by Unicode's rules (yajl checks only the structure): overlong forms,
///   encoded surrogates and code points above U+10FFFF are rejected — in mapped and skipped values alike.
///
/// It is one pass over the input, mostly 8 bytes at a time. It keeps its state across chunks, so the verdict does
/// not depend on how input is split.
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
    /// Inside a multi-byte UTF-8 sequence: continuation bytes still expected, and the range the next one must be in.
    private var utf8Remaining = 0
    private var utf8Lower: UInt8 = 0x80
    private var utf8Upper: UInt8 = 0xBF
    /// A high surrogate escape waiting for its low half: where it started, and its value.
    private var pendingHigh: (start: Int, value: UInt32)?
    /// Absolute offset of the chunk's first byte.
    private var base = 0

    /// The first violation in `chunk` (offset within the chunk and message), advancing the state past the chunk.
    mutating func scan(_ chunk: UnsafeRawBufferPointer) -> (index: Int, message: String)? {
        defer { base += chunk.count }
        guard let p = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var i = 0
        let n = chunk.count
        while i < n {
            if utf8Remaining > 0 {
                // Continuation bytes of a multi-byte character (possibly split across chunks).
                let b = p[i]
                guard b >= utf8Lower && b <= utf8Upper else { return (i, Self.invalidUTF8) }
                utf8Remaining -= 1
                utf8Lower = 0x80
                utf8Upper = 0xBF
                i += 1
                continue
            }
            // Fast paths, 8 bytes at a time: in a string only `"`, `\` and non-ASCII bytes matter (unless an escape
            // is in progress); outside, `"`, \v and \f.
            if inString {
                if case .none = escape, pendingHigh == nil {
                    while i + 8 <= n && !Self.stringWordMatters(UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)) { i += 8 }
                    while i < n && p[i] != 0x22 && p[i] != 0x5C && p[i] < 0x80 { i += 1 }
                    if i == n { break }
                }
            } else {
                while i + 8 <= n && !Self.outsideWordMatters(UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)) { i += 8 }
                while i < n && p[i] != 0x22 && p[i] != 0x0B && p[i] != 0x0C { i += 1 }
                if i == n { break }
            }
            let b = p[i]
            if !inString {
                if b == UInt8(ascii: "\"") {
                    inString = true
                } else if b == 0x0B || b == 0x0C {
                    return (i, b == 0x0C ? "form feed (\\f) is not JSON whitespace" : "vertical tab (\\v) is not JSON whitespace")
                }
                i += 1
                continue
            }
            if b >= 0x80 {
                if let high = pendingHigh { return (max(0, high.start - base), Self.lone(high.value)) }
                guard startUTF8Sequence(b) else { return (i, Self.invalidUTF8) }
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
                    // A malformed escape: yajl reports it — unless a high surrogate is waiting for its low half,
                    // which is decided here and now (not later, when yajl may already have seen more bytes).
                    // The byte itself is examined again outside the escape (a `"` still ends the string).
                    escape = .none
                    if let high = pendingHigh { return (max(0, high.start - base), Self.lone(high.value)) }
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

    static let invalidUTF8 = UTF8Validation.invalidStringMessage

    /// A lead byte: how many continuation bytes follow and the allowed range of the first (Unicode Table 3-7).
    private mutating func startUTF8Sequence(_ b: UInt8) -> Bool {
        switch b {
        case 0xC2...0xDF: utf8Remaining = 1
        case 0xE0: utf8Remaining = 2; utf8Lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: utf8Remaining = 2
        case 0xED: utf8Remaining = 2; utf8Upper = 0x9F
        case 0xF0: utf8Remaining = 3; utf8Lower = 0x90
        case 0xF1...0xF3: utf8Remaining = 3
        case 0xF4: utf8Remaining = 3; utf8Upper = 0x8F
        default: return false
        }
        return true
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    @inline(__always) private static func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }

    /// Whether a word of string content holds `"`, `\` or a non-ASCII byte.
    @inline(__always) private static func stringWordMatters(_ w: UInt64) -> Bool {
        w & highs != 0 || hasZeroByte(w ^ (ones &* 0x22)) || hasZeroByte(w ^ (ones &* 0x5C))
    }

    /// Whether a word outside strings holds `"`, \v or \f.
    @inline(__always) private static func outsideWordMatters(_ w: UInt64) -> Bool {
        hasZeroByte(w ^ (ones &* 0x22)) || hasZeroByte(w ^ (ones &* 0x0B)) || hasZeroByte(w ^ (ones &* 0x0C))
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
