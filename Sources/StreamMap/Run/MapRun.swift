#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the map command does with records beyond mapping them (from its options).
/// What a rejected record does to the run (`--on-error`).
package enum OnError: String, CaseIterable, Sendable {
    /// Report it, go on, exit 1 at the end.
    case reject
    /// Stop at it, exit 4.
    case fail
}

package struct RunSettings {
    package init() {}
    package var pipeline = RecordPipelineSettings()
    package var onError: OnError = .reject
    package var maxRejects: Int?
    /// No per-record messages on standard error.
    package var quiet = false
    /// Warnings (non-fatal errors) reported on standard error too.
    package var showWarnings = false
    /// The paths the flags name, looked for in the first records; those none has are reported at the end.
    package var pathWatch: PathWatch?
}

/// Why the run stopped before the end of its input.
package enum StopReason: Equatable {
    case interrupted(Int32)
    case outputClosed
    case outputFailed
    case rejectsFailed
    case tooManyRejects
}

/// The command line's end of the record pipeline: mapped records go to the output file in large writes, rejects to
/// standard error or the rejects file, with the counts, `--on-error` and `--max-rejects`.
///
/// One thread drives it (the pipeline's), and no access to its state overlaps another, so the state is not checked
/// for exclusive access at run time: those checks were most of what it cost a record.
package final class CommandOutput: RecordPipelineOutput {
    package let settings: RunSettings
    @exclusivity(unchecked) package var file: RecordWriter
    package let rejects: RejectsFile?
    package let console: Console
    @exclusivity(unchecked) package var stats = RunStats()
    @exclusivity(unchecked) package var stop: StopReason?
    @exclusivity(unchecked) package var progress: ProgressDisplay?

    package init(settings: RunSettings, file: RecordWriter, rejects: RejectsFile?, console: Console) {
        self.settings = settings
        self.file = file
        self.rejects = rejects
        self.console = console
    }

    package var mappedRecords: JSONWriter {
        get { file.writer }
        _modify { yield &file.writer }
    }

    package var mappedRecordsPreparer: (any MappedRecordsPreparer)? { file.mappedRecordsPreparer }

    package func willWrite(prepared: (any Sendable)?) { file.willWrite(prepared: prepared) }

    package func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
        stats.recordsIn += 1
        stats.recordsOut += records
        if records != 1 { stats.noteExploded(records) }
        if !warnings.isEmpty {
            stats.noteWarnings(warnings)
            if settings.showWarnings {
                console.recordMessages(input: input, line: location.line, warnings: warnings)
            }
        }
        return flushIfFull()
    }

    package func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                  totalBytes: Int) -> Bool {
        stats.recordsIn += 1
        stats.recordsRejected += 1
        stats.noteRejection(failure)
        if let rejects {
            let result = rejects.add(input: input, location: location, record: record, totalBytes: totalBytes, failure: failure)
            if case .failed(let code) = result { rejectsWriteFailed(rejects.file.name, code) }
        } else if !settings.quiet {
            // Written by the console piece by piece: no report, no pointer string, no message string per line.
            console.recordMessages(input: input, line: location.line, failure: failure)
        }
        if stop == nil {
            if settings.onError == .fail {
                stop = .tooManyRejects
                console.error("\(input):\(location.line): stopped at the first rejected record (--on-error fail)")
            } else if let max = settings.maxRejects, stats.recordsRejected > max {
                stop = .tooManyRejects
                console.error("\(input):\(location.line): stopped: \(stats.recordsRejected) \(Self.records(stats.recordsRejected)) rejected, more than --max-rejects \(max)")
            }
        }
        return flushIfFull() && stop == nil
    }

    /// "record" for one, "records" for any other count.
    package static func records(_ count: Int) -> String { count == 1 ? "record" : "records" }

    package func filtered(input: String, location: RecordLocation) -> Bool {
        stats.recordsIn += 1
        stats.recordsFiltered += 1
        return stop == nil
    }

    /// Writes the output past its threshold; false when the run must stop (a closed pipe, a write error, a stop).
    private func flushIfFull() -> Bool {
        if file.writer.bytes.count >= RecordWriter.flushThreshold { flush() }
        return stop == nil
    }

    package func flush() { report(file.flush()) }

    /// Writes the rest and ends the output (`RecordWriter.finish`).
    package func finish() { report(file.finish()) }

    private func report(_ result: WriteResult) {
        switch result {
        case .ok: break
        case .closed: if stop == nil || stop == .tooManyRejects { stop = .outputClosed }
        case .failed(let code):
            console.error("\(file.file.name): write error: \(Console.describe(errno: code))")
            if interruptingSignal == nil { stop = .outputFailed }
        case .unwritable(let message):
            console.error("\(file.file.name): cannot write a mapped record: \(message)")
            if interruptingSignal == nil { stop = .outputFailed }
        }
    }

    package func rejectsWriteFailed(_ name: String, _ code: Int32) {
        console.error("\(name): write error: \(Console.describe(errno: code))")
        if interruptingSignal == nil { stop = .rejectsFailed }
    }

    package var interruptingSignal: Int32? {
        if case .interrupted(let s)? = stop { return s }
        return nil
    }

    /// Redraws the progress line (at most every interval), `bytesIn` read so far.
    package func tickProgress(bytesIn: Int) {
        guard progress != nil else { return }
        var s = stats
        s.bytesIn = bytesIn
        progress!.tick(s, console: console)
    }
}

