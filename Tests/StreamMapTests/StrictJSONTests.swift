import Testing
@testable import StreamMap
import CJSONScan
import StreamMapTestSupport

/// Where yajl 2.1 is laxer than RFC 8259, StreamMap rejects the record (docs/robustness.md).
@Suite("Strict JSON over yajl")
struct StrictJSONTests {
    static let identity = Mapper(.object(ObjectMapping(fields: [], unmapped: .keep)))

    /// The outcome of both engines, whole and in pieces of every size; they must all agree.
    func outcomes(_ text: String) -> [RecordOutcome] { outcomesOfBytes(Array(text.utf8)) }

    func outcomesOfBytes(_ record: [UInt8]) -> [RecordOutcome] {
        var results: [RecordOutcome] = []
        var writer = JSONWriter()
        let tree = TreeEngine(mapper: Self.identity)
        results.append(record.withUnsafeBytes { tree.map(record: $0, into: &writer) })
        var stream = StreamEngine(mapper: Self.identity)
        results.append(record.withUnsafeBytes { stream.map(record: $0, into: &writer) })
        for size in [1, 2, 3, 5, 8] {
            stream.beginRecord()
            var i = 0
            while i < record.count {
                record[i..<min(i + size, record.count)].withUnsafeBytes { stream.continueRecord($0) }
                i += size
            }
            results.append(stream.endRecord(into: &writer))
        }
        return results
    }

