// ModelFeed.swift — input bytes to Decodable models, the records never handed over as text. With the stream engine
// (the default) the mapped record is decoded where the engine wrote it, in the pipeline's buffer: no copy, no
// `MappedRecord`, and nothing of the input built but what the mapping reads. With the tree engine it is one pass
// — the mapped tree is decoded as it is, no JSON written — but the whole input record is built first, which costs
// more than the small mapped text saves (Benchmarks/decode_models.py: 3× the stream engine's time on tweets).

/// A record decoded into a model.
public struct DecodedRecord<Model> {
    /// Where the input record came from.
    public let location: RecordLocation
    /// The mapped record, decoded.
    public let model: Model
    /// Non-fatal errors reported while mapping.
    public let warnings: [MapError]
}

extension DecodedRecord: Sendable where Model: Sendable {}

/// What became of one input record: a model, or the reason there is none.
public enum DecodedResult<Model> {
    /// The record was mapped and decoded: its model and warnings.
    case decoded(DecodedRecord<Model>)
    /// Not JSON, a fatal mapping error, or a mapped record that does not decode as the model (a `type` or
    /// `required` error at the path of the mapped record that failed).
    case rejected(RejectedRecord)

    /// Where the input record came from, decoded or rejected.
    public var location: RecordLocation {
        switch self {
        case .decoded(let r): return r.location
        case .rejected(let r): return r.location
        }
    }
}

extension DecodedResult: Sendable where Model: Sendable {}

/// Maps a stream pushed in chunks of any size and decodes each mapped record into `Model`, as `MappingFeed` does
/// for JSON output — the same framing, locations, rejects and chunk-independence — with the result of
/// `MappedRecord.decode(Model.self)` for every record, without the records' text in between (see the file's
/// comment for the two engines).
///
/// ```swift
/// let feed = ModelFeed(mapper: person, as: Person.self)
/// for result in feed.feed(chunk) + feed.finish() {
///     if case .decoded(let record) = result { print(record.model.firstName) }
/// }
/// ```
///
/// Not thread-safe: use one feed from one task at a time.
public final class ModelFeed<Model: Decodable> {
    private let feed: MappingFeed<ModelEngine<Model>>
    private let models: DecodedModels<Model>

    /// A feed that maps each record with `mapper` and decodes the result with `decoder`; `engine` picks the stream
    /// engine (the default: each record decoded where it was written) or the tree engine (the mapped tree decoded
    /// as it is). The records `filter` drops (a spec's `where`) give no result and are counted as filtered.
    public init(mapper: Mapper, as model: Model.Type = Model.self, filter: RecordFilter? = nil, framing: Framing = .auto,
                engine: MappingOptions.Engine = .stream, decoder: JSONValueDecoder = .init()) {
        models = DecodedModels()
        feed = MappingFeed(engine: ModelEngine(mapper: mapper, filter: filter, engine: engine, decoder: decoder, models: models),
                           framing: framing)
    }

    /// Records seen so far.
    public var counts: RecordCounts { feed.counts }

    /// Feeds the next chunk; returns the records it completed.
    public func feed(_ chunk: some Sequence<UInt8>) -> [DecodedResult<Model>] { decoded(feed.feed(chunk)) }

    /// Ends the input; returns the records it completed. Call it once.
    public func finish() -> [DecodedResult<Model>] { decoded(feed.finish()) }

    private func decoded(_ results: [RecordResult]) -> [DecodedResult<Model>] {
        var models = self.models.take().makeIterator()
        return results.map { result in
            switch result {
            case .mapped(let r): return .decoded(DecodedRecord(location: r.location, model: models.next()!, warnings: r.warnings))
            case .rejected(let r): return .rejected(r)
            }
        }
    }
}

@available(*, unavailable, message: "a ModelFeed is used from one task at a time")
extension ModelFeed: Sendable {}

/// The models decoded since the feed last took them, in record order (one per mapped record).
final class DecodedModels<Model> {
    private var models: [Model] = []
    func append(_ model: Model) { models.append(model) }
    func take() -> [Model] {
        defer { models = [] }
        return models
    }
}

/// An engine whose mapped records become models: the stream engine's are decoded from the bytes it wrote, which
/// are then taken back out of the writer; the tree engine's from its mapped tree, nothing written.
struct ModelEngine<Model: Decodable>: RecordEngine {
    /// Maps unless `tree` does (unused, it costs nothing: its plan is compiled at its first record). Mutated only
    /// in place: a copy of it shares its compiled plan, which `isKnownUniquelyReferenced` then compiles again.
    private var stream: StreamEngine
    private let tree: TreeEngine?
    let decoder: JSONValueDecoder
    let models: DecodedModels<Model>
    /// The tree engine's pieces of the current record.
    private var pending: [UInt8] = []

    init(mapper: Mapper, filter: RecordFilter?, engine: MappingOptions.Engine, decoder: JSONValueDecoder,
         models: DecodedModels<Model>) {
        stream = StreamEngine(mapper: mapper, filter: filter)
        tree = engine == .tree ? TreeEngine(mapper: mapper, filter: filter) : nil
        self.decoder = decoder
        self.models = models
    }

    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        if let tree {
            return tree.map(record: record) { mapped, warnings in decode(mapped, warnings) }
        }
        let start = writer.bytes.count
        // Mapped first: `decodeWritten(stream.map(…), …)` would borrow `self` (a copy, as `stream` is mutated while
        // the call's arguments are evaluated), and a copy's plan is no longer unique — compiled again per record.
        let outcome = stream.map(record: record, into: &writer)
        return decodeWritten(outcome, from: start, in: &writer)
    }

    mutating func beginRecord() {
        if tree == nil { stream.beginRecord() } else { pending.removeAll(keepingCapacity: true) }
    }

    mutating func continueRecord(_ part: UnsafeRawBufferPointer) {
        if tree == nil { stream.continueRecord(part) } else { pending.append(contentsOf: part) }
    }

    mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome {
        if tree == nil {
            let start = writer.bytes.count
            let outcome = stream.endRecord(into: &writer)
            return decodeWritten(outcome, from: start, in: &writer)
        }
        let record = pending
        pending.removeAll(keepingCapacity: true)
        return record.withUnsafeBytes { map(record: $0, into: &writer) }
    }

    /// Decodes the record the stream engine wrote past `start`, then removes it from the writer.
    private func decodeWritten(_ outcome: RecordOutcome, from start: Int, in writer: inout JSONWriter) -> RecordOutcome {
        guard case .mapped(let warnings, _) = outcome else { return outcome }
        defer { writer.bytes.removeSubrange(start...) }
        let parsed = writer.bytes.withUnsafeBytes { bytes -> Result<JSONValue, JSONSyntaxError> in
            Result { () throws(JSONSyntaxError) in try JSONParser.parse(UnsafeRawBufferPointer(rebasing: bytes[start...])) }
        }
        switch parsed {
        case .success(let mapped): return decode(mapped, warnings)
        case .failure(let e): return .rejected(.syntax(e))  // the engine's own output: not expected
        }
    }

    private func decode(_ mapped: JSONValue, _ warnings: [MapError]) -> RecordOutcome {
        do {
            models.append(try decoder.decode(Model.self, from: mapped))
            return .mapped(warnings: warnings)
        } catch {
            return .rejected(.mapping([MapError.decoding(error, expected: Model.self, in: mapped, atDestination: true)] + warnings))
        }
    }
}
