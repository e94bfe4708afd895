import Foundation
import Testing

/// `--stats` (a JSON summary on standard error) and the progress line (`--progress`, `--no-progress`, and the
/// default: only when standard error is a terminal).
@Suite("streammap stats and progress")
struct StatsProgressCLITests {
    static let spec = #"{"fields":{"id":{"to":"id","type":"integer"},"home":{"to":"home","via":"url","optional":true},"tags":{"to":"tags","via":{"arrayOf":{"optional":"integer"}},"missing":"omit"}}}"#
    static let input = """
        {"id":1,"home":"https://a.org","tags":[1,"x",3]}
        {"id":"two"}
        {"id":3,"home":"nope"}
        {"id":4,"tags":["a","b"]}
        not json

        """

    @Test func statsSummarizesTheRun() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let r = try CLI.run(["--spec", spec, "--stats", "-q"], stdin: Self.input)
        #expect(r.stdout == "{\"id\":1,\"home\":\"https://a.org\",\"tags\":[1,3]}\n{\"id\":3}\n{\"id\":4,\"tags\":[]}\n")
        #expect(r.status == 1)
        #expect(r.stderrLines.count == 1)
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(r.stderrLines[0].utf8)) as? [String: Any])
        #expect(stats["recordsIn"] as? Int == 5)
        #expect(stats["recordsOut"] as? Int == 3)
        #expect(stats["recordsRejected"] as? Int == 2)
        // Warnings: tags/1 of record 1, home of record 3 (not a URL), home of record 4 (absent: `optional` warns),
        // tags/0 and tags/1 of record 4. Rejected records' warnings are not counted.
        #expect(stats["warnings"] as? Int == 5)
        #expect(stats["warningsByPath"] as? [String: [String: Int]] == ["/home": ["required": 1, "value": 1], "/tags/*": ["type": 3]])
        #expect(stats["errorsByPath"] as? [String: [String: Int]] == ["/id": ["type": 1], "": ["syntax": 1]])
        #expect(stats["bytesIn"] as? Int == Self.input.utf8.count)
        #expect(stats["exitStatus"] as? Int == 1)
        #expect(stats["seconds"] is Double || stats["seconds"] is Int)
        #expect(stats["mbPerSecond"] != nil)
        #expect(r.stderr.hasPrefix(#"{"recordsIn":5,"recordsOut":3,"recordsRejected":2,"warnings":5,"warningsByPath":{"/home":{"required":1,"value":1},"/tags/*":{"type":3}},"errorsByPath":{"":{"syntax":1},"/id":{"type":1}},"bytesIn":"#))
    }

    @Test func statsComeAfterTheMessages() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let r = try CLI.run(["--spec", spec, "--stats"], stdin: Self.input)
        #expect(r.stderrLines.count == 4)
        #expect(r.stderrLines[0] == "streammap: <stdin>:2: /id: expected integer, found string \"two\"")
        #expect(r.stderrLines[1] == "streammap: <stdin>:5: invalid JSON: lexical error: invalid string in json text.")
        // The warnings that dropped or replaced a value (the absent /home that a default stands in for is not one).
        #expect(r.stderrLines[2].hasPrefix("streammap: 4 values were dropped or replaced with a warning"))
        #expect(r.stderrLines[3].hasPrefix("{\"recordsIn\":5,"))
    }

    /// Writes `count` records into a pipe over about `seconds`, so that the progress line has time to draw.
    func slowRun(_ arguments: [String], count: Int = 8, seconds: Double = 1.2) throws -> CLIResult {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let watchdog = CLI.watchdog(process)
        defer { watchdog.cancel() }
        for i in 0..<count {
            input.fileHandleForWriting.write(Data("{\"n\":\(i)}\n".utf8))
            Thread.sleep(forTimeInterval: seconds / Double(count))
        }
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self),
                         status: process.terminationStatus)
    }

    @Test func progressIsDrawnOnStandardErrorAndClearedAtTheEnd() throws {
        let r = try slowRun(["--progress"])
        #expect(r.stdout == (0..<8).map { "{\"n\":\($0)}\n" }.joined())
        #expect(r.status == 0)
        #expect(r.stderr.hasPrefix("\r\u{1B}[Kstreammap: "))
        #expect(r.stderr.contains(" records, "))
        #expect(r.stderr.contains(" MB/s"))
        #expect(r.stderr.hasSuffix("\r\u{1B}[K"))
        #expect(!r.stderr.contains("ETA"))  // a pipe has no known size
    }

    /// Counts agree with their nouns: "1 record", "2 records" (the help's usage lists every subcommand too).
    @Test func oneRecordIsOneRecord() throws {
        let one = try CLI.temporaryFile("{\"n\":1}\n", name: "one.ndjson")
        let r = try CLI.run(["--progress", "--progress-interval", "0", one])
        #expect(r.stderr.contains("streammap: 1 record, "), "\(r.stderr)")
        #expect(!r.stderr.contains(" 1 records"))
        let help = try CLI.run(["--help"])
        #expect(help.stdout.contains("       streammap infer [FILE...] [OPTIONS]\n"))
    }

    @Test func progressIsOffWhenStandardErrorIsNotATerminal() throws {
        let r = try slowRun([], count: 4, seconds: 0.6)
        #expect(r.stderr == "")
        #expect(r.status == 0)
    }

    @Test func progressShowsAnETAForFilesAndGetsOutOfTheWayOfMessages() throws {
        let dir = try CLI.temporaryDirectory()
        let file = dir.appendingPathComponent("in.ndjson")
        let lines = (0..<40_000).map { $0 == 20_000 ? "{\"n\":\"bad\"}" : "{\"n\":\($0),\"pad\":\"abcdefghijklmnopqrstuvwxyz\"}" }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        let r = try CLI.run(["--progress", "--progress-interval", "0", "--type", "n=integer", "--drop-unmapped", file.path])
        #expect(r.stdoutLines.count == 39_999)
        #expect(r.status == 1)
        #expect(r.stderr.contains("%), "))
        #expect(r.stderr.contains(", ETA "))
        // The message starts on a cleared line, and the last thing written clears the progress line.
        #expect(r.stderr.contains("\r\u{1B}[Kstreammap: \(file.path):20001: /n: expected integer, found string \"bad\"\n"))
        #expect(r.stderr.hasSuffix("\r\u{1B}[K"))
    }

    /// Runs a command under `script`, which gives it a terminal; returns what the terminal showed.
    func underTerminal(_ command: String) throws -> CLIResult {
        try CLI.shell("script -q -e -c \"\(command)\" /dev/null")
    }

    @Test func progressIsOnByDefaultInATerminalAndNoProgressTurnsItOff() throws {
        let slow = "(for i in 1 2 3 4 5 6; do echo {}; sleep 0.15; done)"
        let on = try underTerminal("\(slow) | streammap 2>&1 >/dev/null")
        #expect(on.stdout.contains("\u{1B}[K"))
        #expect(on.stdout.contains(" records, "))
        let off = try underTerminal("\(slow) | streammap --no-progress 2>&1 >/dev/null")
        #expect(!off.stdout.contains("\u{1B}[K"))
        #expect(off.status == 0)
    }
}
