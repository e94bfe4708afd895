#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a record pipeline cuts and maps its input.
public struct RecordPipelineSettings: Sendable {
    /// How inputs are cut into records (`auto` decides from the start of each input).
    public var framing: Framing = .auto
    /// Threads that map records; 1: everything on the calling thread. Records come out in input order whatever
    /// the number.
    public var jobs = 1
    /// Input bytes per batch of records handed to a thread (with more than one job).
    public var batchBytes = RecordPipelineSettings.defaultBatchBytes
    /// How many bytes of a rejected record the output is given (`RecordPipelineOutput.rejected`); the rest is
    /// counted, not kept, so a rejected 1 GB line costs no more memory than a mapped one.
    public var keptRecordBytes = 0
    /// `read` tells gzip and zstd inputs by their first bytes and maps their decompressed text (`Compression`);
    /// false reads every input as it is.
    public var decompresses = true
    /// The smallest range a worker reads of a file (`FileRange`), whatever `batchBytes`: a range costs a hand-off
    /// each way between threads (about 17 µs on a 2-vCPU VM), so ranges of a few bytes would cost more than their
    /// mapping (`--batch-bytes 1` made a range of every byte: 17 s for a 1.3 MB file). Tests lower it.
    var smallestRangeBytes = 1 << 16

    /// Which inflate decompresses gzip input: ISA-L's where `libisal.so.2` is installed, else zlib's (`automatic`);
    /// or zlib's always. The text is the same; a corrupt stream's message and offset may differ between the two.
    public var inflater = Inflater.automatic

    /// A compressed input read from a descriptor (`RecordPipeline.read(_:fileDescriptor:)`) is decompressed on a
    /// thread of its own, a few reads ahead of framing and mapping (`DecodingAhead`); false decompresses on the
    /// reading thread. What the output sees is the same either way. With `jobs` > 1, a regular file of BGZF or of
    /// many zstd frames is decompressed by `jobs` threads at once (`ParallelDecoding`), byte-identical too.
    public var decompressesAhead = true

    /// What the files mapped ahead (`RecordPipeline.readAhead(paths:stopRequested:)`) may hold in memory together;
    /// each of them holds at most its share (this / (2 × `jobs`)), the rest goes to a temporary file.
    public var readAheadMemoryBytes = RecordPipelineSettings.defaultReadAheadMemoryBytes

    /// 256 MiB.
    public static let defaultReadAheadMemoryBytes = 256 << 20

    /// How many bytes one read asks for (256 KiB).
    public static let readBytes = 1 << 18
    /// 512 KiB: measured a little faster than 256 KiB and 1–4 MiB with 2 jobs on 2 cores.
    public static let defaultBatchBytes = 1 << 19

    /// Settings with the given framing, jobs and kept bytes; batches of the default size.
    public init(framing: Framing = .auto, jobs: Int = 1, keptRecordBytes: Int = 0) {
        self.framing = framing
        self.jobs = jobs
        self.keptRecordBytes = keptRecordBytes
    }
}

/// Where a record pipeline's records go.
///
/// Mapped records are written by the engine straight into `mappedRecords`, each followed by a newline (nothing is
/// copied on the way); a rejected record's bytes are taken back out of it before `rejected` is called. The output
/// drains `mappedRecords` when it likes — the command line writes it to its file past 64 KiB, the incremental feed
/// takes each record out as it comes. Either call returns whether the run goes on: false stops it (no record after
/// this one is mapped or reported).
public protocol RecordPipelineOutput: AnyObject {
    /// The buffer the engine writes mapped records into, one line each; the output drains it when it likes.
    var mappedRecords: JSONWriter { get set }
    /// A record was mapped: its line (with the newline) ends `mappedRecords` — or with an explode
    /// (`RecordExplosion`) `records` lines, zero included, each with its newline. Records out counts `records`.
    func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool
    /// A record was rejected. `record` is its first `keptRecordBytes` bytes; `totalBytes` its length.
    func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                  totalBytes: Int) -> Bool
    /// A record was dropped by the engine's filter (the spec's `where`): valid JSON, neither written nor rejected.
    /// Records in = mapped + filtered + rejected. By default: nothing to do, the run goes on.
    func filtered(input: String, location: RecordLocation) -> Bool
    /// With more than one job: work on the mapped records that the worker threads can do for the output (Arrow's
    /// columns), each for the batch it mapped. Nil (the default): none.
    var mappedRecordsPreparer: (any MappedRecordsPreparer)? { get }
    /// What the preparer made of the batch whose mapped records are written next (called just before them, in
    /// input order, for every batch, whatever the preparer returned). By default: nothing to do.
    func willWrite(prepared: (any Sendable)?)
}

