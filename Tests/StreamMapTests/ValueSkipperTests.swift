// The validating skipper (Sources/CJSONScan/SkipValue.c) that the stream engine runs ahead of yajl on members no
// field reads (`YajlParserBase.skipsAhead`): held to the parser it shortcuts (yajl with the strict scanner in
// front) on values written to be invalid in every way yajl and the strict layer check, on random values and on
// mutations of them; and, through the engines, records whose unmapped members are invalid that way, at several
// depths, whole and in pieces, must get exactly the tree engine's verdict.

import Testing

@_spi(Fuzzing) @testable import StreamMap
import StreamMapTestSupport

/// Values the skipper must pass (they are valid) and values it must not (each invalid in one way).
enum SkipperCases {
    static let valid: [String] = [
        #"{}"#, #"[]"#, #""""#, #""plain""#, #"{"a":1}"#, #"[1,-2,3.5,-0.25e+10,1E-2,0,-0]"#,
        #"{"k":[true,false,null,{"x":"y"}],"e":{}}"#, #"  { "a" : [ 1 , 2 ] , "b" :"c" }"#, "[\n\t\r 1\n]",
        #""escapes \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00 done""#, #"{"é":"naïve 東京 😀","del":"\#u{7F}"}"#,
        #"[[[[[[[[[[]]]]]]]]]]"#, #"{"a":{"b":{"c":{"d":[{"e":"f"}]}}}}"#, #"["x\u0000y"]"#,
    ]

