import Foundation
import Testing
@testable import StreamMap

@Suite("Stream engine: records in pieces")
struct StreamEnginePiecesTests {
    func mapInPieces(_ engine: inout some RecordEngine, _ record: [UInt8], pieceSize: Int) -> (RecordOutcome, String) {
        var writer = JSONWriter()
        engine.beginRecord()
        var i = 0
        while i < record.count {
            record[i..<min(i + pieceSize, record.count)].withUnsafeBytes { engine.continueRecord($0) }
            i += pieceSize
        }
        let outcome = engine.endRecord(into: &writer)
        return (outcome, String(decoding: writer.bytes, as: UTF8.self))
    }

    /// yajl rescans a partial token on every call; the engine holds partial tokens back so that an 8 MB string in
    /// 4 KiB pieces is scanned once (quadratic feeding would scan ~8 GB and take minutes).
    @Test func aHugeTokenInSmallPiecesStaysLinear() throws {
        let big = String(repeating: "ab\\\"c\\u00e9", count: 800_000)  // ~8 MB of escapes and text
        let record = Array("{\"skip\":\"\(big)\",\"keep\":\"\(big.prefix(33))\",\"n\":12345678901234567890}".utf8)
        let mapper = try Spec(json: #"{"fields":{"keep":"keep","n":"n"}}"#).mapper
        var engine = StreamEngine(mapper: mapper)
        let start = Date()
        let (outcome, output) = mapInPieces(&engine, record, pieceSize: 4096)
        let seconds = Date().timeIntervalSince(start)
        #expect(outcome == .mapped(warnings: []))
        #expect(output == #"{"keep":"ab\"cé"# + #"ab\"cé"# + #"ab\"cé","n":12345678901234567890}"#)
        #expect(seconds < 20, "took \(seconds) s: feeding is not linear")
    }

    @Test("pieces of any size give the same result as the whole record", arguments: [1, 2, 3, 7, 64, 4096])
    func piecesAreInvariant(_ size: Int) throws {
        let mapper = try Spec(json: #"{"fields":{"a.b":"x","c":{"to":"y","via":{"arrayOf":"number"}},"d":{"to":"z","via":"toString"}},"unmapped":"keep"}"#).mapper
        let records = [
            #"{"a":{"b":"h\u00e9\"llo"},"c":[1,2.5e3,-0],"d":true,"e":null,"f":"\ud83d\ude00"}"#,
            #"{"c":[1,"x"],"a":{"b":1}}"#,
            #"{"a":{"b":tru}}"#,
            #"  {"a":{"b":[]}} trailing"#,
            "{\"a\":{\"b\":\"\u{1}\"}}",
        ].map { Array($0.utf8) }
        for record in records {
            let tree = TreeEngine(mapper: mapper)
            var writer = JSONWriter()
            let expected = record.withUnsafeBytes { tree.map(record: $0, into: &writer) }
            var engine = StreamEngine(mapper: mapper)
            let (outcome, output) = mapInPieces(&engine, record, pieceSize: size)
            #expect(outcome == expected)
            #expect(output == String(decoding: writer.bytes, as: UTF8.self))
        }
    }
}

@Suite("Stream engine: object layouts")
struct ObjectLayoutTests {
    /// The stream engine caches how an object is laid out for each set of filled destinations (up to a limit, and
    /// up to 64 slots); past either limit it lays out each record anew. All three routes must write what the tree
    /// writes: 8 optional fields give 256 sets of filled fields, more than the cache holds.
    @Test("cached, uncached and over-64-slot layouts match the tree", arguments: [8, 70])
    func layoutsMatchTheTree(_ fieldCount: Int) throws {
        var fields: [String] = []
        for i in 0..<fieldCount {
            // Nested, shared and flat destinations, so that the order of first use matters.
            let to = i % 3 == 0 ? "n\(i % 5).f\(i)" : (i % 3 == 1 ? "shared.f\(i)" : "f\(i)")
            fields.append(#""k\#(i)":{"to":"\#(to)","missing":"omit","null":"omit"}"#)
        }
        let mapper = try Spec(json: #"{"fields":{"# + fields.joined(separator: ",") + "}}").mapper
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        var rng = SystemRandomNumberGenerator()
        var patterns = Set<[Bool]>()
        for _ in 0..<400 {
            let present = (0..<fieldCount).map { _ in Bool.random(using: &rng) }
            patterns.insert(present)
            // Members in a shuffled order, absent ones sometimes null instead.
            var members: [String] = []
            for (i, p) in present.enumerated() {
                if p { members.append(#""k\#(i)":\#(i)"#) } else if Bool.random(using: &rng) { members.append(#""k\#(i)":null"#) }
            }
            members.shuffle(using: &rng)
            expectSameMapping(&stream, tree, Array(("{" + members.joined(separator: ",") + "}").utf8))
        }
        #expect(patterns.count > 40, "the run must go past the layout cache")
    }
}

@Suite("Stream engine: copies")
struct CopySinkTests {
    /// Identity copies gather output in a scratch buffer, keep long keys apart for the duplicate check, and send
    /// big strings and keys straight to the output: every route must write what the tree writes.
    @Test func copiesMatchTheTree() throws {
        let big = String(repeating: "x\\\"y", count: 40_000)  // 160 KB of text with escapes
        let longKey = String(repeating: "k", count: 70_000)
        let records = [
            #"{"abcdefghij":1,"abcdefghik":2,"abcdefghij":3}"#,  // long keys differing after the first 8 bytes
            #"{"abcdefgh":1,"abcdefgh":2}"#,  // exactly 8 bytes
            #"{"a":{"b":1,"b":[1,{"c":2,"c":3}]},"a":0}"#,
            #"{"\u00e9l\u00e8ve-long-key":1,"élève-long-key":2}"#,  // escaped and raw spellings of one key
            "{" + (0..<30).map { #""key-number-\#($0 % 20)":\#($0)"# }.joined(separator: ",") + "}",
            "{" + (0..<30).map { #""key-number-\#($0)":\#($0)"# }.joined(separator: ",") + "}",
            // Past the first 64 keys of an object only the whole-object check at its end finds a duplicate.
            "{" + (0..<100).map { #""key-number-\#($0 == 90 ? 80 : $0)":\#($0)"# }.joined(separator: ",") + "}",
            "{" + (0..<100).map { #""key-number-\#($0 == 99 ? 3 : $0)":\#($0)"# }.joined(separator: ",") + "}",
            "{" + (0..<100).map { #""key-number-\#($0)":\#($0)"# }.joined(separator: ",") + "}",
            #"{"s":""# + big + #"","t":[""# + big + #""]}"#,
            #"{""# + longKey + #"":1,"a":2,""# + longKey + #"":3}"#,
            "[" + (0..<5000).map { #"{"n":\#($0),"v":"\#($0)"}"# }.joined(separator: ",") + "]",  // past the scratch limit
        ].map { Array($0.utf8) }
        for mapper in [Mapper.identity, try Spec(json: #"{"fields":{"a":"a","s":"s"},"unmapped":"keep"}"#).mapper] {
            var stream = StreamEngine(mapper: mapper)
            let tree = TreeEngine(mapper: mapper)
            for record in records { expectSameMapping(&stream, tree, record) }
        }
    }
}

extension CopySinkTests {
    /// The duplicate-key check hashes a key's length and first 8 bytes; keys made to share them must not make it
    /// quadratic (it sorts instead), and it must still find a duplicate among them — or none.
    @Test func keysMadeToCollideStayFast() throws {
        let n = 30_000
        let keys = (0..<n).map { String(format: "collided%06d", $0) }
        let start = Date()
        for duplicate in [nil, 12_345] {
            var members = keys.map { #""\#($0)":1"# }
            if let d = duplicate { members.append(#""\#(keys[d])":2"#) }
            let record = Array(("{" + members.joined(separator: ",") + "}").utf8)
            var stream = StreamEngine(mapper: .identity)
            expectSameMapping(&stream, TreeEngine(mapper: .identity), record)
        }
        let seconds = Date().timeIntervalSince(start)
        #expect(seconds < 10, "took \(seconds) s")
    }


    /// Strings and keys lexed in place are copied as they are (in words of up to 16 bytes, or by `memcpy`);
    /// decoded ones are escaped again. Every length up to 40, with and without escapes, in values, keys and
    /// arrays, must come out as the tree writes it.
    @Test func verbatimAndDecodedTextMatchTheTree() throws {
        let escapes = [#"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u0000"#, #"\u001f"#, #"\u007f"#, #"\u2028"#, #"\ud83d\ude00"#]
        let alphabet = Array("abcdé\u{7F}xyz0123456789")
        var members: [String] = []
        for n in 0...40 {
            let plain = String((0..<n).map { alphabet[$0 % alphabet.count] })
            members.append(#""p\#(n)":"\#(plain)""#)
            members.append(#""\#(plain)k":["\#(plain)"]"#)
            let escaped = plain + escapes[n % escapes.count] + plain.prefix(n / 2)
            members.append(#""e\#(n)":"\#(escaped)""#)
            members.append(#""\#(escaped)k":["\#(escaped)",\#(n)]"#)
        }
        let record = Array(("{" + members.joined(separator: ",") + "}").utf8)
        for mapper in [Mapper.identity, try Spec(json: #"{"fields":{"p3":"p3"},"unmapped":"keep"}"#).mapper] {
            var stream = StreamEngine(mapper: mapper)
            expectSameMapping(&stream, TreeEngine(mapper: mapper), record)
        }
    }
}

@Suite("Stream engine: pass-through members")
struct PassThroughMembersTests {
    /// Kept keys are interned across records and their values gathered in one buffer per object: every rule of
    /// `unmapped: keep` must still give the tree's bytes and errors — repeated keys (first position, last value),
    /// keys that style alike, reserved output names, values that fail (fatal or with a warning), escaped and empty
    /// keys, nested objects that pass through, and more distinct keys than the interning table keeps.
    @Test func passThroughMatchesTheTree() throws {
        let specs = [
            #"{"fields":{"id":"id"},"unmapped":"keep"}"#,
            #"{"fields":{"a_b":"aB","x":"out.y"},"unmapped":{"keys":"camel"}}"#,
            #"{"fields":{"id":"snake_name"},"unmapped":{"keys":"snake","values":{"optional":"integer","default":0}}}"#,
            #"{"fields":{"id":"id"},"unmapped":{"keys":"upper","values":"integer"}}"#,
            #"{"fields":{"id":"id"},"unmapped":{"values":{"object":{"fields":{"n":"n"},"unmapped":"keep"}}}}"#,
        ]
        let records = [
            #"{"id":1,"a":2,"b":3,"a":4,"c":{"n":1,"m":[1,2]},"b":null}"#,
            #"{"aB":1,"a_b":2,"aB":3,"id":4,"snakeName":5,"snake_name":6,"ID":7,"Id":"x"}"#,
            #"{"":1,"\u00e9t\u00e9":2,"été":3,"q\"uote":{"":null},"out":9,"x":8,"y":{"a_b":1,"a_b":2}}"#,
            #"{"n":{"n":1,"z":2,"z":3},"m":[],"k":"v","id":{"n":2}}"#,
            #"{"id":[1,{"a":1}],"tail":true}"#,
        ]
        // Past the interning table's limit (the keys are forgotten between objects and interned again).
        let many = PassThroughMembers.keyLimit + 100
        let big = "{" + (0..<many).map { #""k\#($0)":\#($0 % 7)"# }.joined(separator: ",") + #","k5":"last"}"#
        for (i, spec) in specs.enumerated() {
            let mapper = try Spec(json: spec).mapper
            var stream = StreamEngine(mapper: mapper)
            let tree = TreeEngine(mapper: mapper)
            var all = records + records.reversed()
            if i < 2 { all += [big, #"{"k5":1,"k70000":2,"k5":3,"id":0}"#, big] }
            for record in all { expectSameMapping(&stream, tree, Array(record.utf8)) }
        }
    }
}

/// The stream engine maps `record` exactly as the tree engine does: outcome and bytes.
func expectSameMapping(_ stream: inout StreamEngine, _ tree: TreeEngine, _ record: [UInt8],
                       sourceLocation: SourceLocation = #_sourceLocation) {
    var expected = JSONWriter()
    let treeOutcome = record.withUnsafeBytes { tree.map(record: $0, into: &expected) }
    var actual = JSONWriter()
    let streamOutcome = record.withUnsafeBytes { stream.map(record: $0, into: &actual) }
    #expect(streamOutcome == treeOutcome, "record: \(String(decoding: record.prefix(80), as: UTF8.self))",
            sourceLocation: sourceLocation)
    if actual.bytes != expected.bytes {
        // Where the outputs part, not both outputs whole (they can be megabytes).
        let at = zip(actual.bytes, expected.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(actual.bytes.count, expected.bytes.count)
        let context = { (b: [UInt8]) in String(decoding: b[max(0, at - 40)..<min(b.count, at + 40)], as: UTF8.self) }
        Issue.record("""
            outputs differ at byte \(at) (stream \(actual.bytes.count) bytes, tree \(expected.bytes.count)):
              stream: \(context(actual.bytes))
              tree:   \(context(expected.bytes))
              record: \(String(decoding: record.prefix(80), as: UTF8.self))
            """, sourceLocation: sourceLocation)
    }
}

@Suite("Stream engine: members skipped by the parser")
struct KeyFilterTests {
    /// An object whose consumer drops unmapped members hands its keys to the parser, which skips the other members
    /// before any consumer sees them. Filters nest with objects (the root, route nodes, objects in arrays) and must
    /// apply at their own depth only: a mapped name deeper inside a skipped or a mapped value is not a member of
    /// the filtered object.
    @Test func skippedMembersMatchTheTree() throws {
        let specs = [
            #"{"fields":{"id":"id","user.id":"uid","user.name":"name","a.0.b":"ab"}}"#,
            #"{"fields":{"id":{"to":"id","missing":"omit"},"items":{"to":"items","via":{"arrayOf":{"object":{"fields":{"id":"id","v":{"to":"v","missing":"omit"}}}}}}}}"#,
            #"{"fields":{"u":{"to":"u","via":{"object":{"fields":{"id":"id","deep.x":"x"}}}},"id":"id"}}"#,
            // Two fields read `user` (a fan-out): no filter inside it, one at the root.
            #"{"fields":{"user":"whole","user.id":"uid","id":"id"}}"#,
            #"{"fields":{"id":"id"},"unmapped":"keep"}"#,
        ]
        let records = [
            #"{"x":{"id":5,"user":{"id":6}},"id":1,"user":{"name":"n","id":2,"x":{"id":3}},"a":{"0":{"b":7}}}"#,
            #"{"id":1,"id":2,"user":{"id":1},"user":{"id":9,"name":"m"},"a":[{"b":1,"c":2}],"zz":[{"id":0}]}"#,
            #"{"items":[{"id":1,"w":{"id":2}},{"v":3,"id":4,"q":[1,{"id":5}]}],"id":0,"more":{"items":[]}}"#,
            #"{"u":{"deep":{"x":1,"y":{"x":2}},"id":3,"other":{"deep":{"x":4}}},"id":1,"deep":{"x":5}}"#,
            #"{"user":{"id":1,"name":"a","skip":{"name":"b"}},"id":7,"name":"top"}"#,
            #"{"n":null,"b":true,"s":"s","f":1.5,"o":{},"l":[],"id":1,"user":{"name":"x","id":1}}"#,
            #"{"id":1,"user":{"id":1,"name":"x"},"a":{"0":{"b":1}},"items":[],"u":{"id":1,"deep":{"x":1}},"user":[]}"#,
        ]
        for spec in specs {
            let mapper = try Spec(json: spec).mapper
            var stream = StreamEngine(mapper: mapper)
            let tree = TreeEngine(mapper: mapper)
            for record in records + records.reversed() { expectSameMapping(&stream, tree, Array(record.utf8)) }
        }
    }

    /// The first 8 bytes of a key as one word, read with overlapping loads for short keys: the same word as byte
    /// by byte, for every length.
    @Test func keyPrefixesAreTheBytesZeroPadded() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...12 {
            for _ in 0..<50 {
                let key = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                var expected: UInt64 = 0
                for (i, b) in key.prefix(8).enumerated() { expected |= UInt64(b) << (8 * UInt64(i)) }
                key.withUnsafeBytes { #expect(KeyTable.prefix($0) == expected) }
            }
        }
    }
}
