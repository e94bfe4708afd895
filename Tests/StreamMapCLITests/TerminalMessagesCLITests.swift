import Foundation
import Testing

/// What a new user trips on at a terminal: every usage error reads alike (the same usage lines, a "did you mean"
/// only for a typo), a bad value is a bad value, `--help` leads with examples, and colour only where it belongs.
@Suite struct TerminalMessagesCLITests {
    static let usage = """
        Usage: streammap [OPTIONS] [FILE...]
               streammap check [SPEC] [OPTIONS]
               streammap explain [SPEC] [OPTIONS]
               streammap infer [FILE...] [OPTIONS]
          See 'streammap map --help' for more information.

        """

    @Test(arguments: [
        (["--bogus"], "Error: Unknown option '--bogus'.\n"),
        (["--jbos", "2"], "Error: Unknown option '--jbos'. Did you mean '--jobs'?\n"),
        (["--jobs", "-3"], "Error: The value '-3' is invalid for '--jobs <n>': expected a number of threads from 0 to 256, or 'auto'\n"),
        (["--type", "a=strnig"], "Error: --type a=strnig: unknown type \"strnig\" (did you mean \"string\"?) (one of null, boolean, integer, number, string, array, object)\n"),
        (["--type", "a=int"], "Error: --type a=int: unknown type \"int\" (did you mean \"integer\"?) (one of null, boolean, integer, number, string, array, object)\n"),
        (["--key-style", "cammel"], "Error: --key-style cammel: unknown key style (did you mean \"camel\"?) (one of hydrant.snake, hydrant.camel, hydrant.upperCamel, foundation.snake, foundation.camel, kvmapper.llama, lower, upper, snake, camel)\n"),
    ])
    func usageErrorsReadAlike(arguments: [String], error: String) throws {
        let r = try CLI.run(arguments)
        #expect(r.status == 64)
        // The --jobs error adds the option's help line between the error and the usage.
        #expect(r.stderr.hasPrefix(error), "\(r.stderr)")
        #expect(r.stderr.hasSuffix(Self.usage), "\(r.stderr)")
    }

    @Test func anOutputThatIsAnInputIsAUsageErrorLikeTheOthers() throws {
        let input = try CLI.temporaryFile("{\"a\":1}\n")
        let r = try CLI.run(["-o", input, input])
        #expect(r.status == 64)
        #expect(r.stderr == "Error: -o \(input) is also an input; it would be overwritten before it is read\n" + Self.usage)
        #expect(try String(contentsOfFile: input, encoding: .utf8) == "{\"a\":1}\n")  // untouched
    }

    @Test func helpLeadsWithExamples() throws {
        let r = try CLI.run(["--help"])
        #expect(r.status == 0)
        let lines = r.stdoutLines
        #expect(lines.prefix(4) == ["OVERVIEW: Map JSON records (NDJSON by default) with a spec or one-liner flags.", "",
                                    "EXAMPLES", "  streammap -s events.spec.json events.ndjson > mapped.ndjson"])
    }

    static let records = "{\"a\":1}\n{\n"

    @Test func noColourOffATerminal() throws {
        let r = try CLI.run(["--type", "a=string", "--warnings"], stdin: Self.records)
        #expect(!r.stderr.contains("\u{1B}"))
        #expect(r.stderrLines.first == "streammap: <stdin>:1: /a: expected string, found integer 1")
    }

    @Test func colourWhenForcedAndNeverWithNoColor() throws {
        let forced = try CLI.shell("CLICOLOR_FORCE=1 streammap --type a=string", stdin: Self.records)
        #expect(forced.stderrLines.prefix(2) == [
            "streammap: \u{1B}[1m<stdin>:1:\u{1B}[0m /a: expected string, found integer 1",
            "streammap: \u{1B}[1m<stdin>:2:\u{1B}[0m \u{1B}[1;31minvalid JSON: \u{1B}[0mpremature EOF",
        ])
        let spec = try CLI.temporaryFile(#"{"fields":{"a":{"to":"a","type":"integer","optional":true}}}"#)
        let warning = try CLI.shell("CLICOLOR_FORCE=1 streammap --warnings --spec '\(spec)'", stdin: "{\"a\":\"x\"}\n")
        #expect(warning.stderrLines == ["streammap: \u{1B}[1m<stdin>:1:\u{1B}[0m /a: \u{1B}[1;33mwarning: \u{1B}[0mexpected integer, found string \"x\""])
        let off = try CLI.shell("CLICOLOR_FORCE=1 NO_COLOR=1 streammap --type a=string", stdin: Self.records)
        #expect(!off.stderr.contains("\u{1B}") && off.status == 1)
        let empty = try CLI.shell("CLICOLOR_FORCE=1 NO_COLOR= streammap --type a=string", stdin: Self.records)
        #expect(empty.stderr.contains("\u{1B}"))  // an empty NO_COLOR does not count (no-color.org)
    }

    @Test func aMessageNeverDrivesTheTerminal() throws {
        // A control character in the input's text is escaped, colour or not.
        let r = try CLI.shell("CLICOLOR_FORCE=1 streammap --type a=integer", stdin: "{\"a\":\"\\u001b[31m\"}\n")
        #expect(r.stderr.contains("\\u001B[31m") || r.stderr.contains("\\u001b[31m"), "\(r.stderr)")
    }
}
