// Verbatim copies (Sources/CJSONScan/CanonicalCopy.c, `VerbatimCopier`): a record that passes through unchanged is
// checked by the strict scanner and the validating skipper and copied by a C kernel instead of going through
// yajl's events. Held to the tree engine's `identity` on written cases (every escape, whitespace everywhere,
// duplicate keys at every depth, keys equal only once decoded), on strings with an escape at every offset
// around the SIMD block size, on random values with random whitespace and escaping, and through the engine:
// whole records and records in pieces, valid and invalid, byte for byte and verdict for verdict.

import Testing

@_spi(Fuzzing) @testable import StreamMap
import StreamMapTestSupport

/// `record` mapped by `stream` whole (`size` 0) or through the record-in-pieces API in pieces of `size` bytes.
func mapRecord(_ record: [UInt8], with stream: inout StreamEngine, inPiecesOf size: Int) -> (RecordOutcome, JSONWriter) {
    var out = JSONWriter()
    guard size > 0 else { return (record.withUnsafeBytes { stream.map(record: $0, into: &out) }, out) }
    stream.beginRecord()
    for start in stride(from: 0, to: record.count, by: size) {
        record[start..<min(start + size, record.count)].withUnsafeBytes { stream.continueRecord($0) }
    }
    return (stream.endRecord(into: &out), out)
}

@Suite struct VerbatimCopyTests {
    func copy(_ text: String, maximumDepth: Int = 10_000, portable: Bool = false) -> String? {
        Array(text.utf8).withUnsafeBytes { VerbatimCopyCheck.copy($0, maximumDepth: maximumDepth, portable: portable) }
            .map { String(decoding: $0, as: UTF8.self) }
    }

    func divergence(_ bytes: [UInt8], maximumDepth: Int = 10_000) -> String? {
        bytes.withUnsafeBytes { VerbatimCopyCheck.divergence($0, maximumDepth: maximumDepth) }
    }

    @Test func whitespaceGoesAndTokensStay() {
        let input = " \t{ \"a\" : [ 1 , 2.5e+3 , -0 , 1E-2 , 123456789012345678901234567890 , true , false , null ] ,\r\n \"b\" : { } , \"c\" : [ ] }\n "
        #expect(copy(input) == #"{"a":[1,2.5e+3,-0,1E-2,123456789012345678901234567890,true,false,null],"b":{},"c":[]}"#)
        #expect(copy(input, portable: true) == copy(input))
        #expect(divergence(Array(input.utf8)) == nil)
    }

    @Test func escapesAreWrittenInTheCanonicalForm() {
        let input = #"["\/\b\f\n\r\t\"\\\u0000\u001F\u0007\u007f\u00E9\u2028\uD83D\uDE00\u0041 é😀"]"#
        #expect(copy(input) == "[\"/\\b\\f\\n\\r\\t\\\"\\\\\\u0000\\u001f\\u0007\u{7F}é\u{2028}😀A é😀\"]")
        for valid in SkipperCases.valid where valid.first == "{" || valid.first == "[" {
            #expect(copy(valid) != nil, "\(valid)")
            #expect(divergence(Array(valid.utf8)) == nil, "\(valid)")
        }
    }

