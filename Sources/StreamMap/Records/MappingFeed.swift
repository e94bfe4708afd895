// MappingFeed.swift — the push API: feed chunks of input, get mapped and rejected records back.

/// A record that was mapped.
public struct MappedRecord: Sendable, Equatable, CustomStringConvertible {
    /// Where the input record came from.
    public let location: RecordLocation
    /// The mapped record: compact canonical JSON (the `JSONWriter` form), without a newline.
    public let bytes: [UInt8]
    /// Non-fatal errors reported while mapping.
    public let warnings: [MapError]

    /// A mapped record with its output `bytes` (compact JSON, as the engines write it) and `warnings`.
    public init(location: RecordLocation, bytes: [UInt8], warnings: [MapError] = []) {
        self.location = location
        self.bytes = bytes
        self.warnings = warnings
    }

    /// The mapped record as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The mapped record as a value.
    public func value() throws -> JSONValue { try JSONParser.parse(bytes) }

    /// `line 1, byte 0: {"id":1}`, then each warning: `line 1, byte 0: {"id":1} (warning: /age: …)`.
    public var description: String {
        let notes = warnings.map { $0.description }
        return "\(location): \(text)" + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
    }

}

/// A record that was not mapped.
public struct RejectedRecord: Sendable, Equatable, CustomStringConvertible {
    /// Where the input record came from.
    public let location: RecordLocation
    /// Why it was rejected: not JSON (or a framing error, reported as a syntax failure), or a fatal mapping error.
    public let failure: RecordFailure
    /// The record's input bytes, as framed: the first `MappingFeed.rejectedRecordBytes` (1 MiB) of a longer record,
    /// so that a huge rejected line costs no more memory than a mapped one.
    public let raw: [UInt8]

    /// A rejected record with why and its input bytes (or their first part).
    public init(location: RecordLocation, failure: RecordFailure, raw: [UInt8]) {
        self.location = location
        self.failure = failure
        self.raw = raw
    }

    /// The record's input as text (invalid UTF-8 shown as U+FFFD).
    public var text: String { String(decoding: raw, as: UTF8.self) }

    /// `line 2, byte 8: rejected: /age: expected integer, found string "x"`.
    public var description: String { "\(location): rejected: \(failure)" }
}

/// What became of one input record.
public enum RecordResult: Sendable, Equatable, CustomStringConvertible {
    /// The record was mapped: its output and warnings.
    case mapped(MappedRecord)
    /// The record was rejected: why, and its raw bytes.
    case rejected(RejectedRecord)

    /// The mapped or the rejected record's description.
    public var description: String {
        switch self {
        case .mapped(let r): return r.description
        case .rejected(let r): return r.description
        }
    }

    /// Where the input record came from, mapped or rejected.
    public var location: RecordLocation {
        switch self {
        case .mapped(let r): return r.location
        case .rejected(let r): return r.location
        }
    }
}

/// Records seen so far. Invariant: `recordsIn == recordsOut + recordsFiltered + recordsRejected`.
public struct RecordCounts: Sendable, Equatable {
    /// Records framed from the input (blank lines are not records).
    public var recordsIn = 0
    /// Records written: one per record mapped, or with an explode (`RecordExplosion`) one per element, so that it
    /// may differ from `recordsIn` by more than the rejected and filtered records.
    public var recordsOut = 0
    /// Records rejected: not JSON, a framing error, or a fatal mapping error.
    public var recordsRejected = 0
    /// Valid records the engine's filter (`where`) dropped: no result is given for them.
    public var recordsFiltered = 0

    /// Counts with the given values (zero by default), for comparing with a feed's.
    public init(recordsIn: Int = 0, recordsOut: Int = 0, recordsRejected: Int = 0, recordsFiltered: Int = 0) {
        self.recordsIn = recordsIn
        self.recordsOut = recordsOut
        self.recordsRejected = recordsRejected
        self.recordsFiltered = recordsFiltered
    }
}

/// Maps a stream pushed in chunks of any size: each call returns the records completed by that chunk, in input order.
///
/// ```swift
/// let feed = MappingFeed(mapper: try Spec(json: specText).mapper)
/// for chunk in chunks {
///     for result in feed.feed(chunk) { ... }
/// }
/// for result in feed.finish() { ... }     // the last record, if it had no terminator
/// ```
///
/// It runs on `RecordPipeline`, as the command line does: records are framed as the command line frames them
/// (see `RecordFramer` for the framings and `auto`), a record inside one chunk is mapped where it lies and one that
/// goes on across chunks streams through the engine in pieces, so a huge record costs constant memory (its mapped
/// result aside). Every framed record ends up in exactly one result, mapped or rejected — or, when the engine's filter
/// (`where`) drops it, in none (it is counted in `counts.recordsFiltered`). A record that is a framing
/// error (with `array` framing: data after the array, or the tail of an array that is never closed) is rejected
/// with a `.syntax` failure without reaching the engine. The results do not depend on how the input is chunked.
/// Not thread-safe: use one feed from one task at a time.
public final class MappingFeed<Engine: RecordEngine> {
    private var pipeline: RecordPipeline
    private let results: ResultCollector
    private var finished = false

