#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StreamMap

/// How the run treats records (from the map command's options).
struct PipelineSettings {
    var framing: Framing = .auto
    var onError: OnError = .reject
    var maxRejects: Int?
    /// No per-record messages on standard error.
    var quiet = false
    /// Warnings (non-fatal errors) reported on standard error too.
    var showWarnings = false
    /// Worker threads that map records (`--jobs`); 1: everything on the calling thread.
    var jobs = 1
    /// Input bytes per batch with more than one job (hidden `--batch-bytes`; tests make it small).
    var batchBytes = ParallelMapping.defaultBatchBytes
}

/// Why the run stopped before the end of its input.
enum StopReason: Equatable {
    case interrupted(Int32)
    case outputClosed
    case outputFailed
    case rejectsFailed
    case tooManyRejects
}

/// Reads the inputs, maps every record with the engine, writes mapped records, rejects and diagnostics. Every
/// record read ends in exactly one place: the output or the rejected count (and the rejects file); a record cut by
/// a stop (signal, closed output) is not counted.
///
/// With `--jobs N` (N > 1) the calling thread still reads, frames, writes and reports, in input order; only the
/// mapping of records moves to N worker threads, a batch of records at a time (`ParallelMapping`; the batch side
/// of this type is in Parallel/Pipeline+Batches.swift). The output, the rejects, the messages, the counts and the
/// exit status are those of one job.
struct Pipeline<Engine: RecordEngine>: RecordHandler {
    var engine: Engine
    let settings: PipelineSettings
    var output: RecordOutput
    var rejects: RejectsFile?
    let console: Console
    var stats = RunStats()
    var progress: ProgressDisplay?
    var stop: StopReason?
    private(set) var inputFailed = false

    // The input and the record in progress.
    var inputName = ""
    var location = RecordLocation(line: 0, byteOffset: 0)
    var recordLength = 0
    var skippingRecord = false
    /// The record's first bytes, kept for `--rejects` (`keepLimit` of them; pieces are only valid during the call
    /// that hands them on, so they are copied).
    var kept: [UInt8] = []
    let keepLimit: Int
    /// The current record's one piece so far, still in the read buffer. A record that ends in the chunk it began
    /// in (nearly all) is mapped from there as a whole record, not copied piece by piece into the engine; the
    /// piece is handed to the engine only when the record goes on into the next chunk (`handPieceToEngine`).
    private var waitingPiece: UnsafeRawBufferPointer?
    /// The current record's bytes go to the engine piece by piece (`beginRecord` was called).
    var recordInEngine = false
    private var readBuffer = [UInt8](repeating: 0, count: InputFile.readBytes)

    /// With more than one job: the batches and the workers (nil: every record is mapped by `engine`, here).
    /// `engine` still maps the records too long for a batch.
    var parallel: ParallelMapping?
    /// Makes each worker's engine (see `ParallelMapping.BatchMapperFactory`).
    let makeBatchMapper: ParallelMapping.BatchMapperFactory?
    /// The NDJSON record in progress goes into the batch being cut, not through `engine`.
    var batching = false

    init(engine: Engine, settings: PipelineSettings, output: RecordOutput, rejects: RejectsFile?, console: Console,
         makeBatchMapper: ParallelMapping.BatchMapperFactory? = nil) {
        self.engine = engine
        self.settings = settings
        self.output = output
        self.rejects = rejects
        self.console = console
        self.keepLimit = rejects?.bytesToKeep ?? 0
        self.makeBatchMapper = makeBatchMapper
    }

    // MARK: Running

    /// Maps every input in order and returns the exit status.
    mutating func run(inputs: [String]) -> Int32 {
        startWorkers()
        for input in inputs where stop == nil { process(input) }
        finishBatches()
        parallel?.shutdown()
        parallel = nil
        if stop != .outputClosed && stop != .outputFailed { flushOutput() }
        if var r = rejects {
            if case .failed(let code) = r.flush() { rejectsWriteFailed(r.file.name, code) }
            rejects = r
        }
        console.clearProgress()
        var signal: Int32?
        switch stop {
        case .interrupted(let s)?:
            signal = s
            console.error("interrupted: \(stats.recordsIn) records read, \(stats.recordsOut) written, \(stats.recordsRejected) rejected")
        default:
            break
        }
        if let r = rejects, stats.recordsRejected > 0, !settings.quiet {
            console.error("\(stats.recordsRejected) of \(stats.recordsIn) records rejected, written to \(r.file.name)")
        }
        return exitStatus(signal: signal)
    }

