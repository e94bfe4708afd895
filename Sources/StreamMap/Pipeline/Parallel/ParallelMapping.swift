

/// No worker thread could start (`pthread_create`'s error number).
struct ThreadStartError: Error {
    let code: Int32
}

/// `--jobs N`: the reading thread's side of ordered parallel mapping.
///
/// A regular NDJSON file is not read here but in ranges, by the workers (`submitRange`, `FileRange`); the window,
/// the sequence numbers and the ordered writing below are the same for both kinds of batch.
///
/// The reading thread (the pipeline's) reads the input into chunks (`nextChunk`), frames it as usual and cuts
/// whole records into the batch being cut (`current`), which points at them in their chunk (a record that goes on
/// across chunks is copied); when the batch holds `batchBytes` bytes or `batchRecords` records, at the end of a
/// record, it is submitted with the next sequence number. N worker threads, each with an engine of its own, map
/// batches in any order; the reading thread writes them strictly in sequence order (`nextMapped`). At most
/// `window` (2 × N) batches are submitted and not yet written: when the window is full, the reading thread writes
/// the oldest batch (waiting for it) before it submits another. Memory stays bounded by about window + 2 batches
/// of input, each under `batchBytes` + `longRecordBytes` (a longer record never goes into a batch) and the chunks
/// it points into (at most `maxChunksPerBatch`), plus their output; a written batch lets go of its chunks, which
/// are then filled again.
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
    /// `Pipeline.streamLongRecord`, and a range's `handoff`): the one-thread pipeline's constant memory for a 200 MB
    /// line. 2 MiB by default.
    let longRecordBytes: Int

    /// The size of a chunk: what one read asks for, as with one job (so that the reads end where one job's do,
    /// and `bytesIn` at a stop is what one job had read).
    static let chunkBytes = RecordPipelineSettings.readBytes

    /// The batch being cut.
    var current = RecordBatch()
    /// The chunk being framed (records in it are not copied into batches), nil before the first read.
    private(set) var readingChunk: InputChunk?
    private var chunks: ChunkPool
    private let queue = BatchQueue()
    private var workers = WorkerThreads()
    private var spare: [RecordBatch] = []
    private var nextSequence = 0
    private var nextToWrite = 0

    /// Worker threads running.
    var threads: Int { workers.count }

    /// Batches submitted and not yet written.
    var inFlight: Int { nextSequence - nextToWrite }
    /// The batch being cut is submitted at the end of a record once it holds `batchBytes` bytes of records, or
    /// `batchRecords` records, or points into `maxChunksPerBatch` chunks — that last one for input that is mostly
    /// whitespace between records, where a few records would otherwise keep many chunks alive.
    var currentIsFull: Bool {
        current.byteCount >= batchBytes || current.records.count >= Self.batchRecords || current.chunks.count >= maxChunksPerBatch
    }

    /// Chunks a batch may point into: the `batchBytes` of records it is cut at, in chunks of their own, and the
    /// chunk on either side (4 by default).
    var maxChunksPerBatch: Int { batchBytes / chunks.chunkBytes + 2 }

    /// How many chunks were made.
    var chunksMade: Int { chunks.count }

    /// A chunk for the next read, which becomes the chunk being framed: one that no batch refers to any more, or a
    /// new one.
    func nextChunk() -> InputChunk {
        readingChunk = nil
        let chunk = chunks.fresh()
        readingChunk = chunk
        return chunk
    }

    /// The next piece of the NDJSON record being cut (from the chunk being framed, or not).
    func continueRecord(_ piece: UnsafeRawBufferPointer) { current.continueRecord(piece, in: readingChunk) }

    /// A whole record (the `array`, `concat` and `seq` framings).
    func addRecord(_ record: UnsafeRawBufferPointer, at location: RecordLocation, bytesIn: Int, framingError: JSONSyntaxError?) {
        current.addRecord(record, in: readingChunk, at: location, bytesIn: bytesIn, framingError: framingError)
    }

    /// Starts `jobs` workers, each mapping with a function from `makeBatchMapper` called on its own thread (so each
    /// worker's engine is made there: no two threads ever share an engine's compiled state). Fails with an errno
    /// when no worker starts; when only some do, runs with those.
    init(jobs: Int, batchBytes: Int, makeBatchMapper: @escaping BatchMapperFactory) throws(ThreadStartError) {
        window = 2 * jobs
        self.batchBytes = max(1, batchBytes)
        longRecordBytes = 4 * self.batchBytes
        chunks = ChunkPool(chunkBytes: Self.chunkBytes)
        let queue = self.queue
        let longRecordBytes = self.longRecordBytes
        let failure = workers.start(jobs) {
            let map = makeBatchMapper()
            while var batch = queue.next() {
                batch.readRange(longRecordBytes: longRecordBytes)
                map(&batch)
                queue.finished(consume batch)
            }
        }
        if let failure, workers.count == 0 { throw ThreadStartError(code: failure) }
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

    /// Submits a batch that is `range` of a file, named after its input: the worker reads it and cuts it into
    /// records (`RecordBatch.readRange`). Call only with room in the window, and nothing in the batch being cut.
    func submitRange(_ range: FileRange, input: String) {
        let batch = Self.ranged(spare.popLast() ?? RecordBatch(), range, input: input, sequence: nextSequence)
        nextSequence += 1
        queue.submit(consume batch)
    }

    /// `batch` (empty) made the batch of `range`. (A function, so that the batch is moved, not copied, on its way
    /// to the queue: no reference to its buffers stays behind.)
    private static func ranged(_ batch: consuming RecordBatch, _ range: FileRange, input: String, sequence: Int) -> RecordBatch {
        var batch = batch
        batch.input = input
        batch.range = range
        batch.sequence = sequence
        return batch
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
