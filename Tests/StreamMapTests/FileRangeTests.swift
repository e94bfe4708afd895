import Foundation
import Testing
import StreamMapTestSupport
#if canImport(Glibc)
import Glibc
#endif

@testable import StreamMap

/// `RecordPipeline.read(_:fileDescriptor:)` with workers: a regular NDJSON file is read in ranges by the workers
/// themselves (`FileRange`). Whatever the cut points, the output must see exactly what one job reading the file in
/// sequence sees — every record once, in order, at the same line and offset, the same stops and `bytesIn`.
@Suite("Files read in ranges (--jobs)")
struct FileRangeTests {
    typealias Transcript = RecordPipelineTests.Transcript

    static let mapper = RecordPipelineTests.mapper

    /// A file holding `bytes` (removed when the test process ends).
    static func file(_ bytes: [UInt8]) throws -> String {
        try TestScratch.file(bytes, suffix: ".ndjson")
    }

    struct Run {
        var lines: [String]
        var ends: [InputEnd]
        var bytesIn: Int
        /// Inputs read in ranges, and the ranges.
        var ranged: Int
        var ranges = 0
        /// Each descriptor's offset after its input.
        var offsets: [Int]
    }

    /// Reads each path (from `startingAt`) through one pipeline with `jobs` and batches of `batchBytes`.
    static func run(_ paths: [String], jobs: Int, batchBytes: Int = 1 << 12, framing: Framing = .auto, startingAt: Int = 0,
                    stopAfter: Int = .max, stopRequested: @escaping () -> Bool = { false },
                    size: ((Int) -> Int)? = nil, smallestRange: Int = 1) -> Run {
        let out = Transcript()
        out.stopAfter = stopAfter
        var settings = RecordPipelineSettings(framing: framing, jobs: jobs, keptRecordBytes: 40)
        settings.batchBytes = batchBytes
        settings.smallestRangeBytes = smallestRange  // 1: ranges as small as the batches, every cut point
        let mapper = Self.mapper
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: mapper), settings: settings, output: out,
                                      makeEngine: { StreamEngine(mapper: mapper) })
        var ends: [InputEnd] = [], offsets: [Int] = []
        for path in paths where !pipeline.isStopped {
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            lseek(fd, off_t(startingAt), SEEK_SET)
            if let size, let ranged = pipeline.core.rangedFile(fd) {
                // As if the file had `size(actual)` bytes when the run looked at it (it grew, or was cut short, since).
                let (end, position) = pipeline.core.readRanges(path, file: ranged.0, size: size(ranged.size),
                                                               stopRequested: stopRequested, afterRead: { _ in })
                ends.append(end)
                offsets.append(startingAt + position)
            } else {
                ends.append(pipeline.read(path, fileDescriptor: fd, stopRequested: stopRequested))
                offsets.append(Int(lseek(fd, 0, SEEK_CUR)))
            }
        }
        pipeline.finish()
        return Run(lines: out.lines, ends: ends, bytesIn: pipeline.bytesIn, ranged: pipeline.core.rangedInputs,
                   ranges: pipeline.core.rangesRead, offsets: offsets)
    }

    /// How `b` differs from `a`, `a` being the run with one job: the first differing line, `bytesIn`, how the inputs
    /// ended, where their descriptors were left; nil when they agree.
    static func difference(_ b: Run, from a: Run) -> String? {
        if let i = (0..<min(a.lines.count, b.lines.count)).first(where: { a.lines[$0] != b.lines[$0] })
            ?? (a.lines.count == b.lines.count ? nil : min(a.lines.count, b.lines.count)) {
            let line = { (l: [String]) in i < l.count ? String(l[i].prefix(200)) : "<end>" }
            return "line \(i + 1) of \(a.lines.count) vs \(b.lines.count): \(line(a.lines)) | \(line(b.lines))"
        }
        if a.bytesIn != b.bytesIn { return "bytesIn \(a.bytesIn) vs \(b.bytesIn)" }
        if a.ends != b.ends { return "ends \(a.ends) vs \(b.ends)" }
        if a.offsets != b.offsets { return "offsets \(a.offsets) vs \(b.offsets)" }
        return nil
    }

    /// RecordPipelineTests' input (mapped, rejected, blank and CRLF lines, a 3 MB record), with a BOM first and
    /// no final newline when asked.
    static func input(_ n: Int, bom: Bool = false, finalNewline: Bool = true) -> [UInt8] {
        var bytes = (bom ? [0xEF, 0xBB, 0xBF] : []) + RecordPipelineTests.input(n)
        if finalNewline { bytes.append(0x0A) }
        return bytes
    }

    /// Random lines — long ones, blank ones, CRs, BOMs inside, invalid JSON — and maybe a BOM first and no final
    /// newline.
    static func randomLines(_ rng: inout SplitMix64, count: Int, longest: Int) -> [UInt8] {
        var bytes: [UInt8] = rng.next() % 3 == 0 ? [0xEF, 0xBB, 0xBF] : []
        for i in 0..<count {
            switch rng.next() % 10 {
            case 0: bytes += Array("\n".utf8)
            case 1: bytes += Array(" \t\r\n".utf8)
            case 2: bytes += Array("{\"id\":\(i),\"s\":\"\(String(repeating: "é", count: Int(rng.next() % UInt64(longest + 1))))\"}\n".utf8)
            case 3: bytes += [0xEF, 0xBB, 0xBF] + Array("{\"id\":\(i)}\n".utf8)
            case 4: bytes += Array("{\"id\":\(i),\r\n".utf8)
            default: bytes += Array("{\"id\":\(i)}\(rng.next() % 2 == 0 ? "\r" : "")\n".utf8)
            }
        }
        if rng.next() % 2 == 0 { bytes += Array("{\"id\":-1}".utf8) }
        return bytes
    }

    @Test func anyCutPointsGiveWhatOneJobGives() throws {
        // Ranges down to one byte on small files; on larger ones (a 3 MB record), ranges that it goes on past.
        var rng = SplitMix64(seed: 7)
        let small = try Self.file([0x0A] + Self.randomLines(&rng, count: 300, longest: 40))
        let crlf = try Self.file(Array(String(repeating: "{\"id\":7}\r\n\r\n  \t\r\n{\"id\":\"x\"}\r\n", count: 50).utf8))
        let a = try Self.file(Self.input(300, bom: true))
        let b = try Self.file(Self.input(120, finalNewline: false))
        for (paths, cuts) in [([small, crlf], [(2, 1), (2, 2), (3, 5), (2, 64)]), ([a, b], [(2, 1000), (3, 4096), (2, 1 << 19)])] {
            let one = Self.run(paths, jobs: 1, framing: .ndjson)
            #expect(one.ranged == 0)
            #expect(one.lines.count > 200)
            for (jobs, batchBytes) in cuts {
                let many = Self.run(paths, jobs: jobs, batchBytes: batchBytes, framing: .ndjson)
                #expect(many.ranged == 2, "jobs \(jobs), ranges of \(batchBytes)")
                #expect(Self.difference(many, from: one) == nil, "jobs \(jobs), ranges of \(batchBytes)")
            }
        }
        #expect(Self.run([a], jobs: 1).lines.first?.hasPrefix("\(a) mapped 1:3 ") == true)  // after the BOM
        #expect(Self.run([a, b], jobs: 2, batchBytes: 4096).ranged == 2)  // `auto` takes them for NDJSON
    }

    /// Random files cut at random range sizes.
    @Test func randomFilesAndRanges() throws {
        var rng = SplitMix64(seed: 20)
        for round in 0..<12 {
            let bytes = Self.randomLines(&rng, count: Int(rng.next() % 200), longest: 5000)
            let path = try Self.file(bytes)
            let one = Self.run([path], jobs: 1, framing: .ndjson)
            let batchBytes = 1 + Int(rng.next() % 3000)
            let many = Self.run([path], jobs: 2, batchBytes: batchBytes, framing: .ndjson)
            #expect(many.ranged == (bytes.isEmpty ? 0 : 1))
            #expect(Self.difference(many, from: one) == nil, "round \(round), ranges of \(batchBytes)")
        }
    }

    /// A descriptor not at its start (standard input handed on by a shell) is read from where it is, offsets
    /// counting from there, and is left at its end.
    @Test func fromTheDescriptorsOffset() throws {
        let bytes = Self.input(200)
        let path = try Self.file(bytes)
        let start = bytes.firstIndex(of: 0x0A)! + 1
        let one = Self.run([path], jobs: 1, startingAt: start)
        let many = Self.run([path], jobs: 2, batchBytes: 300, startingAt: start)
        #expect(many.ranged == 1)
        #expect(one.lines.first?.hasPrefix("\(path) mapped 1:0 ") == true)
        #expect(Self.difference(many, from: one) == nil)
        #expect(one.offsets == [bytes.count])
    }

    /// A stop by the output lands on the same record, with the same `bytesIn`, as with one job.
    @Test func stopsAtTheSameRecord() throws {
        let path = try Self.file(Self.input(2000) + Self.input(300))
        for stop in [1, 17, 400, 1713, 1976] {
            let one = Self.run([path], jobs: 1, stopAfter: stop)
            let many = Self.run([path], jobs: 2, batchBytes: 777, stopAfter: stop)
            #expect(one.lines.count == stop)
            #expect(Self.difference(many, from: one) == nil, "stop after \(stop): \(Self.difference(many, from: one) ?? "")")
            #expect(many.ends == [.stopped])
        }
        // A stop in the last batches of an input read in sequence (an array), written while the next is read in ranges.
        var array = "["
        for i in 0..<3000 { array += (i == 0 ? "" : ",\n") + (i % 5 == 0 ? #"{"id":"\#(i)"}"# : #"{"id":\#(i)}"#) }
        let first = try Self.file(Array((array + "]").utf8))
        for stop in [2990, 2999, 3000, 3001] {
            let one = Self.run([first, path], jobs: 1, stopAfter: stop)
            var many = Self.run([first, path], jobs: 2, batchBytes: 64, stopAfter: stop)
            if stop > 3000 { #expect(many.ranged == 1) }
            // (With 2 jobs the array may end `ended` and the stop come while the next input is read.)
            (many.ends, many.offsets) = (one.ends, one.offsets)
            #expect(Self.difference(many, from: one) == nil, "stop after \(stop): \(Self.difference(many, from: one) ?? "")")
        }
    }

    /// Asked to stop, the run writes the ranges in flight and ends `interrupted`: what it wrote is the start of
    /// what one job writes, nothing skipped.
    @Test func interruptedRunsWriteAPrefix() throws {
        let path = try Self.file(Self.input(3000))
        let whole = Self.run([path], jobs: 1).lines
        for asks in [1, 2, 5, 40] {
            var n = 0
            let many = Self.run([path], jobs: 2, batchBytes: 2000, stopRequested: {
                n += 1
                return n >= asks
            })
            #expect(many.ends == [.interrupted])
            #expect(many.lines.count < whole.count, "stop at ask \(asks)")
            #expect(zip(whole, many.lines).allSatisfy { $0 == $1 }, "stop at ask \(asks): not the start of what one job writes")
        }
    }

    /// The ranges cover the size the run saw; what the file holds past it (it grew) is read after them, and a file
    /// cut short is read to where it ends — the same records either way.
    @Test func aFileThatGrowsOrShrinksLosesNothing() throws {
        let bytes = Self.input(400)
        let path = try Self.file(bytes)
        let one = Self.run([path], jobs: 1)
        for cut in [1, 2, 1000, bytes.count / 2, bytes.count - 1] {
            let grew = Self.run([path], jobs: 2, batchBytes: 512, size: { _ in cut })
            #expect(Self.difference(grew, from: one) == nil, "seen \(cut) bytes")
        }
        let shrank = Self.run([path], jobs: 2, batchBytes: 512, size: { $0 + 100_000 })
        #expect(Self.difference(shrank, from: one) == nil)
    }

    /// What is not NDJSON in a regular file — another framing, compressed, empty — is read in sequence.
    /// A range costs a hand-off each way between threads: however small the batches, a range is at least
    /// `smallestRangeBytes` (`--batch-bytes 1` made a range of every byte: 17 s for a 1.3 MB file).
    @Test func rangesAreNeverTiny() throws {
        let bytes = Self.input(3000)
        let smallest = RecordPipelineSettings().smallestRangeBytes
        #expect(bytes.count > 8 * smallest)
        let path = try Self.file(bytes)
        let one = Self.run([path], jobs: 1)
        let many = Self.run([path], jobs: 2, batchBytes: 1, smallestRange: smallest)
        #expect(Self.difference(many, from: one) == nil)
        #expect(many.ranged == 1)
        // Whole ranges, and quarter ones towards the end.
        #expect(many.ranges > 1 && many.ranges <= 4 * bytes.count / smallest + 1, "\(many.ranges) ranges")
    }

    @Test func otherInputsAreReadInSequence() throws {
        let array = try Self.file(Array("[{\"id\":1},\n{\"id\":2}]\n".utf8))
        let concat = try Self.file(Array("{\"id\":1\n}\n{\"id\":2}".utf8))
        let gzip = try Self.file([0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00,
                                  0x00, 0x00, 0x00, 0x00, 0x00])  // an empty gzip member
        let empty = try Self.file([])
        for (paths, framing) in [([array, concat, gzip, empty], Framing.auto), ([array], .array)] {
            let one = Self.run(paths, jobs: 1, framing: framing)
            let many = Self.run(paths, jobs: 2, framing: framing)
            #expect(many.ranged == 0)
            #expect(Self.difference(many, from: one) == nil)
        }
        let ndjson = try Self.file(Array("{\"id\":1}\n".utf8))
        #expect(Self.run([ndjson], jobs: 2, framing: .ndjson).ranged == 1)
        #expect(Self.run([ndjson], jobs: 2, framing: .concat).ranged == 0)
    }

    /// A range whose read fails holds nothing and says why; the records before it are written, the input ends
    /// `failed` with that errno.
    @Test func aFailedReadIsReported() {
        var batch = RecordBatch()
        batch.range = FileRange(file: PositionalFile(descriptor: -1, base: 0), start: 10, end: 20, size: 100)
        batch.readRange(longRecordBytes: 64)
        #expect(batch.rangeEnd.error == EBADF)
        #expect(batch.records.isEmpty && batch.rangeEnd.position == nil)
    }

    /// The lines a range holds, by Hadoop's rule: those that start in it; a line longer than the batch allows past
    /// the range's end is handed to the reading thread.
    @Test func whichLinesARangeHolds() throws {
        let text = "{\"id\":1}\n{\"id\":22}\n\n{\"id\":333}\n" + "{\"id\":4,\"s\":\"" + String(repeating: "x", count: 100) + "\"}\n"
        let path = try Self.file(Array(text.utf8))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        func read(_ start: Int, _ end: Int, long: Int = 1000) -> (lines: [String], end: FileRange.End) {
            var batch = RecordBatch()
            batch.range = FileRange(file: PositionalFile(descriptor: fd, base: 0), start: start, end: end, size: text.utf8.count)
            batch.readRange(longRecordBytes: long)
            let lines = batch.records.map { r in
                "\(r.location.line):\(r.location.byteOffset) " + String(decoding: RecordBatch.bytes(of: r, chunks: batch.chunks, spill: UnsafeRawBufferPointer(start: nil, count: 0)), as: UTF8.self)
            }
            return (lines, batch.rangeEnd)
        }
        // [0, 3): the first line, read on to its end.
        var r = read(0, 3)
        #expect(r.lines == ["1:0 {\"id\":1}"] && r.end.position == 9 && r.end.lines == 1 && r.end.handoff == nil)
        // [3, 9): no line starts in it (the LF at 8 ends the first line; the next line starts at 9).
        r = read(3, 9)
        #expect(r.lines.isEmpty && r.end.position == nil)
        // [9, 20): the second line and the blank one (which starts at 19).
        r = read(9, 20)
        #expect(r.lines == ["1:9 {\"id\":22}"] && r.end.position == 20 && r.end.lines == 2)
        // [10, 31): the blank line and the fourth; the fifth starts at 31.
        r = read(10, 31)
        #expect(r.lines == ["2:20 {\"id\":333}"] && r.end.position == 31 && r.end.lines == 2)
        // [25, 40): the fifth line, 117 bytes, goes on past 40 + 50: handed over.
        r = read(25, 40, long: 50)
        #expect(r.lines.isEmpty && r.end.handoff == 31 && r.end.position == 31 && r.end.lines == 0)
    }
}
