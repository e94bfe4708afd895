#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How an input read ahead ended (`RecordPipeline.readAhead(_:name:stopRequested:afterRead:)`).
public enum ReadAheadEnd: Equatable, Sendable {
    /// The file could not be opened (errno); nothing of it was read.
    case cannotOpen(errno: Int32)
    /// It was opened and read, and ended so.
    case read(InputEnd)
}

/// `--jobs N` over many compressed files: whole files mapped ahead, each on one thread with a one-job pipeline of
/// its own — decompression, framing and mapping of different files at the same time, as N separate processes
/// would — while the pipeline's thread writes them in input order.
///
/// Each file's outcome (mapped lines, rejects with their kept bytes and errors, filtered records, how it ended,
/// and every record's `bytesIn`) goes into a `RecordLog` as it is produced; the pipeline replays the log into its
/// output through the same `handle` as a record mapped on its own thread, so the output sees exactly the calls,
/// reports and stops of one job. The file being written is drained as it is mapped; at most `window` files (2 × N)
/// are mapped ahead of it, each holding at most its share of `RecordPipelineSettings.readAheadMemoryBytes` in
/// memory (that / window), the rest in a temporary file.
final class ReadAhead {
    /// What the workers share with the pipeline's thread: the files, their logs, and whose turn it is.
    let schedule: ReadAheadSchedule
    private var workers = WorkerThreads()

    /// The logs, one per file, in input order.
    var logs: [RecordLog] { schedule.logs }

    /// Starts `jobs` threads mapping `paths` in order, each with an engine `makeEngine` makes on it and a one-job
    /// pipeline with `settings`. `stopRequested` is asked by those pipelines as by the pipeline's own reads.
    init(paths: [String], jobs: Int, settings: RecordPipelineSettings,
         makeEngine: @escaping @Sendable () -> any RecordEngine, stopRequested: @escaping @Sendable () -> Bool) throws(ThreadStartError) {
        let schedule = ReadAheadSchedule(paths: paths, window: 2 * jobs,
                                         memoryBudget: max(1, settings.readAheadMemoryBytes / (2 * jobs)))
        self.schedule = schedule
        // One job, decompressing on its own thread: the workers keep the cores busy already.
        let oneJob = { var s = settings; s.jobs = 1; s.decompressesAhead = false; return s }()
        // The threads hold the schedule, not this object: dropping the pipeline (or this) stops them.
        let failure = workers.start(min(jobs, paths.count)) {
            let recorder = RecordingOutput()
            func makePipeline() -> RecordPipeline {
                var pipeline = RecordPipeline(engine: makeEngine(), settings: oneJob, output: recorder)
                pipeline.core.beforeFraming = { recorder.bytesIn = $0 - recorder.bytesInBase }
                return pipeline
            }
            var pipeline = makePipeline()
            while let index = schedule.take() {
                let log = schedule.logs[index]
                recorder.begin(log, bytesInBase: pipeline.bytesIn)
                let fd = open(schedule.paths[index], O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else {
                    recorder.end(.cannotOpen(errno: errno), bytesIn: 0)
                    continue
                }
                let end = pipeline.read(schedule.paths[index], fileDescriptor: fd,
                                        stopRequested: { schedule.isCancelled || stopRequested() })
                close(fd)
                recorder.end(.read(end), bytesIn: pipeline.bytesIn - recorder.bytesInBase)
                // Stopped only when the log was cancelled (the file is no longer wanted): a fresh pipeline for the next.
                if pipeline.isStopped { pipeline = makePipeline() }
            }
        }
        if let failure, workers.count == 0 { throw ThreadStartError(code: failure) }
    }

    deinit { shutdown() }

    /// The pipeline is done with file `index` (written, or never to be): a worker may start another.
    func release(_ index: Int) { schedule.release(index) }

    /// Stops the workers (each after the record it is mapping) and waits for them; logs are let go.
    func shutdown() {
        schedule.cancel()
        workers.join()
    }
}

/// The read-ahead's shared state: which file each worker takes next, at most `window` ahead of the one the
/// pipeline is writing.
final class ReadAheadSchedule: @unchecked Sendable {
    // @unchecked: `started`, `written` and `cancelled` are read and written only in `monitor.withLock`; `paths` and
    // `logs` are set at init and never change (a log is itself thread-safe).

