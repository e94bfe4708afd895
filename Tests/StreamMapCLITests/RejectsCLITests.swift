import Foundation
import Testing

/// Rejected records: `--rejects FILE`, `--redact`, `--rejects-record-bytes`, `--on-error`, `--max-rejects`, `--quiet`,
/// `--warnings`.
@Suite("streammap rejects")
struct RejectsCLITests {
    static let spec = #"{"fields":{"id":{"to":"id","type":"integer"},"name":"name"}}"#

    /// Line 1 maps; 2 is blank; 3 has a wrong type and ends in CRLF; 4 is only spaces; 5 lacks `name` (CRLF);
    /// 6 is not JSON; 7 maps and has no final newline.
    static let input = "{\"id\":1,\"name\":\"a\"}\n\n{\"id\":\"x\",\"name\":\"b\"}\r\n   \n{\"id\":3}\r\n{\"id\":\n{\"id\":5,\"name\":\"e\"}"

    /// Byte offset of `text` in the input.
    static func offset(of text: String) -> Int {
        let haystack = Array(input.utf8), needle = Array(text.utf8)
        for i in 0...(haystack.count - needle.count) where Array(haystack[i..<(i + needle.count)]) == needle { return i }
        return -1
    }

    @Test func rejectsFileHasExactLinesOffsetsErrorsAndText() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let rejects = try CLI.temporaryDirectory().appendingPathComponent("rejects.ndjson").path
        let r = try CLI.run(["--spec", spec, "--rejects", rejects], stdin: Self.input)
        #expect(r.stdout == "{\"id\":1,\"name\":\"a\"}\n{\"id\":5,\"name\":\"e\"}\n")
        #expect(r.stderr == "streammap: 3 of 5 records rejected, written to \(rejects)\n")
        #expect(r.status == 1)
        #expect(Self.offset(of: "{\"id\":\"x\"") == 21)
        let o3 = Self.offset(of: "{\"id\":\"x\""), o5 = Self.offset(of: "{\"id\":3}"), o6 = Self.offset(of: "{\"id\":\n")
        #expect(CLI.read(rejects) == """
            {"input":"<stdin>","line":3,"offset":\(o3),"errors":[{"code":"type","fatal":true,"source":"/id","destination":"/id","message":"expected integer, found string \\"x\\""}],"record":"{\\"id\\":\\"x\\",\\"name\\":\\"b\\"}"}
            {"input":"<stdin>","line":5,"offset":\(o5),"errors":[{"code":"required","fatal":true,"source":"/name","destination":"/name","message":"value is required, found absent"}],"record":"{\\"id\\":3}"}
            {"input":"<stdin>","line":6,"offset":\(o6),"errors":[{"code":"syntax","fatal":true,"source":"","destination":"","message":"premature EOF"}],"record":"{\\"id\\":"}