extension RecordPipelineOutput {
    /// How many bytes `mappedRecords` holds, read in place (an `inout` access, through the property's `_modify`):
    /// through its getter, a copy of the writer retained and released its buffer at every record.
    var mappedRecordsCount: Int { Self.count(&mappedRecords) }

    private static func count(_ writer: inout JSONWriter) -> Int { writer.bytes.count }

    /// Nothing to do for a filtered record: the run goes on.
    public func filtered(input: String, location: RecordLocation) -> Bool { true }
    /// No work for the workers.
    public var mappedRecordsPreparer: (any MappedRecordsPreparer)? { nil }
    /// Nothing prepared, nothing to take.
    public func willWrite(prepared: (any Sendable)?) {}
}

/// Work an output does on mapped records that can run on the worker threads (`jobs` > 1) instead of the writing
/// thread: Arrow's columns, built from a batch's records while other batches map. The output gets the result back
/// with the batch (`RecordPipelineOutput.willWrite(prepared:)`); the records' text still comes as ever, so an
/// output can always fall back to it.
public protocol MappedRecordsPreparer: Sendable {
    /// On a worker, after its batch is mapped: `records` holds the batch's mapped records back to back, record `i`
    /// ending at `ends[i]` (an empty span: a record that was not mapped).
    func prepare(_ records: UnsafeRawBufferPointer, ends: [Int]) -> (any Sendable)?
}

/// How reading an input ended (`RecordPipeline.read`).
public enum InputEnd: Equatable, Sendable {
    /// At its end: every record in it was mapped and handed on (or the run stopped at one of them).
    case ended
    /// The output stopped the run (`RecordPipelineOutput` returned false); the input was not read to its end.
    case stopped
    /// `stopRequested` said so between two reads (a signal): the records read whole so far were handed on; a record
    /// cut there is neither mapped nor counted.
    case interrupted
    /// A read failed with this error number; the records before it were handed on.
    case failed(errno: Int32)
    /// The input is compressed and its compressed data is corrupt or cut short; the records decompressed before
    /// the fault were handed on (a record cut by it is neither mapped nor counted).
    case corrupt(CompressedInputError)
    /// The input is UTF-16 or UTF-32 text (told by its byte-order mark): nothing of it was read.
    case unsupportedEncoding(UnsupportedEncodingError)
}

/// The record pipeline: cuts inputs into records (`InputFraming`), maps each with an engine and hands the results
/// to an output, in input order — the one driver the command line, the library's feeds and front doors all run on.
///
/// - Zero-copy: a record that ends in the chunk it began in (nearly all) is mapped from the chunk as it was read;
///   a record that goes on across chunks streams through the engine piece by piece, so a 200 MB line is mapped in
///   constant memory.
/// - Every record read ends in exactly one place: mapped (its line in `mappedRecords`), filtered (dropped by the
///   engine's `where`) or rejected (reported with its first `keptRecordBytes` bytes). A record cut by a stop is
///   none of them.
/// - With `jobs` > 1, records are cut into batches that point into the chunks they were read into, mapped on
///   worker threads (each with an engine of its own from `makeEngine`), and handed to the output in input order:
///   what the output sees is exactly what one job gives (`ParallelMapping`; the batch side of this type is in
///   Parallel/RecordPipeline+Batches.swift). A regular NDJSON file given by its descriptor is read in ranges by
///   the workers themselves (Parallel/RecordPipeline+FileRanges.swift).
///
/// Used from one thread. The engine and the output are existentials: one indirect call per record.
public struct RecordPipeline {
    var core: PipelineCore