    @Test func duplicateKeysAreLeftToTheEvents() {
        for input in [
            #"{"a":1,"a":2}"#, #"{"a":1,"\u0061":2}"#, #"{"x":[{"k":1,"k":2}]}"#, #"{"o":{"p":{"q":{"z":1,"y":2,"z":3}}}}"#,
            // Keys equal once decoded, one written plainly (its hash read from the input) and one escaped (from
            // the output), short and long, either first; and two escaped forms of one key.
            #"{"é":1,"\u00e9":2}"#, #"{"\u00E9":1,"é":2}"#, #"{"\"":1,"\u0022":2}"#, #"{"\u001F":1,"\u001f":2}"#,
            #"{"abcdefghijklmnopqrstuvwxyz0123456789é":1,"abcdefghijklmnopqrstuvwxyz0123456789\u00e9":2}"#,
            #"{"abcdefghij\/":1,"abcdefghij/":2}"#, #"{"k":{"long key here":1,"long key her\u0065":2}}"#,
            "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k7\":0}",
            "{" + (0..<40).map { "\"key number \($0)\":\($0)" }.joined(separator: ",") + #","key numb\u0065r 7":0}"#,
        ] {
            #expect(copy(input) == nil, "\(input)")
            #expect(copy(input, portable: true) == nil, "\(input)")
        }
        // Equal keys in different objects, and many keys, are copies.
        for input in [#"{"a":{"k":1},"b":{"k":2},"k":[{"k":3},{"k":4}]}"#,
                      "{" + (0..<1000).map { "\"key\($0)\":\($0)" }.joined(separator: ",") + "}"] {
            #expect(copy(input) == input)
            #expect(divergence(Array(input.utf8)) == nil)
        }
    }

    @Test func invalidRecordsAreLeftToTheEvents() {
        for (what, bytes) in SkipperCases.allInvalid {
            #expect(bytes.withUnsafeBytes { VerbatimCopyCheck.copy($0, maximumDepth: 10_000) } == nil, "\(what)")
        }
        for input in [#"{} x"#, #"{}{}"#, #"[1"#, "", "  ", "01", "0 1", "1x", "truex", "null null", "-", "1.e5 "] {
            #expect(copy(input) == nil, "\(input)")
        }
        // The copy checks every number and literal itself (no validating skip before it): a token that is not
        // exactly one is not copied, wherever it is; one that is, is.
        for token in ["1.", ".5", "+1", "1e", "1e+", "-", "-a", "tru", "nul", "fals", "falsey", "nulll", "01", "-01", "00",
                      "1.5.5", "0x1", "Infinity", "-Infinity", "NaN", "1E+-2", "1e5e5", "--1", "1-", "2:3", "1\"x\"", "[1]1",
                      "1{}", "True", "NULL"] {
            for input in ["[\(token)]", "{\"k\":\(token)}", "[0,\(token),0]", "\(token)", " \(token) "] {
                #expect(copy(input) == nil, "\(input)")
                #expect(copy(input, portable: true) == nil, "\(input)")
                #expect(divergence(Array(input.utf8)) == nil, "\(input)")
            }
        }
        for token in ["0", "-0", "0e0", "1E+2", "-12.50e-0", "9007199254740993", "true", "false", "null"] {
            for input in ["[\(token)]", "{\"k\":\(token)}", "[0,\(token),0]", "\(token)", " \(token)\n"] {
                #expect(copy(input) == input.trimmingCharacters(in: .whitespacesAndNewlines), "\(input)")
                #expect(divergence(Array(input.utf8)) == nil, "\(input)")
            }
        }
        #expect(copy(#" "alone" "#) == #""alone""#)
        #expect(copy("12 ") == "12")
        #expect(copy("-0.5e-3\n") == "-0.5e-3")
        #expect(copy("null\r\n") == "null")
        #expect(copy("[[[[1]]]]", maximumDepth: 4) == "[[[[1]]]]")
        #expect(copy("[[[[1]]]]", maximumDepth: 3) == nil)
    }

