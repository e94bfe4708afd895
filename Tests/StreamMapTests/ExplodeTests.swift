import Foundation
import Testing
@testable import StreamMap
import StreamMapTestSupport

/// One record to many (`RecordExplosion`): its two implementations (on a value for the tree engine, on written
/// bytes for the stream engine) against written-out expectations, the engines and the pipeline's counts, the spec's
/// `explode`, and Arrow's columns. The generated side is in the differential tests (`GeneratedCase.exploding`).
@Suite("One record to many")
struct ExplodeTests {
    /// Both implementations on `record` (a mapped record's text): the exploded records' lines, or the error.
    static func both(_ explosion: RecordExplosion, _ record: String) throws -> (tree: String, bytes: String) {
        let value = try JSONParser.parse(record)
        let tree: String
        switch explosion.explode(value) {
        case .success(let records): tree = records.map { JSONWriter.string($0) }.joined(separator: "\n")
        case .failure(let e): tree = "error: \(e.description) @\(e.destinationPath.pointer)"
        }
        var writer = JSONWriter()
        writer.writeRaw(Array("before\n".utf8))
        writer.write(value)
        var scratch: [UInt8] = []
        let bytes: String
        switch explosion.explodeWritten(in: &writer, from: 7, scratch: &scratch) {
        case .success(let n):
            #expect(Array(writer.bytes.prefix(7)) == Array("before\n".utf8))
            let text = String(decoding: writer.bytes.dropFirst(7), as: UTF8.self)
            #expect(text.isEmpty ? n == 0 : text.split(separator: "\n", omittingEmptySubsequences: false).count == n)
            bytes = text
        case .failure(let e):
            #expect(writer.bytes.count == 7)
            bytes = "error: \(e.description) @\(e.destinationPath.pointer)"
        }
        return (tree, bytes)
    }

