import Testing
@testable import StreamMap

/// The stream engine restarts one parser for every whole record: whatever a record leaves behind (a syntax error
/// halfway, a nesting limit, a strict-scanner violation, a value skipped inside yajl, a copy cut short), the next
/// record maps exactly as it would through a new engine.
@Suite("Stream engine: one parser for every record")
struct StreamEngineReuseTests {
    static let records: [String] = [
        #"{"id":1,"user":{"name":"a"},"skipped":{"deep":[1,2,{"x":"\u00e9"}]}}"#,
        #"{"id":2,"user":{"name":"b"},"skipped":{"deep":[1,2,"#,             // truncated inside a skipped value
        #"{"id":3,"user":{"name":"c"}}"#,
        #"{"id":4,"user":{"name":"d"},"skipped":[[[[[[[[[[1]]]]]]]]]]}"#,   // deeper than the limit below
        #"{"id":5,"user":{"name":"e\uD800"}}"#,                           // a lone surrogate: the strict scanner
        #"{"id":6,"user":{"name":"f"}}"#,
        #"{"id":7,"user":{"name":"g"},"id":8}"#,                           // duplicate key
        #"{"id":"nine","user":{"name":"h"}}"#,                             // a mapping error
        #"[1,2,3]"#,
        #"{"id":10,"user":{"name":"i"}} {"id":11}"#,                       // trailing garbage
        #"  "#,                                                            // no value
        #"{"id":12,"user":{"name":"j"}}"#,
    ]

    func outcomes(_ engine: inout StreamEngine, _ records: [String]) -> [(RecordOutcome, [UInt8])] {
        records.map { record in
            var writer = JSONWriter()
            let bytes = Array(record.utf8)
            let outcome = bytes.withUnsafeBytes { engine.map(record: $0, into: &writer) }
            return (outcome, writer.bytes)
        }
    }

    @Test(arguments: [
        #"{"fields":{"id":{"from":"id","type":"integer"},"user.name":"name"}}"#,
        #"{"fields":{"id":"id"},"unmapped":"keep"}"#,
        #"{"fields":{"user":"user"}}"#,
    ])
    func eachRecordMapsAsThroughANewEngine(spec: String) throws {
        let mapper = try Spec(json: spec).mapper
        let options = JSONParserOptions(maximumDepth: 8)
        var reused = StreamEngine(mapper: mapper, parserOptions: options)
        let again = outcomes(&reused, Self.records + Self.records)
        for (i, record) in (Self.records + Self.records).enumerated() {
            var fresh = StreamEngine(mapper: mapper, parserOptions: options)
            let expected = outcomes(&fresh, [record])[0]
            #expect(again[i].0 == expected.0, "record \(i): \(record)")
            #expect(again[i].1 == expected.1, "record \(i): \(record)")
        }
        // The records cover what they claim to: some map, some are syntax errors, some fail mapping.
        let syntax = again.filter { if case .rejected(.syntax) = $0.0 { return true } else { return false } }.count
        let mapped = again.filter { if case .mapped = $0.0 { return true } else { return false } }.count
        #expect(syntax >= 8)
        #expect(mapped >= 8)
    }

    @Test func changedParserOptionsTakeEffectOnTheNextRecord() throws {
        let mapper = try Spec(json: #"{"fields":{"id":"id"}}"#).mapper
        var engine = StreamEngine(mapper: mapper)
        let deep = #"{"id":1,"x":[[[[[[[[[[1]]]]]]]]]]}"#
        #expect(outcomes(&engine, [deep])[0].0 == .mapped(warnings: []))
        engine.parserOptions = JSONParserOptions(maximumDepth: 4)
        guard case .rejected(.syntax(let error)) = outcomes(&engine, [deep])[0].0 else {
            Issue.record("expected the nesting limit to reject the record")
            return
        }
        #expect(error.message.contains("nesting deeper than 4"))
    }
}