/// One run of the map command: every input, in order, through one record pipeline; then the closing reports and
/// the exit status.
package struct MapRun {
    package let output: CommandOutput
    package var pipeline: RecordPipeline
    private(set) var inputFailed = false
    /// With `--byte-range`: the part of its file that is read.
    package var window: ByteRangeWindow?
    /// The signal received (SIGINT, SIGTERM), or 0: asked between reads, a signal stops the run at a record boundary.
    package var receivedSignal: @Sendable () -> Int32 = { 0 }

    package init(engine: any RecordEngine, makeEngine: (@Sendable () -> any RecordEngine)?, settings: RunSettings, file: RecordWriter,
         rejects: RejectsFile?, console: Console) {
        var pipelineSettings = settings.pipeline
        pipelineSettings.keptRecordBytes = rejects?.bytesToKeep ?? 0
        output = CommandOutput(settings: settings, file: file, rejects: rejects, console: console)
        var engine = engine, makeEngine = makeEngine
        if let watch = settings.pathWatch {
            engine = PathWatchingEngine(engine, watch: watch)
            if let make = makeEngine {
                makeEngine = { @Sendable () -> any RecordEngine in PathWatchingEngine(make(), watch: watch) }
            }
        }
        pipeline = RecordPipeline(engine: engine, settings: pipelineSettings, output: output, makeEngine: makeEngine)
        if let code = pipeline.threadStartError {
            console.error("--jobs \(settings.pipeline.jobs): cannot start threads (\(Console.describe(errno: code))); mapping on one thread")
        }
    }

    package var stats: RunStats {
        var s = output.stats
        s.bytesIn = pipeline.bytesIn
        s.pathsNotFound = output.settings.pathWatch?.unseenPaths ?? []
        return s
    }

    package var interruptingSignal: Int32? { output.interruptingSignal }

    /// Maps every input in order and returns the exit status.
    package mutating func run(inputs: [String]) -> Int32 {
        let console = output.console
        let readAhead = startReadAhead(inputs)
        for (position, path) in inputs.enumerated() where output.stop == nil {
            if let index = readAhead[position] { processReadAhead(index, path) } else { process(path) }
        }
        pipeline.finish()
        if output.stop != .outputClosed && output.stop != .outputFailed { output.finish() }
        if let r = output.rejects {
            if case .failed(let code) = r.flush() { output.rejectsWriteFailed(r.file.name, code) }
        }
        console.clearProgress()
        if let watch = output.settings.pathWatch, !output.settings.quiet {
            for line in watch.report { console.error(line) }
        }
        let stats = self.stats
        if case .interrupted? = output.stop {
            let filtered = stats.filters ? ", \(stats.recordsFiltered) filtered" : ""
            console.error("interrupted: \(stats.recordsIn) \(CommandOutput.records(stats.recordsIn)) read, \(stats.recordsOut) written\(filtered), \(stats.recordsRejected) rejected")
        }
        if let r = output.rejects, stats.recordsRejected > 0, !output.settings.quiet {
            console.error("\(stats.recordsRejected) of \(stats.recordsIn) \(CommandOutput.records(stats.recordsIn)) rejected, written to \(r.file.name)")
        }
        return exitStatus()
    }

    package func exitStatus() -> Int32 {
        let stop = output.stop
        if let signal = interruptingSignal { return ExitStatus.interrupted(by: signal) }
        if inputFailed || stop == .outputFailed || stop == .rejectsFailed { return ExitStatus.ioError.rawValue }
        if stop == .outputClosed { return ExitStatus.closedPipe.rawValue }
        if stop == .tooManyRejects { return ExitStatus.stopped.rawValue }
        return output.stats.recordsRejected > 0 ? ExitStatus.recordsRejected.rawValue : ExitStatus.success.rawValue
    }

    private mutating func process(_ path: String) {
        let console = output.console
        var input: InputFile
        switch InputFile.open(path) {
        case .success(let f):
            input = f
            if let window, window.path == path { input.window = window }
        case .failure(let e):
            pipeline.drain()  // the records before it first; and a stop there means this input is never reached
            guard output.stop == nil else { return }
            console.error("\(path): \(e.description)")
            inputFailed = true
            return
        }
        defer { input.close() }
        let output = self.output
        let receivedSignal = self.receivedSignal
        let stopRequested = { receivedSignal() != 0 }
        let end = input.window == nil
            ? pipeline.read(input.name, fileDescriptor: input.fd, stopRequested: stopRequested, afterRead: output.tickProgress)
            : pipeline.read(input.name, stopRequested: stopRequested, afterRead: output.tickProgress) { buffer in
                input.read(into: buffer, interrupted: stopRequested)
            }
        report(end, input: input.name)
    }

    /// With `--jobs N` and two or more compressed files: those files are mapped ahead, whole, N at a time
    /// (`RecordPipeline.readAhead`), and written in their turn. Returns read-ahead indices by input position.
    private mutating func startReadAhead(_ inputs: [String]) -> [Int: Int] {
        guard output.settings.pipeline.jobs > 1, window == nil else { return [:] }
        let receivedSignal = self.receivedSignal
        let positions = inputs.indices.filter { inputs[$0] != "-" && InputFile.isCompressedFile(inputs[$0]) }
        guard positions.count >= 2,
              pipeline.readAhead(paths: positions.map { inputs[$0] }, stopRequested: { receivedSignal() != 0 })
        else { return [:] }
        return Dictionary(uniqueKeysWithValues: positions.enumerated().map { ($1, $0) })
    }

    /// Writes read-ahead file `index` (at `path`) as the next input, and reports how it ended as `process` does.
    private mutating func processReadAhead(_ index: Int, _ path: String) {
        let output = self.output
        switch pipeline.readAhead(index, name: path, stopRequested: { receivedSignal() != 0 }, afterRead: output.tickProgress) {
        case .cannotOpen(let code):
            guard output.stop == nil else { return }
            output.console.error("\(path): \(Errno(code: code).description)")
            inputFailed = true
        case .read(let end):
            report(end, input: path)
        }
    }

    /// What `process` does once an input is read: the stop or the message its end calls for.
    private mutating func report(_ end: InputEnd, input name: String) {
        let console = output.console
        switch end {
        case .ended, .stopped:
            break
        case .interrupted:
            if output.stop == nil { output.stop = .interrupted(receivedSignal()) }
        case .failed(let code):
            guard output.stop == nil else { break }
            console.error("\(name): \(Console.describe(errno: code))")
            inputFailed = true
        case .corrupt(let error):
            guard output.stop == nil else { break }
            console.error("\(name): \(error)")
            inputFailed = true
        case .unsupportedEncoding(let error):
            guard output.stop == nil else { break }
            console.error("\(name): \(error)")
            inputFailed = true
        }
    }
}
