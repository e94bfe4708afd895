/// The reference engine: bytes → `JSONValue` → mapper → canonical writer.
public struct TreeEngine: RecordEngine, Sendable {
    /// The mapper every record goes through.
    public let mapper: Mapper
    /// Records this filter drops are not mapped (`RecordOutcome.filtered`).
    public let filter: RecordFilter?
    /// Each mapped record becomes a record per element of this array (`RecordOutcome.mapped(warnings:records:)`).
    public let explode: RecordExplosion?
    /// Limits for parsing each record (nesting depth); one value per record.
    public var parserOptions: JSONParserOptions
    /// The pieces of the current record (the tree engine needs the whole record anyway).
    private var pending: [UInt8] = []

    /// An engine that maps each record with `mapper` (the records `filter` drops are not mapped).
    public init(mapper: Mapper, filter: RecordFilter? = nil, explode: RecordExplosion? = nil, parserOptions: JSONParserOptions = .init()) {
        self.mapper = mapper
        self.filter = filter
        self.explode = explode
        self.parserOptions = parserOptions
    }

    /// Maps an already-parsed value (unless the filter drops it).
    public func map(value: JSONValue, into writer: inout JSONWriter) -> RecordOutcome {
        map(value: value, deep: false) { output, warnings in write(output, warnings, into: &writer) }
    }

    public func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        map(record: record) { output, warnings in write(output, warnings, into: &writer) }
    }

    /// Writes a mapped record — exploded, when so made: each of its records, separated by newlines.
    private func write(_ output: JSONValue, _ warnings: [MapError], into writer: inout JSONWriter) -> RecordOutcome {
        guard let explode else {
            writer.write(output)
            return .mapped(warnings: warnings)
        }
        switch explode.explode(output) {
        case .failure(let error):
            return .rejected(.mapping(warnings + [error]))
        case .success(let records):
            for (i, record) in records.enumerated() {
                if i > 0 { writer.writeRaw(0x0A) }
                writer.write(record)
            }
            return .mapped(warnings: warnings, records: records.count)
        }
    }

    /// Parses and maps a record, then hands the mapped value and the warnings to `use`, which says what became of
    /// the record (the writer's place: a model feed decodes the value instead of writing it).
    func map(record: UnsafeRawBufferPointer, then use: (JSONValue, [MapError]) -> RecordOutcome) -> RecordOutcome {
        let value: JSONValue
        let depth: Int
        do {
            (value, depth) = try JSONParser.parseWithDepth(record, options: parserOptions)
        } catch {
            return .rejected(.syntax(error))
        }
        let deep = depth > JSONValue.iterativeReleaseDepth
        let outcome = map(value: value, deep: deep, then: use)
        if deep { JSONValue.release(consume value) }
        return outcome
    }

    private func map(value: JSONValue, deep: Bool, then use: (JSONValue, [MapError]) -> RecordOutcome) -> RecordOutcome {
        if let filter, !filter.keeps(value) { return .filtered }
        var result = mapper.map(value)
        if result.isFatal { return .rejected(.mapping(result.errors)) }
        guard let output = result.takeValue() else { return .rejected(.noOutput(warnings: result.errors)) }
        let outcome = use(output, result.errors)
        if deep { JSONValue.release(consume output) }
        return outcome
    }

    public mutating func beginRecord() { pending.removeAll(keepingCapacity: true) }
    public mutating func continueRecord(_ part: UnsafeRawBufferPointer) { pending.append(contentsOf: part) }
    public mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome {
        let record = pending
        pending.removeAll(keepingCapacity: true)
        return record.withUnsafeBytes { map(record: $0, into: &writer) }
    }
}