    func exitStatus(signal: Int32?) -> Int32 {
        if let signal { return ExitStatus.interrupted(by: signal) }
        if inputFailed || stop == .outputFailed || stop == .rejectsFailed { return ExitStatus.ioError.rawValue }
        if stop == .outputClosed { return ExitStatus.closedPipe.rawValue }
        if stop == .tooManyRejects { return ExitStatus.stopped.rawValue }
        return stats.recordsRejected > 0 ? ExitStatus.recordsRejected.rawValue : ExitStatus.success.rawValue
    }

    var interruptingSignal: Int32? {
        if case .interrupted(let s)? = stop { return s }
        return nil
    }

    mutating func process(_ path: String) {
        let input: InputFile
        switch InputFile.open(path) {
        case .success(let f): input = f
        case .failure(let e):
            finishBatches()  // the records before it first; and a stop there means this input is never reached
            guard stop == nil else { return }
            console.error("\(path): \(e.description)")
            inputFailed = true
            return
        }
        defer { input.close() }
        inputName = input.name
        var framing = InputFraming(settings.framing)
        var buffer = readBuffer
        readBuffer = []
        defer { readBuffer = buffer }
        while stop == nil {
            if Signals.received != 0 {
                finishBatches()  // the whole records read so far are mapped and written
                if stop == nil { stop = .interrupted(Signals.received) }
                break
            }
            // With workers, the bytes go into a chunk that the batches point into; else into the read buffer.
            let chunk = parallel?.nextChunk()
            let n: Int?
            if let chunk {
                n = chunk.fill { input.read(into: $0, interrupted: { Signals.received != 0 }) }
            } else {
                n = buffer.withUnsafeMutableBytes { input.read(into: $0, interrupted: { Signals.received != 0 }) }
            }
            guard let n else {
                if Signals.received != 0 { continue }
                let code = errno
                finishBatches()
                guard stop == nil else { break }
                console.error("\(input.name): \(Console.describe(errno: code))")
                inputFailed = true
                break
            }
            if n == 0 {
                framing.finish(into: &self)
                submitBatch()  // a batch holds the records of one input
                break
            }
            stats.bytesIn += n
            if let chunk {
                framing.feed(chunk.bytes, into: &self)
            } else {
                buffer.withUnsafeBytes { framing.feed(UnsafeRawBufferPointer(rebasing: $0[..<n]), into: &self) }
            }
            if progress != nil { progress!.tick(stats, console: console) }
        }
    }

    // MARK: Records in pieces (NDJSON)

    mutating func recordBegins(at location: RecordLocation) {
        skippingRecord = stop != nil
        guard !skippingRecord else { return }
        self.location = location
        recordLength = 0
        waitingPiece = nil
        recordInEngine = false
        if let parallel {
            batching = true
            parallel.current.beginRecord()
            return
        }
        kept.removeAll(keepingCapacity: kept.capacity <= 1 << 20)
    }

    mutating func chunkEnds() {
        if waitingPiece != nil { handPieceToEngine() }
    }

    /// The record goes to the engine piece by piece from now on, starting with the piece that was waiting (its
    /// chunk is about to be read over).
    private mutating func handPieceToEngine() {
        guard !recordInEngine else { return }
        recordInEngine = true
        engine.beginRecord()
        if let piece = waitingPiece {
            waitingPiece = nil
            engine.continueRecord(piece)
            keep(piece)
        }
    }

    private mutating func keep(_ bytes: UnsafeRawBufferPointer) {
        let room = keepLimit - kept.count
        if room > 0 { kept.append(contentsOf: bytes.prefix(room)) }
    }

    mutating func recordContinues(_ bytes: UnsafeRawBufferPointer) {
        guard !skippingRecord else { return }
        recordLength += bytes.count
        if batching {
            parallel!.continueRecord(bytes)
            if recordLength > parallel!.longRecordBytes { streamLongRecord() }
            return
        }
        if !recordInEngine && waitingPiece == nil {
            waitingPiece = bytes
            return
        }
        handPieceToEngine()
        engine.continueRecord(bytes)
        keep(bytes)
    }

