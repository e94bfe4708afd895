// streammap-feed: the library's push API (`MappingFeed`) on a stream, as a Swift program would use it — what
// Benchmarks/library_feed.py compares with the command line. Reads standard input (or a file) in 256 KiB chunks,
// feeds them, writes each mapped record as a line to standard output and counts the rejects on standard error.
// With `--file JOBS` or `--async JOBS`, the file goes through `Mapper.mapRecords(inFile:options:)` or
// `Mapper.mappedRecords(inFile:options:)` with `MappingOptions(jobs: JOBS)` instead (Benchmarks/library_jobs.py).
//
//     streammap-feed SPEC [FILE]
//     streammap-feed SPEC FILE --file JOBS | --async JOBS
#if canImport(Glibc)
import Glibc
#endif
import StreamMap

@main
struct FeedTweets {
    static func main() async throws {
        let args = CommandLine.arguments
        guard args.count >= 2 else {
            say("usage: streammap-feed SPEC [FILE]")
            exit(2)
        }
        let spec = try Spec(json: try readAll(open(args[1], O_RDONLY)), file: args[1])
        if args.count == 5, let jobs = Int(args[4]), args[3] == "--file" || args[3] == "--async" {
            try await mapWhole(args[2], spec.mapper, MappingOptions(jobs: jobs), async: args[3] == "--async")
            return
        }
        let fd = args.count > 2 ? open(args[2], O_RDONLY) : 0
        guard fd >= 0 else {
            say("streammap-feed: cannot open \(args[2])")
            exit(3)
        }
        let feed = MappingFeed(mapper: spec.mapper)
        var out: [UInt8] = []
        out.reserveCapacity(1 << 17)
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        func write(_ results: [RecordResult]) {
            for case .mapped(let record) in results {
                out += record.bytes
                out.append(0x0A)
            }
            if out.count >= 1 << 16 {
                out.withUnsafeBytes { _ = Glibc.write(1, $0.baseAddress, $0.count) }
                out.removeAll(keepingCapacity: true)
            }
        }
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            write(buffer.withUnsafeBytes { feed.feed(UnsafeRawBufferPointer(rebasing: $0[..<n])) })
        }
        write(feed.finish())
        out.withUnsafeBytes { _ = Glibc.write(1, $0.baseAddress, $0.count) }
        let c = feed.counts
        say("streammap-feed: \(c.recordsIn) in, \(c.recordsOut) mapped, \(c.recordsRejected) rejected")
    }

    /// The whole file through `mapRecords(inFile:)` or `mappedRecords(inFile:)`: mapped records to standard output.
    static func mapWhole(_ path: String, _ mapper: Mapper, _ options: MappingOptions, async: Bool) async throws {
        var out: [UInt8] = []
        out.reserveCapacity(1 << 17)
        var rejected = 0
        func take(_ result: RecordResult) {
            switch result {
            case .mapped(let record):
                out += record.bytes
                out.append(0x0A)
                if out.count >= 1 << 16 {
                    out.withUnsafeBytes { _ = Glibc.write(1, $0.baseAddress, $0.count) }
                    out.removeAll(keepingCapacity: true)
                }
            case .rejected: rejected += 1
            }
        }
        if async {
            for try await result in mapper.mappedRecords(inFile: path, options: options) { take(result) }
        } else {
            try mapper.mapRecords(inFile: path, options: options) { take($0) }
        }
        out.withUnsafeBytes { _ = Glibc.write(1, $0.baseAddress, $0.count) }
        say("streammap-feed: \(rejected) rejected")
    }

    static func say(_ line: String) {
        let text = Array((line + "\n").utf8)
        text.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    static func readAll(_ fd: Int32) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[..<n]
        }
        close(fd)
        return bytes
    }
}
