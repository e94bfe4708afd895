import Foundation
import Testing
import StreamMap
import StreamMapTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--jobs N` over many compressed files: the files are mapped ahead, whole, N at a time (`RecordPipeline.readAhead`),
/// and written in their turn. Whatever the mix of plain, gzip and zstd files (several members and frames, empty,
/// corrupt, cut short, missing), the run must be indistinguishable from one job: standard output, the rejects file,
/// standard error (messages, their order, `--stats`) and the exit status, byte for byte.
@Suite("streammap --jobs over compressed files")
struct ReadAheadCLITests {
    typealias P = ParallelJobsTests

    static func compressed(_ text: [UInt8], _ compression: Compression, pieces: Int) -> [UInt8] {
        Compressing.compressed(text, compression, pieces: pieces)
    }

    /// A random mix of inputs in `dir`, named after what they are.
    static func inputs(seed: UInt64, count: Int, in dir: URL) throws -> [String] {
        var rng = P.Random(state: seed)
        var paths: [String] = []
        for i in 0..<count {
            let lines = rng.below(4) == 0 ? rng.below(3) : 50 + rng.below(600)
            let text = Array(P.mixedInput(seed: seed &* 31 &+ UInt64(i), lines: lines, bom: rng.below(5) == 0,
                                          finalNewline: rng.below(4) != 0, longEvery: 60).utf8)
            let kind = rng.below(20)
            var bytes: [UInt8]
            var name: String
            switch kind {
            case 0..<3: (bytes, name) = (text, "plain")
            case 3..<9: (bytes, name) = (compressed(text, .gzip, pieces: 1 + rng.below(3)), "gz")
            case 9..<14: (bytes, name) = (compressed(text, .zstd, pieces: 1 + rng.below(3)), "zst")
            case 14..<16:  // cut short somewhere
                bytes = compressed(text, rng.below(2) == 0 ? .gzip : .zstd, pieces: 2)
                bytes = Array(bytes.prefix(max(4, rng.below(bytes.count))))
                name = "cut"
            case 16..<18:  // one byte changed somewhere after the magic bytes
                bytes = compressed(text, rng.below(2) == 0 ? .gzip : .zstd, pieces: 1)
                if bytes.count > 12 { bytes[4 + rng.below(bytes.count - 4)] ^= 0x5A }
                name = "bad"
            case 18: (bytes, name) = ([], "empty")
            default: (bytes, name) = ([], "missing")
            }
            let path = dir.appendingPathComponent("\(i)-\(name)").path
            if name != "missing" { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
            paths.append(path)
        }
        return paths
    }

    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func randomMixesMapAsWithOneJob(_ seed: UInt64) throws {
        let dir = try CLI.temporaryDirectory()
        let spec = try P.file(P.spec, "spec.json", in: dir)
        let files = try Self.inputs(seed: seed, count: 6 + Int(seed % 5), in: dir)
        var flags = ["--spec", spec, "--warnings", "--stats"]
        switch seed % 4 {
        case 0: flags += ["--rejects", "REJECTS", "--rejects-record-bytes", "30"]
        case 1: flags += ["--max-rejects", "40"]
        case 2: flags += ["-q"]
        default: flags += ["--rejects", "REJECTS"]
        }
        let one = try P.expectSameAsOneJob(flags + files, jobs: [2, 3, 8], batchBytes: [1 << 19, 4096])
        #expect(one.stdout.utf8.count > 1000)
    }

    /// Gzip and zstd files only, the run stopped at the first rejected record, in a later file.
    @Test func onErrorFailStopsAtTheSameRecord() throws {
        let dir = try CLI.temporaryDirectory()
        var files: [String] = []
        for i in 0..<7 {
            var text = (0..<300).map { #"{"id":\#($0),"f":\#(i)}"# }.joined(separator: "\n") + "\n"
            if i == 4 { text += #"{"id":"x"}"# + "\n" + text }
            let path = dir.appendingPathComponent("f\(i)").path
            try Data(Self.compressed(Array(text.utf8), i % 2 == 0 ? .gzip : .zstd, pieces: 1)).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let one = try P.expectSameAsOneJob(["--type", "id=integer", "--on-error", "fail", "--stats"] + files, jobs: [2, 4],
                                           batchBytes: [1 << 19])
        #expect(one.status == 4)
        #expect(one.stdout.split(separator: "\n").count == 4 * 300 + 300)
        #expect(one.stderr.contains("f4:301: stopped at the first rejected record"))
    }

    /// Files whose output is larger than what a file may keep in memory spill into a temporary file, and are read
    /// back in order; the first file is the largest (the slowest), so the others wait, spilled, for their turn.
    @Test func spilledOutputIsWrittenInOrder() throws {
        let dir = try CLI.temporaryDirectory()
        var files: [String] = []
        for i in 0..<6 {
            let n = i == 0 ? 60_000 : 15_000
            let text = (0..<n).map { #"{"id":\#($0),"file":\#(i),"pad":"\#(String(repeating: "p", count: 40))"}"# }.joined(separator: "\n") + "\n"
            let path = dir.appendingPathComponent("f\(i).gz").path
            try Data(Self.compressed(Array(text.utf8), .gzip, pieces: 1)).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        // --jobs 2: a window of 4 files, 64 MiB each; the hidden --read-ahead-memory makes that 100 KiB.
        let one = try P.expectSameAsOneJob(["--field", "id", "--field", "file", "--stats"] + files, jobs: [2],
                                           batchBytes: [1 << 19])
        let small = try P.observe(["--field", "id", "--field", "file", "--stats", "--read-ahead-memory", "100000"] + files,
                                  extra: ["--jobs", "3"])
        #expect(P.difference(one, small) == nil)
        #expect(one.stdout.split(separator: "\n").count == 60_000 + 5 * 15_000)
    }

    /// One BGZF or many-frame zstd file, decompressed by --jobs threads: output, rejects, messages, --stats and exit
    /// status as with one job, for clean files and for files changed, cut short or followed by bytes that are no
    /// frame (where the file is decompressed again in order), --on-error fail and --max-rejects included.
    @Test(arguments: [21, 22, 23, 24, 25, 26] as [UInt64])
    func oneFileOfManyFramesMapsAsWithOneJob(_ seed: UInt64) throws {
        var rng = P.Random(state: seed)
        let dir = try CLI.temporaryDirectory()
        let spec = try P.file(P.spec, "spec.json", in: dir)
        let text = Array(P.mixedInput(seed: seed, lines: 3000 + rng.below(3000), longEvery: 90).utf8)
        var bytes = seed % 2 == 0 ? Compressing.bgzf(text, blockBytes: 2000 + rng.below(60_000))
            : Compressing.zstdFrames(text, frameBytes: 1000 + rng.below(40_000), skippable: rng.below(2) == 0, contentSize: rng.below(2) == 0)
        switch seed % 3 {
        case 0: bytes[bytes.count / 2 + rng.below(bytes.count / 2)] ^= 0x21
        case 1: bytes = Array(bytes.prefix(bytes.count - 1 - rng.below(bytes.count / 3)))
        default: break
        }
        let path = dir.appendingPathComponent("in").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var flags = ["--spec", spec, "--warnings", "--stats", "--rejects", "REJECTS"]
        if seed == 24 { flags += ["--max-rejects", "100"] }
        if seed == 25 { flags += ["--on-error", "fail"] }
        let one = try P.expectSameAsOneJob(flags + [path], jobs: [2, 3, 8], batchBytes: [1 << 19, 4096])
        if seed == 25 { #expect(one.status == 4) } else { #expect(one.stdout.utf8.count > 1000) }
    }

    /// `pzstd` starts its files (and each frame) with a skippable frame: such a file is zstd, not text.
    @Test func aFileStartingWithASkippableFrameIsZstd() throws {
        let dir = try CLI.temporaryDirectory()
        let text = Array(((0..<500).map { #"{"id":\#($0)}"# }.joined(separator: "\n") + "\n").utf8)
        let skippable: [UInt8] = [0x5E, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 9, 9, 9, 9]
        let path = dir.appendingPathComponent("p.zst").path
        try Data(skippable + Self.compressed(Array(text[..<3000]), .zstd, pieces: 1) + skippable
                 + Self.compressed(Array(text[3000...]), .zstd, pieces: 1)).write(to: URL(fileURLWithPath: path))
        let r = try CLI.run(["--type", "id=integer", path, path, "--jobs", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == String(decoding: text + text, as: UTF8.self))
    }

    /// SIGINT in a run over many compressed files: the whole records written are counted, nothing after them, and
    /// the run ends promptly (it does not map the rest of the files first).
    /// Also one BGZF file, decompressed by the --jobs threads.
    @Test(arguments: [false, true])
    func aSignalStopsAtWholeRecords(_ oneBGZF: Bool) throws {
        let dir = try CLI.temporaryDirectory()
        var files: [String] = []
        var all: [UInt8] = []
        for i in 0..<24 {
            let text = (0..<40_000).map { #"{"id":\#($0),"file":\#(i),"name":"user \#($0) of file \#(i)"}"# }.joined(separator: "\n") + "\n"
            if oneBGZF {
                all += Array(text.utf8)
                continue
            }
            let path = dir.appendingPathComponent("f\(i).zst").path
            try Data(Self.compressed(Array(text.utf8), .zstd, pieces: 1)).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        if oneBGZF {
            let path = dir.appendingPathComponent("all.gz").path
            try Data(Compressing.bgzf(all)).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let run = try LiveCLI(["--field", "id", "--field", "file", "--jobs", "2", "--progress", "--progress-interval", "0", "--stats",
                               "-o", dir.appendingPathComponent("out.ndjson").path] + files)
        run.waitForStandardError(containing: " MB")
        let signalled = Date()
        run.signal(SIGINT)
        let r = run.finish()
        let seconds = Date().timeIntervalSince(signalled)
        #expect(r.status == 128 + SIGINT)
        #expect(seconds < 10, "the run took \(seconds) s to stop")
        let out = CLI.read(dir.appendingPathComponent("out.ndjson").path)
        let written = out.split(separator: "\n").count
        #expect(out.isEmpty || out.hasSuffix("\n"))
        #expect(written < 24 * 40_000)
        #expect(r.stderrLines.contains { $0.hasSuffix("interrupted: \(written) records read, \(written) written, 0 rejected") },
                "\(r.stderrLines)")
    }
}

/// xz and bzip2 are read like gzip and zstd (streams one after another, faults named); UTF-16 and UTF-32 input is
/// one clear error that names the encoding, not a flood of "invalid JSON".
@Suite("streammap: xz, bzip2 and inputs it cannot read")
struct OtherFormatsCLITests {
    static let text = Array(((0..<3000).map { #"{"id":\#($0),"name":"n\#($0)"}"# }.joined(separator: "\n") + "\n").utf8)

    @Test(arguments: [Compression.xz, .bzip2])
    func readAndWrittenLikeGzip(_ compression: Compression) throws {
        let dir = try CLI.temporaryDirectory()
        let half = Self.text.count / 2
        let cut = Self.text[..<half].lastIndex(of: 0x0A)! + 1
        let two = ReadAheadCLITests.compressed(Array(Self.text[..<cut]), compression, pieces: 1)
            + ReadAheadCLITests.compressed(Array(Self.text[cut...]), compression, pieces: 1)
        let path = dir.appendingPathComponent("two").path
        try Data(two).write(to: URL(fileURLWithPath: path))
        var r = try CLI.run(["--type", "id=integer", path])
        #expect(r.status == 0 && r.stdout == String(decoding: Self.text, as: UTF8.self), "\(r.stderr)")
        // From standard input too, and with --jobs over two such files.
        r = try CLI.run(["--type", "id=integer"], stdinData: Data(two))
        #expect(r.stdout.utf8.count == Self.text.count)
        r = try CLI.run(["--jobs", "2", path, path])
        #expect(r.stdout.utf8.count == 2 * Self.text.count)
        // Cut short, and garbage after a stream: an input error after the text before it.
        let short = dir.appendingPathComponent("short").path
        try Data(two.prefix(two.count - 20)).write(to: URL(fileURLWithPath: short))
        r = try CLI.run([short])
        #expect(r.status == 3)
        #expect(r.stderr.contains("short: truncated \(compression.rawValue) data: the input ends at compressed byte \(two.count - 20), inside a stream")
                || r.stderr.contains("short: corrupt \(compression.rawValue) data"), "\(r.stderr)")
        #expect(r.stdout.utf8.count >= cut || compression == .xz)  // xz checks a block's integrity before handing it on
        // Written: -o NAME.xz / NAME.bz2, read back.
        let out = dir.appendingPathComponent(compression == .xz ? "out.xz" : "out.bz2").path
        r = try CLI.run([path, "-o", out])
        #expect(r.status == 0)
        let back = try CLI.run([out])
        #expect(back.stdout.utf8.count == Self.text.count)
        let head = try Data(contentsOf: URL(fileURLWithPath: out)).prefix(6)
        #expect(Array(head).withUnsafeBytes { Compression.detect($0) } == compression)
    }

    @Test(arguments: [("UTF-16LE", [0xFF, 0xFE] as [UInt8]), ("UTF-16BE", [0xFE, 0xFF]), ("UTF-32LE", [0xFF, 0xFE, 0, 0]),
                      ("UTF-32BE", [0, 0, 0xFE, 0xFF])])
    func utf16And32AreOneErrorNamingTheEncoding(_ encoding: String, _ mark: [UInt8]) throws {
        let dir = try CLI.temporaryDirectory()
        let path = dir.appendingPathComponent("wide.json").path
        let body: [UInt8] = Array(#"{"id":1}"#.utf8).flatMap { encoding.hasPrefix("UTF-16") ? (encoding.hasSuffix("LE") ? [$0, 0] : [0, $0]) : (encoding.hasSuffix("LE") ? [$0, 0, 0, 0] : [0, 0, 0, $0]) }
        try Data(mark + body + body).write(to: URL(fileURLWithPath: path))
        let plain = try CLI.temporaryFile(#"{"id":2}"# + "\n", name: "plain.ndjson")
        let hex = mark.map { String(format: "%02X", $0) }.joined(separator: " ")
        func message(_ path: String) -> String {
            "streammap: \(path): the input is \(encoding) text (it starts with the byte-order mark \(hex)); StreamMap reads UTF-8: convert it first with iconv -f \(encoding) -t UTF-8\n"
        }
        for jobs in ["1", "2"] {
            let r = try CLI.run([path, plain, "--jobs", jobs])
            #expect(r.status == 3)
            #expect(r.stdout == #"{"id":2}"# + "\n")  // the next input is still read
            #expect(r.stderr == message(path))
        }
        // Compressed, the same: the text's first bytes are checked after decompression (one compressed input read
        // alone, and two read ahead on threads of their own with --jobs 2).
        for compression in [Compression.gzip, .zstd] {
            let packed = Compressing.compressed(mark + body + body, compression)
            let paths = try (1...2).map { i in
                let p = dir.appendingPathComponent("wide\(i).json.\(compression.rawValue)").path
                try Data(packed).write(to: URL(fileURLWithPath: p))
                return p
            }
            for (inputs, jobs) in [([paths[0], plain], "1"), (paths + [plain], "2")] {
                let r = try CLI.run(inputs + ["--jobs", jobs])
                #expect(r.status == 3)
                #expect(r.stdout == #"{"id":2}"# + "\n")
                #expect(r.stderr == inputs.dropLast().map(message).joined(), "\(compression) --jobs \(jobs)")
            }
        }
    }
}

/// The closing counts agree with their nouns: "1 of 1 record rejected", "1 record rejected, more than …".
@Suite("streammap: counts and their nouns")
struct CountNounsCLITests {
    @Test func oneRecordIsARecord() throws {
        let rejects = try CLI.temporaryDirectory().appendingPathComponent("r.ndjson").path
        var r = try CLI.run(["--type", "id=integer", "--rejects", rejects], stdin: #"{"id":"x"}"# + "\n")
        #expect(r.stderr == "streammap: 1 of 1 record rejected, written to \(rejects)\n")
        r = try CLI.run(["--type", "id=integer", "--max-rejects", "0", "-q"], stdin: #"{"id":"x"}"# + "\n" + #"{"id":2}"# + "\n")
        #expect(r.stderr.contains("<stdin>:1: stopped: 1 record rejected, more than --max-rejects 0"), "\(r.stderr)")
        r = try CLI.run(["--type", "id=integer", "--rejects", rejects], stdin: #"{"id":"x"}"# + "\n" + #"{"id":2}"# + "\n")
        #expect(r.stderr == "streammap: 1 of 2 records rejected, written to \(rejects)\n")
    }
}