    /// (what is wrong, the value). Each is invalid for yajl or the strict scanner.
    static let invalid: [(String, String)] = [
        ("raw control character", "[\"a\u{01}b\"]"),
        ("raw tab in a string", "{\"t\":\"a\tb\"}"),
        ("bad escape", #"["a\xb"]"#),
        ("short \\u escape", #"["\u12"]"#),
        ("non-hex \\u escape", #"["\u12G4"]"#),
        ("lone high surrogate", #"["\uD800"]"#),
        ("lone low surrogate", #"["\uDC00x"]"#),
        ("mismatched surrogates", #"["\uD800\u0041"]"#),
        ("leading zero", #"[01]"#),
        ("no digits after the point", #"[1.]"#),
        ("no digits in the exponent", #"[1e]"#),
        ("a sign alone", #"[-]"#),
        ("a plus sign", #"[+1]"#),
        ("a point first", #"[.5]"#),
        ("NaN", #"[NaN]"#),
        ("Infinity", #"[-Infinity]"#),
        ("bad literal tru", #"[tru]"#),
        ("bad literal nul", #"{"a":nul}"#),
        ("capitalised literal", #"[True]"#),
        ("literal run on", #"[nullx]"#),
        ("trailing comma in an array", #"[1,]"#),
        ("trailing comma in an object", #"{"a":1,}"#),
        ("missing comma", #"[1 2]"#),
        ("missing colon", #"{"a" 1}"#),
        ("key not a string", #"{a:1}"#),
        ("number key", #"{1:1}"#),
        ("mismatched brackets", #"[1}"#),
        ("mismatched braces", #"{"a":1]"#),
        ("unclosed", #"{"a":[1,2"#),
        ("unclosed string", #"["abc"#),
        ("single quotes", #"['a']"#),
        ("vertical tab as whitespace", "[1,\u{0B}2]"),
        ("form feed as whitespace", "[1,\u{0C}2]"),
        ("a comment", #"[1/*c*/]"#),
        ("empty member", #"{"a":}"#),
        ("double colon", #"{"a"::1}"#),
    ]

    /// Invalid UTF-8 inside a string (bytes no Swift string holds): overlong, encoded surrogate, above U+10FFFF,
    /// a lone continuation, a cut character.
    static let invalidUTF8: [(String, [UInt8])] = [
        ("overlong", [0xC0, 0xAF]), ("overlong 3-byte", [0xE0, 0x80, 0xAF]), ("encoded surrogate", [0xED, 0xA0, 0x80]),
        ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]), ("lone continuation", [0x80]), ("cut character", [0xE2, 0x82]),
        ("0xFF", [0xFF]),
    ].map { ($0.0, Array(#"{"s":["ok","#.utf8) + [0x22] + $0.1 + [0x22] + Array("]}".utf8)) }

    static var allInvalid: [(String, [UInt8])] {
        invalid.map { ($0.0, Array($0.1.utf8)) } + invalidUTF8
    }
}

@Suite struct ValueSkipperTests {
    func divergence(_ bytes: [UInt8], maximumDepth: Int = 10_000) -> String? {
        bytes.withUnsafeBytes { ValueSkipperCheck.divergence($0, maximumDepth: maximumDepth) }
    }

    func skipperEnd(_ text: String, maximumDepth: Int = 10_000) -> Int {
        Array(text.utf8).withUnsafeBytes { ValueSkipperCheck.skipperEnd($0, maximumDepth: maximumDepth) }
    }

    @Test func validValuesEndWhereTheParsersDo() {
        for value in SkipperCases.valid {
            for tail in ["", ",", "]", " x", "}\n{"] {
                let bytes = Array((value + tail).utf8)
                #expect(divergence(bytes) == nil, "\(value + tail)")
                #expect(skipperEnd(value + tail) == value.utf8.count, "\(value + tail)")
            }
        }
    }

    @Test func invalidValuesAreLeftToTheParser() {
        for (what, bytes) in SkipperCases.allInvalid {
            #expect(bytes.withUnsafeBytes { ValueSkipperCheck.skipperEnd($0, maximumDepth: 10_000) } == 0, "\(what)")
            #expect(divergence(bytes + Array(",1".utf8)) == nil, "\(what)")
            if case .ends = bytes.withUnsafeBytes({ ValueSkipperCheck.parserVerdict($0, maximumDepth: 10_000) }) {
                Issue.record("the parser accepts \(what)")
            }
        }
    }

    @Test func scalarsAndCutValuesAreNotSkipped() {
        for text in ["1", "true", "null", "-2.5", #"{"a":1"#, #""abc"#, "[", "", "   "] {
            #expect(skipperEnd(text) == 0, "\(text)")
        }
    }

    /// Found by the fuzz target: a literal right before the strict scanner's first violation ends where the bytes
    /// the skipper is given end, so it cannot vouch for it (it needs the byte after), and leaves it to yajl — the
    /// safe answer, not a divergence.
    @Test func aLiteralCutByAStrictViolationIsLeftToTheParser() {
        let bytes: [UInt8] = Array("null".utf8) + [0x91, 0x00, 0x00, 0x12, 0x12, 0x17, 0x30, 0x31]
        #expect(bytes.withUnsafeBytes { ValueSkipperCheck.skipperEnd($0, maximumDepth: 10_000) } == 0)
        #expect(divergence(bytes) == nil)
        // With a byte after it that the skipper sees, the same literal must be passed.
        #expect(divergence(Array("null,".utf8)) == nil)
        #expect(Array("null,".utf8).withUnsafeBytes { ValueSkipperCheck.skipperEnd($0, maximumDepth: 10_000) } == 4)
    }

    @Test func theNestingLimitIsTheParsers() {
        let nested = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(skipperEnd(nested, maximumDepth: 40) == 80)
        #expect(skipperEnd(nested, maximumDepth: 39) == 0)
        for limit in [1, 2, 39, 40, 41] {
            #expect(divergence(Array(nested.utf8), maximumDepth: limit) == nil)
        }
        // Deeper than the skipper's own stack (4 096 levels): left to yajl.
        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        #expect(skipperEnd(deep) == 0)
        #expect(divergence(Array(deep.utf8)) == nil)
    }

    /// Random values, and the same values with bytes flipped, inserted, removed or cut: the skipper passes a value
    /// exactly when the parser accepts it, and ends where the parser does.
    @Test func randomAndMutatedValues() {
        var r = Rand(seed: 0x5EED_5C1F)
        var checked = 0
        for _ in 0..<4000 {
            var bytes = Array(randomValue(&r, depth: 0).utf8)
            if bytes.first != UInt8(ascii: "{") && bytes.first != UInt8(ascii: "[") { bytes = Array("[".utf8) + bytes + Array("]".utf8) }
            for mutation in 0..<4 {
                var m = bytes
                if mutation > 0 { mutate(&m, &r) }
                let limit = r.percent(20) ? r.int(1...6) : 10_000
                if let d = divergence(m + Array(r.pick([",", "", "}", " ", "x"]).utf8), maximumDepth: limit) {
                    Issue.record("\(d): \(EngineFuzzing.printable(m))")
                    return
                }
                checked += 1
            }
        }
        #expect(checked == 16_000)
    }

    func randomValue(_ r: inout Rand, depth: Int) -> String {
        switch r.int(0...(depth > 5 ? 3 : 5)) {
        case 0: return r.pick(["0", "-1", "12.5", "1e9", "-0.0E-3", "123456789012345678901234567890"])
        case 1: return r.pick(["true", "false", "null"])
        case 2, 3: return "\"" + (0..<r.int(0...12)).map { _ in
                r.pick(["a", "é", "😀", "\\n", "\\\"", "\\\\", "\\u0041", "\\uD83D\\uDE00", " ", "/", "\\/", "東"]) }.joined() + "\""
        case 4: return "[" + (0..<r.int(0...4)).map { _ in randomValue(&r, depth: depth + 1) }.joined(separator: r.pick([",", " , ", ",\n"])) + "]"
        default:
            return "{" + (0..<r.int(0...4)).map { i in "\"k\(i)\"" + r.pick([":", " : "]) + randomValue(&r, depth: depth + 1) }
                .joined(separator: ",") + "}"
        }
    }

    func mutate(_ bytes: inout [UInt8], _ r: inout Rand) {
        let specials: [UInt8] = Array("{}[]\",:\\ 0-.eE+tfnu\u{0B}\u{0C}\u{01}".utf8) + [0x80, 0xC0, 0xED, 0xF4, 0xFF, 0x7F]
        for _ in 0..<r.int(1...3) {
            guard !bytes.isEmpty else { return }
            let at = r.int(0...(bytes.count - 1))
            switch r.int(0...3) {
            case 0: bytes[at] = r.pick(specials)
            case 1: bytes.insert(r.pick(specials), at: at)
            case 2: bytes.remove(at: at)
            default: bytes.removeSubrange(at...)
            }
        }
    }
}

/// Through the engines: records whose unmapped members hold the invalid values above (and long enough valid ones
/// that the stream engine skips them ahead of yajl), at the top, one and two objects down, before and after the
/// mapped fields; mapped whole and in pieces. The stream engine's output and verdict (message, offset) must be the
/// tree engine's.
@Suite struct SkippedMemberDifferentialTests {
    static let mapper: Mapper = .object {
        Field("id", to: "id")
        Field("user.name", to: "name")
        Field("user.deep.v", to: "v")
    }

    /// A value the skipper takes over (≥ `YajlParserBase.skipAheadMinimum` bytes) with `inner` inside.
    static func padded(_ inner: [UInt8]) -> [UInt8] {
        Array(#"{"pad":"\#(String(repeating: "p", count: 100))","list":[1,2,{"x":"#.utf8) + inner + Array("}]}".utf8)
    }

    static func records(around value: [UInt8]) -> [[UInt8]] {
        let v = value
        return [
            Array(#"{"skip":"#.utf8) + v + Array(#","id":1,"user":{"name":"n"}}"#.utf8),
            Array(#"{"id":1,"skip":"#.utf8) + v + Array(#"}"#.utf8),
            Array(#"{"id":1,"user":{"other":"#.utf8) + v + Array(#","name":"n","deep":{"v":2}}}"#.utf8),
            Array(#"{"id":1,"user":{"name":"n","deep":{"w":"#.utf8) + v + Array(#","v":3}},"tail":"#.utf8) + v + Array("}".utf8),
            Array(#"{"a":"#.utf8) + v + Array(#","b":"#.utf8) + v + Array(#","id":[1]}"#.utf8),
        ]
    }

    @Test func invalidUnmappedMembersGetTheTreeEnginesVerdict() {
        var records: [[UInt8]] = []
        for (_, bad) in SkipperCases.allInvalid {
            records += Self.records(around: bad) + Self.records(around: Self.padded(bad))
        }
        for valid in SkipperCases.valid {
            records += Self.records(around: Self.padded(Array(valid.utf8)))
        }
        #expect(compare(mapper: Self.mapper, records: records, makeCandidate: makeStreamEngine, pieces: 0x5C1) == 0)
        // Every cut point of a few records: the skipped value cut by a piece's end is left to yajl.
        let short = Self.records(around: Self.padded(Array(#"["\u00e9",[true]]"#.utf8)))
        for seed in 0..<UInt64(8) {
            #expect(compare(mapper: Self.mapper, records: short, makeCandidate: makeStreamEngine, pieces: seed) == 0)
        }
    }

    @Test func skippedMembersUnderTheNestingLimit() {
        let deep = String(repeating: "[", count: 30) + String(repeating: "]", count: 30)
        let records = Self.records(around: Self.padded(Array(deep.utf8)))
        for limit in [3, 20, 33, 34, 35, 40] {
            let options = JSONParserOptions(maximumDepth: limit)
            let tree = TreeEngine(mapper: Self.mapper, parserOptions: options)
            var stream = StreamEngine(mapper: Self.mapper, parserOptions: options)
            for record in records {
                var a = JSONWriter(), b = JSONWriter()
                let expected = record.withUnsafeBytes { tree.map(record: $0, into: &a) }
                let got = record.withUnsafeBytes { stream.map(record: $0, into: &b) }
                #expect(expected == got && a.bytes == b.bytes, "limit \(limit): \(render(expected)) / \(render(got))")
            }
        }
    }
}