    let paths: [String]
    let logs: [RecordLog]
    let window: Int
    private let monitor = Monitor()
    /// Files handed to a worker so far (in order), and files the pipeline has written (or let go).
    private var started = 0
    private var written = 0
    private var cancelled = false

    init(paths: [String], window: Int, memoryBudget: Int) {
        self.paths = paths
        self.window = window
        logs = paths.map { _ in RecordLog(memoryBudget: memoryBudget) }
    }

    var isCancelled: Bool { monitor.withLock { cancelled } }

    /// A worker's next file: waits while `window` files are ahead of the one being written; nil when every file
    /// was started, or the run is over.
    func take() -> Int? {
        monitor.withLock {
            while !cancelled && started < paths.count && started >= written + window { monitor.wait() }
            guard !cancelled && started < paths.count else { return nil }
            started += 1
            return started - 1
        }
    }

    /// The pipeline is done with file `index`: its log lets go, and a worker may start another file.
    func release(_ index: Int) {
        logs[index].cancel()
        monitor.withLock {
            written = max(written, index + 1)
            monitor.broadcast()
        }
    }

    /// The run is over: workers take no more files, and every log lets go.
    func cancel() {
        monitor.withLock {
            cancelled = true
            monitor.broadcast()
        }
        for log in logs { log.cancel() }
    }
}

/// A worker's output: every call is encoded into the current file's log.
private final class RecordingOutput: RecordPipelineOutput {
    var mappedRecords = JSONWriter()
    private var log: RecordLog?
    private var encoder = RecordLogEncoder()
    /// The file's text read so far (set by the pipeline before it frames each read), and the pipeline's count
    /// when the file began.
    var bytesIn = 0
    private(set) var bytesInBase = 0
    private var goesOn = true

    func begin(_ log: RecordLog, bytesInBase: Int) {
        self.log = log
        self.bytesInBase = bytesInBase
        bytesIn = 0
        goesOn = true
        mappedRecords.removeAll()
    }

    func end(_ end: ReadAheadEnd, bytesIn: Int) {
        encoder.ended(end, bytesIn: bytesIn)
        _ = flush()
        log?.finish()
        log = nil
    }

    private func flush() -> Bool {
        let block = encoder.take()
        if !block.isEmpty && goesOn { goesOn = log?.append(block) ?? false }
        return goesOn
    }

    private func handedOn() -> Bool {
        mappedRecords.removeAll()
        return encoder.isFull ? flush() : goesOn
    }

    func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
        mappedRecords.bytes.withUnsafeBytes { lines in
            encoder.mapped(location, bytesIn: bytesIn, payload: UnsafeRawBufferPointer(rebasing: lines.dropLast(records > 0 ? 1 : 0)),
                           warnings: warnings, records: records)
        }
        return handedOn()
    }

    func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                  totalBytes: Int) -> Bool {
        encoder.rejected(location, bytesIn: bytesIn, failure: failure, kept: record, totalBytes: totalBytes)
        return handedOn()
    }

    func filtered(input: String, location: RecordLocation) -> Bool {
        encoder.filtered(location, bytesIn: bytesIn)
        return handedOn()
    }
}

extension RecordPipeline {
    /// With `jobs` > 1 (and `makeEngine` given): maps the files at `paths` ahead, whole, on threads of their own —
    /// `jobs` files at a time, decompression, framing and mapping included — for the pipeline to write in order
    /// with ``readAhead(_:name:stopRequested:afterRead:)``. Meant for many compressed files, which one reading
    /// thread would otherwise decompress one after another. The inputs read through this pipeline in between are
    /// read as usual. `stopRequested` is asked by those threads between reads (it must be safe to call from any
    /// thread). Returns false (and reads nothing ahead) with one job, without `makeEngine`, or when no thread can
    /// start.
    ///
    /// Memory: at most 2 × `jobs` files are mapped ahead of the one being written, each holding up to
    /// `settings.readAheadMemoryBytes` / (2 × `jobs`) of its output in memory (256 MiB in all by default) and the rest
    /// in a temporary file in `$TMPDIR` (unlinked at once); the file being written is drained as it is mapped.
    @discardableResult
    public mutating func readAhead(paths: [String], stopRequested: @escaping @Sendable () -> Bool) -> Bool {
        guard core.settings.jobs > 1, let makeEngine = core.makeEngine, !paths.isEmpty else { return false }
        core.readAhead?.shutdown()
        core.readAhead = try? ReadAhead(paths: paths, jobs: core.settings.jobs, settings: core.settings,
                                        makeEngine: makeEngine, stopRequested: stopRequested)
        core.readAheadNext = 0
        return core.readAhead != nil
    }

