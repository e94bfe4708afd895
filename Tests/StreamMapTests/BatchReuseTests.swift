import Testing

@testable import StreamMap

/// `--jobs`: how batches hold their records and reuse their memory.
///
/// A batch is one value that travels from the reading thread to a worker and back, and its buffers are reused for
/// the next batch cut. Every hand-off must pass the only reference on; a second one, held a moment too long, makes
/// the receiver's first mutation copy the buffer (and, at half a megabyte, map fresh pages from the kernel: that
/// cost `--jobs 2` about 4% of its CPU time on the tweet corpus before every hand-off consumed its batch).
///
/// A record inside the chunk it was read into is pointed at, not copied; the chunk is filled again once no batch
/// points into it.
@Suite("--jobs batches: records in place, buffers reused")
struct BatchReuseTests {
    static let mapper = Mapper.object { Field("id", to: "id") }
    static let mapped = #"{"id":1}"#

    /// A record of about 1 KiB that maps to `mapped`.
    static let record = Array(#"{"id":1,"text":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 1000) + Array(#""}"#.utf8)

    /// Where a buffer's bytes are.
    static func address(_ bytes: [UInt8]) -> UnsafeRawPointer? { bytes.withUnsafeBytes { $0.baseAddress } }

    /// Counts mapped records and drops their bytes.
    final class Discard: RecordPipelineOutput {
        var mappedRecords = JSONWriter()
        var recordsOut = 0
        func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
            recordsOut += 1
            mappedRecords.removeAll()
            return true
        }
        func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                      totalBytes: Int) -> Bool { true }
    }

    /// A pipeline whose output counts and drops, with its workers started (`batchBytes` per batch).
    struct Fixture {
        var pipeline: PipelineCore
        let parallel: ParallelMapping
        let output = Discard()
        var line = 1

        init(batchBytes: Int) throws {
            var settings = RecordPipelineSettings(jobs: 2)
            settings.batchBytes = batchBytes
            let mapper = BatchReuseTests.mapper
            pipeline = RecordPipeline(engine: StreamEngine(mapper: mapper), settings: settings, output: output,
                                      makeEngine: { StreamEngine(mapper: mapper) }).core
            parallel = try #require(pipeline.parallel)
        }

        func close() { parallel.shutdown() }

        /// Cuts one record, in the given pieces, into the batch being cut.
        mutating func cut(_ pieces: [UnsafeRawBufferPointer]) {
            parallel.current.beginRecord()
            for piece in pieces { parallel.continueRecord(piece) }
            parallel.current.endRecord(at: RecordLocation(line: line, byteOffset: 0), bytesIn: 0)
            line += 1
        }

        /// Submits the batch being cut, waits for it to be mapped and returns it.
        func submitAndWait() throws -> RecordBatch {
            parallel.submitCurrent(input: "test")
            return try #require(parallel.nextMapped(wait: true))
        }

        /// Reads `text` into the next chunk; returns the chunk's bytes.
        func read(_ text: [UInt8]) -> UnsafeRawBufferPointer {
            let chunk = parallel.nextChunk()
            _ = chunk.fill { room in
                let n = min(room.count, text.count)
                text.withUnsafeBytes { room.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
                return n
            }
            return chunk.bytes
        }
    }

    /// The mapped records of a batch, one string each.
    static func outputs(_ batch: RecordBatch) -> [String] {
        var start = 0
        return batch.outputEnds.map { end in
            defer { start = end }
            return String(decoding: batch.output[start..<end], as: UTF8.self)
        }
    }

    @Test func aWrittenBatchBringsItsBuffersBackForTheNextCutAndTheWorkerToMapInto() throws {
        var f = try Fixture(batchBytes: 1 << 18)
        defer { f.close() }
        var spills: [UnsafeRawPointer?] = []
        var outputs: [UnsafeRawPointer?] = []
        // Round after round, one batch is cut (records that are in no chunk: copied), mapped and written (as
        // `submitBatch` does), each a little longer than the last. Two batches take turns: a submit replaces the
        // batch being cut with a spare one, and the batch written this round is the spare that the round after
        // next fills.
        for round in 0..<8 {
            let count = 200 + 3 * round
            for _ in 0..<count { Self.record.withUnsafeBytes { f.cut([$0]) } }
            let batch = try f.submitAndWait()
            #expect(batch.records.allSatisfy { $0.chunk == nil })
            #expect(batch.spill.count == count * Self.record.count)
            #expect(Self.outputs(batch) == Array(repeating: Self.mapped, count: count))
            spills.append(Self.address(batch.spill))
            outputs.append(Self.address(batch.output))
            f.pipeline.writeBatch(batch)
        }
        #expect(f.output.recordsOut == (0..<8).reduce(0) { $0 + 200 + 3 * $1 })
        // (The output buffers may grow while the first batches are mapped.)
        #expect(Set(spills).count == 2, "spill buffers: \(spills)")
        #expect(Set(outputs.dropFirst(2)).count == 2, "output buffers: \(outputs)")
        for i in 2..<spills.count {
            #expect(spills[i] == spills[i - 2], "round \(i)")
            if i >= 4 { #expect(outputs[i] == outputs[i - 2], "round \(i)") }
        }
    }

    @Test func recordsInsideAChunkArePointedAtAndWrittenChunksAreFilledAgain() throws {
        var f = try Fixture(batchBytes: 1 << 18)
        defer { f.close() }
        let perChunk = 100
        let text = Array((0..<perChunk).map { _ in Self.record + [0x0A] }.joined())
        for round in 0..<10 {
            let chunk = f.read(text)
            #expect(chunk.count == text.count)
            for i in 0..<perChunk {
                let start = i * (Self.record.count + 1)
                f.cut([UnsafeRawBufferPointer(rebasing: chunk[start..<start + Self.record.count])])
            }
            let batch = try f.submitAndWait()
            #expect(batch.spill.isEmpty, "round \(round): nothing copied")
            #expect(batch.chunks.count == 1 && batch.records.allSatisfy { $0.chunk == 0 })
            #expect(batch.chunks.first?.bytes.baseAddress == chunk.baseAddress)
            #expect(Self.outputs(batch) == Array(repeating: Self.mapped, count: perChunk))
            f.pipeline.writeBatch(batch)
        }
        // A written batch let go of its chunk; the next read filled it again (the one made for the first read, and at
        // most one more while the reading thread still held the last).
        #expect(f.parallel.chunksMade <= 2)
        #expect(f.output.recordsOut == 10 * perChunk)
    }

    @Test func aRecordThatGoesOnAcrossChunksOrTakesAPieceFromElsewhereIsCopiedWhole() throws {
        var f = try Fixture(batchBytes: 1 << 18)
        defer { f.close() }
        // Record 1 starts in one chunk and ends in the next; record 2 is a piece of that chunk then a piece from a
        // buffer of its own (as the framing hands on a CR it held back); record 3 lies inside the chunk.
        // (As the pipeline does, a chunk is framed before the next is read: the batch then points into it, so it is
        // not filled again.)
        f.parallel.current.beginRecord()
        let first = f.read(Array(#"{"id":1,"te"#.utf8))
        f.parallel.continueRecord(first)
        let second = f.read(Array(#"xt":"a"} {"id":1,"text":"b" {"id":1}"#.utf8))
        #expect(second.baseAddress != first.baseAddress)
        let cr: [UInt8] = [0x0D]
        let tail = Array("}".utf8)
        f.parallel.continueRecord(UnsafeRawBufferPointer(rebasing: second[0..<8]))
        f.parallel.current.endRecord(at: RecordLocation(line: 1, byteOffset: 0), bytesIn: 0)
        cr.withUnsafeBytes { cr in
            tail.withUnsafeBytes { tail in
                f.cut([UnsafeRawBufferPointer(rebasing: second[9..<27]), cr, tail])
            }
        }
        f.cut([UnsafeRawBufferPointer(rebasing: second[28..<36])])
        let batch = try f.submitAndWait()
        // (The first chunk stays among the batch's chunks, though its record was copied: it is let go of with the
        // batch.)
        #expect(batch.records.map(\.chunk) == [nil, nil, 1])
        #expect(batch.chunks.count == 2 && batch.chunks[1].bytes.baseAddress == second.baseAddress)
        #expect(String(decoding: batch.spill, as: UTF8.self) == #"{"id":1,"text":"a"}"# + #"{"id":1,"text":"b""# + "\r}")
        #expect(Self.outputs(batch) == [Self.mapped, Self.mapped, Self.mapped])
        f.pipeline.writeBatch(batch)
    }

    @Test func inputThatIsMostlyWhitespaceKeepsFewChunksAlive() throws {
        // One short record per chunk, the rest spaces: batches are cut by the chunks they point into, not by their
        // (few) bytes, so the chunks alive stay bounded.
        var f = try Fixture(batchBytes: 1 << 12)
        defer { f.close() }
        #expect(f.parallel.maxChunksPerBatch == 2)
        let text = Array(#"{"id":1}"#.utf8) + Array(repeating: 0x20, count: ParallelMapping.chunkBytes - 8)
        var batches = 0
        for _ in 0..<40 {
            let chunk = f.read(text)
            f.cut([UnsafeRawBufferPointer(rebasing: chunk[0..<8])])
            if f.parallel.currentIsFull {
                let batch = try f.submitAndWait()
                #expect(batch.chunks.count == f.parallel.maxChunksPerBatch)
                f.pipeline.writeBatch(batch)
                batches += 1
            }
        }
        #expect(batches == 20)
        #expect(f.parallel.chunksMade <= f.parallel.maxChunksPerBatch + 1)
    }
}