    /// The strict scanner's rules hold without it (`cjsonscan_valid_utf8` checks UTF-8, the copy the rest):
    /// invalid UTF-8 of every kind, a character the record's end cuts, `\f` and `\v` as whitespace, lone and
    /// mismatched surrogate escapes, bad escapes and raw control bytes are not copied, at every offset around the
    /// UTF-8 check's 64-byte blocks, on both code paths; valid characters of every length there are, as the tree
    /// writes them.
    @Test func theStrictScannersRulesWithoutIt() {
        let invalid: [[UInt8]] = [
            [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xBF],
            [0xE2, 0x82], [0xFF], [0xFE], [0xC3], [0xF0, 0x9F, 0x98], [0xC3, 0x28], [0xF5, 0x80, 0x80, 0x80],
            [0x01], [0x1F], Array(#"\uD800"#.utf8), Array(#"\uDC00"#.utf8), Array(#"\uD800\u0041"#.utf8),
            Array(#"\uD800\uD800"#.utf8), Array(#"\x"#.utf8), Array(#"\u12G4"#.utf8),
        ]
        let valid: [[UInt8]] = [[0xC3, 0xA9], [0xE6, 0x9D, 0xB1], [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBF, 0xBF],
                                [0xF4, 0x8F, 0xBF, 0xBF], Array(#"\uD83D\uDE00"#.utf8), [0x7F]]
        for offset in 52..<140 {
            let head = Array(#"{"k":""#.utf8)
            let pad = [UInt8](repeating: 0x61, count: max(0, offset - head.count))
            for bad in invalid {
                let record = head + pad + bad + Array(#""}"#.utf8)
                for portable in [false, true] {
                    #expect(record.withUnsafeBytes { VerbatimCopyCheck.copy($0, maximumDepth: 100, portable: portable) } == nil,
                            "\(bad) at \(offset)")
                }
                #expect(divergence(record) == nil)
            }
            for good in valid {
                let record = head + pad + good + Array(#""}"#.utf8)
                #expect(record.withUnsafeBytes { VerbatimCopyCheck.copy($0, maximumDepth: 100) } != nil, "\(good) at \(offset)")
                #expect(divergence(record) == nil)
            }
            // Whitespace that only yajl takes, and a character the end cuts.
            for space: UInt8 in [0x0B, 0x0C] {
                let record = Array("[".utf8) + [UInt8](repeating: 0x20, count: offset) + [space] + Array("1]".utf8)
                #expect(record.withUnsafeBytes { VerbatimCopyCheck.copy($0, maximumDepth: 100) } == nil)
                #expect(divergence(record) == nil)
            }
            let cut = Array(#"["#.utf8) + [UInt8](repeating: 0x20, count: offset) + Array(#""a""#.utf8) + [0xC3]
            for portable in [false, true] {
                #expect(cut.withUnsafeBytes { VerbatimCopyCheck.copy($0, maximumDepth: 100, portable: portable) } == nil)
            }
        }
    }

    /// Strings of every length around the SIMD blocks (32 bytes, and the portable code's 8), with an escape or a
    /// multi-byte character at every offset.
    @Test func escapesAtEveryOffset() {
        for insert in [#"\n"#, #"\u00e9"#, #"\uD83D\uDE00"#, #"\""#, "é", "😀"] {
            for length in 0..<80 {
                for at in [0, length / 2, length] {
                    var body = String(repeating: "x", count: length)
                    body.insert(contentsOf: insert, at: body.index(body.startIndex, offsetBy: at))
                    let record = Array("[\"\(body)\",\"\(body)\"]".utf8)
                    #expect(divergence(record) == nil, "\(insert) at \(at) of \(length)")
                    #expect(record.withUnsafeBytes { VerbatimCopyCheck.copy($0, maximumDepth: 100) } != nil)
                }
            }
        }
    }

    @Test func randomValuesWithRandomWhitespaceAndEscapes() {
        var r = Rand(seed: 0xC0_FFEE)
        var copied = 0
        for _ in 0..<3000 {
            let record = Array(("{\"v\":" + randomValue(&r, depth: 0) + "}").utf8)
            if let d = divergence(record) {
                Issue.record("\(d): \(EngineFuzzing.printable(record))")
                return
            }
            if record.withUnsafeBytes({ VerbatimCopyCheck.copy($0, maximumDepth: 10_000) }) != nil { copied += 1 }
        }
        #expect(copied == 3000)  // the keys of each object are distinct: every record is a copy
    }

    func randomValue(_ r: inout Rand, depth: Int) -> String {
        func space(_ r: inout Rand) -> String { r.percent(70) ? "" : r.pick([" ", "\n", "\t", "\r\n  "]) }
        switch r.int(0...(depth > 5 ? 3 : 5)) {
        case 0: return r.pick(["0", "-1", "12.5", "1e9", "-0.0E-3", "123456789012345678901234567890"])
        case 1: return r.pick(["true", "false", "null"])
        case 2, 3:
            return "\"" + (0..<r.int(0...40)).map { _ in
                r.pick(["a", "é", "😀", "\\n", "\\\"", "\\\\", "\\u0041", "\\uD83D\\uDE00", " ", "/", "\\/", "東", "\\u001b",
                        "\\t", "\\u00E9", "\\u2028", "\\b", "\\u007F", "abcdefghij"]) }.joined() + "\""
        case 4:
            return "[" + space(&r) + (0..<r.int(0...4)).map { _ in randomValue(&r, depth: depth + 1) }
                .joined(separator: space(&r) + "," + space(&r)) + space(&r) + "]"
        default:
            return "{" + space(&r) + (0..<r.int(0...12)).map { i in
                "\"" + r.pick(["k", "\\u006b", "k\\/"]) + "\(i)\"" + space(&r) + ":" + space(&r) + randomValue(&r, depth: depth + 1)
            }.joined(separator: space(&r) + "," + space(&r)) + space(&r) + "}"
        }
    }

    /// Through the stream engine with `identity` (and a type check): whole and in pieces, the output and the verdict
    /// are the tree engine's, and valid records without duplicate keys took the verbatim path.
    @Test(arguments: [Mapper.identity, .objectValue])
    func theEngineCopiesRecordsVerbatim(mapper: Mapper) {
        var records: [[UInt8]] = SkipperCases.valid.map { Array($0.utf8) } + SkipperCases.allInvalid.map(\.1)
        records += [#"{"a":1,"a":2}"#, #"{"a":{"b":1,"\u0062":2}}"#, " [1, 2] ", "7", #""text""#, #"{"a":1} x"#, "01", "0 1"]
            .map { Array($0.utf8) }
        let tree = TreeEngine(mapper: mapper)
        var stream = StreamEngine(mapper: mapper)
        var expectedCopies = 0
        for record in records {
            var treeOut = JSONWriter()
            let treeOutcome = record.withUnsafeBytes { tree.map(record: $0, into: &treeOut) }
            let before = stream.verbatimCopies
            let (whole, wholeOut) = mapRecord(record, with: &stream, inPiecesOf: 0)
            let copied = stream.verbatimCopies - before
            let (pieces, piecesOut) = mapRecord(record, with: &stream, inPiecesOf: 3)
            let text = EngineFuzzing.printable(record)
            #expect("\(whole)" == "\(treeOutcome)", "\(text)")
            #expect("\(pieces)" == "\(treeOutcome)", "\(text)")
            #expect(wholeOut.bytes == treeOut.bytes, "\(text)")
            #expect(piecesOut.bytes == treeOut.bytes, "\(text)")
            // Identity copies any value; the type check only those its first byte tells (not numbers).
            let first = record.first(where: { $0 > 0x20 })
            let copiable = first.map { Array("{[\"tfn".utf8).contains($0) || Self.isIdentity(mapper) } ?? false
            if case .mapped = treeOutcome, copiable, !text.contains(#""a":1,"a""#), !text.contains(#"\u0062"#) {
                #expect(copied == 1, "\(text)")
                expectedCopies += 1
            } else {
                #expect(copied == 0, "\(text)")
            }
        }
        #expect(expectedCopies >= 6)
    }

    static func isIdentity(_ mapper: Mapper) -> Bool { if case .identity = mapper.kind { true } else { false } }
}

/// Containers copied verbatim inside a mapping (`YajlParserBase.copiesAhead`): pass-through members
/// (`unmapped: keep`), object fields copied whole (identity, a type check), array elements, and an identity
/// record that is not copied whole (a duplicate key in one member) — their long members hold escapes and
/// whitespace, duplicate keys and keys equal once decoded, and every invalid value of `SkipperCases`, at three
/// depths. Mapped whole and in pieces (records of over 256 KB are fed to yajl as they come, so containers are
/// cut by the pieces' ends), the stream engine's output and verdict must be the tree engine's.
@Suite struct VerbatimMemberCopyTests {
    static let mappers: [(String, Mapper)] = [
        ("keep", .object(unmapped: .keep) { Field("id", to: "ID") }),
        ("object fields", .object {
            Field("id", to: "id")
            Field("user", to: "u", .objectValue)
            Field("list", to: "l")
        }),
        ("array elements", .object { Field("list", to: "l", .arrayOf(.identity)) }),
        ("identity", .identity),
    ]

    static let padding = String(repeating: "p", count: 60)

    /// A long value (over `YajlParserBase.skipAheadMinimum` bytes) with `inner` inside, at `depth` 0, 1 or 2.
    static func member(_ inner: String, depth: Int) -> String {
        var value = #"{ "name" : "Ann \u00e9\/x\t" , "v" : \#(inner) , "pad" : "\#(padding)" }"#
        for _ in 0..<depth { value = #"[ {"k":1,"k2":"\u006b"} , \#(value) , "\#(padding)" ]"# }
        return value
    }

    static func records() -> [[UInt8]] {
        var inners: [[UInt8]] = [#"1"#, #"{"k":1,"k":2}"#, #"{"k":1,"\u006b":2}"#, #"{"a":[{"b":1,"b":2}]}"#, #"[ 1 , 2 ]"#]
            .map { Array($0.utf8) }
        inners += SkipperCases.allInvalid.map(\.1)
        var records: [[UInt8]] = []
        for inner in inners {
            for depth in 0...2 {
                let value = Array(member("\u{1}", depth: depth).utf8)
                let cut = value.firstIndex(of: 1)!
                let withInner = Array(value[..<cut]) + inner + Array(value[(cut + 1)...])
                records.append(Array(#"{"id":7,"user":"#.utf8) + withInner + Array(#","list":["#.utf8) + withInner
                               + Array(#","#.utf8) + Array(member("2", depth: 1).utf8) + Array(#"],"other":"#.utf8)
                               + withInner + Array("}".utf8))
            }
        }
        return records
    }

    static func expectSame(_ mapper: Mapper, _ name: String, _ records: [[UInt8]], pieces: [Int]) -> Int {
        let tree = TreeEngine(mapper: mapper)
        var stream = StreamEngine(mapper: mapper)
        for record in records {
            var treeOut = JSONWriter()
            let expected = record.withUnsafeBytes { tree.map(record: $0, into: &treeOut) }
            for size in pieces {
                let (outcome, out) = mapRecord(record, with: &stream, inPiecesOf: size)
                let text = EngineFuzzing.printable(Array(record.prefix(300)))
                #expect("\(outcome)" == "\(expected)", "\(name), pieces of \(size): \(text)")
                #expect(out.bytes == treeOut.bytes, "\(name), pieces of \(size): \(text)")
            }
        }
        return stream.verbatimCopies
    }

    @Test func membersAreCopiedAsTheTreeWritesThem() {
        let records = Self.records()
        for (name, mapper) in Self.mappers {
            _ = Self.expectSame(mapper, name, records, pieces: [0, 5])
            // The records whose members are valid, without duplicate keys: each copies at least one container.
            let valid = records.filter { r in [#""v" : 1 ,"#, #""v" : [ 1 , 2 ] ,"#].contains { String(decoding: r, as: UTF8.self).contains($0) } }
            #expect(valid.count == 6)
            let copies = Self.expectSame(mapper, name, valid, pieces: [0])
            #expect(copies >= valid.count, "\(name): \(copies) copies")
        }
    }

    /// Records of over 256 KB, fed in pieces of 1 000 and 4 096 bytes: yajl gets them as they come, and the
    /// containers that a piece's end cuts are parsed (and those after it copied).
    @Test func hugeRecordsInPieces() {
        let item = Self.member(#"[1,{"x":"y\u0041"}]"#, depth: 1)
        let dup = Self.member(#"{"z":1,"z":2}"#, depth: 1)
        let items = (0..<2500).map { $0 == 1700 ? dup : item }.joined(separator: " ,\n")
        let record = Array((#"{"id":1,"user":{"a":1},"list":["# + items + #"],"other":["# + items + "]}").utf8)
        #expect(record.count > 1 << 18)
        for (name, mapper) in Self.mappers {
            let copies = Self.expectSame(mapper, name, [record], pieces: [1000, 4096])
            #expect(copies > 2000, "\(name): \(copies) copies")
        }
    }
}

/// With a `where` filter, a whole record is parsed first for the filter alone (skipping what it does not read),
/// then mapped by a parse (or a verbatim copy) of the mapping alone; a record fed as it comes (over 256 KB) is
/// parsed once for both. Every path must give the tree engine's output and verdict.
@Suite struct FilteredRecordTests {
    static func records() -> [[UInt8]] {
        let long = VerbatimMemberCopyTests.member("[1,2]", depth: 1)
        var texts = [
            #"{"id":1,"lang":"en","user":\#(long),"list":[\#(long)]}"#, #"{"id":2,"lang":"fr","user":\#(long)}"#,
            #"{"id":3,"user":{"k":1,"k":2},"lang":"en"}"#, #"{"id":4,"lang":"en","user":{"a":"b"},"x":[1,}"#,
            #"{"id":5,"lang":"fr","user":{"a":"b"},"x":[1,}"#, #"{"id":6,"lang":"en","user":"#, "  ", "[1,2]", #"{"lang":null}"#,
        ]
        let items = (0..<2500).map { _ in long }.joined(separator: ",")
        texts.append(#"{"id":7,"lang":"en","list":["# + items + "]}")
        texts.append(#"{"id":8,"list":["# + items + #"],"lang":"fr"}"#)
        return texts.map { Array($0.utf8) }
    }

    @Test(arguments: ["identity", "keep", "object fields"])
    func filteredRecordsGetTheTreeEnginesVerdict(mapping: String) throws {
        let mapper = VerbatimMemberCopyTests.mappers.first { $0.0 == mapping }!.1
        let filter = try RecordFilter(#"lang == "en" || id == 5"#)
        let tree = TreeEngine(mapper: mapper, filter: filter)
        var stream = StreamEngine(mapper: mapper, filter: filter)
        var kept = 0
        for record in Self.records() {
            var treeOut = JSONWriter()
            let expected = record.withUnsafeBytes { tree.map(record: $0, into: &treeOut) }
            if case .mapped = expected { kept += 1 }
            for size in [0, 7, 4096] {
                let (outcome, out) = mapRecord(record, with: &stream, inPiecesOf: size)
                let text = EngineFuzzing.printable(Array(record.prefix(200)))
                #expect("\(outcome)" == "\(expected)", "\(mapping), pieces of \(size): \(text)")
                #expect(out.bytes == treeOut.bytes, "\(mapping), pieces of \(size): \(text)")
            }
        }
        #expect(kept >= 1)
        if mapping == "identity" { #expect(stream.verbatimCopies > 0) }  // a kept record is copied verbatim
    }
}

/// `unmapped: keep` with plain renames is a verbatim copy with its members rearranged (`RenamedCopy`): the fields
/// first, in the spec's order, then every other member in input order. Every record must get the tree engine's
/// outcome and bytes — those the copy takes, and those it leaves to the events (an absent or null value that is an
/// error or a default, a kept key with a destination's name, duplicate keys, a root that is not an object,
/// invalid JSON).
@Suite struct RenamedCopyTests {
    static let mappers: [(String, Mapper)] = [
        ("required", .object(unmapped: .keep) {
            Field("id_str", to: "idStr")
            Field("user", to: "author")
        }),
        ("identity and policies", .object(unmapped: .keep) {
            Field(sources: [KeyPath("id_str")], destinations: [KeyPath("idStr")], mapper: .identity)
            Field(sources: [KeyPath("user")], destinations: [KeyPath("author")],
                  mapper: .policy(.identity, missing: .omit, null: .omit))
            Field(sources: [KeyPath("lang")], destinations: [KeyPath("language")],
                  mapper: .policy(.identity, missing: .keepNull, null: .passToMapper))
            Field(sources: [KeyPath("n")], destinations: [KeyPath("count")],
                  mapper: .policy(.identity, missing: .useDefault(0), null: .fail))
        }),
        ("same names, escaped keys", .object(unmapped: .keep) {
            Field("x")
            Field("é\"k", to: "new\nline")
            Field("", to: "empty")
        }),
    ]

    static let records: [String] = [
        #"{"id_str":"1","user":{"a":1},"x":1,"y":[1,2],"lang":"en","n":3}"#,
        #"{"x":1,"id_str":"2","y":[1,{"z":null}],"user":"u","n":0,"lang":null,"é\"k":true,"":5}"#,
        #"{ "y" : 1 ,  "user" : [ ] , "id_str" : "3", "n": -1.5e3, "lang" : "fr" }"#,
        #"{"id_str":"4","user":2}"#, #"{"user":2,"id_str":"5","n":1,"lang":"x","x":0,"é\"k":1,"":2}"#,
        #"{"y":1,"user":{"a":1},"n":1,"lang":"x"}"#, #"{"id_str":null,"user":1,"n":1,"lang":"x"}"#,
        #"{"id_str":"6","user":null,"n":1,"lang":"x"}"#, #"{"id_str":"7","user":1,"n":null,"lang":"x"}"#,
        #"{"id_str":"8","user":1,"lang":"x"}"#, #"{"id_str":"9","user":1,"n":1}"#,
        #"{"id_str":"10","user":1,"n":1,"lang":"x","idStr":"shadowed"}"#,
        #"{"id_str":"11","user":1,"n":1,"lang":"x","author":1,"empty":2,"new\nline":3}"#,
        #"{"id_str":"12","user":1,"n":1,"lang":"x","y":1,"y":2}"#, #"{"id_str":"13","user":{"a":1,"a":2},"n":1,"lang":"x"}"#,
        #"{"id\u005fstr":"14","u\u0073er":"\u00e9\ud83d\ude00","n":1,"lang":"x","\u00e9\"k":"\/"}"#,
        #"{}"#, #"[1,2]"#, #""s""#, "1", "null", #"{"id_str":"15","user":1,"n":1,"lang":"x""#, #"{"id_str":"16",}"#,
        #"{"id_str":"17","user":1,"n":1,"lang":"x","bad":"\x"}"#, "{\"id_str\":\"18\",\"user\":\"\u{1}\",\"n\":1,\"lang\":\"x\"}",
        #"{"x":{"deep":[[[{"id_str":1}]]]},"id_str":"19","user":1,"n":1,"lang":"x"}"#,
    ]

    @Test func renamedCopiesAreTheTreesRecords() {
        for (name, mapper) in Self.mappers {
            let records = Self.records.map { Array($0.utf8) }
            _ = VerbatimMemberCopyTests.expectSame(mapper, name, records, pieces: [0, 7])
            var stream = StreamEngine(mapper: mapper)
            for record in records { _ = mapRecord(record, with: &stream, inPiecesOf: 0) }
            #expect(stream.renamedCopies >= 2, "\(name): \(stream.renamedCopies) records copied")
        }
    }

    /// The records the copy maps or rejects itself are copies (the kernel ran and its result was kept; a rejected
    /// record's errors are the tree's, from the tree's mapping of the record's outline), and those it cannot map as
    /// the tree does go to the events with nothing written twice.
    @Test func theCopyTakesWhatItCanAndLeavesTheRest() throws {
        let mapper = Self.mappers[0].1
        let tree = TreeEngine(mapper: mapper)
        for (record, copied) in [(#"{"a":1,"id_str":"1","b":[2],"user":{"c":3},"d":4}"#, true),
                                 (#"{"a":1,"user":{"c":3}}"#, true),  // a required field absent: rejected by the copy
                                 (#"{"idStr":0,"user":null,"a":1}"#, true),  // two errors and a shadowed key's warning
                                 (#"{"a":1,"id_str":null,"user":2}"#, true),
                                 (#"{"idStr":0,"id_str":"1","user":2}"#, false),  // a kept key named as a destination: a warning
                                 (#"{"a":1,"a":2,"id_str":"1","user":2}"#, false)] {  // duplicate keys: no copy
            var stream = StreamEngine(mapper: mapper)
            var out = JSONWriter(), treeOut = JSONWriter()
            let outcome = record.utf8.withContiguousStorageIfAvailable { stream.map(record: UnsafeRawBufferPointer($0), into: &out) }!
            let expected = Array(record.utf8).withUnsafeBytes { tree.map(record: $0, into: &treeOut) }
            #expect("\(outcome)" == "\(expected)", "\(record)")
            #expect(out.bytes == treeOut.bytes, "\(record)")
            #expect(stream.renamedCopies == (copied ? 1 : 0), "\(record)")
        }
        var stream = StreamEngine(mapper: mapper)
        var out = JSONWriter()
        _ = Array(#"{"a":1,"id_str":"1","b":[2],"user":{"c":3},"d":4}"#.utf8).withUnsafeBytes { stream.map(record: $0, into: &out) }
        #expect(String(decoding: out.bytes, as: UTF8.self) == #"{"idStr":"1","author":{"c":3},"a":1,"b":[2],"d":4}"#)
        // A spec of many renames goes to the events (their key tables keep it linear), with the same output.
        let many = Mapper.object(ObjectMapping(fields: (0...RenamedCopy.fieldLimit).map { Field("k\($0)", to: "v\($0)") },
                                               unmapped: .keep))
        let record = Array(("{" + (0...RenamedCopy.fieldLimit).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"x\":1}").utf8)
        var wide = StreamEngine(mapper: many)
        var wideOut = JSONWriter(), treeOut = JSONWriter()
        _ = record.withUnsafeBytes { wide.map(record: $0, into: &wideOut) }
        _ = record.withUnsafeBytes { TreeEngine(mapper: many).map(record: $0, into: &treeOut) }
        #expect(wideOut.bytes == treeOut.bytes)
        #expect(wide.renamedCopies == 0)
    }
}

/// Texts of 8 MB and more move between the stream engine's buffers with their source pages released
/// (`ReleasingCopy`), which no generated case is big enough to reach: a member, a field, an array element and a
/// kept member that large, under each copying mapping, fed in pieces, must still give the tree's bytes.
@Suite struct ReleasedBufferTests {
    @Test func hugeValuesMovedBetweenBuffersAreTheTrees() {
        let big = "\"" + String(repeating: "abcdefgh", count: (ReleasingCopy.threshold / 8) + 1000) + "\""
        let record = Array(#"{"id":1,"user":{"name":\#(big)},"list":[\#(big),2],"other":\#(big)}"#.utf8)
        let mappers: [(String, Mapper)] = VerbatimMemberCopyTests.mappers + [
            ("renamed list", .object(unmapped: .keep) { Field("list", to: "l") }),
            ("nested field", .object { Field("user.name", to: "n") }),
        ]
        for (name, mapper) in mappers {
            _ = VerbatimMemberCopyTests.expectSame(mapper, name, [record], pieces: [0, 1 << 20])
        }
    }
}
