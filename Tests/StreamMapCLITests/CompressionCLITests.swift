import Foundation
import Testing

/// Compressed input (gzip, zstd: told by their magic bytes, on files and standard input) and compressed output
/// (`-o FILE.gz|.zst`, `--compress`), through the binary.
@Suite("streammap compressed input and output")
struct CompressionCLITests {
    /// 2 000 records; every 7th has an `id` that is not an integer (rejected, with its line).
    static let text = (1...2000).map { i in i % 7 == 0 ? "{\"id\":\"x\(i)\",\"n\":\(i)}\n" : "{\"id\":\(i),\"n\":\"\(String(repeating: "n", count: i % 90))\"}\n" }.joined()
    static let mapping = ["--field", "id", "--field", "n", "--type", "id=integer"]

    /// A directory with plain.ndjson, multi.gz (three gzip members, one empty, as pigz or `cat a.gz b.gz` write)
    /// and plain.zst (written by streammap itself).
    static func files() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        try Data(text.utf8).write(to: dir.appendingPathComponent("plain.ndjson"))
        let r = try CLI.shell("""
            cd '\(dir.path)' && head -c 30000 plain.ndjson | gzip -c > multi.gz && printf '' | gzip -c >> multi.gz \
            && tail -c +30001 plain.ndjson | gzip -c >> multi.gz && streammap plain.ndjson -o plain.zst
            """)
        #expect(r.status == 0, "\(r.stderr)")
        return dir
    }

    @Test func compressedFilesAndStandardInputMapAsTheirText() throws {
        let dir = try Self.files()
        let plain = try CLI.run(Self.mapping + ["plain.ndjson"], directory: dir)
        #expect(plain.status == 1 && plain.stdoutLines.count == 2000 - 285)
        #expect(plain.stderrLines.first == "streammap: plain.ndjson:7: /id: expected integer, found string \"x7\"")
        for file in ["multi.gz", "plain.zst"] {
            for extra in [["--engine", "stream"], ["--engine", "tree"], ["--jobs", "2", "--batch-bytes", "300"]] {
                let r = try CLI.run(Self.mapping + extra + [file], directory: dir)
                #expect(r.stdout == plain.stdout, "\(file) \(extra)")
                #expect(r.status == 1)
                // Lines in messages are the decompressed text's.
                #expect(r.stderr == plain.stderr.replacingOccurrences(of: "plain.ndjson:", with: "\(file):"), "\(file) \(extra)")
            }
            let piped = try CLI.shell("cat '\(dir.path)/\(file)' | streammap \(Self.mapping.joined(separator: " ")) --jobs 2")
            #expect(piped.stdout == plain.stdout && piped.status == 1, "\(file) on standard input")
            #expect(piped.stderr.contains("streammap: <stdin>:7: /id: expected integer"))
        }
    }

    /// zstd decodes whole blocks (up to 128 KiB): cut.zst is cut in the second of two frames, so that it has
    /// records before the cut.
    @Test func aTruncatedOrCorruptStreamIsAnInputErrorAfterTheRecordsBeforeIt() throws {
        let dir = try Self.files()
        let r = try CLI.shell("""
            cd '\(dir.path)' && head -c 4000 multi.gz > cut.gz && head -n 1000 plain.ndjson | streammap --compress zstd > two.zst && size=$(wc -c < two.zst) \
            && tail -n +1001 plain.ndjson | streammap --compress zstd >> two.zst && head -c $((size + 300)) two.zst > cut.zst \
            && { head -c 600 multi.gz; printf 'garbage garbage garbage garbage'; tail -c +632 multi.gz; } > bad.gz
            """)
        #expect(r.status == 0)
        for (file, message) in [("cut.gz", "cut.gz: truncated gzip data: the input ends at compressed byte 4000, inside a member"),
                                ("cut.zst", "cut.zst: truncated zstd data: the input ends at compressed byte "),
                                ("bad.gz", "bad.gz: corrupt gzip data at compressed byte ")] {
            for jobs in ["1", "2"] {
                let got = try CLI.run(Self.mapping + ["-q", "--jobs", jobs, file, "plain.ndjson"], directory: dir)
                #expect(got.status == 3, "\(file)")
                #expect(got.stderrLines.count == 1 && got.stderrLines[0].hasPrefix("streammap: " + message), "\(file): \(got.stderr)")
                // Every record before the fault, then the next input, whole.
                let plain = try CLI.run(Self.mapping + ["-q", "plain.ndjson"], directory: dir).stdoutLines
                let lines = got.stdoutLines
                #expect(lines.count > plain.count && lines.count < 2 * plain.count, "\(file)")
                #expect(Array(lines.suffix(plain.count)) == plain)
                if file != "bad.gz" { #expect(Array(lines.prefix(lines.count - plain.count)) == Array(plain.prefix(lines.count - plain.count))) }
            }
        }
    }

    @Test func aByteRangeOfACompressedFileIsAUsageError() throws {
        let dir = try Self.files()
        let r = try CLI.run(["--byte-range", "0:100", "multi.gz", "-o", "kept.ndjson"], directory: dir)
        #expect(r.status == 64)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("kept.ndjson").path))  // refused before any output is opened
        #expect(r.stderr.contains("--byte-range: multi.gz is gzip-compressed, and compressed data cannot be split at byte offsets"))
        #expect(r.stdout == "")
    }

    @Test func compressedOutput() throws {
        let dir = try Self.files()
        let plain = try CLI.run(Self.mapping + ["-q", "plain.ndjson"], directory: dir).stdout
        let r = try CLI.shell("""
            cd '\(dir.path)' && streammap \(Self.mapping.joined(separator: " ")) -q plain.ndjson -o out.gz; echo "gz $?"; \
            gzip -dc out.gz > out-gz.ndjson; \
            streammap \(Self.mapping.joined(separator: " ")) -q --jobs 2 multi.gz -o out.zst; echo "zst $?"; \
            streammap out.zst > out-zst.ndjson; \
            streammap \(Self.mapping.joined(separator: " ")) -q plain.ndjson --compress gzip | gzip -dc > stdout-gz.ndjson; \
            streammap \(Self.mapping.joined(separator: " ")) -q plain.ndjson --compress none -o plain-named.gz; \
            printf '' | streammap -o empty.gz; gzip -dc empty.gz | wc -c; head -c 4 out.zst | od -An -tx1
            """)
        #expect(r.stdoutLines == ["gz 1", "zst 1", "0", " 28 b5 2f fd"], "\(r.stderr)")
        for name in ["out-gz.ndjson", "out-zst.ndjson", "stdout-gz.ndjson", "plain-named.gz"] {
            #expect(CLI.read(dir.appendingPathComponent(name).path) == plain, "\(name)")
        }
    }

    /// An interrupted run ends its compressed output properly: the file is a whole gzip stream of the rows
    /// written (here a CSV table), not one cut short.
    @Test func anInterruptedRunEndsItsCompressedOutput() throws {
        let dir = try CLI.temporaryDirectory()
        let out = dir.appendingPathComponent("rows.csv.gz").path
        let run = try LiveCLI(["--field", "n", "--to", "csv", "-o", out, "--progress", "--progress-interval", "0"])
        run.write("{\"n\":1}\n{\"n\":\"a,b\"}\n{\"n\":3}\n{\"n\":")
        run.waitForStandardError(containing: "streammap: 3 records")
        Thread.sleep(forTimeInterval: 0.1)
        run.signal(SIGINT)
        let r = run.finish(keepInputOpen: true)
        #expect(r.status == 130)
        let unpacked = try CLI.shell("gzip -dc '\(out)'")
        #expect(unpacked.status == 0, "\(unpacked.stderr)")
        #expect(unpacked.stdout == "n\n1\n\"a,b\"\n3\n")
    }
}
