import Foundation
import Testing

/// `streammap infer`: the spec it prints checks, maps its sample and reverses it; bad input is reported, not fatal.
@Suite("streammap infer")
struct InferCLITests {
    @Test func inferredSpecChecksMapsTheSampleAndReverses() throws {
        let events = CLI.example("events.ndjson")
        let inferred = try CLI.run(["infer", events])
        #expect(inferred.status == 0)
        #expect(inferred.stderr == "")
        let spec = try CLI.temporaryFile(inferred.stdout)
        #expect(try CLI.run(["check", spec]).stdout == "\(spec): ok\n")
        let mapped = try CLI.run(["-s", spec, events])
        #expect(mapped.status == 0)
        #expect(mapped.stderr == "")
        #expect(mapped.stdout.split(separator: "\n").count == 4)
        let tree = try CLI.run(["-s", spec, "--engine", "tree", events])
        #expect(tree.stdout == mapped.stdout)
        // The reverse gives every record back (keys in the spec's order: first-seen over the sample).
        let back = try CLI.run(["-s", spec, "--reverse"], stdin: mapped.stdout)
        #expect(back.status == 0)
        #expect(try Self.values(back.stdout) == Self.values(CLI.read(events)))
        #expect(try CLI.run(["-s", spec], stdin: back.stdout).stdout == mapped.stdout)
        // Deterministic.
        #expect(try CLI.run(["infer", events]).stdout == inferred.stdout)
    }

    /// Each line's JSON value, compared regardless of key order.
    static func values(_ ndjson: String) throws -> [NSDictionary] {
        try ndjson.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! NSDictionary }
    }

    @Test func sampleKeyStyleAndStandardInput() throws {
        let input = #"{"user_id":1,"created_at":"2014-08-31T00:29:15Z"}"# + "\n" + #"{"user_id":2,"extra":true}"# + "\n"
        let first = try CLI.run(["infer", "--sample", "1", "--key-style", "camel"], stdin: input)
        #expect(first.status == 0)
        #expect(first.stdout.contains(#""user_id": {"to": "userId", "type": "integer"}"#))
        #expect(
            first.stdout.contains(
                #""created_at": {"to": "createdAt", "via": {"stringToDate": "iso8601"}, "required": true}"#))
        #expect(!first.stdout.contains("extra"))
        #expect(first.stdout.contains("from 1 record\""))
        let both = try CLI.run(["infer", "-"], stdin: input)
        #expect(
            both.stdout.contains(#""extra": {"to": "extra", "type": "boolean", "missing": "omit", "null": "null"}"#))
        #expect(
            both.stdout.contains(
                #""created_at": {"to": "created_at", "via": {"stringToDate": "iso8601"}, "missing": "omit", "null": "null"}"#
            ))
    }

    @Test func invalidRecordsAreReportedAndLeftOut() throws {
        let r = try CLI.run(["infer"], stdin: "{\"a\":1}\n{\"a\":\n{\"a\":2}\n")
        #expect(r.stderrLines == ["streammap: <stdin>:2: invalid JSON: premature EOF (left out of the sample)"])
        #expect(r.stdout.contains(#""a": {"to": "a", "type": "integer"}"#))
        #expect(r.stdout.contains("from 2 records"))
        #expect(r.status == 1)
    }

    @Test func inputAndUsageErrors() throws {
        let missing = try CLI.run(["infer", "/nonexistent/x.ndjson", CLI.example("cats.ndjson")])
        #expect(missing.stderrLines == ["streammap: /nonexistent/x.ndjson: No such file or directory"])
        #expect(missing.stdout.contains("maggy_the_ninja"))
        #expect(missing.status == 3)
        let empty = try CLI.run(["infer"], stdin: "\n\n")
        #expect(empty.stderrLines == ["streammap: no records to infer a spec from"])
        #expect(empty.stdout == "")
        #expect(empty.status == 1)
        #expect(try CLI.run(["infer", "--sample", "0"]).status == 64)
        let style = try CLI.run(["infer", "--key-style", "kebab"])
        #expect(style.status == 64)
        #expect(style.stderr.contains("unknown key style"))
    }

    @Test func tooManyDistinctPathsAreCappedWithANote() throws {
        // 12 000 distinct keys, more than the 10 000 paths tracked.
        let wide = "{" + (0..<12_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}\n"
        let r = try CLI.run(["infer"], stdin: wide)
        #expect(r.status == 0)
        #expect(
            r.stderrLines == [
                #"streammap: note: more than 10000 distinct paths: keys beyond them are not inferred, their objects pass them through ("unmapped": "keep")"#
            ])
        let spec = try CLI.temporaryFile(r.stdout)
        let mapped = try CLI.run(["-s", spec], stdin: wide)
        #expect(mapped.status == 0)
        let back = try CLI.run(["-s", spec, "--reverse"], stdin: mapped.stdout)
        #expect(back.stdout == wide)
    }
}