    /// Writes file `index` of the last ``readAhead(paths:stopRequested:)`` as the next input, named `name`: every
    /// record of it, in order, exactly as ``read(_:fileDescriptor:stopRequested:afterRead:)`` would have handed them
    /// on (the inputs before it are written first). Files are taken in order; a file skipped is let go.
    /// `stopRequested` is asked between blocks of its output (true: `interrupted`, whole records only); `afterRead`
    /// as the records' `bytesIn` grows.
    public mutating func readAhead(_ index: Int, name: String, stopRequested: () -> Bool = { false },
                                   afterRead: (_ bytesIn: Int) -> Void = { _ in }) -> ReadAheadEnd {
        core.replay(index, name: name, stopRequested: stopRequested, afterRead: afterRead)
    }
}

extension PipelineCore {
    /// Writes read-ahead file `index` into the output (see `RecordPipeline.readAhead(_:name:stopRequested:afterRead:)`).
    mutating func replay(_ index: Int, name: String, stopRequested: () -> Bool, afterRead: (_ bytesIn: Int) -> Void) -> ReadAheadEnd {
        let readAhead = readAhead!
        while readAheadNext < index {
            readAhead.release(readAheadNext)
            readAheadNext += 1
        }
        defer {
            readAhead.release(index)
            readAheadNext = index + 1
        }
        finishBatches()  // the inputs before it are written first
        guard !isStopped else { return .read(.stopped) }
        beginInput(name)
        let base = bytesIn
        let log = readAhead.logs[index]
        while true {
            if stopRequested() { return .read(.interrupted) }
            let block: [UInt8]
            switch log.next() {
            case .block(let b): block = b
            case .end: return .read(.stopped)  // cancelled: the run is over
            case .failed(let code): return .read(.failed(errno: code))
            }
            var end: ReadAheadEnd?
            let before = bytesIn
            block.withUnsafeBytes { raw in
                var decoder = RecordLogDecoder(raw)
                while !isStopped {
                    // A record mapped into one line without warnings, as `handle` hands it on, for less: its line
                    // appended in one access to the output's buffer, no event value made and destroyed. This is the
                    // serial part of reading many files ahead (the workers map them), so its cost per record is what
                    // limits `--jobs N` on many compressed files.
                    if let plain = decoder.nextPlainMapped() {
                        bytesIn = base + plain.bytesIn
                        handMappedLine(plain.payload, input: name, location: plain.location)
                        continue
                    }
                    guard let event = decoder.next() else { break }
                    switch event {
                    case .mapped(let location, let n, let payload, let warnings, let records):
                        bytesIn = base + n
                        let mark = output.mappedRecordsCount
                        output.mappedRecords.writeRaw(payload)
                        handle(.mapped(warnings: warnings, records: records), mark: mark, record: UnsafeRawBufferPointer(start: nil, count: 0), input: name,
                               location: location, totalBytes: 0)
                    case .rejected(let location, let n, let failure, let kept, let total):
                        bytesIn = base + n
                        handle(.rejected(failure), mark: output.mappedRecordsCount, record: kept, input: name,
                               location: location, totalBytes: total)
                    case .filtered(let location, let n):
                        bytesIn = base + n
                        handle(.filtered, mark: output.mappedRecordsCount, record: UnsafeRawBufferPointer(start: nil, count: 0),
                               input: name, location: location, totalBytes: 0)
                    case .ended(let e, let n):
                        bytesIn = base + n
                        end = e
                    }
                }
            }
            if isStopped { return .read(.stopped) }
            if bytesIn != before { afterRead(bytesIn) }
            if let end { return end }
        }
    }
}
