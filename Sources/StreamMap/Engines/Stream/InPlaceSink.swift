/// `"unmapped": "inPlace"` as the record streams: what one-liner checks (`--require`, `--type`, `--default` on
/// their own) map with. The object's events go to three sinks at once: a copy of the object (the identity), its
/// fields mapped as an object that drops every other key (`checks`), and the same fields read as they are
/// (`probe`). When the checks give back exactly what was read — no error, no warning, the same bytes — nothing
/// changes and the result is the copy, streamed. Otherwise (a check fails, a default is added, a value is
/// replaced) the copy is read back and mapped whole by the tree's `ObjectMapping.map`: the same value the tree
/// engine maps, so the same result, errors included.
final class InPlaceSink: ValueSink {
    private let copy: CopySink
    private let checks: ObjectSink
    private let probe: ObjectSink
    private let fanOut: FanOut
    /// A non-object value, or a sink whose value is kept: built whole, as the base sink does.
    private var materializing = false

    init?(_ mapper: Mapper, mapping: ObjectMapping, compiler: StreamCompiler, keepFirstDuplicate: Bool) {
        let checked = ObjectMapping(fields: mapping.fields, unmapped: .drop)
        let read = ObjectMapping(
            fields: mapping.fields.map { ObjectMapping.Field(sources: $0.sources, destinations: $0.destinations, mapper: .identity) },
            unmapped: .drop)
        guard let checks = ObjectSink(Mapper(.object(checked)), mapping: checked, exclusive: false, compiler: compiler),
              let probe = ObjectSink(Mapper(.object(read)), mapping: read, exclusive: false, compiler: compiler)
        else { return nil }
        self.checks = checks
        self.probe = probe
        copy = CopySink(.identity, allowed: nil, keepFirstDuplicate: keepFirstDuplicate)
        fanOut = FanOut([copy, checks, probe])
        super.init(mapper)
        materializedBecause = "kept in place (\"unmapped\": \"inPlace\"): copied as it streams, built whole only when a field changes it"
    }

    override func startContainer(_ e: JSONEvent) throws -> Bool {
        guard case .startObject = e, !keepsValue else {
            materializing = true
            return try super.startContainer(e)
        }
        materializing = false
        return try finishIfDone(fanOut.start(e))
    }

    override func nextInContainer(_ e: JSONEvent) throws -> Bool {
        if materializing { return try super.nextInContainer(e) }
        return try finishIfDone(fanOut.next(e))
    }

    private func finishIfDone(_ done: Bool) throws -> Bool {
        guard done else { return false }
        let unchanged = checks.errors.isEmpty && probe.errors.isEmpty && checks.kind == probe.kind
            && checks.output.bytes.elementsEqual(probe.output.bytes)
        if unchanged {
            adopt(copy)  // the object as it came
            return true
        }
        let value = try JSONParser.parse(copy.output.bytes, options: JSONParserOptions(maximumDepth: .max))
        setResult(mapper.map(value))
        JSONValue.release(consume value)
        return true
    }
}
