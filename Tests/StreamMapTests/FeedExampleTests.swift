import Testing
import StreamMap

/// README.md's incremental-feed example, verbatim (keep the two in step).
@Suite("README feed example")
struct FeedExampleTests {
    struct Person: Decodable, Equatable {
        let id: Int
        let name: String
    }

    @Test func theFeedExampleRunsAsDocumented() async throws {
        let spec = try Spec(json: #"{"fields":{"id":"id","user.name":"name","age":{"to":"age","type":"integer"}}}"#)
        let feed = MappingFeed(mapper: spec.mapper)  // the stream engine; NDJSON detected

        // Push bytes as they arrive (a socket, a file read loop), split anywhere, even inside a token:
        var results = feed.feed(Array("{\"id\":1,\"user\":{\"name\":\"Ada\"},\"age\":36}\n{\"id\":2,\"user\":{\"na".utf8))
        results += feed.feed(Array("me\":\"Bo\"},\"age\":\"x\"}\n".utf8))
        results += feed.finish()

        var lines: [String] = []
        for result in results {
            switch result {
            case .mapped(let record):
                lines.append(String(decoding: record.bytes, as: UTF8.self))  // {"id":1,"name":"Ada","age":36}
            case .rejected(let reject):
                lines.append("line \(reject.location.line): \(reject.failure.fatalErrors[0].message)")  // line 2: expected integer, found string "x"
            }
        }
        #expect(lines == [#"{"id":1,"name":"Ada","age":36}"#, #"line 2: expected integer, found string "x""#])
        #expect(feed.counts == RecordCounts(recordsIn: 2, recordsOut: 1, recordsRejected: 1))

        // A mapped record decodes into a model:
        if case .mapped(let record) = results[0] {
            #expect(try record.decode(Person.self) == Person(id: 1, name: "Ada"))
        }

        // Or as an AsyncSequence of records over chunks of bytes:
        let chunks = AsyncStream<[UInt8]> { continuation in
            continuation.yield(Array("{\"id\":3,\"user\":{\"name\":\"Cy\"},\"age\":7}\n{\"id\":4,\"age\":9,".utf8))
            continuation.yield(Array("\"user\":{\"name\":\"Di\"}}\n".utf8))
            continuation.finish()
        }
        var names: [String] = []
        for try await result in chunks.mappedRecords(mapper: spec.mapper) {
            if case .mapped(let record) = result { names.append(try record.decode(Person.self).name) }
        }
        #expect(names == ["Cy", "Di"])
    }

    /// docs/library.md's members table, member by member, and `feed(_: String)`: text split anywhere maps as its
    /// bytes would.
    @Test func theMembersTableAndTextFeeds() throws {
        let spec = try Spec(json: #"{"fields":{"id":"id","age":{"to":"age","type":"integer"},"home":{"to":"home","via":"url","optional":true}}}"#)
        let feed = MappingFeed(mapper: spec.mapper)
        var results = feed.feed("{\"id\":1,\"age\":36,\"home\":\"x\"}\n{\"id\":2,\"a")
        results += feed.feed("ge\":\"x\"}\n")
        results += feed.finish()
        guard results.count == 2, case .mapped(let mapped) = results[0], case .rejected(let rejected) = results[1] else {
            Issue.record("\(results)")
            return
        }
        #expect(mapped.location == RecordLocation(line: 1, byteOffset: 0))
        #expect(mapped.text == #"{"id":1,"age":36}"# && mapped.bytes == Array(mapped.text.utf8))
        #expect(try mapped.value() == ["id": 1, "age": 36])
        #expect(mapped.warnings.map(\.description) == [#"/home: warning: string "x" is not an absolute URL"#])
        #expect(mapped.warnings.map(\.standsInForAbsent) == [false])  // "x" was there, and is dropped
        #expect(mapped.description.hasPrefix(#"line 1, byte 0: {"id":1,"age":36}"#))
        #expect(rejected.location == RecordLocation(line: 2, byteOffset: 29))
        #expect(rejected.text == #"{"id":2,"age":"x"}"# && rejected.raw == Array(rejected.text.utf8))
        #expect(rejected.description == #"line 2, byte 29: rejected: /age: expected integer, found string "x""#)
        let error = try #require(rejected.failure.fatalErrors.first)
        #expect(error.code == .type && error.code.hydrantCode == 2 && error.isFatal)
        #expect(error.sourcePath.pointer == "/age" && error.destinationPath.pointer == "/age")
        #expect(error.message == #"expected integer, found string "x""# && error.description == "/age: " + error.message)
        #expect(rejected.failure.warnings.map(\.message) == ["value is required, found absent"])  // the optional home
        #expect(rejected.failure.warnings.map(\.standsInForAbsent) == [true])  // … absent: nothing dropped
    }

    /// Copies of a stream engine never share per-record state (copy on write of the compiled plan).
    @Test func copiesOfAStreamEngineAreIndependent() throws {
        let mapper = try Spec(json: #"{"fields":{"a":"x","b":{"to":"y","via":{"arrayOf":"integer"}}}}"#).mapper
        var first = StreamEngine(mapper: mapper)
        var second = first
        var out1 = JSONWriter(), out2 = JSONWriter()
        first.beginRecord()
        second.beginRecord()
        let r1 = Array(#"{"a":1,"b":[1,2,3]}"#.utf8), r2 = Array(#"{"b":[9],"a":"z"}"#.utf8)
        for i in 0..<max(r1.count, r2.count) {
            if i < r1.count { r1[i...i].withUnsafeBytes { first.continueRecord($0) } }
            if i < r2.count { r2[i...i].withUnsafeBytes { second.continueRecord($0) } }
        }
        #expect(first.endRecord(into: &out1) == .mapped(warnings: []))
        #expect(second.endRecord(into: &out2) == .mapped(warnings: []))
        #expect(String(decoding: out1.bytes, as: UTF8.self) == #"{"x":1,"y":[1,2,3]}"#)
        #expect(String(decoding: out2.bytes, as: UTF8.self) == #"{"x":"z","y":[9]}"#)
    }
}