    /// A pipeline mapping with `engine`. With `settings.jobs` > 1, each worker thread maps with an engine that
    /// `makeEngine` makes on that thread (from a mapper of its own: no two threads share compiled state); if no
    /// thread can start, or without `makeEngine`, everything is mapped here with `engine`.
    public init(engine: any RecordEngine, settings: RecordPipelineSettings = .init(), output: any RecordPipelineOutput,
                makeEngine: (@Sendable () -> any RecordEngine)? = nil) {
        core = PipelineCore(engine: engine, settings: settings, output: output, makeEngine: makeEngine)
    }

    /// The settings the pipeline was made with.
    public var settings: RecordPipelineSettings { core.settings }
    /// Where the records go, as given to ``init(engine:settings:output:makeEngine:)``.
    public var output: any RecordPipelineOutput { core.output }
    /// The run was stopped by the output; nothing more is mapped.
    public var isStopped: Bool { core.isStopped }
    /// Bytes read or fed so far, over all inputs. After a stop in a batch (`jobs` > 1): what one job had read when
    /// it mapped the record the run stopped at.
    public var bytesIn: Int { core.bytesIn }
    /// Threads mapping records (0: all on the calling thread).
    public var threads: Int { core.parallel?.threads ?? 0 }
    /// When `jobs` > 1 and no worker thread could start: `pthread_create`'s error number (then everything is mapped
    /// on the calling thread).
    public var threadStartError: Int32? { core.threadStartError }
    /// The framing in use for the current input (what `auto` chose, once known).
    public var currentFraming: Framing? { core.framing?.chosen }

    /// Starts an input named `name` (in the output's reports), framed from its first byte.
    public mutating func beginInput(_ name: String) { core.beginInput(name) }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) { core.feed(bytes) }

    mutating func endInput() { core.endInput() }

    /// Reads an input through `read` (given the room to fill; returns the count read, 0 at the end, or nil with
    /// errno set) and maps it: `beginInput`, every read, `endInput`. A gzip or zstd input (told by its first bytes,
    /// unless `settings.decompresses` is false) is decompressed here, on the reading thread: records, lines and
    /// offsets are those of the decompressed text, and `bytesIn` counts it. `stopRequested` is asked before each read and
    /// when a read is interrupted (EINTR): true ends the input there (`interrupted`). `afterRead` runs after each
    /// read, with `bytesIn` (progress).
    public mutating func read(
        _ name: String, stopRequested: () -> Bool = { false }, afterRead: (_ bytesIn: Int) -> Void = { _ in },
        from read: (UnsafeMutableRawBufferPointer) -> Int?
    ) -> InputEnd {
        core.read(name, stopRequested: stopRequested, afterRead: afterRead, from: read)
    }

    /// Hands every record of the inputs read so far to the output (with `jobs` > 1: waits for the batches in
    /// flight). A record cut in the middle (by a stop, or an input that failed) is dropped.
    public mutating func drain() { core.finishBatches() }

    /// Hands every record read so far to the output (with `jobs` > 1: waits for the batches in flight), and stops
    /// the worker threads. Call once, after the last input.
    public mutating func finish() { core.finish() }
}

@available(*, unavailable, message: "a RecordPipeline is used from one thread (with jobs > 1 it runs its own)")
extension RecordPipeline: Sendable {}

/// What `RecordPipeline` does (the framing's handler: its record callbacks are not API).
struct PipelineCore: RecordHandler {
    var engine: any RecordEngine
    let settings: RecordPipelineSettings
    let output: any RecordPipelineOutput
    private(set) var isStopped = false
    var bytesIn = 0

    // The input and the record in progress.
    var inputName = ""
    /// The current input's framing (taken out while it calls back into this value).
    var framing: InputFraming?
    var location = RecordLocation(line: 0, byteOffset: 0)
    var recordLength = 0
    var skippingRecord = false
    /// The record's first bytes, kept for the output's `rejected` (pieces are only valid during the call that hands
    /// them on, so they are copied).
    var kept: [UInt8] = []
    var keepLimit: Int { settings.keptRecordBytes }
    /// The current record's one piece so far, still in the chunk being framed. A record that ends in the chunk it
    /// began in is mapped from there as a whole record, not copied piece by piece into the engine; the piece is
    /// handed to the engine only when the record goes on into the next chunk (`handPieceToEngine`).
    private var waitingPiece: UnsafeRawBufferPointer?
    /// The chunk being framed (nil between chunks): only a piece that lies in it may wait, since a piece from
    /// anywhere else (the framer's own few held bytes) is gone when the call that handed it on returns.
    private var framedChunk: UnsafeRawBufferPointer?
    /// The current record's bytes go to the engine piece by piece (`beginRecord` was called).
    var recordInEngine = false
    var readBuffer: [UInt8] = []

