/// The reference engine: bytes → `JSONValue` → mapper → canonical writer.
public struct TreeEngine: RecordEngine, Sendable {
    public let mapper: Mapper
    public var parserOptions: JSONParserOptions
    /// The pieces of the current record (the tree engine needs the whole record anyway).
    private var pending: [UInt8] = []

    public init(mapper: Mapper, parserOptions: JSONParserOptions = .init()) {
        self.mapper = mapper
        self.parserOptions = parserOptions
    }

    /// Maps an already-parsed value.
    public func map(value: JSONValue, into writer: inout JSONWriter) -> RecordOutcome {
        map(value: value, into: &writer, deep: false)
    }

    public func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        let value: JSONValue
        let depth: Int
        do {
            (value, depth) = try JSONParser.parseWithDepth(record, options: parserOptions)
        } catch {
            return .rejected(.syntax(error))
        }
        let deep = depth > JSONValue.iterativeReleaseDepth
        let outcome = map(value: value, into: &writer, deep: deep)
        if deep { JSONValue.release(consume value) }
        return outcome
    }

    private func map(value: JSONValue, into writer: inout JSONWriter, deep: Bool) -> RecordOutcome {
        var result = mapper.map(value)
        if result.isFatal { return .rejected(.mapping(result.errors)) }
        guard let output = result.takeValue() else { return .rejected(.noOutput(warnings: result.errors)) }
        writer.write(output)
        if deep { JSONValue.release(consume output) }
        return .mapped(warnings: result.errors)
    }

    public mutating func beginRecord() { pending.removeAll(keepingCapacity: true) }
    public mutating func continueRecord(_ part: UnsafeRawBufferPointer) { pending.append(contentsOf: part) }
    public mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome {
        let record = pending
        pending.removeAll(keepingCapacity: true)
        return record.withUnsafeBytes { map(record: $0, into: &writer) }
    }
}
