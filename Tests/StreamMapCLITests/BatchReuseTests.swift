import Testing
#if canImport(Glibc)
import Glibc
#endif
import StreamMap
@testable import streammap

/// `--jobs`: a batch is one value that travels from the reading thread to a worker and back, and its buffers are
/// reused for the next batch cut. Every hand-off must pass the only reference on; a second one, held a moment too
/// long, makes the receiver's first mutation copy the buffer (and, at half a megabyte, map fresh pages from the
/// kernel: that cost `--jobs 2` about 4% of its CPU time on the tweet corpus before every hand-off consumed its batch).
@Suite("--jobs batches reuse their buffers")
struct BatchReuseTests {
    /// Where a buffer's bytes are.
    static func address(_ bytes: [UInt8]) -> UnsafeRawPointer? { bytes.withUnsafeBytes { $0.baseAddress } }

    /// Cuts `count` records of about 1 KiB into the batch being cut and submits it.
    static func cutAndSubmit(_ parallel: ParallelMapping, count: Int, line: inout Int) {
        let record = Array(#"{"id":1,"text":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 1000) + Array(#""}"#.utf8)
        for _ in 0..<count {
            parallel.current.beginRecord()
            record.withUnsafeBytes { parallel.current.continueRecord($0) }
            parallel.current.endRecord(at: RecordLocation(line: line, byteOffset: 0), bytesIn: 0)
            line += 1
        }
        parallel.submitCurrent(input: "test")
    }

    @Test func aWrittenBatchBringsItsBuffersBackForTheNextCutAndTheWorkerToMapInto() throws {
        let mapper = Mapper.object { Field("id", to: "id") }
        let devNull = open("/dev/null", O_WRONLY)
        try #require(devNull >= 0)
        defer { close(devNull) }
        var settings = PipelineSettings()
        settings.jobs = 2
        settings.batchBytes = 1 << 18
        var pipeline = Pipeline(engine: StreamEngine(mapper: mapper), settings: settings,
                                output: RecordOutput(file: FileOutput(fd: devNull, name: "/dev/null")), rejects: nil,
                                console: Console(), makeBatchMapper: {
                                    var engine = StreamEngine(mapper: mapper)
                                    return { $0.map(with: &engine) }
                                })
        pipeline.startWorkers()
        let parallel = try #require(pipeline.parallel)
        defer { parallel.shutdown() }
        var line = 1
        var inputs: [UnsafeRawPointer?] = []
        var outputs: [UnsafeRawPointer?] = []
        // Round after round, one batch is cut, mapped and written (as `submitBatch` does), each a little longer
        // than the last. Two batches take turns: a submit replaces the batch being cut with a spare one, and the
        // batch written this round is the spare that the round after next fills.
        for round in 0..<8 {
            let count = 200 + 3 * round
            Self.cutAndSubmit(parallel, count: count, line: &line)
            let batch = try #require(parallel.nextMapped(wait: true))
            #expect(batch.outcomes.count == count)
            #expect(batch.outputEnds.last == count * #"{"id":1}"#.utf8.count)
            inputs.append(Self.address(batch.bytes))
            outputs.append(Self.address(batch.output))
            pipeline.writeBatch(batch)
        }
        #expect(pipeline.stats.recordsOut == (0..<8).reduce(0) { $0 + 200 + 3 * $1 })
        #expect(Set(inputs).count == 2, "input buffers: \(inputs)")
        #expect(Set(outputs).count == 2, "output buffers: \(outputs)")
        for i in 2..<inputs.count {
            #expect(inputs[i] == inputs[i - 2] && outputs[i] == outputs[i - 2], "round \(i)")
        }
    }
}
