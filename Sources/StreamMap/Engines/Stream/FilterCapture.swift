/// The values a `RecordFilter` reads, captured while the record streams past: its paths walked as one tree of
/// prefixes (`SourceTrie`, as a field's source paths are) to a materializing sink per path — only those values are
/// built, never the record's tree. It receives the events of a parse of its own, which skips what the filter does
/// not read (or, for a record fed as it comes, the mapping's events through a `FanOut`), and the filter decides
/// at the end of the record, from the same values `KeyPath.read` finds in the tree engine.
final class FilterCapture {
    let filter: RecordFilter
    /// Receives the record's events.
    let consumer: EventConsumer
    private let inputs: [FieldInput]
    #if STREAMMAP_MUTATIONS
    /// A deliberate bug, for the mutation tests only (`StreamMutation.filterTakesNullForAbsent`).
    private let nullIsAbsent: Bool
    #else
    private var nullIsAbsent: Bool { false }
    #endif

    /// `alone`: the capture receives the events of a parse of its own, so it may skip inside yajl what the filter
    /// does not read; else it shares them (with the mapping, through a `FanOut`) and skips nothing.
    init(_ filter: RecordFilter, skip: ParseSkip, alone: Bool, nullIsAbsent: Bool = false) {
        self.filter = filter
        #if STREAMMAP_MUTATIONS
        self.nullIsAbsent = nullIsAbsent
        #endif
        let trie = SourceTrie()
        var inputs: [FieldInput] = []
        for (i, path) in filter.paths.enumerated() {
            var node = trie
            for step in path.steps { node = node.child(Array(step.utf8)) }
            node.inputs.append(i)
            let sink = ValueSink(.identity)
            sink.keepsValue = true
            sink.writesText = false  // (the filter reads the value, never its text)
            inputs.append(FieldInput(sink))
        }
        self.inputs = inputs
        var terminals = [Bool](repeating: false, count: inputs.count)
        trie.markAlone(alone, &terminals)  // (the inputs keep their values whole: they skip nothing)
        consumer = trie.consumer(inputs: inputs, skip: skip)
    }

    /// Forgets the last record's values (a record that is not an object or an array reaches no path).
    func reset() { for input in inputs { input.resetFound() } }

    /// Whether the record whose events were just received is kept.
    func keeps() -> Bool {
        filter.keeps { i in
            let input = inputs[i]
            guard input.found, let value = input.sink.value else { return nil }
            if nullIsAbsent && value.isNull { return nil }  // (not `? nil :`, whose nil would be JSONValue.null)
            return value
        }
    }
}
