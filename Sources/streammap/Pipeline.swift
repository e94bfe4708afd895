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
struct Pipeline<Engine: RecordEngine>: RecordHandler {
    var engine: Engine
    let settings: PipelineSettings
    var output: RecordOutput
    var rejects: RejectsFile?
    let console: Console
    var stats = RunStats()
    var progress: ProgressDisplay?
    private(set) var stop: StopReason?
    private(set) var inputFailed = false

    // The input and the record in progress.
    private var inputName = ""
    private var location = RecordLocation(line: 0, byteOffset: 0)
    private var recordLength = 0
    private var skippingRecord = false
    /// The record's first bytes, kept for `--rejects` (`keepLimit` of them; pieces are only valid during the call
    /// that hands them on, so they are copied).
    private var kept: [UInt8] = []
    private let keepLimit: Int
    private var readBuffer = [UInt8](repeating: 0, count: 1 << 18)

    init(engine: Engine, settings: PipelineSettings, output: RecordOutput, rejects: RejectsFile?, console: Console) {
        self.engine = engine
        self.settings = settings
        self.output = output
        self.rejects = rejects
        self.console = console
        self.keepLimit = rejects?.bytesToKeep ?? 0
    }

    // MARK: Running

    /// Maps every input in order and returns the exit status.
    mutating func run(inputs: [String]) -> Int32 {
        for input in inputs where stop == nil { process(input) }
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
                stop = .interrupted(Signals.received)
                break
            }
            let n = buffer.withUnsafeMutableBytes { input.read(into: $0, interrupted: { Signals.received != 0 }) }
            guard let n else {
                if Signals.received != 0 { continue }
                console.error("\(input.name): \(Console.describe(errno: errno))")
                inputFailed = true
                break
            }
            if n == 0 {
                framing.finish(into: &self)
                break
            }
            stats.bytesIn += n
            buffer.withUnsafeBytes { framing.feed(UnsafeRawBufferPointer(rebasing: $0[..<n]), into: &self) }
            if progress != nil { progress!.tick(stats, console: console) }
        }
    }

    // MARK: Records in pieces (NDJSON)

    mutating func recordBegins(at location: RecordLocation) {
        skippingRecord = stop != nil
        guard !skippingRecord else { return }
        self.location = location
        recordLength = 0
        kept.removeAll(keepingCapacity: kept.capacity <= 1 << 20)
        engine.beginRecord()
    }

    mutating func recordContinues(_ bytes: UnsafeRawBufferPointer) {
        guard !skippingRecord else { return }
        recordLength += bytes.count
        engine.continueRecord(bytes)
        let room = keepLimit - kept.count
        if room > 0 { kept.append(contentsOf: bytes.prefix(room)) }
    }

    mutating func recordEnds() {
        guard !skippingRecord else { return }
        let mark = output.writer.bytes.count
        let outcome = engine.endRecord(into: &output.writer)
        let k = kept
        k.withUnsafeBytes { handle(outcome, mark: mark, record: $0) }
    }

    // MARK: Whole records (array, concat, seq)

    mutating func wholeRecord(_ bytes: UnsafeRawBufferPointer, at location: RecordLocation, framingError: JSONSyntaxError?) {
        guard stop == nil else { return }
        self.location = location
        recordLength = bytes.count
        let mark = output.writer.bytes.count
        let outcome = framingError.map { RecordOutcome.rejected(.syntax($0)) } ?? engine.map(record: bytes, into: &output.writer)
        handle(outcome, mark: mark, record: UnsafeRawBufferPointer(rebasing: bytes.prefix(max(keepLimit, 0))))
    }

    // MARK: Outcomes

    private mutating func handle(_ outcome: RecordOutcome, mark: Int, record: UnsafeRawBufferPointer) {
        stats.recordsIn += 1
        switch outcome {
        case .mapped(let warnings):
            output.writer.writeRaw(0x0A)
            stats.recordsOut += 1
            if !warnings.isEmpty {
                stats.noteWarnings(warnings)
                if settings.showWarnings {
                    for w in warnings {
                        let path = w.sourcePath.isRoot ? "" : "\(w.sourcePath.pointer): "
                        console.error("\(inputName):\(location.line): \(path)warning: \(w.message)")
                    }
                }
            }
        case .rejected(let failure):
            if output.writer.bytes.count > mark { output.writer.bytes.removeSubrange(mark...) }
            stats.recordsRejected += 1
            let errors = failure.errors
            stats.noteRejection(errors)
            if var r = rejects {
                let result = r.add(input: inputName, location: location, record: record, totalBytes: recordLength, errors: errors)
                rejects = r
                if case .failed(let code) = result { rejectsWriteFailed(r.file.name, code) }
            } else if !settings.quiet {
                for e in errors where e.isFatal {
                    let path = e.source.isEmpty ? "" : "\(e.source): "
                    let what = e.code == "syntax" ? "invalid JSON: " : ""
                    console.error("\(inputName):\(location.line): \(path)\(what)\(e.message)")
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
