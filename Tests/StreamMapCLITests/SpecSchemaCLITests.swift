import Foundation
import StreamMapTestSupport
import Testing

/// `streammap check` gives the verdicts schema/streammap-spec.schema.json gives (SpecSchemaCases; the schema side is
/// SpecSchemaTests in StreamMapTests), and a spec's `$schema` key is accepted and ignored.
@Suite("streammap check and the spec JSON Schema")
struct SpecSchemaCLITests {
    @Test func checkRejectsEveryBrokenSpec() throws {
        for text in SpecSchemaCases.broken {
            let spec = try CLI.temporaryFile(text)
            let r = try CLI.run(["check", spec])
            #expect(r.status == 2, "streammap check accepts \(text)")
            #expect(r.stderr.hasPrefix("streammap: \(spec): "), "\(text): \(r.stderr)")
        }
    }

    @Test func checkAcceptsEveryValidSpec() throws {
        for text in SpecSchemaCases.valid {
            let spec = try CLI.temporaryFile(text)
            #expect(try CLI.run(["check", spec]).stdout == "\(spec): ok\n", "\(text)")
        }
    }

    @Test func schemaKeyIsIgnoredWhenMapping() throws {
        let spec = try CLI.temporaryFile(
            #"{"$schema":"https://example.com/streammap-spec.schema.json","fields":{"a":"b"}}"#)
        let r = try CLI.run(["-s", spec], stdin: #"{"a":1}"# + "\n")
        #expect(r.stdout == #"{"b":1}"# + "\n")
        #expect(r.status == 0)
        let bad = try CLI.temporaryFile(#"{"$schema":true,"fields":{"a":"b"}}"#)
        #expect(
            try CLI.run(["check", bad]).stderrLines == [
                "streammap: \(bad): /$schema: expected the URI of a JSON Schema (a string), found boolean true"
            ])
    }
}
