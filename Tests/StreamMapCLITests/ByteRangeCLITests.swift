import Foundation
import Testing

/// `--byte-range START:END FILE`: the splits of a file, each mapped on its own and put back together with the
/// `byteRange` lines (LFs before each range), give a serial run's output, rejects, lines and offsets.
@Suite("streammap --byte-range")
struct ByteRangeCLITests {
    static let spec = #"{"fields":{"id":{"to":"id","type":"integer"}}}"#

    /// A BOM at the start (skipped) and at the start of line 6 (rejected), CRLF, blank and whitespace lines, a CR
    /// before a record, a line longer than the small splits, bad JSON, and no final newline.
    static let input: [UInt8] = Array("\u{FEFF}{\"id\":1}\n{\"id\":2}\r\n\n  \t\n\r {\"id\":3}\n\u{FEFF}{\"id\":4}\n".utf8)
        + Array("{\"id\":5,\"long\":\"\(String(repeating: "x", count: 70))\"}\n{\"id\":\"six\"}\r\n{\"id\":\n\n{\"id\":9}".utf8)

    struct Run {
        var stdout: String
        var rejects: [[String: Any]]
        var start = 0, end = 0, newlines = 0
    }

    static func run(_ args: [String], file: String, spec: String, dir: URL) throws -> Run {
        let rejects = dir.appendingPathComponent("rejects-\(UUID().uuidString).ndjson").path
        let r = try CLI.run(["--spec", spec, "-q", "--stats", "--rejects", rejects] + args + [file])
        #expect(r.status == 0 || r.status == 1, "\(args): \(r.stderr)")
        let rows = CLI.read(rejects).split(separator: "\n").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        var run = Run(stdout: r.stdout, rejects: rows)
        if args.contains("--byte-range") {
            let lines = r.stderrLines
            #expect(lines.count == 2)
            let range = (try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any])["byteRange"] as! [String: Int]
            (run.start, run.end, run.newlines) = (range["start"]!, range["end"]!, range["newlines"]!)
        }
        return run
    }

    @Test(arguments: [1, 2, 3, 7, 10, 16, 40, 1000])
    func splitsPutBackTogetherAreTheSerialRun(splitBytes: Int) throws {
        let dir = try CLI.temporaryDirectory()
        let file = dir.appendingPathComponent("in.ndjson").path
        try Data(Self.input).write(to: URL(fileURLWithPath: file))
        let spec = try CLI.temporaryFile(Self.spec)
        let serial = try Self.run([], file: file, spec: spec, dir: dir)
        #expect(serial.rejects.count == 3)

        var output = "", rejects: [[String: Any]] = [], linesBefore = 0, previous: Run?
        for start in stride(from: 0, to: Self.input.count, by: splitBytes) {
            let end = min(start + splitBytes, Self.input.count)
            let part = try Self.run(["--byte-range", "\(start):\(end)"], file: file, spec: spec, dir: dir)
            if let previous {
                #expect(part.start == previous.end - 1 || part.start == previous.end)  // starts at the LF the last one ended with
                linesBefore += previous.newlines - (previous.end > part.start ? 1 : 0)
            } else {
                #expect(part.start == 0)
            }
            output += part.stdout
            for var r in part.rejects {
                r["line"] = (r["line"] as! Int) + linesBefore
                r["offset"] = (r["offset"] as! Int) + part.start
                rejects.append(r)
            }
            previous = part
        }
        #expect(previous?.end == Self.input.count)
        #expect(output == serial.stdout)
        #expect(rejects.count == serial.rejects.count)
        for (a, b) in zip(rejects, serial.rejects) {
            #expect(NSDictionary(dictionary: a).isEqual(to: b), "\(a) != \(b)")
        }
    }

    @Test func withJobsARangeMapsTheSameRecords() throws {
        let dir = try CLI.temporaryDirectory()
        let file = dir.appendingPathComponent("in.ndjson").path
        try Data(Self.input).write(to: URL(fileURLWithPath: file))
        let spec = try CLI.temporaryFile(Self.spec)
        for range in ["0:20", "20:75", "75:\(Self.input.count)"] {
            let one = try Self.run(["--byte-range", range], file: file, spec: spec, dir: dir)
            let jobs = try Self.run(["--jobs", "2", "--batch-bytes", "8", "--byte-range", range], file: file, spec: spec, dir: dir)
            #expect(jobs.stdout == one.stdout)
            #expect((jobs.start, jobs.end, jobs.newlines) == (one.start, one.end, one.newlines))
            #expect(jobs.rejects.count == one.rejects.count)
        }
    }

    @Test func aSplitInsideOneLongLineReadsItsLineFeedAlone() throws {
        let file = try CLI.temporaryFile("{\"id\":1,\"x\":\"0123456789\"}\n{\"id\":2}\n", name: "in.ndjson")
        let r = try CLI.run(["--stats", "--byte-range", "5:10", file])
        #expect((r.status, r.stdout) == (0, ""))
        #expect(r.stderrLines.first == #"{"byteRange":{"start":25,"end":26,"newlines":1}}"#)
        #expect(r.stderrLines.last?.contains(#""recordsIn":0,"#) == true)
    }

    @Test func aRangePastTheEndOfTheFileIsAnInputError() throws {
        let file = try CLI.temporaryFile("{\"id\":1}\n", name: "in.ndjson")
        let r = try CLI.run(["--byte-range", "0:10", file])
        #expect(r.status == 3)
        #expect(r.stderr == "streammap: \(file): --byte-range 0:10 ends past the end of the file (9 bytes)\n")
        #expect(try CLI.run(["--byte-range", "0:9", file]).stdout == "{\"id\":1}\n")
        let one = try CLI.temporaryFile("\n", name: "one.ndjson")
        #expect(try CLI.run(["--byte-range", "0:2", one]).stderr == "streammap: \(one): --byte-range 0:2 ends past the end of the file (1 byte)\n")
    }

    @Test(arguments: [
        (["--byte-range", "0:1"], "exactly one input FILE"),
        (["--byte-range", "0:1", "-"], "exactly one input FILE"),
        (["--byte-range", "0:1", "a", "b"], "exactly one input FILE"),
        (["--byte-range", "0:1", "--framing", "array", "a"], "splits NDJSON only"),
        (["--byte-range", "5:3", "a"], "is invalid for '--byte-range"),
        (["--byte-range=-1:3", "a"], "is invalid for '--byte-range"),
    ])
    func usageErrors(args: [String], message: String) throws {
        let r = try CLI.run(args)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }
}
