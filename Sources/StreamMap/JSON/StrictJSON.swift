/// Corrects yajl 2.1 where it is laxer than RFC 8259, before yajl sees the bytes (README, "Robustness"):
///
/// - `\f` (U+000C) and `\v` (U+000B): yajl takes them for whitespace; JSON allows only space, tab, LF and CR
///   (and no raw control character in a string). Rejected wherever they appear.
/// - `\u` escapes that are lone or mismatched UTF-16 surrogates (`\uD800`, `\uDC00`, `\uD888\u1234`): yajl turns
///   them into `?`, invalid UTF-8 or a wrong character without a word. Rejected: a record is never changed
///   silently.
/// - Non-ASCII bytes must be valid UTF-8 by Unicode's rules (yajl checks only the structure): overlong forms,
///   encoded surrogates and code points above U+10FFFF are rejected — in mapped and skipped values alike.
///
/// The scanner does not track where strings begin and end: outside a string, a backslash or a non-ASCII byte is a
/// syntax error anyway, which yajl reports first (it parses everything before a violation, see
/// `YajlParserBase.feed`). So only three kinds of byte stop it — non-ASCII, control and `\` — and the rest of
/// the input is skipped 64 bytes at a time (`skipPlain`). Runs of multi-byte characters and of escapes are checked
/// in place, the common cases with bit tricks on one word (`twoThreeByteCharacters`, `commonCharacter`,
/// `hexDigits`) and the rest exactly by the tables. It keeps its state across chunks, so the verdict does not
/// depend on how input is split: whatever a chunk's end cuts goes byte by byte (`step`), and no read goes past
/// the chunk's end. Where the CPU has AVX2, a SIMD kernel in C (`cjsonscan_plain_prefix`, Sources/CJSONScan) first
/// skips what it can prove plain — valid characters, accepted escapes, 32 bytes at a time — and stops where this
/// code must look. On the benchmark corpus (12% non-ASCII bytes, an escape every 61 bytes) it takes the scanner
/// from 1.96 to 1.50 instructions per byte (callgrind). StrictScannerReferenceTests hold all of it, with and without the
/// kernel, to a simple byte-at-a-time reference, and StrictScannerKernelTests the kernel to its contract.
internal import CJSONScan

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

    private var escape = Escape.none
    /// Inside a multi-byte UTF-8 sequence: continuation bytes still expected, and the range the next one must be in.
    private var utf8Remaining = 0
    private var utf8Lower: UInt8 = 0x80
    private var utf8Upper: UInt8 = 0xBF
    /// A high surrogate escape waiting for its low half: where it started, and its value.
    private var pendingHigh: (start: Int, value: UInt32)?
    /// Absolute offset of the chunk's first byte.
    private var base = 0
    /// Whether the fast path first lets the SIMD kernel (`cjsonscan_plain_prefix`, CJSONScan) skip what it can.
    /// Off where the CPU has no kernel, and in the tests that hold the Swift code alone to the reference.
    private let accelerated: Bool

    init(accelerated: Bool = StrictJSONScanner.kernelAvailable) {
        self.accelerated = accelerated
    }

    /// Whether this CPU runs the SIMD kernel (asked once).
    static let kernelAvailable = cjsonscan_accelerated() != 0

    /// The first violation in `chunk`, advancing the state past the chunk. Its offset counts from the first byte of
    /// the first chunk: a lone high surrogate can have started in an earlier chunk.
    mutating func scan(_ chunk: UnsafeRawBufferPointer) -> Violation? {
        defer { base += chunk.count }
        guard let p = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var i = 0
        let n = chunk.count
        while i < n {
            guard utf8Remaining == 0, case .none = escape, pendingHigh == nil else {
                // In the middle of a character or an escape cut by a chunk's end, or after a high surrogate.
                if let violation = step(p[i], at: i) { return violation }
                i += 1
                continue
            }
            // The fast path, while no character or escape is open: plain ASCII skipped 64 bytes at a time, and runs
            // of characters and of escapes checked in place, most of them from one read of a word.
            fast: while true {
                // The kernel skips whole runs of valid characters and accepted escapes; what it stops at (or
                // short of, near the chunk's end) is examined below, as without it.
                if accelerated { i &+= cjsonscan_plain_prefix(p + i, n &- i) }
                i = Self.skipPlain(p, from: i, to: n)
                if i == n { break fast }
                let b = p[i]
                if b >= 0x80 {
                    let run = Self.checkCharacters(p, from: i, to: n)
                    if let bad = run.invalidAt { return Violation(offset: base + bad, message: Self.invalidUTF8) }
                    i = run.end
                    if i < n && p[i] >= 0x80 {
                        // A character that the chunk's end may cut goes byte by byte.
                        guard startUTF8Sequence(p[i]) else { return Violation(offset: base + i, message: Self.invalidUTF8) }
                        i += 1
                        break fast
                    }
                } else if b == UInt8(ascii: "\\") {
                    let run = checkEscapes(p, from: i, to: n)
                    if let violation = run.violation { return violation }
                    if run.end == i {
                        // An escape cut by the chunk's end, or a malformed `\u` escape, goes byte by byte.
                        escape = .backslash
                        i += 1
                        break fast
                    }
                    i = run.end
                    // What follows a high surrogate (the next byte, or the next chunk's first) goes byte by byte.
                    if pendingHigh != nil { break fast }
                } else {
                    if b == 0x0B || b == 0x0C { return Violation(offset: base + i, message: b == 0x0C ? Self.formFeed : Self.verticalTab) }
                    i += 1
                }
            }
        }
        return nil
    }

    /// Checks the run of multi-byte characters that starts at `start` (a non-ASCII byte), up to the first ASCII
    /// byte or the end, or a character with fewer than 4 bytes left in the chunk (which the chunk's end may cut):
    /// where it stops, or the offset of the first byte that makes a character invalid. CJK text is mostly 3-byte
    /// characters back to back: two at a time from one 8-byte read, else one at a time from a 4-byte read, and
    /// `checkCharacter` for the rest (4-byte characters, invalid ones). The byte after the characters read is
    /// in the same word. (One call per run: the optimizer keeps it out of line.)
    private static func checkCharacters(_ p: UnsafePointer<UInt8>, from start: Int, to n: Int) -> (end: Int, invalidAt: Int?) {
        var i = start
        while true {
            if i &+ 7 < n {
                let w = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
                if twoThreeByteCharacters(w) {
                    i &+= 6
                    if w & 0x80_0000_0000_0000 == 0 { return (i, nil) }
                    continue
                }
            }
            guard i &+ 3 < n else { return (i, nil) }
            let w = UInt32(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt32.self))
            let next: UInt32
            if let length = commonCharacter(w) {
                i &+= length
                next = w >> (UInt32(truncatingIfNeeded: length) &<< 3)
            } else {
                switch checkCharacter(p + i) {
                case .valid(let length): i &+= length
                case .invalid(let at): return (i, i &+ at)
                }
                next = i < n ? UInt32(p[i]) : 0
            }
            if next & 0x80 == 0 { return (i, nil) }
        }
    }

    /// Checks the run of escapes that starts at `start` (a backslash), up to the first byte that is not a
    /// backslash, or the first escape cut by the chunk's end or malformed `\u` escape: where it stops, or the
    /// first violation. Escaped text is mostly `\u` escapes back to back, and most are neither a surrogate nor
    /// after a high one: four hex digits checked at once, and nothing more to do.
    @inline(__always)
    private mutating func checkEscapes(_ p: UnsafePointer<UInt8>, from start: Int, to n: Int) -> (end: Int, violation: Violation?) {
        var j = start
        while j &+ 1 < n && p[j] == UInt8(ascii: "\\") {
            if p[j &+ 1] != UInt8(ascii: "u") {
                if let high = pendingHigh { return (j, Violation(offset: high.start, message: Self.lone(high.value))) }
                j &+= 2
            } else {
                guard j &+ 5 < n, let digits = Self.hexDigits(p + j + 2) else { break }
                if pendingHigh != nil || Self.isSurrogate(digits) {
                    if let violation = complete(Self.value(digits), start: base + j) { return (j, violation) }
                }
                j &+= 6
            }
        }
        return (j, nil)
    }

    /// One byte through the states, for what the fast path leaves: characters and escapes cut by a chunk's end,
    /// and whatever follows a high surrogate escape.
    private mutating func step(_ b: UInt8, at i: Int) -> Violation? {
        if utf8Remaining > 0 {
            guard b >= utf8Lower && b <= utf8Upper else { return Violation(offset: base + i, message: Self.invalidUTF8) }
            utf8Remaining -= 1
            utf8Lower = 0x80
            utf8Upper = 0xBF
            return nil
        }
        switch escape {
        case .none:
            if b == UInt8(ascii: "\\") {
                escape = .backslash
            } else if let high = pendingHigh {
                return Violation(offset: high.start, message: Self.lone(high.value))
            } else if b >= 0x80 {
                guard startUTF8Sequence(b) else { return Violation(offset: base + i, message: Self.invalidUTF8) }
            } else if b == 0x0B || b == 0x0C {
                return Violation(offset: base + i, message: b == 0x0C ? Self.formFeed : Self.verticalTab)
            }
        case .backslash:
            if b == UInt8(ascii: "u") {
                escape = .unicode(digits: 0, value: 0, start: base + i - 1)
            } else {
                escape = .none
                if let high = pendingHigh { return Violation(offset: high.start, message: Self.lone(high.value)) }
            }
        case .unicode(let digits, let value, let start):
            guard let d = Self.hexValue(b) else {
                // A malformed escape: yajl reports it — unless a high surrogate is waiting for its low half,
                // which is decided here and now (not later, when yajl may already have seen more bytes).
                // The byte itself is examined again outside the escape.
                escape = .none
                if let high = pendingHigh { return Violation(offset: high.start, message: Self.lone(high.value)) }
                return step(b, at: i)
            }
            let v = value << 4 | d
            if digits < 3 {
                escape = .unicode(digits: digits + 1, value: v, start: start)
            } else {
                escape = .none
                if let violation = complete(v, start: start) { return violation }
            }
        }
        return nil
    }

    static let formFeed = "form feed (\\f) is not JSON whitespace, nor allowed raw in a string"
    static let verticalTab = "vertical tab (\\v) is not JSON whitespace, nor allowed raw in a string"
    static let invalidUTF8 = UTF8Validation.invalidStringMessage

    /// A lead byte (Unicode Table 3-7): how many continuation bytes follow and the range the first must be in; nil
    /// for a byte that cannot start a character.
    @inline(__always)
    private static func lead(_ b: UInt8) -> (continuations: Int, lower: UInt8, upper: UInt8)? {
        switch b {
        case 0xC2...0xDF: return (1, 0x80, 0xBF)
        case 0xE0: return (2, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: return (2, 0x80, 0xBF)
        case 0xED: return (2, 0x80, 0x9F)
        case 0xF0: return (3, 0x90, 0xBF)
        case 0xF1...0xF3: return (3, 0x80, 0xBF)
        case 0xF4: return (3, 0x80, 0x8F)
        default: return nil
        }
    }

    /// Starts a character whose continuation bytes come in later chunks.
    private mutating func startUTF8Sequence(_ b: UInt8) -> Bool {
        guard let l = Self.lead(b) else { return false }
        (utf8Remaining, utf8Lower, utf8Upper) = l
        return true
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of a word that is non-ASCII, a control byte (below 0x20) or `\`. Bytes below
    /// 0x20 and `\` are found by per-byte borrows, which can mark a byte above a true one but never below it: the
    /// lowest mark is exact.
    @inline(__always) private static func interesting(_ w: UInt64) -> UInt64 {
        let backslash = w ^ (ones &* 0x5C)
        return ((w &- ones &* 0x20) | w | ((backslash &- ones) & ~backslash)) & highs
    }

    @inline(__always) private static func byteMatters(_ b: UInt8) -> Bool { b >= 0x80 || b < 0x20 || b == 0x5C }

    /// The offset of the first byte at or after `start` that is non-ASCII, a control byte or `\`, or `n`.
    ///
    /// 64 bytes at a time, as four `SIMD16<Int8>`: read as signed bytes, non-ASCII bytes are negative, so "below
    /// 0x20" finds them and the control bytes in one comparison. Checked in the disassembly (x86-64, Swift 6.3):
    /// each comparison is one `pcmpgtb` or `pcmpeqb`, and the test of 64 bytes ~30 instructions — but only as
    /// written here, vector against vector: comparing a vector with a scalar takes the generic path, a loop over
    /// the lanes (here 9x slower than 8 bytes at a time with `interesting`). Then 16 bytes at a time, one 8-byte
    /// word, and the last bytes one at a time.
    @inline(__always)
    private static func skipPlain(_ p: UnsafePointer<UInt8>, from start: Int, to n: Int) -> Int {
        var i = start
        while i <= n &- 64 {
            let a = marks(p + i), b = marks(p + i + 16), c = marks(p + i + 32), d = marks(p + i + 48)
            if isMarked((a .| b) .| (c .| d)) {
                if isMarked(a .| b) { return isMarked(a) ? i &+ firstMarked(a) : i &+ 16 &+ firstMarked(b) }
                return isMarked(c) ? i &+ 32 &+ firstMarked(c) : i &+ 48 &+ firstMarked(d)
            }
            i &+= 64
        }
        while i <= n &- 16 {
            let m = marks(p + i)
            if isMarked(m) { return i &+ firstMarked(m) }
            i &+= 16
        }
        if i <= n &- 8 {
            let mask = interesting(UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)))
            if mask != 0 { return i &+ mask.trailingZeroBitCount &>> 3 }
            i &+= 8
        }
        while i < n && !byteMatters(p[i]) { i &+= 1 }
        return i
    }

    /// The 16 bytes at `p` that are non-ASCII, control bytes or `\`.
    @inline(__always)
    private static func marks(_ p: UnsafePointer<UInt8>) -> SIMDMask<SIMD16<Int8>> {
        let bytes = UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Int8>.self)
        return (bytes .< SIMD16(repeating: 0x20)) .| (bytes .== SIMD16(repeating: 0x5C))
    }

    /// Marks read as two 64-bit words: 0xFF per marked lane, the first lane the lowest byte of the first word.
    /// (Not `any(_:)`: it is a `min()` over the lanes, which the optimizer sometimes leaves as a call.)
    @inline(__always)
    private static func words(_ m: SIMDMask<SIMD16<Int8>>) -> (UInt64, UInt64) {
        let words = unsafeBitCast(m, to: SIMD2<UInt64>.self)
        return (words[0].littleEndian, words[1].littleEndian)
    }

    @inline(__always)
    private static func isMarked(_ m: SIMDMask<SIMD16<Int8>>) -> Bool {
        let (low, high) = words(m)
        return low | high != 0
    }

    /// The first marked lane, of marks with at least one.
    @inline(__always)
    private static func firstMarked(_ m: SIMDMask<SIMD16<Int8>>) -> Int {
        let (low, high) = words(m)
        return (low != 0 ? low.trailingZeroBitCount : 64 &+ high.trailingZeroBitCount) &>> 3
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

    private enum CharacterCheck {
        case valid(length: Int)
        /// The offset (from the lead byte) of the first byte that makes the sequence invalid.
        case invalid(at: Int)
    }

    /// Checks one multi-byte UTF-8 character whose (up to) 4 bytes are all readable.
    @inline(__always)
    private static func checkCharacter(_ p: UnsafePointer<UInt8>) -> CharacterCheck {
        guard let l = lead(p[0]) else { return .invalid(at: 0) }
        guard p[1] >= l.lower && p[1] <= l.upper else { return .invalid(at: 1) }
        var k = 2
        while k <= l.continuations {
            if p[k] & 0xC0 != 0x80 { return .invalid(at: k) }
            k += 1
        }
        return .valid(length: l.continuations + 1)
    }

    /// The length of the character that starts with the 4 bytes `w` (the first byte lowest) if it is a valid 2- or
    /// 3-byte one; nil for anything else (4-byte characters, invalid bytes), which `checkCharacter` decides.
    ///
    /// Exactly the valid 2- and 3-byte characters of Unicode's Table 3-7 pass. A 3-byte character is
    /// `1110xxxx 10xxxxxx 10xxxxxx` (the mask 0xC0C0F0), and only the leads E0 (second byte A0...BF: bit 5 set)
    /// and ED (80...9F: bit 5 clear) narrow the second byte — so with `t` the lead's low nibble and the second
    /// byte's bit 5, t == 0x0000 is an overlong E0 form and t == 0x200D an encoded surrogate. A 2-byte character
    /// is `110xxxxx 10xxxxxx` with a lead of at least C2: C0 and C1 (overlong) are the leads whose bits 1...4 are
    /// all clear.
    @inline(__always)
    private static func commonCharacter(_ w: UInt32) -> Int? {
        if w & 0xC0C0F0 == 0x8080E0 {
            let t = w & 0x200F
            return t != 0 && t != 0x200D ? 3 : nil
        }
        return w & 0xC0E0 == 0x80C0 && w & 0x1E != 0 ? 2 : nil
    }

    /// Whether the 8 bytes `w` (the first lowest) start with two valid 3-byte characters: `commonCharacter`'s
    /// test for both at once. With `n` a lead's low nibble and `b` its second byte's bit 5, a character of the
    /// right shape is invalid exactly when n ^ (b ? 0xD : 0) == 0 (E0 with b clear: overlong; ED with b set: a
    /// surrogate). Both values sit in their lead's byte, and adding 0xF to each carries into its bit 4 unless it
    /// is 0.
    @inline(__always)
    private static func twoThreeByteCharacters(_ w: UInt64) -> Bool {
        guard w & 0xC0C0_F0C0_C0F0 == 0x8080_E080_80E0 else { return false }
        let u = (w & 0x0F00_000F) ^ (w >> 13 & 0x0100_0001) &* 0xD
        return (u &+ 0x0F00_000F) & 0x1000_0010 == 0x1000_0010
    }

    /// The values of four hex digits, one per byte (the first lowest), or nil if one is not a hex digit: all four
    /// at once, in one 32-bit word.
    ///
    /// A byte `c` is a digit when 0x30 <= c <= 0x39 and a letter when 0x61 <= c | 0x20 <= 0x66. For ASCII bytes
    /// (checked first), `c + (0x80 - lo)` has its high bit set when c >= lo, and `c + (0x7F - hi)` when c > hi,
    /// with no carry into the next byte. A digit's value is its low nibble, plus 9 for a letter (bit 6 set:
    /// "A" and "a" are 1 + 9).
    @inline(__always)
    private static func hexDigits(_ p: UnsafePointer<UInt8>) -> UInt32? {
        let w = UInt32(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self))
        guard w & 0x8080_8080 == 0 else { return nil }
        let folded = w | 0x2020_2020
        let digits = (w &+ 0x5050_5050) & ~(w &+ 0x4646_4646)
        let letters = (folded &+ 0x1F1F_1F1F) & ~(folded &+ 0x1919_1919)
        guard (digits | letters) & 0x8080_8080 == 0x8080_8080 else { return nil }
        return (w & 0x0F0F_0F0F) &+ (w >> 6 & 0x0101_0101) &* 9
    }

    /// Whether the digits of `hexDigits` are those of a surrogate, D800...DFFF: the first is D, the second 8 or more.
    @inline(__always)
    private static func isSurrogate(_ digits: UInt32) -> Bool { digits & 0x08FF == 0x080D }

    /// The value of the digits of `hexDigits`: nibbles d0 d1 d2 d3 (lowest byte first) into 0xd0d1d2d3, pairs
    /// first, then the two pairs.
    @inline(__always)
    private static func value(_ digits: UInt32) -> UInt32 {
        let pairs = (digits << 4 | digits >> 8) & 0x00FF_00FF
        return (pairs & 0xFF) << 8 | pairs >> 16
    }

    @inline(__always)
    private static func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