    @Test("rejected, with the same error everywhere", arguments: [
        (#"{"a":"\ud800"}"#, 6, #"lone surrogate \uD800 in a string: not a Unicode character"#),
        (#"{"a":"x\udc00"}"#, 7, #"lone surrogate \uDC00 in a string: not a Unicode character"#),
        (#"{"a":"\ud888\u1234"}"#, 6, #"lone surrogate \uD888 in a string: not a Unicode character"#),
        (#"{"a":"\uD83Dx"}"#, 6, #"lone surrogate \uD83D in a string: not a Unicode character"#),
        (#"{"a":"\ud800\ud800\udc00"}"#, 6, #"lone surrogate \uD800 in a string: not a Unicode character"#),
        (#"{"\udfff":1}"#, 2, #"lone surrogate \uDFFF in a string: not a Unicode character"#),
        ("{\"a\":1}\u{0C}", 7, #"form feed (\f) is not JSON whitespace, nor allowed raw in a string"#),
        ("{\"a\":\u{0B}1}", 5, #"vertical tab (\v) is not JSON whitespace, nor allowed raw in a string"#),
    ])
    func rejected(_ text: String, _ offset: Int, _ message: String) {
        for outcome in outcomes(text) {
            #expect(outcome == .rejected(.syntax(JSONSyntaxError(byteOffset: offset, message: message))), "\(text)")
        }
    }

    /// yajl 2.1 alone takes a value followed by a string that never ends for the value (the string is still in its
    /// lexer when the input ends): rejected as trailing garbage, in both engines, whole and in pieces; a value
    /// followed by whitespace, or ending in a string (escaped quote included), is not.
    @Test func aValueFollowedByAnUnfinishedStringIsRejected() {
        for text in [#"{"id":1}"x"#, #"{"id":1}""#, #"[5] "ab"#, #"{"a":{"b":[1,"x"]}}"A"#, #"6"x"#, #"true""#, "{\"id\":1}\"é"] {
            let end = text.utf8.count
            for outcome in outcomes(text) {
                #expect(outcome == .rejected(.syntax(JSONSyntaxError(byteOffset: end, message: "trailing garbage"))), "\(text)")
            }
        }
        for text in [#"{"id":1}  "#, #"{"a":"x"}"#, #"{"a":"b\""}"#, "{\"a\":[\"x\"]}\t\r\n"] {
            #expect(outcomes(text).allSatisfy { $0 == .mapped(warnings: []) }, "\(text)")
        }
        // A string that was never closed and is the whole value stays a premature end.
        #expect(outcomes(#""abc"#).allSatisfy { if case .rejected(.syntax(let e)) = $0 { e.message == "premature EOF" } else { false } })
        // A mapping that reads one field: its records are projected (no check needed: the projector vouches for
        // what follows the value), except the one with a string after it, which is parsed whole and rejected.
        let mapper = Mapper.object(unmapped: .drop) { Field("id", to: "id", .integer) }
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        var writer = JSONWriter()
        for (text, rejected) in [(#"{"id":1,"big":[1,2,{"x":"y"}]}"#, false), (#"{"id":1,"big":[1,2]}"x"#, true)] {
            let bytes = Array(text.utf8)
            let projectedBefore = stream.projections
            for outcome in [bytes.withUnsafeBytes { stream.map(record: $0, into: &writer) }, bytes.withUnsafeBytes { tree.map(record: $0, into: &writer) }] {
                #expect(outcome == (rejected ? .rejected(.syntax(JSONSyntaxError(byteOffset: bytes.count, message: "trailing garbage")))
                                             : .mapped(warnings: [])), "\(text)")
            }
            #expect(stream.projections == projectedBefore + (rejected ? 0 : 1), "\(text)")
        }
    }

    @Test("accepted", arguments: [
        #"{"a":"\ud83d\ude00"}"#, #"{"a":"\uD83D\uDE00x"}"#, #"{"a":"\u00e9\u0000"}"#, "{\"a\":\"\\f\\u000b\"}",
        "{\"a\":\"form\u{0C}feed\"}",  // a raw control character in a string is yajl's to reject, not ours
    ])
    func notOurs(_ text: String) {
        let all = outcomes(text)
        #expect(all.allSatisfy { $0 == all[0] }, "\(all)")
        if text.contains("ud83d") || text.contains("uD83D") || text.contains("u00e9") || text.contains("000b") {
            #expect(all[0] == .mapped(warnings: []))
        }
    }

    /// Strict UTF-8 in strings and keys, mapped or skipped, however the bytes are split.
    @Test("invalid UTF-8 is rejected", arguments: [
        [0xC0, 0xAF],  // overlong "/"
        [0xE0, 0x80, 0x80],  // overlong NUL
        [0xED, 0xA0, 0x80],  // an encoded surrogate
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xF5, 0x80, 0x80, 0x80],  // lead byte F5
        [0xE2, 0x82],  // truncated before the closing quote
        [0x80],  // a lone continuation byte
    ] as [[UInt8]])
    func invalidUTF8(_ bad: [UInt8]) {
        for (prefix, suffix) in [("{\"a\":\"x", "y\"}"), ("{\"skip\":[\"", "\"],\"a\":1}"), ("{\"k", "\":1}")] {
            let record = Array(prefix.utf8) + bad + Array(suffix.utf8)
            let results = outcomesOfBytes(record)
            #expect(results.allSatisfy { $0 == results[0] }, "\(results)")
            guard case .rejected(.syntax(let e)) = results[0] else {
                Issue.record("accepted invalid UTF-8 \(bad) in \(prefix)")
                continue
            }
            #expect(e.message == "invalid UTF-8 in string")
            // Reported at the first byte that cannot continue a valid character: an invalid lead byte itself, a bad
            // second byte, or the quote that cuts a character short.
            let badLead = bad[0] < 0xC2 || bad[0] > 0xF4
            let expected = prefix.utf8.count + (badLead ? 0 : bad == [0xE2, 0x82] ? 2 : 1)
            #expect(e.byteOffset == expected)
        }
    }

    @Test func validMultiByteCharactersPassInEveryPiece() {
        let results = outcomesOfBytes(Array("{\"é\":\"日本語 😀 ä\",\"skip\":[\"Ω\"]}".utf8))
        #expect(results.allSatisfy { $0 == .mapped(warnings: []) })
    }

    /// An earlier yajl error wins over a later strictness violation, however the input is split.
    @Test func anEarlierSyntaxErrorIsReportedFirst() {
        let all = outcomes(#"{"a":tru,"b":"\ud800"}"#)
        #expect(all.allSatisfy { $0 == all[0] })
        guard case .rejected(.syntax(let e)) = all[0] else {
            Issue.record("not rejected: \(all[0])")
            return
        }
        #expect(!e.message.contains("surrogate"))
    }
}

/// The push parser takes bytes in any chunks (`JSONPushParser.feed`); the strict scanner in front of yajl keeps
/// its state across them, so every verdict — accepted, or the same error at the same offset — must not depend on
/// where the input is cut. Every input is cut at every position, and into pieces of 1 to 7 bytes.
@Suite("Strict JSON: chunk invariance of the push parser")
struct StrictChunkInvarianceTests {
    struct NoOp: JSONEventHandler {
        mutating func null() {}
        mutating func bool(_ value: Bool) {}
        mutating func number(_ text: UnsafeRawBufferPointer) {}
        mutating func string(_ utf8: UnsafeRawBufferPointer) {}
        mutating func startObject() {}
        mutating func key(_ utf8: UnsafeRawBufferPointer) {}
        mutating func endObject() {}
        mutating func startArray() {}
        mutating func endArray() {}
    }

    /// nil when accepted, else the error.
    func verdict(_ bytes: [UInt8], cuts: [Int]) -> JSONSyntaxError? {
        let parser = JSONPushParser(handler: NoOp())
        do {
            var start = 0
            for cut in cuts + [bytes.count] where cut >= start {
                try parser.feed(bytes[start..<cut])
                start = cut
            }
            try parser.finish()
            return nil
        } catch {
            return error as? JSONSyntaxError ?? JSONSyntaxError(byteOffset: -1, message: "\(error)")
        }
    }

    static let inputs: [[UInt8]] = [
        #"{"a":"\ud83d\ude00 ok","b":"\u00e9\n\"\\"}"#,
        #"{"a":"x\ud800"}"#, #"{"a":"\ud800\u0041"}"#, #"{"a":"\udc00"}"#, #"{"a":"\ud800\ud800\udc00"}"#,
        #"{"a":"\ud800\uZZ00"}"#, #"{"a":"\ud800\n"}"#, #"{"a":tru,"b":"\ud800"}"#,
        "{\"a\":1}\u{0C}", "{\"a\":\u{0B}1}",
    ].map { Array($0.utf8) } + [
        Array("{\"é\":\"日本語 😀\",\"k\":[\"Ω\"]}".utf8),
        Array(#"{"a":""#.utf8) + [0xE0, 0x80, 0x80] + Array(#""}"#.utf8),
        Array(#"{"a":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
        Array(#"{"a":"x"#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8),
        Array(#"{"a":"x"#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8),
    ]

    @Test(arguments: inputs)
    func everyCutGivesTheSameVerdict(_ bytes: [UInt8]) {
        let whole = verdict(bytes, cuts: [])
        for cut in 0...bytes.count {
            #expect(verdict(bytes, cuts: [cut]) == whole, "cut at \(cut) of \(String(decoding: bytes, as: UTF8.self))")
        }
        for size in 1...7 {
            #expect(verdict(bytes, cuts: Array(stride(from: size, to: bytes.count, by: size))) == whole, "pieces of \(size)")
        }
    }
}

/// `StrictJSONScanner` skips plain ASCII 16 bytes at a time and checks characters and escapes in place; this
/// suite holds it to a deliberately simple byte-at-a-time reference (below) on inputs built to hit every fast path
/// at its edges: every kind of invalid UTF-8 and every escape at every position relative to 8- and 16-byte words
/// and to chunk ends, and many random JSON-ish byte strings, whole and cut at random points. The scanner must
/// report the same first violation (offset and message) as the reference, or none when the reference has none.
@Suite("Strict JSON scanner: fast paths against a byte-at-a-time reference")
struct StrictScannerReferenceTests {
    struct Found: Equatable, CustomStringConvertible {
        var offset: Int
        var message: String
        var description: String { "\(message) at \(offset)" }
    }

    /// The rules of `StrictJSONScanner`'s doc comment, one byte at a time: nothing skipped, nothing looked ahead.
    struct Reference {
        var continuations = 0  // continuation bytes still expected by an open UTF-8 character
        var lower: UInt8 = 0x80, upper: UInt8 = 0xBF  // the range the next continuation byte must be in
        var afterBackslash = false
        var hexDigits: Int?  // inside `\u`: digits read so far
        var value: UInt32 = 0, escapeStart = 0
        var pendingHigh: (start: Int, value: UInt32)?

        static func lone(_ v: UInt32) -> String {
            "lone surrogate \\u\(String(v, radix: 16, uppercase: true)) in a string: not a Unicode character"
        }
        static let utf8 = "invalid UTF-8 in string"

        /// The violation that byte `b` at `offset` reveals, if any.
        mutating func feed(_ b: UInt8, at offset: Int) -> Found? {
            if continuations > 0 {
                if b < lower || b > upper { return Found(offset: offset, message: Self.utf8) }
                continuations -= 1
                (lower, upper) = (0x80, 0xBF)
                return nil
            }
            if afterBackslash {
                afterBackslash = false
                if b == UInt8(ascii: "u") {
                    (hexDigits, value, escapeStart) = (0, 0, offset - 1)
                    return nil
                }
                return pendingHigh.map { Found(offset: $0.start, message: Self.lone($0.value)) }
            }
            if let digits = hexDigits {
                let d: UInt32
                switch b {
                case 0x30...0x39: d = UInt32(b) - 0x30
                case 0x41...0x46: d = UInt32(b) - 0x41 + 10
                case 0x61...0x66: d = UInt32(b) - 0x61 + 10
                default:
                    // Not a hex digit: the escape is malformed (yajl's to report), unless a high surrogate waits.
                    hexDigits = nil
                    if let high = pendingHigh { return Found(offset: high.start, message: Self.lone(high.value)) }
                    return feed(b, at: offset)
                }
                value = value << 4 | d
                if digits < 3 {
                    hexDigits = digits + 1
                    return nil
                }
                hexDigits = nil
                let isHigh = (0xD800...0xDBFF).contains(value), isLow = (0xDC00...0xDFFF).contains(value)
                if let high = pendingHigh {
                    if isLow {
                        pendingHigh = nil
                        return nil
                    }
                    return Found(offset: high.start, message: Self.lone(high.value))
                }
                if isLow { return Found(offset: escapeStart, message: Self.lone(value)) }
                if isHigh { pendingHigh = (escapeStart, value) }
                return nil
            }
            if b == UInt8(ascii: "\\") {
                afterBackslash = true
                return nil
            }
            if let high = pendingHigh { return Found(offset: high.start, message: Self.lone(high.value)) }
            switch b {
            case 0x0B: return Found(offset: offset, message: "vertical tab (\\v) is not JSON whitespace, nor allowed raw in a string")
            case 0x0C: return Found(offset: offset, message: "form feed (\\f) is not JSON whitespace, nor allowed raw in a string")
            case 0x00...0x7F: return nil
            // Unicode Table 3-7: the lead byte fixes the length and the range of the first continuation byte.
            case 0xC2...0xDF: (continuations, lower, upper) = (1, 0x80, 0xBF)
            case 0xE0: (continuations, lower, upper) = (2, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE, 0xEF: (continuations, lower, upper) = (2, 0x80, 0xBF)
            case 0xED: (continuations, lower, upper) = (2, 0x80, 0x9F)
            case 0xF0: (continuations, lower, upper) = (3, 0x90, 0xBF)
            case 0xF1...0xF3: (continuations, lower, upper) = (3, 0x80, 0xBF)
            case 0xF4: (continuations, lower, upper) = (3, 0x80, 0x8F)
            default: return Found(offset: offset, message: Self.utf8)  // 80...C1, F5...FF
            }
            return nil
        }

        static func firstViolation(_ bytes: [UInt8]) -> Found? {
            var r = Reference()
            for (offset, b) in bytes.enumerated() {
                if let found = r.feed(b, at: offset) { return found }
            }
            return nil
        }
    }

    /// The scanner's first violation, the input fed in pieces ending at `cuts`. Each piece is copied to memory of
    /// its own size, so that a read past its end is caught under AddressSanitizer (scripts/sanitize.sh).
    /// Both ways — with the SIMD kernel (where the CPU has it) and the Swift code alone — which must agree.
    static func scanned(_ bytes: [UInt8], cuts: [Int] = []) -> Found? {
        let withKernel = scanned(bytes, cuts: cuts, accelerated: StrictJSONScanner.kernelAvailable)
        let swiftAlone = scanned(bytes, cuts: cuts, accelerated: false)
        if withKernel != swiftAlone {
            Issue.record("kernel: \(String(describing: withKernel)), Swift alone: \(String(describing: swiftAlone)) for \(bytes) cut at \(cuts)")
        }
        return withKernel
    }

    static func scanned(_ bytes: [UInt8], cuts: [Int], accelerated: Bool) -> Found? {
        var scanner = StrictJSONScanner(accelerated: accelerated)
        var start = 0
        for end in cuts.sorted() + [bytes.count] where end >= start {
            let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: end - start, alignment: 1)
            defer { piece.deallocate() }
            piece.copyBytes(from: bytes[start..<end])
            if let v = scanner.scan(UnsafeRawBufferPointer(piece)) { return Found(offset: v.offset, message: v.message) }
            start = end
        }
        return nil
    }

    /// Whole, cut at every position, and in pieces of 1 to 17 bytes: always `expected`.
    static func expectEverywhere(_ bytes: [UInt8], _ expected: Found?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(scanned(bytes) == expected, "whole \(bytes)", sourceLocation: sourceLocation)
        for cut in 0...bytes.count where scanned(bytes, cuts: [cut]) != expected {
            Issue.record("cut at \(cut): \(String(describing: scanned(bytes, cuts: [cut]))) for \(bytes)", sourceLocation: sourceLocation)
            return
        }
        for size in 1...17 where scanned(bytes, cuts: Array(stride(from: size, to: bytes.count, by: size))) != expected {
            Issue.record("pieces of \(size) for \(bytes)", sourceLocation: sourceLocation)
            return
        }
    }

    static let utf8 = Reference.utf8

    /// Invalid UTF-8 and the offset (from its first byte) where it must be reported, when followed by ASCII.
    static let invalidUTF8: [([UInt8], Int)] = [
        ([0xC0, 0xAF], 0), ([0xC1, 0xBF], 0),  // overlong 2-byte forms: C0 and C1 are never lead bytes
        ([0xE0, 0x80, 0x80], 1), ([0xE0, 0x9F, 0xBF], 1),  // overlong 3-byte forms
        ([0xF0, 0x80, 0x80, 0x80], 1), ([0xF0, 0x8F, 0xBF, 0xBF], 1),  // overlong 4-byte forms
        ([0xED, 0xA0, 0x80], 1), ([0xED, 0xBF, 0xBF], 1),  // encoded surrogates
        ([0xF4, 0x90, 0x80, 0x80], 1), ([0xF4, 0xBF, 0xBF, 0xBF], 1),  // above U+10FFFF
        ([0xF5, 0x80, 0x80, 0x80], 0), ([0xF8, 0x88, 0x80, 0x80, 0x80], 0), ([0xFF], 0), ([0xFE], 0),
        ([0x80], 0), ([0xBF], 0), ([0xBF, 0xBF, 0xBF], 0),  // continuation bytes without a lead
        ([0xC3], 1), ([0xE2, 0x82], 2), ([0xE2], 1), ([0xF0, 0x9F, 0x98], 3), ([0xF0], 1),  // truncated
        ([0xC3, 0xC3, 0xA9], 1), ([0xE2, 0x82, 0xE2, 0x82, 0xAC], 2), ([0xE2, 0xC2, 0xAC], 1),  // a lead too soon
        ([0xE2, 0x82, 0x7F], 2), ([0xE2, 0x7F, 0x80], 1), ([0xF0, 0x9F, 0x98, 0xC0], 3),  // a continuation not 80...BF
        ([0xE0, 0xA0, 0x80, 0xE0, 0x9F, 0x80], 4),  // the smallest 3-byte character, then an overlong one
        ([0xED, 0x9F, 0xBF, 0xED, 0xA0, 0x80], 4),  // U+D7FF, then an encoded surrogate
        ([0xF4, 0x8F, 0xBF, 0xBF, 0xF4, 0x90, 0x80, 0x80], 5),  // U+10FFFF, then one above
        ([0xC2, 0x80, 0xC1, 0xBF], 2),  // U+0080, then an overlong form
    ]

    @Test func everyKindOfInvalidUTF8AtEveryWordPosition() {
        for (bad, at) in Self.invalidUTF8 {
            for before in 0...33 {
                // Plain ASCII, a valid character or an escape just before: each fast path runs into the bad bytes.
                for lead in [[], [0xC3, 0xA9], [0xE6, 0x97, 0xA5], [0xF0, 0x9F, 0x98, 0x80], Array(#"\u00e9"#.utf8), Array(#"\n"#.utf8)] as [[UInt8]] {
                    guard lead.count <= before else { continue }
                    let bytes = Array(repeating: UInt8(ascii: "a"), count: before - lead.count) + lead + bad + Array("bcdefghijklmnopqrstu\"".utf8)
                    let expected = Found(offset: before + at, message: Self.utf8)
                    #expect(Reference.firstViolation(bytes) == expected, "reference: \(bytes)")
                    Self.expectEverywhere(bytes, expected)
                }
            }
        }
    }

    @Test func invalidUTF8AtTheEndOfTheInput() {
        // At the very end, an invalid lead or second byte is reported; a truncated character is not (yajl reports
        // the unterminated string).
        for before in 0...20 {
            let prefix = Array(repeating: UInt8(ascii: "a"), count: before)
            Self.expectEverywhere(prefix + [0xC0], Found(offset: before, message: Self.utf8))
            Self.expectEverywhere(prefix + [0xE0, 0x9F], Found(offset: before + 1, message: Self.utf8))
            Self.expectEverywhere(prefix + [0xED, 0xBF], Found(offset: before + 1, message: Self.utf8))
            Self.expectEverywhere(prefix + [0xF4, 0x90], Found(offset: before + 1, message: Self.utf8))
            Self.expectEverywhere(prefix + [0xE6, 0x97, 0x41], Found(offset: before + 2, message: Self.utf8))
            for truncated in [[0xC3], [0xE6], [0xE6, 0x97], [0xF0], [0xF0, 0x9F], [0xF0, 0x9F, 0x98]] as [[UInt8]] {
                Self.expectEverywhere(prefix + truncated, nil)
            }
        }
    }

    @Test func runsOfValidCharactersAtEveryWordPosition() {
        let characters: [[UInt8]] = [
            [0xC2, 0x80], [0xC3, 0xA9], [0xDF, 0xBF],  // U+0080, é, U+07FF
            [0xE0, 0xA0, 0x80], [0xE6, 0x97, 0xA5], [0xEC, 0xBF, 0xBF], [0xED, 0x80, 0x80], [0xED, 0x9F, 0xBF],
            [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF],  // U+0800, 日, U+CFFF, U+D000, U+D7FF, U+E000, U+FFFF
            [0xF0, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98, 0x80], [0xF3, 0xBF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for before in 0...17 {
            let prefix = Array(repeating: UInt8(ascii: "a"), count: before)
            for c in characters {
                for count in [1, 2, 5, 11] {
                    Self.expectEverywhere(prefix + Array([[UInt8]](repeating: c, count: count).joined()) + Array("x\"".utf8), nil)
                }
            }
            // Mixed lengths back to back, then an error right after the run.
            let mixed = Array(characters.joined())
            Self.expectEverywhere(prefix + mixed, nil)
            Self.expectEverywhere(prefix + mixed + [0xC1, 0x81], Found(offset: before + mixed.count, message: Self.utf8))
            Self.expectEverywhere(prefix + mixed + [0x0C], Found(offset: before + mixed.count, message: Reference.feedMessage(0x0C)))
        }
    }

    /// Every lead byte C0...FF with every second byte, and 2- and 3-byte characters with each third byte near the
    /// edges of 80...BF, alone, first or second of a pair of 3-byte characters, and after a run of them.
    @Test func everyLeadWithEverySecondByte() {
        let cjk: [UInt8] = [0xE6, 0x97, 0xA5]
        for lead in 0xC0...0xFF as ClosedRange<UInt8> {
            for second in 0...0xFF as ClosedRange<UInt8> {
                for third in [0x7F, 0x80, 0xBF, 0xC0] as [UInt8] {
                    let c = [lead, second, third, 0x80, 0x41]
                    for bytes in [c, Array("a".utf8) + cjk + c, c + cjk, cjk + cjk + cjk + c + cjk + cjk] {
                        let expected = Reference.firstViolation(bytes)
                        for cuts in [[], [bytes.count - 3]] where Self.scanned(bytes, cuts: cuts) != expected {
                            Issue.record("\(bytes) cut at \(cuts): \(String(describing: Self.scanned(bytes, cuts: cuts))), expected \(String(describing: expected))")
                        }
                    }
                }
            }
        }
    }

    @Test func escapesAtEveryWordPosition() {
        let cases: [(String, Found?)] = [
            (#"\ud83d\ude00"#, nil), (#"\uD83D\uDE00\uDBFF\uDFFF"#, nil), (#"\u00e9\u0000\uFFFF\uD7FF\uE000"#, nil),
            (#"\n\"\\\/\b\f\r\t"#, nil), (#"\\u0041\\ud800"#, nil), (#"\u12"#, nil), (#"\uZZZZ\u"#, nil), (#"\"#, nil),
            (#"\ud800"#, nil),  // a high surrogate at the very end waits for more
            (#"\ud800x"#, Found(offset: 0, message: Reference.lone(0xD800))),
            (#"\udbff\n"#, Found(offset: 0, message: Reference.lone(0xDBFF))),
            (#"\ud800\ud800\udc00"#, Found(offset: 0, message: Reference.lone(0xD800))),
            (#"\ud800\u0041"#, Found(offset: 0, message: Reference.lone(0xD800))),
            (#"\ud800\uDC0"#, nil), (#"\ud800\uDC0x"#, Found(offset: 0, message: Reference.lone(0xD800))),
            (#"\uD800\u"#, nil), (#"\uD800\uG"#, Found(offset: 0, message: Reference.lone(0xD800))),
            (#"\udc00"#, Found(offset: 0, message: Reference.lone(0xDC00))),
            (#"\u0041\uDFFF"#, Found(offset: 6, message: Reference.lone(0xDFFF))),
            (#"\n\u0041\t\udE00"#, Found(offset: 10, message: Reference.lone(0xDE00))),
            (#"\u00/0"#, nil), (#"\u00:0\u00@0\u00G0\u00`0\u00g0"#, nil),  // the bytes around the hex ranges
            ("\\u12\u{0C}", Found(offset: 4, message: Reference.feedMessage(0x0C))),  // ends the escape, then examined
            ("\\\u{0B}", nil),  // an escaped \v is yajl's to reject
        ]
        let byteCases: [([UInt8], Found?)] = [
            (Array(#"\u12"#.utf8) + [0xC3, 0xA9], nil), (Array(#"\u12"#.utf8) + [0xC0], Found(offset: 4, message: Self.utf8)),
            (Array(#"\"#.utf8) + [0xC3, 0xA9], Found(offset: 2, message: Self.utf8)),  // the escape takes C3: A9 is lone
            (Array(#"\uD83D"#.utf8) + [0xC3, 0xA9], Found(offset: 0, message: Reference.lone(0xD83D))),
        ]
        for (text, expected) in cases.map({ (Array($0.0.utf8), $0.1) }) + byteCases {
            for before in 0...20 {
                let bytes = Array(repeating: UInt8(ascii: "a"), count: before) + text
                let shifted = expected.map { Found(offset: $0.offset + before, message: $0.message) }
                #expect(Reference.firstViolation(bytes) == shifted, "reference: \(bytes)")
                Self.expectEverywhere(bytes, shifted)
                Self.expectEverywhere(bytes + Array("abc\"}".utf8), Reference.firstViolation(bytes + Array("abc\"}".utf8)))
            }
        }
    }

    /// Every `\u` value in upper and lower case, and every byte in each digit's place: a wrong value or a wrong
    /// verdict on a digit would show as a lone surrogate where there is none, or none where there is one.
    @Test func everyUnicodeEscapeAndEveryByteInPlaceOfADigit() {
        func check(_ bytes: [UInt8]) {
            let expected = Reference.firstViolation(bytes)
            for cuts in [[], [3], [bytes.count - 2]] where Self.scanned(bytes, cuts: cuts) != expected {
                Issue.record("\(bytes) cut at \(cuts): \(String(describing: Self.scanned(bytes, cuts: cuts))), expected \(String(describing: expected))")
            }
        }
        for v in 0...0xFFFF {
            let hex = String(v, radix: 16)
            let digits = String(repeating: "0", count: 4 - hex.count) + (v & 1 == 0 ? hex : hex.uppercased())
            check(Array("ab\\u\(digits)x\\uDC00".utf8))
        }
        for template in ["DC0a", "dbFF", "E000"] {
            for k in 0..<4 {
                for c in 0...255 {
                    // The digits of each of the three escapes (at 2, 8 and 14) in turn.
                    for at in [2, 8, 14] {
                        var bytes = Array("\\u\(template)\\udc00\\u\(template)y".utf8)
                        bytes[at + k] = UInt8(c)
                        check(bytes)
                    }
                }
            }
        }
    }

    /// Pieces of random inputs: any bytes of a JSON-ish alphabet; valid characters and escapes only; bad ones.
    static let pieces: [(Int, [UInt8])] = [
        (30, Array("abcdefgh".utf8)), (10, Array(" \":,{}[]0123456789".utf8)), (6, [UInt8(ascii: "\\")]),
        (4, [UInt8(ascii: "u")]), (6, Array("0123456789abcdefABCDEFdD".utf8)), (1, [0x0B]), (1, [0x0C]),
        (3, [0x09, 0x0A, 0x0D, 0x00, 0x1F, 0x7F]), (8, [0xC3, 0xA9]), (12, [0xE6, 0x97, 0xA5]), (4, [0xF0, 0x9F, 0x98, 0x80]),
        (4, Array(#"\ud83d\ude00"#.utf8)), (3, Array(#"\u00e9"#.utf8)), (2, Array(#"\uD800"#.utf8)), (2, Array(#"\uDFFF"#.utf8)),
        (2, Array(#"\n"#.utf8)), (1, Array(#"\\"#.utf8)), (1, Array(#"\""#.utf8)),
        (2, [0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF]), (2, [0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]),
    ]
    static let validPieces: [(Int, [UInt8])] = [
        (30, Array("abcdefgh".utf8)), (10, Array(" \":,{}[]0123456789".utf8)), (4, [UInt8(ascii: "u")]),
        (6, Array("0123456789abcdefABCDEFdD".utf8)), (3, [0x09, 0x0A, 0x0D, 0x00, 0x1F, 0x7F]), (8, [0xC3, 0xA9]),
        (2, [0xDF, 0xBF]), (12, [0xE6, 0x97, 0xA5]), (2, [0xE0, 0xA0, 0x80]), (2, [0xED, 0x9F, 0xBF]), (4, [0xF0, 0x9F, 0x98, 0x80]),
        (1, [0xF4, 0x8F, 0xBF, 0xBF]), (4, Array(#"\ud83d\ude00"#.utf8)), (3, Array(#"\u00e9"#.utf8)), (2, Array(#"\n"#.utf8)),
        (1, Array(#"\\"#.utf8)), (1, Array(#"\""#.utf8)),
    ]
    static let bad: [[UInt8]] = [
        [0x0B], [0x0C], [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
        [0xF4, 0x90, 0x80, 0x80], [0xF5], [0xFF], [0xE6, 0x97], [0xF0, 0x9F, 0x98], [0xC3],
        Array(#"\uD800"#.utf8), Array(#"\uDFFF"#.utf8), Array(#"\uDBFF\u0041"#.utf8), Array(#"\uD83D\n"#.utf8), Array(#"\u12"#.utf8),
    ]
    /// A random byte string over a JSON-ish alphabet: half of them from any pieces and single bytes of them, half
    /// from valid pieces with at most one bad one put anywhere (`validOnly`: none), so that errors also come late.
    static func randomInput(_ rand: inout Rand, validOnly: Bool = false, length: ClosedRange<Int> = 0...90) -> [UInt8] {
        var bytes: [UInt8] = []
        let target = rand.int(length)
        let sparse = validOnly || rand.bool()
        while bytes.count < target {
            let piece = rand.weighted(sparse ? validPieces : pieces)
            // A whole piece (a character or an escape), or one byte of it.
            if sparse || rand.percent(70) { bytes += piece } else { bytes.append(rand.pick(piece)) }
            if rand.percent(10) { bytes += Array(repeating: UInt8(ascii: "x"), count: rand.int(1...24)) }
        }
        if sparse && !validOnly && rand.percent(80) { bytes.insert(contentsOf: rand.pick(bad), at: rand.int(0...bytes.count)) }
        return bytes
    }

    @Test func randomInputsAgreeWithTheReference() {
        var rand = Rand(seed: 0x5CA9_2026)
        var disagreements = 0
        for round in 0..<12000 {
            // Longer ones too (every tenth), for runs through several of the kernel's 32-byte blocks.
            let bytes = Self.randomInput(&rand, length: round % 10 == 9 ? 90...400 : 0...90)
            let expected = Reference.firstViolation(bytes)
            var cutsList: [[Int]] = [[]]
            for _ in 0..<4 {
                cutsList.append((0..<rand.int(1...4)).map { _ in rand.int(0...bytes.count) })
            }
            for cuts in cutsList where Self.scanned(bytes, cuts: cuts) != expected {
                disagreements += 1
                if disagreements <= 5 {
                    Issue.record("\(bytes) cut at \(cuts): \(String(describing: Self.scanned(bytes, cuts: cuts))), expected \(String(describing: expected))")
                }
            }
        }
        #expect(disagreements == 0)
    }
}

/// The SIMD kernel (`cjsonscan_plain_prefix`) alone, against its contract (CJSONScan.h): what it skips is what the
/// reference accepts, ending with nothing open; on valid input it skips all but the last few bytes; and it stops
/// exactly where the fast path must look.
@Suite struct StrictScannerKernelTests {
    typealias R = StrictScannerReferenceTests

    func prefix(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { cjsonscan_plain_prefix($0.baseAddress, $0.count) }
    }

    /// (Where the kernels run their portable code — no AVX2, or STREAMMAP_NO_AVX2 — the scanner runs its Swift code
    /// alone and these tests have nothing to check.)
    @Test(.enabled(if: StrictJSONScanner.kernelAvailable))
    func whatItSkipsTheReferenceAcceptsWithNothingOpen() throws {
        var rand = Rand(seed: 0x4B45_524E)
        for round in 0..<20000 {
            let bytes = R.randomInput(&rand, validOnly: round % 4 == 0, length: round % 2 == 0 ? 0...120 : 100...600)
            let end = prefix(bytes)
            guard end <= bytes.count else {
                Issue.record("prefix \(end) past the end of \(bytes.count) bytes")
                return
            }
            var reference = R.Reference()
            for (offset, b) in bytes[..<end].enumerated() {
                if let found = reference.feed(b, at: offset) {
                    Issue.record("skipped \(end) bytes over \(found): \(bytes)")
                    return
                }
            }
            let open = reference.continuations > 0 || reference.afterBackslash || reference.hexDigits != nil || reference.pendingHigh != nil
            #expect(!open, "ends inside a character or an escape at \(end): \(bytes)")
            // Valid input: all but the last 34 bytes at most (a block of 32 and a character cut by its end).
            if round % 4 == 0 {
                #expect(end >= bytes.count - 34, "stopped at \(end) of \(bytes.count) valid bytes: \(bytes)")
            }
        }
    }

    @Test(.enabled(if: StrictJSONScanner.kernelAvailable))
    func stopsWhereTheFastPathMustLook() throws {
        let plain = Array(repeating: UInt8(ascii: "a"), count: 100)
        let cjk: [UInt8] = [0xE6, 0x97, 0xA5]
        // What is put at `at`, and where the kernel must stop, from `at`.
        let cases: [([UInt8], Int)] = [
            ([0x0B], 0), ([0x0C], 0), ([0xC0, 0x80], 0), ([0xED, 0xA0, 0x80], 0), ([0xF4, 0x90, 0x80, 0x80], 0),
            ([0x80], 0), ([0xC3, 0x41], 0), (cjk + [0xE6, 0x97, 0x41], 3), (Array(#"\uD800x"#.utf8), 0),
            (Array(#"\uDC00"#.utf8), 0), (Array(#"\u12G4"#.utf8), 0), ([UInt8(ascii: "\\"), 0xC3, 0xA9], 0),
            (Array(#"\n\u00e9\ud83d\ude00"#.utf8) + [0x0C], 20), (cjk + cjk + [0xF0, 0x9F, 0x98, 0x80, 0xC1], 10),
        ]
        for (piece, stop) in cases {
            for at in [0, 1, 15, 30, 31, 32, 33, 50] {
                let bytes = Array(plain[..<at]) + piece + plain
                #expect(prefix(bytes) == at + stop, "\(piece) at \(at): \(prefix(bytes))")
            }
        }
    }
}

extension StrictScannerReferenceTests.Reference {
    static func feedMessage(_ b: UInt8) -> String {
        var r = Self()
        return r.feed(b, at: 0)?.message ?? ""
    }
}
