import StreamMap

/// `--jobs N`: the reading thread's side of ordered parallel mapping.
///
/// The reading thread (the pipeline's) frames the input as usual and copies whole records into the batch being cut
/// (`current`); when that holds `batchBytes` bytes or `batchRecords` records, at the end of a record, it is
/// submitted with the next sequence number. N worker threads, each with an engine of its own, map batches in any
/// order; the reading thread writes them strictly in sequence order (`nextMapped`). At most `window` (2 × N)
/// batches are submitted and not yet written: when the window is full, the reading thread writes the oldest batch
/// (waiting for it) before it submits another. Memory stays bounded by about window + 2 batches of input, each
/// under `batchBytes` + `longRecordBytes` (a longer record never goes into a batch), plus their output.
///
/// (Letting the reading thread map a waiting batch itself instead of waiting — N − 1 workers, never more busy
/// threads than jobs — measured no faster on 2 cores: it reads and writes little, and is asleep most of the time.)
///
/// Used from the reading thread only; workers see just the `BatchQueue`.
final class ParallelMapping {
    /// Makes, on a worker thread, the function that maps batches there with an engine of its own — for example
    /// `{ var engine = StreamEngine(mapper: m); return { $0.map(with: &engine) } }`.
    typealias BatchMapperFactory = @Sendable () -> (inout RecordBatch) -> Void

    /// 512 KiB: measured a little faster than 256 KiB and 1–4 MiB with `--jobs 2` on 2 cores (the batches in
    /// flight stay in cache), and the window stays small.
    static let defaultBatchBytes = 1 << 19
    static let batchRecords = 4096

    /// Batches submitted and not yet written, at most.
    let window: Int
    let batchBytes: Int
    /// A record longer than this streams through the reading thread's engine instead (see
    /// `Pipeline.streamLongRecord`): the one-thread pipeline's constant memory for a 200 MB line. 2 MiB by default.
    var longRecordBytes: Int { 4 * batchBytes }

    /// The batch being cut.
    var current = RecordBatch()
    private let queue = BatchQueue()
    private var workers = WorkerThreads()
    private var spare: [RecordBatch] = []
    private var nextSequence = 0
    private var nextToWrite = 0

    /// Batches submitted and not yet written.
    var inFlight: Int { nextSequence - nextToWrite }
    var currentIsFull: Bool { current.bytes.count >= batchBytes || current.records.count >= Self.batchRecords }

    /// Starts `jobs` workers, each mapping with a function from `makeBatchMapper` called on its own thread (so each
    /// worker's engine is made there: no two threads ever share an engine's compiled state). Fails with an errno
    /// when no worker starts; when only some do, runs with those.
    init(jobs: Int, batchBytes: Int, makeBatchMapper: @escaping BatchMapperFactory) throws(Errno) {
        window = 2 * jobs
        self.batchBytes = max(1, batchBytes)
        let queue = self.queue
        let failure = workers.start(jobs) {
            let map = makeBatchMapper()
            while var batch = queue.next() {
                map(&batch)
                queue.finished(consume batch)
            }
        }
        if let failure, workers.count == 0 { throw Errno(code: failure) }
    }

    deinit { shutdown() }

    /// Submits the batch being cut (without a record left unfinished in it), named after its input. Call only with
    /// room in the window.
    func submitCurrent(input: String) {
        current.dropOpenRecord()
        guard !current.isEmpty else { return }
        current.input = input
        current.sequence = nextSequence
        nextSequence += 1
        let batch = current
        current = spare.popLast() ?? RecordBatch()
        queue.submit(consume batch)
    }

    /// The oldest batch not yet written, once it is mapped: waits for it when `wait`; nil when nothing is in flight
    /// (or, without `wait`, when it is not mapped yet).
    func nextMapped(wait: Bool) -> RecordBatch? {
        guard inFlight > 0, let batch = queue.mappedBatch(nextToWrite, wait: wait) else { return nil }
        nextToWrite += 1
        return batch
    }

    /// A written batch comes back for reuse.
    func recycle(_ batch: consuming RecordBatch) {
        guard spare.count <= window else { return }
        batch.reset()
        spare.append(consume batch)
    }

    /// The run stopped: batches in flight and the one being cut are never written.
    func discardAll() {
        current.reset()
        nextToWrite = nextSequence
    }

    /// Stops the workers (after the batch each is mapping) and waits for them.
    func shutdown() {
        queue.close()
        workers.join()
    }
}
