import Testing
@testable import StreamMap

/// Where yajl 2.1 is laxer than RFC 8259, StreamMap rejects the record (README, "Robustness").
@Suite("Strict JSON over yajl")
struct StrictJSONTests {
    static let identity = Mapper(.object(ObjectMapping(fields: [], unmapped: .keep)))

    /// The outcome of both engines, whole and in pieces of every size; they must all agree.
    func outcomes(_ text: String) -> [RecordOutcome] {
        let record = Array(text.utf8)
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
        ("{\"a\":1}\u{0C}", 7, #"form feed (\f) is not JSON whitespace"#),
        ("{\"a\":\u{0B}1}", 5, #"vertical tab (\v) is not JSON whitespace"#),
    ])
    func rejected(_ text: String, _ offset: Int, _ message: String) {
        for outcome in outcomes(text) {
            #expect(outcome == .rejected(.syntax(JSONSyntaxError(byteOffset: offset, message: message))), "\(text)")
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