            """)
    }

    @Test func bothEnginesWriteTheSameRejects() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let dir = try CLI.temporaryDirectory()
        let a = dir.appendingPathComponent("a.ndjson").path, b = dir.appendingPathComponent("b.ndjson").path
        let stream = try CLI.run(["--spec", spec, "--rejects", a], stdin: Self.input)
        let tree = try CLI.run(["--spec", spec, "--rejects", b, "--engine", "tree"], stdin: Self.input)
        #expect(stream.stdout == tree.stdout)
        #expect(CLI.read(a) == CLI.read(b))
        #expect(!CLI.read(a).isEmpty)
    }

    @Test func rejectsNameTheirInputFile() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let dir = try CLI.temporaryDirectory()
        let first = dir.appendingPathComponent("first.ndjson").path, rejects = dir.appendingPathComponent("r.ndjson").path
        try Data("{\"id\":1}\n".utf8).write(to: URL(fileURLWithPath: first))
        let r = try CLI.run(["--spec", spec, "--rejects", rejects, first, "-"], stdin: "{\"name\":\"x\",\"id\":2.5}\n")
        #expect(r.status == 1)
        let lines = CLI.read(rejects).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("{\"input\":\"\(first)\",\"line\":1,\"offset\":0,"))
        #expect(lines[1].hasPrefix("{\"input\":\"<stdin>\",\"line\":1,\"offset\":0,"))
    }

    @Test func recordTextIsTruncatedOrRedacted() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let dir = try CLI.temporaryDirectory()
        let cut = dir.appendingPathComponent("cut.ndjson").path, redacted = dir.appendingPathComponent("redacted.ndjson").path
        let record = "{\"id\":\"x\",\"name\":\"b\"}"
        let t = try CLI.run(["--spec", spec, "--rejects", cut, "--rejects-record-bytes", "5"], stdin: record + "\n")
        #expect(t.status == 1)
        #expect(CLI.read(cut).hasSuffix(#""record":"{\"id\"","truncated":true}"# + "\n"))
        let d = try CLI.run(["--spec", spec, "--rejects", redacted, "--redact"], stdin: record + "\n")
        #expect(d.status == 1)
        #expect(CLI.read(redacted).hasSuffix(#""recordBytes":21}"# + "\n"))
        #expect(!CLI.read(redacted).contains("name"))
    }

    @Test func aLongRecordStreamedInPiecesIsCutAtTheDefaultLimit() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let dir = try CLI.temporaryDirectory()
        let rejects = dir.appendingPathComponent("r.ndjson").path, redacted = dir.appendingPathComponent("d.ndjson").path
        let long = "{\"id\":1,\"pad\":\"" + String(repeating: "x", count: 300_000) + "\"}"
        let input = "{\"id\":0,\"name\":\"a\"}\n" + long + "\n"
        let r = try CLI.run(["--spec", spec, "--rejects", rejects], stdin: input)
        #expect(r.stdout == "{\"id\":0,\"name\":\"a\"}\n")
        let line = CLI.read(rejects)
        // (Booleans, so that a failure does not print 300 kB.)
        let head = line.hasPrefix(#"{"input":"<stdin>","line":2,"offset":20,"errors":[{"code":"required""#)
        let tail = line.hasSuffix(#"xxxxx","truncated":true}"# + "\n")
        #expect(head)
        #expect(tail)
        let value = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect((value?["record"] as? String)?.utf8.count == 65_536)
        _ = try CLI.run(["--spec", spec, "--rejects", redacted, "--redact"], stdin: input)
        let redactedLine = CLI.read(redacted)
        #expect(redactedLine.hasSuffix("],\"recordBytes\":\(long.utf8.count)}\n"))
        #expect(redactedLine.count < 300)
    }

    @Test func onErrorFailStopsAtTheFirstRejectedRecord() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let r = try CLI.run(["--spec", spec, "--on-error", "fail"],
                            stdin: "{\"id\":1,\"name\":\"a\"}\n{\"id\":\"x\",\"name\":\"b\"}\n{\"id\":3,\"name\":\"c\"}\n")
        #expect(r.stdout == "{\"id\":1,\"name\":\"a\"}\n")
        #expect(r.stderrLines == [
            "streammap: <stdin>:2: /id: expected integer, found string \"x\"",
            "streammap: <stdin>:2: stopped at the first rejected record (--on-error fail)",
        ])
        #expect(r.status == 4)
    }

    @Test func maxRejectsStopsWhenExceeded() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let input = "{}\n{\"id\":2,\"name\":\"b\"}\n{}\n{\"id\":4,\"name\":\"d\"}\n{}\n"
        let stopped = try CLI.run(["--spec", spec, "--max-rejects", "1", "--quiet", "--stats"], stdin: input)
        #expect(stopped.stdout == "{\"id\":2,\"name\":\"b\"}\n")
        #expect(stopped.stderrLines.first == "streammap: <stdin>:3: stopped: 2 records rejected, more than --max-rejects 1")
        #expect(stopped.stderrLines.last?.hasPrefix(#"{"recordsIn":3,"recordsOut":1,"recordsRejected":2,"#) == true)
        #expect(stopped.status == 4)
        let within = try CLI.run(["--spec", spec, "--max-rejects", "3", "--quiet"], stdin: input)
        #expect(within.stdout == "{\"id\":2,\"name\":\"b\"}\n{\"id\":4,\"name\":\"d\"}\n")
        #expect(within.stderr == "")
        #expect(within.status == 1)
        let zero = try CLI.run(["--spec", spec, "--max-rejects", "0", "--quiet"], stdin: input)
        #expect(zero.stdout == "")
        #expect(zero.status == 4)
        let negative = try CLI.run(["--spec", spec, "--max-rejects", "-1"])
        #expect(negative.status == 64)
    }

    @Test func quietLeavesOnlyTheStatus() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let r = try CLI.run(["--spec", spec, "-q"], stdin: Self.input)
        #expect(r.stdout == "{\"id\":1,\"name\":\"a\"}\n{\"id\":5,\"name\":\"e\"}\n")
        #expect(r.stderr == "")
        #expect(r.status == 1)
    }

    @Test func warningsAreReportedOnRequest() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"u":{"to":"u","via":"url","optional":true},"n":"n"}}"#)
        let input = "{\"u\":\"not a url\",\"n\":1}\n{\"u\":\"https://x.org\",\"n\":2}\n"
        let silent = try CLI.run(["--spec", spec], stdin: input)
        #expect(silent.stdout == "{\"n\":1}\n{\"u\":\"https://x.org\",\"n\":2}\n")
        // A dropped value is never silent: without --warnings, one count line at the end.
        #expect(silent.stderr == "streammap: 1 value was dropped or replaced with a warning (a key collision, a default or fallback for a value that does not map): --warnings lists them\n")
        #expect(silent.status == 0)
        let loud = try CLI.run(["--spec", spec, "--warnings"], stdin: input)
        #expect(loud.stdout == silent.stdout)
        #expect(loud.stderr == "streammap: <stdin>:1: /u: warning: string \"not a url\" is not an absolute URL\n")
        #expect(loud.status == 0)
    }

    @Test func controlCharactersInMessagesAreEscaped() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"a\u001b[31m":{"to":"a","type":"integer"}}}"#)
        let r = try CLI.run(["--spec", spec], stdin: "{\"a\\u001b[31m\":\"\\u0007\\n\"}\n")
        #expect(r.stderr == "streammap: <stdin>:1: /a\\u001b[31m: expected integer, found string \"\\u0007\\n\"\n")
        #expect(!r.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(r.status == 1)
    }

    /// Every escaping path of a record message, in the input's name, the pointer and the message: C0 controls,
    /// DEL, U+0080–U+009F (C2 80–9F in UTF-8) escaped; `~` and `/` of a key as `~0`, `~1`; U+00A0 (C2 A0) and other
    /// non-ASCII text as it is; in an error line and in a warning line.
    @Test func messagesEscapeC0DelAndC1ButNotOtherNonASCII() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try CLI.temporaryFile(#"{"fields":{"k~/\u007f\u0085é\u00a0":{"to":"k","type":"integer"},"u":{"to":"u","via":"url","optional":true}}}"#)
        let input = dir.appendingPathComponent("in\u{1}\u{85}é.ndjson").path
        try Data(#"""
            {"k~/\u007f\u0085é\u00a0":"\u0085\u009f\u00a0é\u007f","u":"x"}
            {"k~/\u007f\u0085é\u00a0":1,"u":"\u0085"}

            """#.utf8).write(to: URL(fileURLWithPath: input))
        let r = try CLI.run(["--spec", spec, "--warnings", input])
        let name = dir.appendingPathComponent(#"in\u0001\u0085é.ndjson"#).path
        #expect(r.stdout == "{\"k\":1}\n")
        #expect(r.stderr == """
            streammap: \(name):1: /k~0~1\\u007f\\u0085é\u{A0}: expected integer, found string "\\u0085\\u009f\u{A0}é\\u007f"
            streammap: \(name):2: /u: warning: string "\\u0085" is not an absolute URL

            """)
        #expect(r.status == 1)
    }

    @Test func redactNeedsRejects() throws {
        let r = try CLI.run(["--redact"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--redact needs --rejects FILE"))
    }
}