    /// How many bytes of a rejected record its `raw` keeps (1 MiB).
    public static var rejectedRecordBytes: Int { 1 << 20 }

    /// Records seen so far; `recordsIn == recordsOut + recordsFiltered + recordsRejected` between calls.
    public var counts: RecordCounts { results.counts }

    /// A feed that maps each record with `engine` (a ``StreamEngine`` or ``TreeEngine``; the feed owns its copy)
    /// and cuts the input into records with `framing`.
    public init(engine: Engine, framing: Framing = .auto) {
        results = ResultCollector()
        pipeline = RecordPipeline(engine: engine, settings: RecordPipelineSettings(framing: framing, keptRecordBytes: Self.rejectedRecordBytes),
                                  output: results)
        pipeline.beginInput("")
    }

    /// The framing in use (what `auto` chose, once known).
    public var framing: Framing? { pipeline.currentFraming }

    /// Feeds the next chunk; returns the records it completed. Feeding after `finish()` is a precondition failure.
    public func feed(_ chunk: UnsafeRawBufferPointer) -> [RecordResult] {
        precondition(!finished, "MappingFeed.feed called after finish()")
        pipeline.feed(chunk)
        return results.take()
    }

    /// Feeds the next chunk; returns the records it completed. Feeding after `finish()` is a precondition failure.
    public func feed(_ chunk: some Sequence<UInt8>) -> [RecordResult] {
        if let results = chunk.withContiguousStorageIfAvailable({ feed(UnsafeRawBufferPointer($0)) }) {
            return results
        }
        return Array(chunk).withUnsafeBytes { feed($0) }
    }

    /// Feeds the next chunk as text, its UTF-8 bytes (`feed("{\"id\":1}\n")`); returns the records it completed. A
    /// record may be split anywhere between two calls, as with bytes. Feeding after `finish()` is a precondition
    /// failure.
    public func feed(_ text: String) -> [RecordResult] {
        var text = text
        return text.withUTF8 { feed(UnsafeRawBufferPointer($0)) }
    }

    /// Ends the input; returns the records it completed (a last record without its terminator). Call it once.
    public func finish() -> [RecordResult] {
        precondition(!finished, "MappingFeed.finish called twice")
        finished = true
        pipeline.endInput()
        pipeline.finish()
        return results.take()
    }
}

@available(*, unavailable, message: "a MappingFeed is used from one task at a time")
extension MappingFeed: Sendable {}

/// `MappingFeed`'s end of the pipeline: each record becomes a result as it comes, kept for `take()` — or handed
/// to `deliver` at once when it is set (`Mapper.mapRecords(inFile:)`: a whole file is never held).
final class ResultCollector: RecordPipelineOutput {
    var mappedRecords = JSONWriter(reservingCapacity: 4096)
    private var results: [RecordResult] = []
    private(set) var counts = RecordCounts()
    /// Takes each result instead of `results`; false stops the run.
    var deliver: ((RecordResult) -> Bool)?

    func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
        counts.recordsIn += 1
        counts.recordsOut += records
        defer { mappedRecords.removeAll(keepingCapacity: mappedRecords.bytes.capacity <= 1 << 20) }
        guard records != 1 else {
            let line = mappedRecords.bytes.withUnsafeBufferPointer { Array($0.dropLast()) }  // without the newline
            return add(.mapped(MappedRecord(location: location, bytes: line, warnings: warnings)))
        }
        // An exploded record: one result per line, each with the input record's location; its warnings on the first.
        let lines = mappedRecords.bytes.dropLast().split(separator: 0x0A, omittingEmptySubsequences: false)
        for (n, line) in lines.prefix(records).enumerated() {
            guard add(.mapped(MappedRecord(location: location, bytes: Array(line), warnings: n == 0 ? warnings : []))) else { return false }
        }
        return true
    }

    func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                  totalBytes: Int) -> Bool {
        counts.recordsIn += 1
        counts.recordsRejected += 1
        return add(.rejected(RejectedRecord(location: location, failure: failure, raw: Array(record))))
    }

    private func add(_ result: RecordResult) -> Bool {
        if let deliver { return deliver(result) }
        results.append(result)
        return true
    }

    func filtered(input: String, location: RecordLocation) -> Bool {
        counts.recordsIn += 1
        counts.recordsFiltered += 1
        return true
    }

    /// The results since the last call.
    func take() -> [RecordResult] {
        defer { results = [] }
        return results
    }
}

extension MappingFeed where Engine == StreamEngine {
    /// A feed that maps with the stream engine (use `init(engine: TreeEngine(mapper:))` for the tree engine); with
    /// a `filter` (a spec's `filter`), the records it drops give no result; with an `explode` (a spec's `explode`),
    /// a record gives a result per element, each with the record's location.
    public convenience init(mapper: Mapper, filter: RecordFilter? = nil, explode: RecordExplosion? = nil, framing: Framing = .auto) {
        self.init(engine: StreamEngine(mapper: mapper, filter: filter, explode: explode), framing: framing)
    }
}
