import Foundation
import Testing

/// `--where EXPR` and the spec's `where`: records kept and dropped, the counts (`--stats`), both engines and
/// `--jobs` giving the same bytes, `--byte-range` splits adding up, `--print-spec`, `check`, `explain`, and errors.
@Suite("streammap --where")
struct WhereCLITests {
    /// GitHub-event-like lines: kept, dropped, a bad id that only a kept record reports, invalid JSON either way,
    /// ids above 2^53.
    static let input = """
        {"id":9007199254740993,"type":"PushEvent","actor":{"login":"ann"},"payload":{"size":3}}
        {"id":2,"type":"WatchEvent","actor":{"login":"bo"}}
        {"id":"x","type":"IssuesEvent"}
        {"id":"y","type":"PushEvent"}
        {"id":5,"type":"PushEvent"
        {"id":6,"type":"WatchEvent"} trailing
        {"id":9007199254740992,"type":"PushEvent","payload":{"size":1}}

        """

    static let spec = #"{"fields":{"id":{"to":"id","type":"integer"},"type":"kind","payload.size":{"to":"commits","missing":"omit"}}}"#

    @Test func keepsTheRecordsItHoldsFor() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let r = try CLI.run(["--spec", spec, "--where", #"type == "PushEvent""#, "--stats"], stdin: Self.input)
        #expect(r.stdout == """
            {"id":9007199254740993,"kind":"PushEvent","commits":3}
            {"id":9007199254740992,"kind":"PushEvent","commits":1}

            """)
        // Line 3's bad id is not reported (dropped, not mapped); line 4's is; invalid JSON is rejected either way.
        #expect(Array(r.stderrLines.dropLast()) == [
            "streammap: <stdin>:4: /id: expected integer, found string \"y\"",
            "streammap: <stdin>:5: invalid JSON: premature EOF",
            "streammap: <stdin>:6: invalid JSON: trailing garbage",
        ])
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(r.stderrLines.last!.utf8)) as? [String: Any])
        #expect(stats["recordsIn"] as? Int == 7)
        #expect(stats["recordsOut"] as? Int == 2)
        #expect(stats["recordsFiltered"] as? Int == 2)
        #expect(stats["recordsRejected"] as? Int == 3)
        #expect(r.status == 1)
        // Without a filter the summary has no recordsFiltered.
        let plain = try CLI.run(["--spec", spec, "--stats", "-q"], stdin: Self.input)
        #expect(!plain.stderr.contains("recordsFiltered"))
    }

    @Test func idsAboveTwoToThe53CompareExactly() throws {
        let r = try CLI.run(["--where", "id > 9007199254740992", "--field", "id"], stdin: Self.input)
        #expect(r.stdout == "{\"id\":9007199254740993}\n")
        let ge = try CLI.run(["--where", "id >= 9007199254740992 && payload.size is integer", "-q"], stdin: Self.input)
        #expect(ge.stdoutLines.count == 2)
    }

    @Test func bothEnginesAndJobsWriteTheSameBytes() throws {
        var text = ""
        for i in 0..<30_000 {
            let type = ["PushEvent", "WatchEvent", "CreateEvent"][i % 3]
            text += i % 97 == 0 ? "{\"id\":\(i),\n" : #"{"id":\#(i),"type":"\#(type)","n":\#(i % 10),"tags":["a\#(i % 4)"]}"# + "\n"
        }
        let file = try CLI.temporaryFile(text)
        let expression = #"(type in ["PushEvent", "CreateEvent"] && n >= 5) || tags.0 == "a1""#
        var outputs: [String] = []
        for args in [["--engine", "tree"], ["--engine", "stream"], ["--jobs", "2"], ["--jobs", "2", "--engine", "tree"]] {
            let r = try CLI.run(args + ["--framing", "ndjson", "--where", expression, "--stats", "--field", "id", "--field", "type", file])
            #expect(r.status == 1)
            let stats = r.stderrLines.last!
            let messages = r.stderrLines.dropLast().joined(separator: "\n")
            outputs.append(r.stdout + messages + String(stats[..<stats.range(of: "\"seconds\"")!.lowerBound]))
        }
        #expect(outputs[0].contains(#""recordsIn":30000,"recordsOut":"#))
        for o in outputs.dropFirst() { #expect(o == outputs[0]) }
    }

    @Test func byteRangeSplitsAddUpToTheSerialRun() throws {
        let file = try CLI.temporaryFile(Self.input)
        let size = Self.input.utf8.count
        let serial = try CLI.run(["--where", "type == \"PushEvent\"", "-q", file])
        var joined = ""
        var filtered = 0
        for (start, end) in [(0, 50), (50, 180), (180, size)] {
            let r = try CLI.run(["--where", "type == \"PushEvent\"", "-q", "--stats", "--byte-range", "\(start):\(end)", file])
            joined += r.stdout
            let stats = try #require(try JSONSerialization.jsonObject(with: Data(r.stderrLines.last!.utf8)) as? [String: Any])
            filtered += stats["recordsFiltered"] as? Int ?? -1
        }
        #expect(joined == serial.stdout)
        #expect(filtered == 2)
    }

    @Test func specWhereFlagReplacesItAndPrintSpecShowsIt() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"id":"id"},"where":"type == \"WatchEvent\""}"#)
        let fromSpec = try CLI.run(["--spec", spec, "-q"], stdin: Self.input)
        #expect(fromSpec.stdout == "{\"id\":2}\n")
        let replaced = try CLI.run(["--spec", spec, "--where", "payload.size == 1"], stdin: Self.input)
        #expect(replaced.stdout == "{\"id\":9007199254740992}\n")
        let printed = try CLI.run(["--spec", spec, "--where", "exists(payload)", "--print-spec"])
        #expect(printed.stdout == #"{"fields":{"id":"id"},"where":"exists(payload)"}"# + "\n")
        let alone = try CLI.run(["--where", "a.b is integer", "--print-spec"])
        #expect(alone.stdout == #"{"mapper":"identity","where":"a.b is integer"}"# + "\n")
        // A whole-record mapper spec takes a --where too.
        let whole = try CLI.temporaryFile(#"{"mapper":{"keys":"camel"}}"#)
        let r = try CLI.run(["--spec", whole, "--where", "first_name == \"A\""], stdin: "{\"first_name\":\"A\"}\n{\"first_name\":\"B\"}\n")
        #expect(r.stdout == "{\"firstName\":\"A\"}\n")
    }

    /// With the io branch's gzip input and CSV output: the kept records only, the same with two jobs.
    @Test func worksWithGzipInputAndCSVOutput() throws {
        let file = try CLI.temporaryFile(Self.input)
        let gz = file + ".gz"
        let zipped = try CLI.shell("gzip -c '\(file)' > '\(gz)'")
        #expect(zipped.status == 0)
        for jobs in ["1", "2"] {
            let r = try CLI.run(["--where", #"type == "PushEvent" && id is integer"#, "--field", "id", "--field", "payload.size=commits",
                                 "--to", "csv", "--jobs", jobs, "-q", gz])
            #expect(r.stdout == "id,commits\n9007199254740993,3\n9007199254740992,1\n", "jobs \(jobs)")
        }
    }

    @Test func theSpecsDelimiterSplitsThePaths() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"a.b":{"to":"x","literal":true}},"delimiter":"->","where":"u->v == 1 && `a.b` == 2"}"#)
        let r = try CLI.run(["--spec", spec], stdin: "{\"a.b\":2,\"u\":{\"v\":1}}\n{\"a.b\":2,\"u\":{\"v\":2}}\n")
        #expect(r.stdout == "{\"x\":2}\n")
    }

    @Test func aBadExpressionIsAUsageErrorWithACaret() throws {
        let r = try CLI.run(["--where", #"type == "PushEvent" && payload.size > "#], stdin: "{}\n")
        #expect(r.status == 64)
        #expect(r.stdout == "")
        #expect(r.stderrLines.prefix(3) == [
            "Error: --where: column 39: expected a JSON value after >, found the end of the expression",
            #"  type == "PushEvent" && payload.size > "#,
            "                                        ^",
        ])
        let spec = try CLI.temporaryFile(#"{"fields":{"id":"id"},"where":"id === 1"}"#)
        let bad = try CLI.run(["check", spec])
        #expect(bad.status == 2)
        #expect(bad.stderr == "streammap: \(spec): /where: column 6: expected a JSON value after ==, found \"= 1\"\n")
    }

    /// As IOCLITests' interrupt: three records and the start of a fourth, SIGINT while the tool waits for more.
    @Test func theInterruptSummaryAndTheProgressLineCountFilteredRecords() throws {
        let run = try LiveCLI(["--field", "n", "--where", "n != 2", "--progress", "--progress-interval", "0", "--stats"])
        run.write("{\"n\":1}\n{\"n\":2}\n{\"n\":3,\"x\":\"")
        Thread.sleep(forTimeInterval: 0.1)
        run.write("rest\"}\n{\"n\":")
        run.waitForStandardError(containing: "streammap: 3 records (1 filtered)")
        Thread.sleep(forTimeInterval: 0.1)
        run.signal(SIGINT)
        let r = run.finish(keepInputOpen: true)
        #expect(r.stdout == "{\"n\":1}\n{\"n\":3}\n")
        #expect(r.stderrLines.first == "streammap: interrupted: 3 records read, 2 written, 1 filtered, 0 rejected")
        #expect(r.stderrLines.last?.hasPrefix(#"{"recordsIn":3,"recordsOut":2,"recordsRejected":0,"recordsFiltered":1,"#) == true)
        #expect(r.status == 130)
    }

    @Test func checkAndExplainShowTheFilter() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"id":"id"},"where":"type == \"PushEvent\" || actor.login in [\"ann\"]"}"#)
        let check = try CLI.run(["check", spec, "--where", "exists(id)"])
        #expect(check.stdout == "\(spec) with flags: ok\n")
        let explain = try CLI.run(["explain", spec])
        #expect(explain.stdout.hasSuffix("""
            where: type == "PushEvent" || actor.login in ["ann"]
              records it drops are counted as filtered, not mapped; it reads type, actor.login (each value captured as the record streams past, so the mapping skips nothing inside yajl)

            """))
        let json = try CLI.run(["explain", spec, "--json"])
        let o = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let filter = try #require(o["where"] as? [String: Any])
        #expect(filter["expression"] as? String == #"type == "PushEvent" || actor.login in ["ann"]"#)
        #expect(filter["reads"] as? [String] == ["type", "actor.login"])
    }
}