    mutating func recordEnds() {
        guard !skippingRecord else { return }
        if batching {
            batching = false
            parallel!.current.endRecord(at: location, bytesIn: stats.bytesIn)
            if parallel!.currentIsFull { submitBatch() }
            return
        }
        let mark = output.writer.bytes.count
        if !recordInEngine, let piece = waitingPiece {
            // The whole record is in the read buffer.
            waitingPiece = nil
            let outcome = engine.map(record: piece, into: &output.writer)
            handle(outcome, mark: mark, record: UnsafeRawBufferPointer(rebasing: piece.prefix(max(keepLimit, 0))),
                   input: inputName, location: location, totalBytes: recordLength)
            return
        }
        handPieceToEngine()
        let outcome = engine.endRecord(into: &output.writer)
        let k = kept
        k.withUnsafeBytes { handle(outcome, mark: mark, record: $0, input: inputName, location: location, totalBytes: recordLength) }
    }

    // MARK: Whole records (array, concat, seq)

    mutating func wholeRecord(_ bytes: UnsafeRawBufferPointer, at location: RecordLocation, framingError: JSONSyntaxError?) {
        guard stop == nil else { return }
        if let parallel {
            if bytes.count <= parallel.longRecordBytes {
                parallel.addRecord(bytes, at: location, bytesIn: stats.bytesIn, framingError: framingError)
                if parallel.currentIsFull { submitBatch() }
                return
            }
            finishBatches()  // a long record is mapped here, after the records before it
            guard stop == nil else { return }
        }
        self.location = location
        recordLength = bytes.count
        let mark = output.writer.bytes.count
        let outcome = framingError.map { RecordOutcome.rejected(.syntax($0)) } ?? engine.map(record: bytes, into: &output.writer)
        handle(outcome, mark: mark, record: UnsafeRawBufferPointer(rebasing: bytes.prefix(max(keepLimit, 0))), input: inputName,
               location: location, totalBytes: recordLength)
    }

    // MARK: Outcomes

    /// Counts, reports and (when rejected) takes back out of the output one record, whose mapped bytes (if any)
    /// follow `mark` in the output buffer; decides whether the run stops there. `record` is the record's start
    /// (`keepLimit` bytes of it) for `--rejects`, `totalBytes` its length.
    mutating func handle(_ outcome: RecordOutcome, mark: Int, record: UnsafeRawBufferPointer, input inputName: String,
                         location: RecordLocation, totalBytes recordLength: Int) {
        stats.recordsIn += 1
        switch outcome {
        case .mapped(let warnings):
            output.writer.writeRaw(0x0A)
            stats.recordsOut += 1
            if !warnings.isEmpty {
                stats.noteWarnings(warnings)
                if settings.showWarnings {
                    for w in warnings {
                        console.recordMessage(input: inputName, line: location.line, source: w.sourcePath, label: "warning: ",
                                              message: w.message)
                    }
                }
            }
        case .rejected(let failure):
            if output.writer.bytes.count > mark { output.writer.bytes.removeSubrange(mark...) }
            stats.recordsRejected += 1
            stats.noteRejection(failure)
            if rejects != nil {
                // In place: a copy of `rejects` would share, and so copy at the first write, its whole buffer.
                let result = rejects!.add(input: inputName, location: location, record: record, totalBytes: recordLength,
                                          errors: failure.errors)
                if case .failed(let code) = result { rejectsWriteFailed(rejects!.file.name, code) }
            } else if !settings.quiet {
                // Written by the console piece by piece: no report, no pointer string, no message string per line.
                let console = console, line = location.line
                failure.forEachError { e in
                    guard e.isFatal else { return }
                    console.recordMessage(input: inputName, line: line, source: e.source,
                                          label: e.code == "syntax" ? "invalid JSON: " : "", message: e.message)
                }
            }
            if stop == nil {
                if settings.onError == .fail {
                    stop = .tooManyRejects
                    console.error("\(inputName):\(location.line): stopped at the first rejected record (--on-error fail)")
                } else if let max = settings.maxRejects, stats.recordsRejected > max {
                    stop = .tooManyRejects
                    console.error("\(inputName):\(location.line): stopped: \(stats.recordsRejected) records rejected, more than --max-rejects \(max)")
                }
            }
        }
        if output.writer.bytes.count >= RecordOutput.flushThreshold { flushOutput() }
    }

    private mutating func flushOutput() {
        switch output.flush() {
        case .ok: break
        case .closed: if stop == nil || stop == .tooManyRejects { stop = .outputClosed }
        case .failed(let code):
            console.error("\(output.file.name): write error: \(Console.describe(errno: code))")
            if interruptingSignal == nil { stop = .outputFailed }
        }
    }

    private mutating func rejectsWriteFailed(_ name: String, _ code: Int32) {
        console.error("\(name): write error: \(Console.describe(errno: code))")
        if interruptingSignal == nil { stop = .rejectsFailed }
    }
}