    /// With more than one job: the batches and the workers (nil: every record is mapped by `engine`, here).
    /// `engine` still maps the records too long for a batch.
    var parallel: ParallelMapping?
    /// The NDJSON record in progress goes into the batch being cut, not through `engine`.
    var batching = false
    /// Records are mapped here by `engine` even with workers (the lines of a file read in ranges that no range
    /// holds: see RecordPipeline+FileRanges.swift).
    var mapsHere = false
    /// Inputs read in ranges by the workers so far (`RecordPipeline.read(_:fileDescriptor:)`), and the ranges.
    var rangedInputs = 0
    var rangesRead = 0
    /// Makes a worker's engine (nil: one thread maps everything).
    let makeEngine: (@Sendable () -> any RecordEngine)?
    /// Files mapped ahead on threads of their own (`RecordPipeline.readAhead(paths:stopRequested:)`), and the next
    /// one to write.
    var readAhead: ReadAhead?
    var readAheadNext = 0
    /// Told `bytesIn` after each read, before its text is framed (a read-ahead worker's recording output).
    var beforeFraming: ((Int) -> Void)?

    init(engine: any RecordEngine, settings: RecordPipelineSettings, output: any RecordPipelineOutput,
         makeEngine: (@Sendable () -> any RecordEngine)?) {
        self.engine = engine
        self.settings = settings
        self.output = output
        self.makeEngine = makeEngine
        self.framing = InputFraming(settings.framing)
        if settings.jobs > 1, let makeEngine {
            do throws(ThreadStartError) {
                let preparer = output.mappedRecordsPreparer
                parallel = try ParallelMapping(jobs: settings.jobs, batchBytes: settings.batchBytes) {
                    var engine = makeEngine()
                    return { batch in
                        batch.map(with: &engine)
                        if let preparer { batch.prepare(with: preparer) }
                    }
                }
            } catch {
                threadStartError = error.code
            }
        }
    }

    private(set) var threadStartError: Int32?

    // MARK: Inputs

