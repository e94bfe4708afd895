import Foundation
import Testing
import StreamMapTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--jobs N`: the run with N threads must be indistinguishable from the run with one — the same standard output,
/// rejects file, standard error (messages in the same order, the same `--stats` counts), and exit status — for
/// every input, with batches small enough (hidden `--batch-bytes`) that many are in flight at once.
@Suite("streammap --jobs")
struct ParallelJobsTests {
    static let spec = #"{"fields":{"id":{"to":"id","type":"integer"},"name":{"to":"name","optional":true},"home":{"to":"home","via":{"url":["https"]},"optional":true},"tags":{"to":"tags","via":{"arrayOf":{"optional":"string"}},"missing":"omit"}}}"#

    // MARK: The comparison

    /// What a run left behind, in a form that compares: `--stats`' timing fields blanked.
    struct Observed: Equatable, CustomStringConvertible {
        var stdout: String
        var stderr: String
        var status: Int32
        var rejects: String?

        var description: String {
            "status \(status)\n--- stdout (\(stdout.utf8.count) bytes)\n\(stdout.prefix(2000))\n--- stderr\n\(stderr.prefix(4000))\n--- rejects\n\((rejects ?? "none").prefix(2000))"
        }
    }

    static func normalizedStats(_ stderr: String) -> String {
        stderr.replacingOccurrences(of: #""seconds":[0-9.]+,"mbPerSecond":[0-9.]+"#, with: #""seconds":_,"mbPerSecond":_"#,
                                    options: .regularExpression)
    }

    /// Runs `arguments` (where `REJECTS` stands for the rejects file, `rejects`) with the given extra arguments.
    static func observe(_ arguments: [String], extra: [String], stdin: String = "", rejects: String? = nil) throws -> Observed {
        let rejects = try rejects ?? CLI.temporaryDirectory().appendingPathComponent("rejects.ndjson").path
        let usesRejects = arguments.contains("REJECTS")
        let args = arguments.map { $0 == "REJECTS" ? rejects : $0 } + extra
        let r = try CLI.run(args, stdin: stdin)
        return Observed(stdout: r.stdout, stderr: normalizedStats(r.stderr), status: r.status,
                        rejects: usesRejects ? CLI.read(rejects) : nil)
    }

    /// The first difference between two runs, or nil.
    static func difference(_ a: Observed, _ b: Observed) -> String? {
        if a.status != b.status { return "status \(a.status) vs \(b.status)" }
        for (name, x, y) in [("stdout", a.stdout, b.stdout), ("stderr", a.stderr, b.stderr), ("rejects", a.rejects ?? "", b.rejects ?? "")] {
            guard x != y else { continue }
            let xs = x.split(separator: "\n", omittingEmptySubsequences: false)
            let ys = y.split(separator: "\n", omittingEmptySubsequences: false)
            let i = (0..<min(xs.count, ys.count)).first { xs[$0] != ys[$0] } ?? min(xs.count, ys.count)
            let line = { (l: [Substring]) in i < l.count ? String(l[i].prefix(300)) : "<end>" }
            return "\(name) differs at line \(i + 1) (\(xs.count) vs \(ys.count) lines):\n  jobs 1: \(line(xs))\n  jobs N: \(line(ys))"
        }
        return nil
    }

    /// Runs `arguments` with one job, then with each job count and batch size, and expects the same everything.
    /// Returns the one-job run.
    @discardableResult
    static func expectSameAsOneJob(_ arguments: [String], stdin: String = "", jobs: [Int] = [2, 3],
                                   batchBytes: [Int] = [1, 150, 4096, 1 << 20], sourceLocation: SourceLocation = #_sourceLocation) throws -> Observed {
        let rejects = try CLI.temporaryDirectory().appendingPathComponent("rejects.ndjson").path  // the same name in messages
        let one = try observe(arguments, extra: ["--jobs", "1"], stdin: stdin, rejects: rejects)
        for n in jobs {
            for size in batchBytes {
                let many = try observe(arguments, extra: ["--jobs", String(n), "--batch-bytes", String(size)], stdin: stdin,
                                       rejects: rejects)
                let diff = difference(one, many)
                #expect(diff == nil, "--jobs \(n) --batch-bytes \(size): \(diff ?? "")", sourceLocation: sourceLocation)
            }
        }
        return one
    }

    // MARK: Inputs

    /// A deterministic generator (the differential tests' SplitMix64).
    struct Random {
        var generator: SplitMix64
        init(state: UInt64) { generator = SplitMix64(seed: state) }
        mutating func below(_ n: Int) -> Int { Int(generator.next() % UInt64(n)) }
    }

    /// NDJSON that exercises everything the pipeline decides per record: good records (ids increasing), warnings,
    /// type errors, invalid JSON of several kinds, blank and whitespace-only lines, CRLF, leading whitespace, a BOM
    /// inside the input, records longer than the batches, and optionally a BOM first and no final newline.
    static func mixedInput(seed: UInt64, lines: Int, bom: Bool = false, finalNewline: Bool = true, longEvery: Int = 40) -> String {
        var rng = Random(state: seed)
        var out = bom ? "\u{FEFF}" : ""
        for i in 0..<lines {
            let id = Int(seed % 1000) * 1_000_000 + i
            var line: String
            switch rng.below(100) {
            case 0..<45: line = #"{"id":\#(id),"name":"user \#(i)","home":"https://x.org/\#(i)","tags":["a","b"]}"#
            case 45..<55: line = #"{"id":\#(id),"home":"http://plain.org","tags":["a",\#(i),null]}"#  // warnings
            case 55..<63: line = #"{"id":"\#(id)","name":"string id"}"#  // rejected: type
            case 63..<66: line = #"{"name":"no id","tags":"x"}"#  // rejected: tags not an array
            case 66..<68: line = #"{"id":\#(id),"name":"cut"#  // invalid JSON
            case 68..<70: line = #"{"id":\#(id),"name":tru}"#
            case 70: line = "nul"
            case 71: line = "{\"id\":\(id),\"name\":\"ctl \u{01}\"}"  // raw control character: rejected, message escaped
            case 72: line = "\u{FEFF}{\"id\":\(id)}"  // a BOM that is not at the start: rejected
            case 73..<78: line = ""
            case 78..<80: line = " \t "
            case 80..<83: line = "  \t{\"id\":\(id)}"
            case 83..<86: line = #"{"id":\#(id),"name":"crlf"}"# + "\r"
            default: line = #"{"id":\#(id),"name":"n\#(i)","tags":[\#((0..<rng.below(6)).map { "\"t\($0)\"" }.joined(separator: ","))]}"#
            }
            if longEvery > 0 && rng.below(longEvery) == 0 {
                let long = String(repeating: "é long ", count: 20 + rng.below(400))
                line = rng.below(3) == 0 ? #"{"id":"\#(id)","name":"\#(long)"}"# : #"{"id":\#(id),"name":"\#(long)","tags":["x"]}"#
            }
            out += line
            if i < lines - 1 || finalNewline { out += "\n" }
        }
        return out
    }

    static func file(_ contents: String, _ name: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    // MARK: Same results as one job

    @Test func mixedRecordsWarningsAndStats() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let a = try Self.file(Self.mixedInput(seed: 1, lines: 400, bom: true), "a.ndjson", in: dir)
        let b = try Self.file(Self.mixedInput(seed: 2, lines: 150, finalNewline: false), "b.ndjson", in: dir)
        let empty = try Self.file("", "empty.ndjson", in: dir)
        let blank = try Self.file("\n \r\n\t\n", "blank.ndjson", in: dir)
        let one = try Self.expectSameAsOneJob(["--spec", spec, "--warnings", "--stats", a, empty, b, blank])
        // The runs compared are not trivial: records of every kind, in two inputs, with line numbers restarting.
        #expect(one.status == 1)
        #expect(one.stdout.split(separator: "\n").count > 300)
        #expect(one.stderr.contains("a.ndjson:3") || one.stderr.contains("a.ndjson:4"))
        #expect(one.stderr.contains("b.ndjson:1:") || one.stderr.contains("b.ndjson:2:") || one.stderr.contains("b.ndjson:3:"))
        #expect(one.stderr.contains("warning:"))
        #expect(one.stderr.contains("invalid JSON"))
    }

    /// Reads end every 256 KiB, and the records that go on across them are copied into their batch while the rest
    /// are pointed at where they were read: an input of several reads, with a CRLF split across the first read's
    /// end and a CR that is whitespace inside a record across the second's (the framing hands that CR on from a
    /// buffer of its own).
    @Test func recordsAcrossReads() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let read = 1 << 18
        func padded(_ head: String, then text: String, endingAt end: Int) -> String {
            // `head`, short records, blanks and a newline, then `text`, whose last byte is at offset `end - 1`.
            var out = head
            var id = 0
            while out.utf8.count < end - text.utf8.count - 40 {
                out += #"{"id":\#(id),"name":"pad"}"# + "\n"
                id += 1
            }
            out += String(repeating: " ", count: end - text.utf8.count - out.utf8.count - 1) + "\n"
            return out + text
        }
        var input = padded("", then: #"{"id":1,"name":"crlf"}"# + "\r", endingAt: read) + "\n"
        input = padded(input, then: #"{"id":2,"# + "\r", endingAt: 2 * read) + #""name":"cr inside"}"# + "\n"
        let crs = input.utf8.indices.filter { input.utf8[$0] == 0x0D }.map { input.utf8.distance(from: input.utf8.startIndex, to: $0) }
        #expect(crs == [read - 1, 2 * read - 1])
        input += Self.mixedInput(seed: 8, lines: 9000)
        #expect(input.utf8.count > 5 * read)
        let a = try Self.file(input, "a.ndjson", in: dir)
        let one = try Self.expectSameAsOneJob(["--spec", spec, "--warnings", "--stats", a], jobs: [2], batchBytes: [1, 4096, 1 << 19])
        #expect(one.stdout.contains(#"{"id":1,"name":"crlf"}"#))
        #expect(one.stdout.contains(#"{"id":2,"name":"cr inside"}"#))
    }

    @Test func standardInputAndQuietRuns() throws {
        let input = Self.mixedInput(seed: 3, lines: 300)
        try Self.expectSameAsOneJob(["--require", "id", "--type", "id=integer", "--stats"], stdin: input)
        try Self.expectSameAsOneJob(["--field", "id", "--field", "name=who", "-q", "--stats"], stdin: input, batchBytes: [1, 333])
        try Self.expectSameAsOneJob([], stdin: input, batchBytes: [64])  // identity: every valid record copied
    }

    @Test func rejectsFileRedactedAndTruncated() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let a = try Self.file(Self.mixedInput(seed: 4, lines: 300), "a.ndjson", in: dir)
        let b = try Self.file(Self.mixedInput(seed: 5, lines: 100, bom: true, finalNewline: false), "b.ndjson", in: dir)
        let redacted = try Self.expectSameAsOneJob(["--spec", spec, "--rejects", "REJECTS", "--redact", "--stats", a, b])
        #expect(redacted.rejects?.contains("\"recordBytes\":") == true)
        #expect(redacted.rejects?.contains("\"record\":") == false)
        let cut = try Self.expectSameAsOneJob(["--spec", spec, "--rejects", "REJECTS", "--rejects-record-bytes", "20", a, b],
                                              batchBytes: [1, 200, 1 << 20])
        #expect(cut.rejects?.contains("\"truncated\":true") == true)
        #expect(cut.stderr.contains("records rejected, written to"))
    }

    @Test func onErrorFailStopsAtTheSameRecord() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        // The first rejected record comes after many good ones, so many batches after it are already mapped.
        let good = (0..<300).map { #"{"id":\#($0),"name":"n"}"# }.joined(separator: "\n") + "\n"
        let a = try Self.file(good + Self.mixedInput(seed: 6, lines: 300), "a.ndjson", in: dir)
        let b = try Self.file(Self.mixedInput(seed: 7, lines: 50), "b.ndjson", in: dir)
        let one = try Self.expectSameAsOneJob(["--spec", spec, "--on-error", "fail", "--stats", a, "/nonexistent/never-opened.ndjson", b],
                                              jobs: [2, 4])
        #expect(one.status == 4)
        #expect(one.stderr.contains("stopped at the first rejected record"))
        #expect(!one.stderr.contains("never-opened"))  // the run stopped before it
        #expect(one.stderr.contains(#""recordsIn":30"#))  // 300 good records and a few more, not all 650
        try Self.expectSameAsOneJob(["--spec", spec, "--on-error", "fail", "--rejects", "REJECTS", a, b], jobs: [3])
    }

    @Test func maxRejectsStopsAtTheSameRecord() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let a = try Self.file(Self.mixedInput(seed: 8, lines: 250), "a.ndjson", in: dir)
        let b = try Self.file(Self.mixedInput(seed: 9, lines: 250), "b.ndjson", in: dir)
        for max in [0, 7, 60] {
            let one = try Self.expectSameAsOneJob(["--spec", spec, "--max-rejects", String(max), "--stats", a, b],
                                                  batchBytes: [1, 500])
            #expect(one.status == 4)
            #expect(one.stderr.contains("more than --max-rejects \(max)"))
        }
        try Self.expectSameAsOneJob(["--spec", spec, "--max-rejects", "5", "--rejects", "REJECTS", "--stats", a, b], batchBytes: [100])
    }

    /// Workers compile the spec again, each for itself: the reverse, a spec amended by flags and flags alone must map
    /// exactly as the one-job mapper does.
    @Test func reverseAndAmendedSpecs() throws {
        let spec = CLI.example("accounts.spec.json")
        let accounts = String(repeating: CLI.read(CLI.example("accounts.ndjson")), count: 40)
        let forward = try CLI.run(["-s", spec, "-q"], stdin: accounts)
        let back = try Self.expectSameAsOneJob(["-s", spec, "--reverse"], stdin: forward.stdout, batchBytes: [1, 500])
        #expect(back.stdout.hasPrefix(#"{"user_id":"1001","display_name":"Ada Lovelace","plan":"pro""#))
        try Self.expectSameAsOneJob(["-s", spec, "--field", "plan=tier", "--require", "homepage", "--key-style", "camel", "--warnings"],
                                    stdin: accounts, batchBytes: [1, 500])
        try Self.expectSameAsOneJob(["--field", "user_id=id", "--type", "user_id=string", "--default", "plan=\"none\""], stdin: accounts,
                                    batchBytes: [1, 500])
    }

    @Test func treeEngine() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let a = try Self.file(Self.mixedInput(seed: 10, lines: 300), "a.ndjson", in: dir)
        try Self.expectSameAsOneJob(["--engine", "tree", "--spec", spec, "--warnings", "--stats", a], batchBytes: [1, 300])
    }

    @Test func recordsLongerThanABatchStreamInOrder() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        // Around records of 300 kB to 2.5 MB (2.5 MB: longer than a batch may hold by default; over the stream engine's 256 KiB
        // collect limit), good and rejected, with and without a newline at the end.
        let big = String(repeating: "x", count: 2_500_000)
        let mid = String(repeating: "é", count: 150_000)
        var lines = (0..<60).map { #"{"id":\#($0),"name":"small"}"# }
        lines.insert(#"{"id":1000,"name":"\#(big)"}"#, at: 10)
        lines.insert(#"{"id":"1001","name":"\#(mid)"}"#, at: 20)
        lines.insert(#"{"id":1002,"name":"\#(mid)"#, at: 30)  // cut: invalid JSON
        lines.insert(#"{"id":1003,"name":"\#(mid)"}"#, at: 40)
        let a = try Self.file(lines.joined(separator: "\n") + "\n", "a.ndjson", in: dir)
        let b = try Self.file(#"{"id":5}"# + "\n" + #"{"id":6,"name":"\#(big)"}"#, "b.ndjson", in: dir)
        let one = try Self.expectSameAsOneJob(["--spec", spec, "--rejects", "REJECTS", "--stats", a, b], jobs: [2],
                                              batchBytes: [1000, 1 << 19])
        #expect(one.stdout.utf8.count > 5_000_000)
        try Self.expectSameAsOneJob(["--spec", spec, "--on-error", "fail", "--stats", a, b], jobs: [2], batchBytes: [1000, 1 << 19])
    }

    @Test func otherFramingsAreMappedInParallelToo() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let records = (0..<200).map { i in i % 7 == 3 ? #"{"id":"\#(i)"}"# : #"{"id":\#(i),"name":"n\#(i)","tags":["a",\#(i)]}"# }
        let array = try Self.file("[\n" + records.joined(separator: ",\n") + "\n]\n", "array.json", in: dir)
        let brokenArray = try Self.file("[" + records.prefix(50).joined(separator: ",") + ", {\"id\": 9", "broken.json", in: dir)
        let concat = try Self.file(records.joined(separator: " ") + "\n" + records.prefix(20).joined(separator: "\n"), "concat.json", in: dir)
        let seq = try Self.file(records.map { "\u{1E}" + $0 + "\n" }.joined() + "\u{1E}{\"id\":\n", "seq.json", in: dir)
        let ndjson = try Self.file(Self.mixedInput(seed: 11, lines: 100), "n.ndjson", in: dir)
        let one = try Self.expectSameAsOneJob(["--spec", spec, "--warnings", "--stats", array, ndjson, brokenArray, concat, seq],
                                              batchBytes: [1, 300, 1 << 20])
        #expect(one.stdout.split(separator: "\n").count > 500)
        for framing in ["concat", "seq", "array", "ndjson"] {
            try Self.expectSameAsOneJob(["--spec", spec, "--framing", framing, "-q", "--stats", concat, seq], jobs: [2], batchBytes: [1, 250])
        }
    }

    @Test func inputErrorsAreReportedInOrder() throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let a = try Self.file(Self.mixedInput(seed: 12, lines: 200), "a.ndjson", in: dir)
        let b = try Self.file(Self.mixedInput(seed: 13, lines: 200), "b.ndjson", in: dir)
        let one = try Self.expectSameAsOneJob(["--spec", spec, "--stats", a, dir.path, "/nonexistent/x.ndjson", b, "-"],
                                              stdin: Self.mixedInput(seed: 14, lines: 100), batchBytes: [1, 300])
        #expect(one.status == 3)
        #expect(one.stderr.contains("Is a directory"))
        #expect(one.stderr.contains("No such file or directory"))
    }

    @Test func emptyAndTinyInputs() throws {
        for input in ["", "\n", "\n\n \r\n", "{\"id\":1}", "{\"id\":1}\r", "\u{FEFF}", "\u{FEFF}{\"id\":1}", "\u{EF}", "nope"] {
            try Self.expectSameAsOneJob(["--stats"], stdin: input, jobs: [2], batchBytes: [1, 1 << 20])
        }
    }

    // MARK: Order

    /// A direct check, independent of the comparison: with three jobs, tiny batches and records of very different
    /// costs (so that batches finish out of order), the ids come out increasing.
    @Test func outputIsInInputOrder() throws {
        var lines: [String] = []
        var rng = Random(state: 99)
        for i in 0..<3000 {
            let cost = rng.below(10) == 0 ? 2000 : 1
            lines.append(#"{"id":\#(i),"pad":[\#(Array(repeating: "[1,2,{\"a\":\"b\"}]", count: cost).joined(separator: ","))]}"#)
        }
        let r = try CLI.run(["--field", "id", "--jobs", "3", "--batch-bytes", "200"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(r.status == 0)
        #expect(r.stdout == (0..<3000).map { #"{"id":\#($0)}"# + "\n" }.joined())
    }

    /// The comparison notices what a broken `--jobs` would do: records out of order, a record lost, a message moved.
    @Test func theComparisonCatchesReordering() throws {
        let one = try Self.observe(["--stats"], extra: ["--jobs", "1"], stdin: Self.mixedInput(seed: 15, lines: 50))
        var swapped = one
        var lines = one.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        lines.swapAt(3, 4)
        swapped.stdout = lines.joined(separator: "\n")
        #expect(Self.difference(one, swapped)?.hasPrefix("stdout differs at line 4") == true)
        var lost = one
        lost.stdout = one.stdout.split(separator: "\n").dropLast().joined(separator: "\n") + "\n"
        #expect(Self.difference(one, lost) != nil)
        var moved = one
        let messages = one.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(messages.count > 3)
        moved.stderr = ([messages[1], messages[0]] + messages.dropFirst(2)).joined(separator: "\n")
        #expect(Self.difference(one, moved)?.hasPrefix("stderr differs at line 1") == true)
        #expect(Self.difference(one, one) == nil)
    }

    // MARK: Options, pipes, signals

    @Test func jobsOption() throws {
        let input = "{\"id\":1}\n{\"id\":2}\n"
        for jobs in ["0", "1", "2", "auto", "16"] {
            let r = try CLI.run(["--jobs", jobs], stdin: input)
            #expect(r.stdout == input)
            #expect(r.stderr == "")
            #expect(r.status == 0)
        }
        for bad in ["-1", "x", "1.5", "257"] {
            let r = try CLI.run(["--jobs", bad], stdin: input)
            #expect(r.status == 64)
            #expect(r.stderr.contains("--jobs"))
        }
        #expect(try CLI.run(["--batch-bytes", "0"]).status == 64)
        let help = try CLI.run(["--help"])
        #expect(help.stdout.contains("--jobs <n>"))
        #expect(!help.stdout.contains("--batch-bytes"))
    }

    @Test func aClosedPipeEndsQuietly() throws {
        let dir = try CLI.temporaryDirectory()
        let big = dir.appendingPathComponent("big.ndjson")
        let lines = (0..<200_000).map { "{\"n\":\($0),\"pad\":\"abcdefghijklmnopqrstuvwxyz\"}" }.joined(separator: "\n") + "\n"
        try Data(lines.utf8).write(to: big)
        let r = try CLI.shell("streammap --jobs 2 --field n '\(big.path)' | head -1; echo \"status ${PIPESTATUS[0]}\"")
        #expect(r.stdout == "{\"n\":0}\nstatus 141\n")
        #expect(r.stderr == "")
    }

    @Test func aFullDiskIsTheSameWriteError() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.file(Self.mixedInput(seed: 16, lines: 3000, longEvery: 0), "a.ndjson", in: dir)
        var results: [String] = []
        for jobs in ["1", "2"] {
            let r = try CLI.shell("streammap --jobs \(jobs) --batch-bytes 3000 --stats -q '\(input)' > /dev/full")
            #expect(r.status == 3)
            results.append(Self.normalizedStats(r.stderr))
        }
        #expect(results[0].hasPrefix("streammap: <stdout>: write error: No space left on device\n"))
        #expect(results[0] == results[1])
    }

    /// Standard input that is a regular file is read in ranges like a named file, from where the shell left its
    /// offset (here 40 bytes in, inside the first line), and is left at its end for the next command.
    @Test func standardInputFromAFileAtAnOffset() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.file(Self.mixedInput(seed: 31, lines: 400, finalNewline: false), "in.ndjson", in: dir)
        let spec = try Self.file(Self.spec, "spec.json", in: dir)
        let runs = try [1, 2].map { jobs in
            try CLI.shell("{ dd bs=40 count=1 of=/dev/null 2>/dev/null; streammap --jobs \(jobs) --batch-bytes 500 --spec '\(spec)' --stats; echo \"after: $(wc -c)\"; } < '\(input)'")
        }
        #expect(runs[0].stdout.hasSuffix("after: 0\n") && runs[0].stdout.utf8.count > 1_000)
        #expect(runs[0].stderr.hasPrefix("streammap: <stdin>:1: invalid JSON"))  // the rest of the first line
        #expect(runs[1].stdout == runs[0].stdout)
        #expect(Self.normalizedStats(runs[1].stderr) == Self.normalizedStats(runs[0].stderr))
        #expect(runs[1].status == runs[0].status)
    }

    /// Three records and the start of a fourth through a pipe, then SIGINT while the tool waits for more: with two
    /// jobs too, the three whole records are written and counted, the cut one is not.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalWritesTheWholeRecordsRead(_ signal: Int32) throws {
        let run = try LiveCLI(["--field", "n", "--jobs", "2", "--progress", "--progress-interval", "0", "--stats"])
        let sent = "{\"n\":1}\n{\"n\":2}\n{\"n\":3,\"x\":\"rest\"}\n{\"n\":"
        run.write(sent)
        // Records are counted when written, so wait for the bytes: the progress line says they were read.
        run.waitForStandardError(containing: ", \(sent.utf8.count) B")
        Thread.sleep(forTimeInterval: 0.1)  // back in read(2)
        run.signal(signal)
        let r = run.finish(keepInputOpen: true)
        #expect(r.stdout == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        #expect(r.stderrLines.first == "streammap: interrupted: 3 records read, 3 written, 0 rejected")
        #expect(r.stderrLines.last?.hasPrefix(#"{"recordsIn":3,"recordsOut":3,"recordsRejected":0,"#) == true)
        #expect(r.status == 128 + signal)
    }
}
