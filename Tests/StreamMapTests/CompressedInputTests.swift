import Testing
import StreamMapTestSupport
#if canImport(Glibc)
import Glibc
#endif

@testable import StreamMap

/// Compressed input (`RecordPipeline.read`): gzip and zstd are told by their first bytes and mapped as the text
/// they hold — the same records, lines, offsets and outcomes as the plain text, in both engines and with jobs.
@Suite("CompressedInput")
struct CompressedInputTests {
    typealias Transcript = RecordPipelineTests.Transcript

    /// `text` compressed, cut into `pieces` members or frames (some of them empty).
    static func compress(_ text: [UInt8], _ compression: Compression, pieces: [Int] = []) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        for end in (pieces + [text.count]).map({ min($0, text.count) }) where end >= start {
            let c = OutputCompressor(compression)
            _ = text[start..<end].withUnsafeBytes { bytes in c.compress(bytes) { out.append(contentsOf: $0); return true } }
            c.finish { out.append(contentsOf: $0); return true }
            start = end
        }
        return out
    }

    /// Reads `bytes` as an input through a pipeline, the raw reads of random sizes (1 byte to 64 KiB).
    static func run(_ bytes: [UInt8], mapper: Mapper, tree: Bool = false, jobs: Int = 1, seed: UInt64 = 1,
                    fault: Int32? = nil) -> (lines: [String], end: InputEnd) {
        let out = Transcript()
        var settings = RecordPipelineSettings(framing: .auto, jobs: jobs, keptRecordBytes: 30)
        settings.batchBytes = 1 << 10
        let make: @Sendable () -> any RecordEngine = { tree ? TreeEngine(mapper: mapper) : StreamEngine(mapper: mapper) }
        var pipeline = RecordPipeline(engine: make(), settings: settings, output: out, makeEngine: make)
        var rng = SplitMix64(seed: seed)
        var position = 0
        let end = pipeline.read("in") { room in
            if position == bytes.count, let fault {
                errno = fault
                return nil
            }
            let want = Int.random(in: 1...(rng.next() % 4 == 0 ? 3 : 1 << 16), using: &rng)
            let n = min(room.count, want, bytes.count - position)
            bytes.withUnsafeBytes { room.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
            position += n
            return n
        }
        pipeline.finish()
        return (out.lines, end)
    }

    static let pick = Mapper.object { Field("id", to: "id", .integer) }

    static func ndjson(_ n: Int) -> [UInt8] {
        Array((0..<n).map { i in i % 9 == 4 ? "{\"id\":\"no\(i)\"}\n" : "{\"id\":\(i),\"pad\":\"\(String(repeating: "x", count: i % 300))\"}\n" }.joined().utf8)
    }

    @Test func compressedInputsAreMappedAsTheirText() {
        let text = Self.ndjson(3000)
        let plain = Self.run(text, mapper: Self.pick)
        #expect(plain.end == .ended && plain.lines.count == 3000)
        for compression in Compression.allCases {
            for pieces in [[], [0, 0, 1, 70_000, 70_000, 150_001], [text.count]] {  // empty members/frames, one cut mid-line
                let packed = Self.compress(text, compression, pieces: pieces)
                #expect(Compression.detect(packed) == compression)
                for (tree, jobs) in [(false, 1), (true, 1), (false, 2)] {
                    let got = Self.run(packed, mapper: Self.pick, tree: tree, jobs: jobs, seed: UInt64(pieces.count + jobs))
                    #expect(got.end == .ended, "\(compression) \(pieces) jobs \(jobs)")
                    #expect(got.lines == plain.lines, "\(compression) \(pieces) tree \(tree) jobs \(jobs)")
                }
            }
        }
    }

    /// Differential: generated mappers and records (Differential/Generators), compressed, through both engines and
    /// two jobs — the transcript of the plain text with the tree engine, line for line.
    @Test func generatedCasesGiveThePlainTranscript() throws {
        for i in 0..<60 {
            let seed = SplitMix64.derive(0xC0DEC, UInt64(i))
            let c = try GeneratedCase.make(seed: seed, index: i)
            let text = Array(c.records.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n").utf8)
            let reference = Self.run(text, mapper: c.mapper, tree: true)
            let compression: Compression = i % 2 == 0 ? .gzip : .zstd
            let packed = Self.compress(text, compression, pieces: i % 3 == 0 ? [text.count / 2] : [])
            let stream = Self.run(packed, mapper: c.mapper, seed: seed)
            let parallel = Self.run(packed, mapper: c.mapper, jobs: 2, seed: seed &+ 1)
            #expect(stream.lines == reference.lines, "seed \(seed) \(compression) stream")
            #expect(parallel.lines == reference.lines, "seed \(seed) \(compression) jobs 2")
            #expect(stream.end == .ended && parallel.end == .ended)
        }
    }

    /// A stream cut anywhere ends the input as `corrupt` (truncated, at the cut's offset) after every record
    /// before the cut; the record the cut goes through is neither mapped nor counted. (Fewer bytes than the magic
    /// bytes are no compressed stream: plain text.)
    @Test func truncatedStreamsReportTheCutAfterTheRecordsBeforeIt() {
        let text = Self.ndjson(400)
        let plain = Self.run(text, mapper: Self.pick).lines
        for compression in Compression.allCases {
            let packed = Self.compress(text, compression)
            var rng = SplitMix64(seed: 7)
            let magic = compression == .xz ? 6 : 4  // the longest magic number: shorter cuts are plain text
            for cut in [magic, magic + 1, 11, packed.count / 3, packed.count / 2, packed.count - 1]
                + (0..<12).map({ _ in Int(rng.next() % UInt64(packed.count - magic)) + magic }) {
                for jobs in [1, 2] {
                    let got = Self.run(Array(packed[..<cut]), mapper: Self.pick, jobs: jobs, seed: UInt64(cut))
                    guard case .corrupt(let error) = got.end else {
                        Issue.record("\(compression) cut at \(cut): \(got.end)")
                        continue
                    }
                    #expect(error.isTruncated && error.compression == compression, "\(compression) cut at \(cut): \(error)")
                    #expect(error.compressedOffset == cut)
                    #expect(Array(plain.prefix(got.lines.count)) == got.lines, "\(compression) cut at \(cut): not a prefix")
                }
            }
            // Cut at a member's or frame's end: a whole stream, nothing lost.
            let two = Self.compress(text, compression, pieces: [text.count / 2])
            let first = Self.compress(Array(text[..<(text.count / 2)]), compression)
            #expect(Self.run(Array(two[..<first.count]), mapper: Self.pick).end == .ended)
        }
    }

    /// Corrupt data (a byte changed after the gzip header, or anywhere in a zstd frame) is reported as corrupt,
    /// never a crash or a silent end; trailing bytes that are no member are corrupt too.
    @Test func corruptStreamsAreReportedWithTheirOffset() {
        let text = Self.ndjson(300)
        for compression in Compression.allCases {
            let packed = Self.compress(text, compression)
            var rng = SplitMix64(seed: 11)
            for _ in 0..<25 {
                var bad = packed
                let at = 10 + Int(rng.next() % UInt64(packed.count - 10))
                bad[at] ^= UInt8(1 + rng.next() % 255)
                let got = Self.run(bad, mapper: Self.pick)
                // A change the format cannot see (zstd has no checksum over some header bits) may still map.
                if case .corrupt(let error) = got.end {
                    #expect(!error.isTruncated || error.compressedOffset == bad.count)
                    #expect(error.compressedOffset <= bad.count)
                    #expect(error.description.contains("\(compression.rawValue) data"))
                }
            }
            let trailing = packed + Array("{\"id\":1}\n".utf8)
            let got = Self.run(trailing, mapper: Self.pick)
            guard case .corrupt(let error) = got.end else {
                Issue.record("\(compression): trailing text not reported: \(got.end)")
                continue
            }
            #expect(error.compressedOffset >= packed.count && !error.isTruncated)
            #expect(got.lines.count == 300)  // every record of the stream before the trailing bytes
        }
    }

    /// A first read larger than the decompressor's own buffer (a pipeline's 256 KiB room, filled at once) is kept
    /// whole: nothing read is lost or overrun.
    @Test func aFirstReadLargerThanTheCompressedBufferIsKept() {
        var rng = SplitMix64(seed: 3)
        let text = Array((0..<20_000).map { i in "{\"id\":\(i),\"r\":\"\(String(rng.next(), radix: 36))\(String(rng.next(), radix: 36))\"}\n" }.joined().utf8)
        for compression in Compression.allCases {
            let packed = Self.compress(text, compression, pieces: [text.count / 3])
            #expect(packed.count > InputDecoding.compressedReadBytes * 2)
            let out = Transcript()
            var pipeline = RecordPipeline(engine: StreamEngine(mapper: Self.pick), output: out)
            var position = 0
            let end = pipeline.read("in") { room in
                let n = min(room.count, packed.count - position)
                packed.withUnsafeBytes { room.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
                position += n
                return n
            }
            pipeline.finish()
            #expect(end == .ended)
            #expect(out.lines.count == 20_000 && out.lines.last?.hasPrefix("in mapped 20000:") == true)
        }
    }

    /// A failed read inside compressed input ends the input with its errno, after the text decoded before it.
    @Test func aFailedReadAfterCompressedBytesKeepsTheRecordsBefore() {
        let text = Self.ndjson(50)
        let packed = Self.compress(text, .gzip)
        let got = Self.run(Array(packed), mapper: Self.pick, fault: EIO)
        #expect(got.end == .failed(errno: EIO))
        #expect(got.lines.count == 50)
    }

    /// Short inputs: empty, one byte, a lone magic prefix, plain text shorter than the magic bytes.
    @Test func shortInputs() {
        #expect(Self.run([], mapper: Self.pick).end == .ended)
        #expect(Self.run(Array("7".utf8), mapper: .identity).lines == ["in mapped 1:0 7"])
        #expect(Self.run([0x1F], mapper: .identity).lines.count == 1)  // one byte: not gzip (a rejected record)
        if case .corrupt(let e) = Self.run([0x1F, 0x8B], mapper: .identity).end {
            #expect(e.isTruncated && e.compressedOffset == 2)
        } else {
            Issue.record("1F 8B alone is a truncated gzip stream")
        }
        // Text that cannot start a magic number is handed on at once (a line typed at a terminal), not after more
        // reads; a possible start of one waits for the next read.
        for (first, calls) in [([0x31, 0x0A], 1), ([0x1F], 2), ([0x28, 0xB5], 2), ([0x28, 0xC2], 1)] as [([UInt8], Int)] {
            var decoding = InputDecoding()
            var n = 0
            var room = [UInt8](repeating: 0, count: 64)
            let got = room.withUnsafeMutableBytes { room in
                decoding.read(into: room) { raw in
                    n += 1
                    guard n == 1 else { return 0 }
                    raw.copyBytes(from: first)
                    return first.count
                }
            }
            #expect(got == .bytes(first.count) && n == calls, "\(first)")
            decoding.release()
        }
        // An empty gzip member and an empty zstd frame: no records, no error.
        for compression in Compression.allCases {
            #expect(Self.run(Self.compress([], compression), mapper: Self.pick) == ([], .ended))
        }
        // Without detection, compressed bytes are text (a rejected record).
        var settings = RecordPipelineSettings()
        settings.decompresses = false
        let out = Transcript()
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: Self.pick), settings: settings, output: out)
        let packed = Self.compress(Array("{\"id\":1}\n".utf8), .gzip)
        var done = false
        _ = pipeline.read("in") { room in
            if done { return 0 }
            done = true
            packed.withUnsafeBytes { room.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: packed.count) }
            return packed.count
        }
        pipeline.finish()
        #expect(out.lines.allSatisfy { $0.contains("rejected") } && !out.lines.isEmpty)
    }

    /// Text in UTF-16 or UTF-32 is refused compressed as it is plain: the decompressed text's first bytes are
    /// checked (decompressing until they can be told, however small the raw reads), and nothing of it is mapped.
    /// Text that only starts like a byte-order mark is mapped as before.
    @Test func wideTextIsRefusedCompressedToo() {
        let marks: [([UInt8], String)] = [([0xFF, 0xFE], "UTF-16LE"), ([0xFE, 0xFF], "UTF-16BE"), ([0xFF, 0xFE, 0, 0], "UTF-32LE"),
                                          ([0, 0, 0xFE, 0xFF], "UTF-32BE")]
        for (mark, encoding) in marks {
            let text = mark + Array("{\"id\":1}\n".utf8).flatMap { [$0, 0] }
            let plain = Self.run(text, mapper: Self.pick)
            #expect(plain.lines.isEmpty && plain.end == .unsupportedEncoding(UnsupportedEncodingError(encoding: encoding, byteOrderMark: mark)))
            for compression in Compression.allCases {
                for seed in 1...4 as ClosedRange<UInt64> {
                    let got = Self.run(Self.compress(text, compression, pieces: [1, 2, 3]), mapper: Self.pick, seed: seed)
                    #expect(got.lines == plain.lines && got.end == plain.end, "\(encoding) \(compression)")
                }
            }
        }
        for text in [[0xFF], [0xFF, 0x0A, 0x31], [0x00, 0x00, 0x0A]] as [[UInt8]] {
            let plain = Self.run(text, mapper: .identity)
            #expect(!plain.lines.isEmpty && plain.end == .ended)
            for compression in Compression.allCases {
                #expect(Self.run(Self.compress(text, compression, pieces: [1]), mapper: .identity) == plain, "\(text) \(compression)")
            }
        }
    }

    /// A bomb: 64 MiB of short records in a few hundred KiB of gzip, read through a room of constant size — the
    /// decompressor never holds more than one read of compressed bytes and fills only the room it is given.
    @Test func aCompressionBombIsDecodedInConstantMemory() {
        let line = Array("{\"id\":1}\n".utf8)
        let c = OutputCompressor(.gzip, level: 9)
        var packed: [UInt8] = []
        let block = [UInt8]((0..<(1 << 16)).map { line[$0 % line.count] })
        for _ in 0..<(64 * 16) {  // 64 MiB of text (only decoded here, not mapped)
            _ = block.withUnsafeBytes { b in c.compress(b) { packed.append(contentsOf: $0); return true } }
        }
        c.finish { packed.append(contentsOf: $0); return true }
        #expect(packed.count < 1 << 20)
        var decoding = InputDecoding()
        defer { decoding.release() }
        var room = [UInt8](repeating: 0, count: 1 << 12)
        var total = 0, position = 0, largest = 0
        loop: while true {
            let r = room.withUnsafeMutableBytes { room in
                decoding.read(into: room) { raw in
                    let n = min(raw.count, packed.count - position)
                    packed.withUnsafeBytes { raw.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
                    position += n
                    largest = max(largest, raw.count)
                    return n
                }
            }
            switch r {
            case .bytes(let n): total += n
            case .end: break loop
            default: Issue.record("\(r)"); break loop
            }
        }
        #expect(total == 64 << 20)
        #expect(largest <= InputDecoding.compressedReadBytes)
        #expect(decoding.compression == .gzip)
    }
}
