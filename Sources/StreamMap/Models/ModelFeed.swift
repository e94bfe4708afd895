// ModelFeed.swift — input bytes to Decodable models in one pass: each record is parsed once, mapped as a tree and
// decoded from that tree, with no mapped JSON written and parsed again (what `MappedRecord.decode` does).

/// A record decoded into a model.
public struct DecodedRecord<Model> {
    /// Where the input record came from.
    public let location: RecordLocation
    public let model: Model
    /// Non-fatal errors reported while mapping.
    public let warnings: [MapError]
}

extension DecodedRecord: Sendable where Model: Sendable {}

/// What became of one input record: a model, or the reason there is none.
public enum DecodedResult<Model> {
    case decoded(DecodedRecord<Model>)
    /// Not JSON, a fatal mapping error, or a mapped record that does not decode as the model (a `type` or
    /// `required` error at the path of the mapped record that failed).
    case rejected(RejectedRecord)

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
/// `MappedRecord.decode(Model.self)` for every record, in one pass.
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

    public init(mapper: Mapper, as model: Model.Type = Model.self, framing: Framing = .auto,
                decoder: JSONValueDecoder = .init()) {
        models = DecodedModels()
        feed = MappingFeed(engine: ModelEngine(mapper: mapper, decoder: decoder, models: models), framing: framing)
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

/// The tree engine with a decoder where its writer was: a mapped record becomes a model (nothing is written).
struct ModelEngine<Model: Decodable>: RecordEngine {
    let tree: TreeEngine
    let decoder: JSONValueDecoder
    let models: DecodedModels<Model>
    private var pending: [UInt8] = []

    init(mapper: Mapper, decoder: JSONValueDecoder, models: DecodedModels<Model>) {
        tree = TreeEngine(mapper: mapper)
        self.decoder = decoder
        self.models = models
    }

    func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        tree.map(record: record) { mapped, warnings in
            do {
                models.append(try decoder.decode(Model.self, from: mapped))
                return .mapped(warnings: warnings)
            } catch {
                return .rejected(.mapping([MapError.decoding(error, expected: Model.self, in: mapped, atDestination: true)]
                                          + warnings))
            }
        }
    }

    mutating func beginRecord() { pending.removeAll(keepingCapacity: true) }
    mutating func continueRecord(_ part: UnsafeRawBufferPointer) { pending.append(contentsOf: part) }
    mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome {
        let record = pending
        pending.removeAll(keepingCapacity: true)
        return record.withUnsafeBytes { map(record: $0, into: &writer) }
    }
}