    @Test(arguments: [
        // An array of n elements: n records, the element in its place, the other members as they are.
        ("items", RecordExplosion.Empty.drop, #"{"id":1,"items":[{"s":"a]}\"\\"},2,[3,[]],"x,y"],"z":true}"#,
         #"{"id":1,"items":{"s":"a]}\"\\"},"z":true}"# + "\n" + #"{"id":1,"items":2,"z":true}"# + "\n"
            + #"{"id":1,"items":[3,[]],"z":true}"# + "\n" + #"{"id":1,"items":"x,y","z":true}"#),
        // Nested, behind a key that needs escaping and a sibling holding the same key.
        ("o.k\"ey", .drop, #"{"k\"ey":[9],"o":{"a":[1],"k\"ey":[{"b":null},false]},"t":0}"#,
         #"{"k\"ey":[9],"o":{"a":[1],"k\"ey":{"b":null}},"t":0}"# + "\n" + #"{"k\"ey":[9],"o":{"a":[1],"k\"ey":false},"t":0}"#),
        // No element: nothing, or the record once with null (an absent member stays absent).
        ("items", .drop, #"{"id":2,"items":[]}"#, ""),
        ("items", .drop, #"{"id":2,"items":null}"#, ""),
        ("items", .drop, #"{"id":2}"#, ""),
        ("a.items", .drop, #"{"a":5}"#, ""),
        ("items", .null, #"{"id":2,"items":[],"z":1}"#, #"{"id":2,"items":null,"z":1}"#),
        ("items", .null, #"{"id":2,"items":null}"#, #"{"id":2,"items":null}"#),
        ("items", .null, #"{"id":2}"#, #"{"id":2}"#),
        ("items", .null, "[1,2]", "[1,2]"),
        ("items", .null, #"{"items":[1]}"#, #"{"items":1}"#),
        // Anything else rejects the record, at the destination.
        ("items", .drop, #"{"items":"a,b"}"#, #"error: explode /items: expected an array, found string "a,b" @/items"#),
        ("o.items", .null, #"{"o":{"items":{"a":1}}}"#, #"error: explode /o/items: expected an array, found object @/o/items"#),
    ] as [(String, RecordExplosion.Empty, String, String)])
    func bothImplementationsExplodeAlike(_ path: String, _ empty: RecordExplosion.Empty, _ record: String, _ expected: String) throws {
        let (tree, bytes) = try Self.both(RecordExplosion(path, empty: empty), record)
        #expect(tree == expected)
        #expect(bytes == expected)
    }

    /// A record whose exploded records would be too large is rejected by both, whole, before anything is written.
    @Test func explodedOutputIsBounded() throws {
        let record = #"{"big":"\#(String(repeating: "x", count: 100))","items":[1,2,3,4]}"#
        // 4 copies of the 119 other bytes, 4 one-byte elements, 3 newlines: 483 bytes.
        let fits = try Self.both(RecordExplosion(path: ["items"], outputLimit: 483), record)
        #expect(fits.tree.split(separator: "\n").count == 4 && fits.bytes == fits.tree)
        let over = try Self.both(RecordExplosion(path: ["items"], outputLimit: 482), record)
        let message = "error: explode /items: 4 records, each with the record's 119 other bytes, would take more than the 482 bytes one record may give @/items"
        #expect(over.tree == message && over.bytes == message)
        let huge = try Self.both(RecordExplosion(path: ["items"], outputLimit: .max), record)
        #expect(huge.tree == fits.tree)
    }

    /// Random records and paths (the generators' inputs, mapped by `identity`): the two implementations agree.
    @Test func bothImplementationsAgreeOnGeneratedRecords() throws {
        var checked = 0, several = 0
        for seed in 0..<300 as Range<UInt64> {
            var r = Rand(seed: SplitMix64.derive(0x6578_706C, seed))
            var inputs = InputGen(r.fork())
            let records = inputs.records(for: .any, count: 4).filter { (try? JSONParser.parse($0)) != nil }
            guard !records.isEmpty else { continue }
            let explosion = EngineFuzzing.explosion(.identity, records, &r)
            for record in records {
                let text = JSONWriter.string(try JSONParser.parse(record))
                let (tree, bytes) = try Self.both(explosion, text)
                #expect(tree == bytes, "\(explosion) of \(text)")
                checked += 1
                if tree.contains("\n") { several += 1 }
            }
        }
        #expect(checked > 500 && several > 20, "\(checked) records, \(several) exploded to several")
    }

    static let spec = #"""
        {"fields": {"id": {"type": "integer"}, "lines": {"to": "line", "via": {"arrayOf": {"object": {"fields": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}}}}},
         "explode": "line"}
        """#
    static let input = """
        {"id":1,"lines":[{"sku":"a","qty":2},{"sku":"b","qty":1}]}
        {"id":2,"lines":[]}
        {"id":3,"lines":[{"sku":"c","qty":"x"}]}
        {"id":4,"lines":"none"}
        {"id":5,"lines":[{"sku":"d","qty":7}]}
        """

    /// The spec's `explode` through the library's front door: a result per element with its record's location;
    /// counts; both engines and two jobs alike.
    @Test func theSpecExplodesThroughTheFeedAndTheFrontDoor() throws {
        let spec = try Spec(json: Self.spec)
        #expect(spec.explode == RecordExplosion(path: ["line"]))
        let feed = MappingFeed(mapper: spec.mapper, explode: spec.explode)
        let results = feed.feed(Array((Self.input + "\n").utf8)) + feed.finish()
        #expect(results.map(\.description) == [
            #"line 1, byte 0: {"id":1,"line":{"sku":"a","qty":2}}"#,
            #"line 1, byte 0: {"id":1,"line":{"sku":"b","qty":1}}"#,
            #"line 3, byte 79: rejected: /lines/0/qty: expected integer, found string "x""#,
            #"line 4, byte 120: rejected: /lines: expected array, found string "none""#,
            #"line 5, byte 144: {"id":5,"line":{"sku":"d","qty":7}}"#,
        ])
        #expect(feed.counts == RecordCounts(recordsIn: 5, recordsOut: 3, recordsRejected: 2))
        let file = try TestScratch.file(Array(String(repeating: Self.input + "\n", count: 400).utf8), suffix: ".ndjson")
        defer { unlink(file) }
        var seen: [[String]] = []
        for options in [MappingOptions(explode: spec.explode), MappingOptions(jobs: 2, engine: .tree, explode: spec.explode),
                        MappingOptions(jobs: 3, explode: spec.explode)] {
            var lines: [String] = []
            let counts = try spec.mapper.mapRecords(inFile: file, options: options) { lines.append($0.description) }
            #expect(counts == RecordCounts(recordsIn: 2000, recordsOut: 1200, recordsRejected: 800))
            seen.append(lines)
        }
        #expect(seen[0].count == 2000 && seen[1] == seen[0] && seen[2] == seen[0])
    }

    /// The asynchronous front door explodes as the feed does, whatever the chunks.
    @Test func asyncRecordsExplodeAsTheFeedDoes() async throws {
        let spec = try Spec(json: Self.spec)
        let bytes = Array((Self.input + "\n").utf8)
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        for start in stride(from: 0, to: bytes.count, by: 7) { continuation.yield(Array(bytes[start..<min(start + 7, bytes.count)])) }
        continuation.finish()
        var seen: [String] = []
        for try await result in stream.mappedRecords(mapper: spec.mapper, explode: spec.explode) { seen.append(result.description) }
        let feed = MappingFeed(mapper: spec.mapper, explode: spec.explode)
        #expect(seen == (feed.feed(bytes) + feed.finish()).map(\.description))
        #expect(seen.count == 5)
    }

    @Test func theSpecChecksItsExplode() {
        func issues(_ text: String) -> [String] {
            do {
                _ = try Spec(json: text)
                return []
            } catch {
                return error.issues.map { "\($0.pointer): \($0.message)" }
            }
        }
        #expect(issues(#"{"fields":{"items":"items"},"explode":"itmes"}"#)
            == [#"/explode: no field writes "itmes": explode names an array of the output (a destination) (did you mean "items"?)"#])
        #expect(issues(#"{"fields":{"a":"o.items"},"explode":"o.items"}"#).isEmpty)
        #expect(issues(#"{"fields":{"a":"o"},"explode":"o.items"}"#).isEmpty)  // (inside what a field writes)
        #expect(issues(#"{"fields":{"a":"a"},"unmapped":"keep","explode":"items"}"#).isEmpty)
        #expect(issues(#"{"fields":{"a":"a"},"explode":{"path":"a","empty":"keep"}}"#)
            == [#"/explode/empty: unknown policy "keep" ("drop" or "null")"#])
        #expect(issues(#"{"fields":{"a":"a"},"explode":{"empty":"null"}}"#)
            == [#"/explode: expected a path (the output array to explode, such as "items"), found none"#])
        #expect(issues(#"{"fields":{"a":"a"},"explode":3}"#).count == 1)
        #expect(throws: NotReversibleError.self) { try Spec(json: #"{"fields":{"a":"a"},"explode":"a"}"#).reversed() }
    }

    /// Arrow: the exploded list column holds its elements; a path that is no list column is refused up front.
    @Test func arrowColumnsHoldTheElements() throws {
        let spec = try Spec(json: Self.spec)
        let formatted = try FormattedMapping(spec.mapper, format: .arrow(.stream), explode: spec.explode)
        #expect(formatted.arrow?.schema == ArrowSchema(fields: [
            ArrowField("id", .int64), ArrowField("line", .structure([ArrowField("sku", .utf8), ArrowField("qty", .int64)])),
        ]))
        let file = try TestScratch.file(Array((Self.input + "\n").utf8), suffix: ".ndjson")
        let out = try TestScratch.file([], suffix: ".arrows")
        defer { unlink(file); unlink(out) }
        let fd = open(out, O_WRONLY | O_TRUNC)
        defer { close(fd) }
        var rejected = 0
        let counts = try spec.mapper.writeRecords(inFile: file, to: FileOutput(fd: fd, name: out), format: .arrow(.stream),
                                                  options: MappingOptions(jobs: 2, explode: spec.explode)) { _ in rejected += 1 }
        #expect(counts.recordsOut == 3 && rejected == 2)
        let table = try ArrowReading.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(table.rows == [
            ["id": 1, "line": ["sku": "a", "qty": 2]], ["id": 1, "line": ["sku": "b", "qty": 1]], ["id": 5, "line": ["sku": "d", "qty": 7]],
        ])
        // (A field of a list of objects whose type is not declared is named up front, as at the top level.)
        let open = try Spec(json: #"{"fields":{"l":{"via":{"arrayOf":{"object":{"fields":{"sku":"sku"}}}}}}}"#)
        #expect(throws: ArrowSchemaError(problems: [.init(field: "l.sku", reason: ArrowSchemaError.undeclared)])) {
            try FormattedMapping(open.mapper, format: .arrow(.stream))
        }
        let bad = try Spec(json: #"{"fields":{"id":{"type":"integer"}},"explode":"id"}"#)
        #expect(throws: ArrowSchemaError.self) { try FormattedMapping(bad.mapper, format: .arrow(.stream), explode: bad.explode) }
    }
}
