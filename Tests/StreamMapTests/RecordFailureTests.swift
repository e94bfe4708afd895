import Testing
import StreamMap

/// What a library user reads of a rejected record: the fatal errors apart from the warnings, one spelling of the
/// root path, and descriptions that print as text.
@Suite struct RecordFailureTests {
    static let spec = #"{"fields":{"id":{"to":"id","type":"integer"},"age":{"to":"age","type":"integer","optional":true}}}"#

    static func results(_ input: String) throws -> [RecordResult] {
        let feed = MappingFeed(mapper: try Spec(json: spec).mapper, framing: .ndjson)
        return feed.feed(Array(input.utf8)) + feed.finish()
    }

    @Test func fatalErrorsAndWarningsAreApart() throws {
        let results = try Self.results(#"{"id":"x","age":"old"}"# + "\n")
        guard case .rejected(let reject) = results.first else { Issue.record("\(results)"); return }
        #expect(reject.failure.fatalErrors.map(\.description) == [#"/id: expected integer, found string "x""#])
        #expect(reject.failure.warnings.map(\.description) == [#"/age: warning: expected integer, found string "old""#])
        // Every error in the rejects file's order: the fatal one first here, as the fields come.
        #expect(reject.failure.allErrors.map(\.sourcePath.pointer) == ["/id", "/age"])
        #expect(reject.description == #"line 1, byte 0: rejected: /id: expected integer, found string "x""#)
    }

    @Test func aRootErrorHasOneSpelling() throws {
        let results = try Self.results("{bad\n5\n")
        guard results.count == 2, case .rejected(let syntax) = results[0], case .rejected(let type) = results[1] else {
            Issue.record("\(results)"); return
        }
        for failure in [syntax.failure, type.failure] {
            #expect(failure.fatalErrors.count == 1)
            #expect(failure.fatalErrors.allSatisfy { $0.sourcePath.isRoot && $0.sourcePath.pointer == "" })
            #expect(failure.warnings.isEmpty)
        }
        #expect(syntax.failure.fatalErrors[0].code == .syntax)
        #expect(syntax.description == "line 1, byte 0: rejected: invalid JSON: lexical error: invalid char in json text.")
        // At the root: the message alone (a JSON Pointer "/" would name a key "").
        #expect(type.failure.fatalErrors[0].description == "expected object, found integer 5")
        #expect(type.description == "line 2, byte 5: rejected: expected object, found integer 5")
    }

    @Test func aMappedRecordPrintsAsText() throws {
        let results = try Self.results(#"{"id":1,"age":"old"}"#)
        #expect(results.map(\.description) == [#"line 1, byte 0: {"id":1} (/age: warning: expected integer, found string "old")"#])
        guard case .mapped(let record) = results.first else { return }
        #expect(record.text == #"{"id":1}"#)
    }

    @Test func noOutputIsARequiredErrorAtTheRootWithItsWarnings() {
        let failure = RecordFailure.noOutput(warnings: [MapError(.value, "dropped", isFatal: false, sourcePath: [.key("a")])])
        #expect(failure.fatalErrors.map(\.code) == [.required])
        #expect(failure.warnings.map(\.message) == ["dropped"])
        #expect(failure.allErrors.count == 2)
        #expect(failure.description == "the mapper produced no output for this record")
    }
}
