/// The reference engine: bytes → `JSONValue` → mapper → canonical writer.
public struct TreeEngine: RecordEngine, Sendable {
    /// The mapper every record goes through.
    public let mapper: Mapper
    /// Records this filter drops are not mapped (`RecordOutcome.filtered`).
    public let filter: RecordFilter?
    /// Limits for parsing each record (nesting depth); one value per record.
    public var parserOptions: JSONParserOptions
    /// The pieces of the current record (the tree engine needs the whole record anyway).
    private var pending: [UInt8] = []

    /// An engine that maps each record with `mapper` (the records `filter` drops are not mapped).
    public init(mapper: Mapper, filter: RecordFilter? = nil, parserOptions: JSONParserOptions = .init()) {
        self.mapper = mapper
        self.filter = filter
        self.parserOptions = parserOptions
    }

    /// Maps an already-parsed value (unless the filter drops it).
    public func map(value: JSONValue, into writer: inout JSONWriter) -> RecordOutcome {
        map(value: value, deep: false) { output, warnings in
            writer.write(output)
            return .mapped(warnings: warnings)
        }
    }

    public func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        map(record: record) { output, warnings in
            writer.write(output)
            return .mapped(warnings: warnings)
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