    mutating func beginInput(_ name: String) {
        inputName = name
        framing = InputFraming(settings.framing)
    }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !isStopped else { return }
        if let parallel {
            var rest = bytes
            while !rest.isEmpty && !isStopped {
                let chunk = parallel.nextChunk()
                let n = chunk.fill { room in
                    let n = min(room.count, rest.count)
                    room.baseAddress!.copyMemory(from: rest.baseAddress!, byteCount: n)
                    return n
                }!
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
                bytesIn += n
                frame(chunk.bytes)
            }
            return
        }
        bytesIn += bytes.count
        frame(bytes)
    }

    mutating func endInput() {
        guard !isStopped else { return }
        var f = framing.take()!
        f.finish(into: &self)
        framing = f
        submitBatch()  // a batch holds the records of one input
    }

    mutating func read(
        _ name: String, stopRequested: () -> Bool, afterRead: (_ bytesIn: Int) -> Void, decodingAheadFrom fd: Int32? = nil,
        from read: (UnsafeMutableRawBufferPointer) -> Int?
    ) -> InputEnd {
        beginInput(name)
        if parallel == nil && readBuffer.isEmpty { readBuffer = [UInt8](repeating: 0, count: RecordPipelineSettings.readBytes) }
        var buffer = readBuffer
        readBuffer = []
        defer { readBuffer = buffer }
        var decoding = InputDecoding(detect: settings.decompresses, inflater: settings.inflater)
        defer { decoding.release() }
        // Once the first read has told a compressed input, the rest is decompressed on a thread of its own.
        var ahead: DecodingAhead?
        defer { ahead?.stop() }
        // A regular file whose format states where its frames end (BGZF, zstd of many frames) is decompressed by
        // as many threads as there are jobs.
        var split: ParallelDecoding?
        defer { split?.stop() }
        var firstRead = fd != nil && settings.decompressesAhead
        let jobs = parallel == nil ? 1 : settings.jobs
        func decode(into room: UnsafeMutableRawBufferPointer) -> DecodedRead {
            if let split { return split.read(into: room, stopRequested: stopRequested) }
            if let ahead { return ahead.read(into: room, stopRequested: stopRequested) }
            if firstRead && settings.decompresses,
               let started = ParallelDecoding.start(fd: fd!, roomBytes: room.count, threads: jobs, inflater: settings.inflater) {
                firstRead = false
                split = started
                return started.read(into: room, stopRequested: stopRequested)
            }
            let result = decoding.read(into: room, from: read)
            if firstRead {
                firstRead = false
                if decoding.compression != nil, case .bytes = result {
                    ahead = DecodingAhead.start(&decoding, fd: fd!, roomBytes: room.count)
                }
            }
            return result
        }
        while !isStopped {
            if stopRequested() {
                finishBatches()  // the whole records read so far are mapped and handed on
                return isStopped ? .stopped : .interrupted
            }
            // With workers, the bytes go into a chunk that the batches point into; else into the read buffer, or
            // (decompressing ahead) they are framed where the decompressing thread put them.
            var chunk: InputChunk?
            var result = DecodedRead.end
            var lent: UnsafeMutableRawBufferPointer?
            if parallel != nil, let split, let (r, c) = split.lend(stopRequested: stopRequested) {
                (result, chunk) = (r, c)  // decompressed elsewhere: framed where it lies
            } else if let next = parallel?.nextChunk() {
                chunk = next
                _ = next.fill { room in
                    result = decode(into: room)
                    if case .bytes(let n) = result { return n }
                    return nil
                }
            } else if let ahead {
                (result, lent) = ahead.take(stopRequested: stopRequested)
            } else {
                result = buffer.withUnsafeMutableBytes { decode(into: $0) }
            }
            defer { if let lent { ahead!.recycle(lent) } }
            let n: Int
            switch result {
            case .bytes(let count):
                n = count
            case .end:
                endInput()
                return isStopped ? .stopped : .ended
            case .failed(let code):
                if stopRequested() { continue }
                finishBatches()
                return isStopped ? .stopped : .failed(errno: code)
            case .corrupt(let error):
                finishBatches()
                return isStopped ? .stopped : .corrupt(error)
            case .unsupportedEncoding(let error):
                finishBatches()
                return isStopped ? .stopped : .unsupportedEncoding(error)
            }
            bytesIn += n
            beforeFraming?(bytesIn)
            if let chunk {
                frame(chunk.bytes)
            } else if let lent {
                frame(UnsafeRawBufferPointer(rebasing: lent[..<n]))  // (framing keeps no pointer into it afterwards)
            } else {
                buffer.withUnsafeBytes { frame(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            afterRead(bytesIn)
        }
        return .stopped
    }

    /// Cuts `bytes` into records with the input's framing, which calls back into this value.
    mutating func frame(_ bytes: UnsafeRawBufferPointer) {
        var f = framing.take()!
        f.feed(bytes, into: &self)
        framing = f
    }

    mutating func finish() {
        finishBatches()
        parallel?.shutdown()
        parallel = nil
        readAhead?.shutdown()
        readAhead = nil
    }

    // MARK: Records in pieces (NDJSON)

    mutating func recordBegins(at location: RecordLocation) {
        skippingRecord = isStopped
        guard !skippingRecord else { return }
        self.location = location
        recordLength = 0
        waitingPiece = nil
        recordInEngine = false
        if let parallel, !mapsHere {
            batching = true
            parallel.current.beginRecord()
            return
        }
        kept.removeAll(keepingCapacity: kept.capacity <= 1 << 20)
    }

    mutating func chunkBegins(_ chunk: UnsafeRawBufferPointer) {
        framedChunk = chunk
    }

    mutating func chunkEnds() {
        framedChunk = nil
        if waitingPiece != nil { handPieceToEngine() }
    }

    /// Whether `piece` lies in the chunk being framed.
    private func inFramedChunk(_ piece: UnsafeRawBufferPointer) -> Bool {
        guard let chunk = framedChunk, let start = chunk.baseAddress, let at = piece.baseAddress else { return false }
        return at >= start && at + piece.count <= start + chunk.count
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
        if !recordInEngine && waitingPiece == nil && inFramedChunk(bytes) {
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
            parallel!.current.endRecord(at: location, bytesIn: bytesIn)
            if parallel!.currentIsFull { submitBatch() }
            return
        }
        let mark = output.mappedRecordsCount
        if !recordInEngine, let piece = waitingPiece {
            // The whole record is in the chunk being framed.
            waitingPiece = nil
            let outcome = engine.map(record: piece, into: &output.mappedRecords)
            handle(outcome, mark: mark, record: UnsafeRawBufferPointer(rebasing: piece.prefix(max(keepLimit, 0))),
                   input: inputName, location: location, totalBytes: recordLength)
            return
        }
        handPieceToEngine()
        let outcome = engine.endRecord(into: &output.mappedRecords)
        let k = kept
        k.withUnsafeBytes { handle(outcome, mark: mark, record: $0, input: inputName, location: location, totalBytes: recordLength) }
    }

    // MARK: Whole records (array, concat, seq)

    mutating func wholeRecord(_ bytes: UnsafeRawBufferPointer, at location: RecordLocation, framingError: JSONSyntaxError?) {
        guard !isStopped else { return }
        if let parallel {
            if bytes.count <= parallel.longRecordBytes {
                parallel.addRecord(bytes, at: location, bytesIn: bytesIn, framingError: framingError)
                if parallel.currentIsFull { submitBatch() }
                return
            }
            finishBatches()  // a long record is mapped here, after the records before it
            guard !isStopped else { return }
        }
        self.location = location
        recordLength = bytes.count
        let mark = output.mappedRecordsCount
        let outcome = framingError.map { RecordOutcome.rejected(.syntax($0)) } ?? engine.map(record: bytes, into: &output.mappedRecords)
        handle(outcome, mark: mark, record: UnsafeRawBufferPointer(rebasing: bytes.prefix(max(keepLimit, 0))), input: inputName,
               location: location, totalBytes: recordLength)
    }

    // MARK: Outcomes

    /// Hands one record to the output: a mapped record's bytes (which follow `mark` in `mappedRecords`) get their
    /// newline (an exploded record's last has; it gave none: nothing); a rejected record's are taken back out. `record` is the record's start (`keepLimit` bytes of it),
    /// read only when the record is rejected; `totalBytes` its length.
    mutating func handle(_ outcome: RecordOutcome, mark: Int, record: UnsafeRawBufferPointer, input inputName: String,
                         location: RecordLocation, totalBytes recordLength: Int) {
        let goesOn: Bool
        switch outcome {
        case .mapped(let warnings, let records):
            if records > 0 { output.mappedRecords.writeRaw(0x0A) }
            goesOn = output.mapped(input: inputName, location: location, warnings: warnings, records: records)
        case .rejected(let failure):
            if output.mappedRecordsCount > mark { output.mappedRecords.bytes.removeSubrange(mark...) }
            goesOn = output.rejected(input: inputName, location: location, failure: failure, record: record, totalBytes: recordLength)
        case .filtered:
            goesOn = output.filtered(input: inputName, location: location)
        }
        if !goesOn { isStopped = true }
    }

    /// `handle(.mapped(warnings: [], records: 1), …)` for a record whose line (`line`, without its newline) is not
    /// in the output's buffer yet: the line and its newline appended in one access to the buffer.
    mutating func handMappedLine(_ line: UnsafeRawBufferPointer, input inputName: String, location: RecordLocation) {
        Self.appendLine(line, to: &output.mappedRecords)
        if !output.mapped(input: inputName, location: location, warnings: [], records: 1) { isStopped = true }
    }

    private static func appendLine(_ line: UnsafeRawBufferPointer, to writer: inout JSONWriter) {
        writer.writeRaw(line)
        writer.writeRaw(0x0A)
    }
}
