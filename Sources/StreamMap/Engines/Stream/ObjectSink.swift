/// The terminal of a field's source path: marks the field found and hands the value to its sink.
final class FieldInput: EventConsumer {
    let sink: ValueSink
    @exclusivity(unchecked) private(set) var found = false
    init(_ sink: ValueSink) { self.sink = sink }
    override func start(_ e: JSONEvent) throws -> Bool {
        found = true
        return try sink.start(e)
    }
    override func next(_ e: JSONEvent) throws -> Bool { try sink.next(e) }
    override func resetFound() { found = false }
}

/// `object(mapping)`, streamed: keys are matched as raw bytes, unread subtrees are skipped without allocating,
/// each field's value is mapped into its own slot as it arrives, and at the end of the object the output is
/// assembled in spec order — reproducing `ObjectMapping.map` rule for rule (README, "Semantics").
final class ObjectSink: ValueSink {
    /// One source path of a field: its input terminal and the path steps after the first key.
    struct Source {
        let path: KeyPath
        let input: FieldInput
        let steps: [PathStep]

        /// The path actually walked (indexes where the walk went through arrays), or the path as keys if absent.
        func walkedPath() -> JSONPath {
            var components: [PathComponent] = [.key(path.steps[0])]
            for (i, step) in path.steps.dropFirst().enumerated() {
                if input.found, steps[i].viaArray, let index = KeyPath.arrayIndex(step) {
                    components.append(.index(index))
                } else {
                    components.append(.key(step))
                }
            }
            return JSONPath(components)
        }
    }

    struct FieldPlan {
        let field: ObjectMapping.Field
        let sources: [Source]
        /// The sink whose result the field writes: the streaming sink of a single source, or a sink that
        /// evaluates the field's mapper on the sources' captured values.
        let result: ValueSink
        let destinationPaths: [JSONPath]
        /// Output slots, one per destination.
        let slots: [Int]
        var parts: [JSONWriter]
    }

    /// A node of the destination tree: a key (pre-escaped, with its colon) and either a slot or children.
    struct DestinationNode {
        let keyBytes: [UInt8]
        var slot: Int?
        var children: [Int] = []
    }

    struct Route {
        let key: [UInt8]
        let consumer: EventConsumer
    }

    @exclusivity(unchecked) private var fields: [FieldPlan]
    private let routes: [Route]
    private let routeByHash: [UInt64: [Int]]
    private let keepUnmapped: Bool
    private let keyStyle: KeyStyle?
    private let passThroughSink: ValueSink?
    private let reserved: Set<ByteKey>
    private var nodes: [DestinationNode]
    /// Per record: whether a slot has a value, and where its bytes are.
    @exclusivity(unchecked) private var slotFilled: [Bool]
    private var slotSource: [(field: Int, part: Int?)]
    @exclusivity(unchecked) private var opened: [Bool]
    @exclusivity(unchecked) private var order: [[Int]]
    private let slotPaths: [[Int]]

    // Per-object streaming state.
    @exclusivity(unchecked) private var skipping = false
    @exclusivity(unchecked) private var current: EventConsumer?
    @exclusivity(unchecked) private var currentPassThroughKey: String?
    private let skipper = Skipper()
    private var passThrough: [(key: String, output: [UInt8], errors: [MapError], kind: ResultKind)] = []
    private var passThroughIndex: [ByteKey: Int] = [:]

    /// Compiles a streamable object mapping, or returns nil when its destinations repeat or nest in each other
    /// (then the materializing base sink gives the tree's exact behaviour, write errors included).
    init?(_ mapper: Mapper, mapping: ObjectMapping, compile: (Mapper) -> ValueSink) {
        var allDestinations: [[String]] = []
        for f in mapping.fields { allDestinations += f.destinations.map(\.steps) }
        for (i, a) in allDestinations.enumerated() {
            for b in allDestinations[(i + 1)...] where KeyPath.overlaps(a, b) { return nil }
        }

        var plans: [FieldPlan] = []
        var consumersByKey: [(key: [UInt8], consumers: [EventConsumer])] = []
        var nodes = [DestinationNode(keyBytes: [], slot: nil)]
        var slotSource: [(field: Int, part: Int?)] = []
        for (fi, field) in mapping.fields.enumerated() {
            let single = field.sources.count == 1 && field.destinations.count == 1
            let resultSink: ValueSink
            if single {
                resultSink = compile(field.mapper)
            } else {
                resultSink = ValueSink(field.mapper)
                resultSink.keepsValue = true
            }
            var sources: [Source] = []
            for path in field.sources {
                let sink: ValueSink
                if field.sources.count == 1 {
                    sink = resultSink
                } else {
                    sink = ValueSink(.identity)
                    sink.keepsValue = true
                }
                let input = FieldInput(sink)
                var target: EventConsumer = input
                var steps: [PathStep] = []
                for step in path.steps.dropFirst().reversed() {
                    let s = PathStep(key: step, target: target)
                    steps.insert(s, at: 0)
                    target = s
                }
                sources.append(Source(path: path, input: input, steps: steps))
                let key = Array(path.steps[0].utf8)
                if let i = consumersByKey.firstIndex(where: { $0.key == key }) {
                    consumersByKey[i].consumers.append(target)
                } else {
                    consumersByKey.append((key, [target]))
                }
            }
            var slots: [Int] = []
            for (pi, destination) in field.destinations.enumerated() {
                let slot = slotSource.count
                slotSource.append((fi, field.destinations.count == 1 ? nil : pi))
                slots.append(slot)
                var node = 0
                for (si, step) in destination.steps.enumerated() {
                    var w = JSONWriter()
                    w.writeString(step)
                    w.writeRaw(UInt8(ascii: ":"))
                    if let existing = nodes[node].children.first(where: { nodes[$0].keyBytes == w.bytes }) {
                        node = existing
                    } else {
                        nodes.append(DestinationNode(keyBytes: w.bytes, slot: nil))
                        nodes[node].children.append(nodes.count - 1)
                        node = nodes.count - 1
                    }
                    if si == destination.steps.count - 1 { nodes[node].slot = slot }
                }
            }
            plans.append(FieldPlan(
                field: field, sources: sources, result: resultSink,
                destinationPaths: field.destinations.map(\.destinationPath), slots: slots,
                parts: Array(repeating: JSONWriter(), count: field.destinations.count)))
        }
        var routes: [Route] = []
        var byHash: [UInt64: [Int]] = [:]
        for (key, consumers) in consumersByKey {
            byHash[Self.hash(key), default: []].append(routes.count)
            routes.append(Route(key: key, consumer: consumers.count == 1 ? consumers[0] : FanOut(consumers)))
        }
        self.fields = plans
        self.routes = routes
        self.routeByHash = byHash
        self.nodes = nodes
        self.slotSource = slotSource
        self.slotFilled = Array(repeating: false, count: slotSource.count)
        self.opened = Array(repeating: false, count: nodes.count)
        self.slotPaths = Self.slotPaths(nodes: nodes, slotCount: slotSource.count)
        self.order = Array(repeating: [], count: nodes.count)
        switch mapping.unmapped {
        case .drop:
            keepUnmapped = false
            keyStyle = nil
            passThroughSink = nil
        case .keep(let style, let values):
            keepUnmapped = true
            keyStyle = style
            passThroughSink = values.map(compile) ?? CopySink(.identity, allowed: nil)
        }
        reserved = mapping.reservedDestinationKeys
        super.init(mapper)
    }

    @inline(__always)
    static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    private func route(for key: UnsafeRawBufferPointer) -> EventConsumer? {
        if routes.count <= 8 {
            for r in routes where key.elementsEqual(r.key) { return r.consumer }
            return nil
        }
        guard let candidates = routeByHash[Self.hash(key)] else { return nil }
        for i in candidates where key.elementsEqual(routes[i].key) { return routes[i].consumer }
        return nil
    }

    override func startContainer(_ e: JSONEvent) throws -> Bool {
        if case .startArray = e {
            setResult(.failure(.typeMismatch(expected: "object", found: .array([]))))
            skipping = true
            return try skipper.start(e)
        }
        skipping = false
        pendingConsumer = nil
        currentPassThroughKey = nil
        current = nil
        for r in routes { r.consumer.resetFound() }
        passThrough.removeAll(keepingCapacity: true)
        passThroughIndex.removeAll(keepingCapacity: true)
        return false
    }

    override func nextInContainer(_ e: JSONEvent) throws -> Bool {
        if skipping { return try skipper.next(e) }
        if let c = current {
            if try c.next(e) { valueDone() }
            return false
        }
        if let c = pendingConsumer {
            // The first event of a member's value.
            pendingConsumer = nil
            if try c.start(e) { valueDone() } else { current = c }
            return false
        }
        switch e {
        case .key(let k):
            if let r = route(for: k) {
                r.resetFound()
                pendingConsumer = r
            } else if keepUnmapped {
                currentPassThroughKey = try JSONTreeBuilder.makeString(k)
                pendingConsumer = passThroughSink
            } else {
                pendingConsumer = skipper
            }
            return false
        default:
            finish()  // endObject
            return true
        }
    }

    /// The consumer of the member whose key just arrived.
    @exclusivity(unchecked) private var pendingConsumer: EventConsumer?

    /// A member's value has completed; a pass-through value is stored now (its sink is reused for the next key).
    private func valueDone() {
        current = nil
        guard let key = currentPassThroughKey, let sink = passThroughSink else { return }
        currentPassThroughKey = nil
        let entry = (key: key, output: sink.output.bytes, errors: sink.errors, kind: sink.kind)
        if let i = passThroughIndex[ByteKey(key)] {
            passThrough[i] = entry
        } else {
            passThroughIndex[ByteKey(key)] = passThrough.count
            passThrough.append(entry)
        }
    }

    // MARK: Assembly at the end of the object

    private func finish() {
        var errs: [MapError] = []
        for s in slotFilled.indices { slotFilled[s] = false }
        for fi in fields.indices {
            let plan = fields[fi]
            let sourcePaths: [JSONPath]
            if plan.sources.count == 1 {
                if !plan.sources[0].input.found { plan.result.resolveAbsent() }
                sourcePaths = [plan.sources[0].walkedPath()]
            } else {
                var values: [JSONValue] = []
                var complete = true
                for s in plan.sources {
                    if s.input.found, let v = s.input.sink.value { values.append(v) } else { complete = false }
                }
                sourcePaths = plan.sources.map { $0.walkedPath() }
                plan.result.clear()
                plan.result.setResult(plan.field.mapper.map(complete ? .array(values) : nil))
            }
            let r = plan.result
            for var e in r.errors {
                e.sourcePath = ObjectMapping.attach(e.sourcePath, to: sourcePaths)
                e.destinationPath = ObjectMapping.attach(e.destinationPath, to: plan.destinationPaths)
                errs.append(e)
            }
            guard !r.isFatal, r.kind != .absent else { continue }
            if plan.slots.count == 1 {
                slotFilled[plan.slots[0]] = true
                continue
            }
            guard case .array(let parts)? = r.value, parts.count == plan.slots.count else {
                let n = plan.slots.count
                let error = MapError(.write, "expected an array of \(n) values for \(n) destinations, found \(MapError.describe(r.value))")
                errs.append(error.prefixed(source: sourcePaths[0], destination: .root))
                continue
            }
            for (pi, part) in parts.enumerated() {
                fields[fi].parts[pi].removeAll()
                fields[fi].parts[pi].write(part)
                slotFilled[plan.slots[pi]] = true
            }
        }

        // Pass-through keys, in input order (first position, last value).
        var passed: [(key: String, bytes: [UInt8])] = []
        var passedIndex: [ByteKey: Int] = [:]
        for entry in passThrough {
            let outKey = keyStyle?.apply(entry.key) ?? entry.key
            guard !reserved.contains(ByteKey(outKey)) else { continue }
            for e in entry.errors { errs.append(e.prefixed(source: [.key(entry.key)], destination: [.key(outKey)])) }
            guard !entry.errors.contains(where: \.isFatal), entry.kind != .absent else { continue }
            if let i = passedIndex[ByteKey(outKey)] {
                passed[i].bytes = entry.output
            } else {
                passedIndex[ByteKey(outKey)] = passed.count
                passed.append((outKey, entry.output))
            }
        }

        clear()
        errors = errs
        if errs.contains(where: \.isFatal) {
            kind = .absent
            return
        }
        writeObject(passed)
        kind = .value
    }

    private func writeObject(_ passed: [(key: String, bytes: [UInt8])]) {
        for n in nodes.indices {
            opened[n] = false
            order[n].removeAll(keepingCapacity: true)
        }
        // Destinations appear in the order their first filled slot comes in the spec (as the tree inserts them).
        for slot in slotFilled.indices where slotFilled[slot] { open(slot) }
        output.writeRaw(UInt8(ascii: "{"))
        var count = writeChildren(of: 0)
        for (key, bytes) in passed {
            if count > 0 { output.writeRaw(UInt8(ascii: ",")) }
            output.writeString(key)
            output.writeRaw(UInt8(ascii: ":"))
            output.writeRaw(bytes)
            count += 1
        }
        output.writeRaw(UInt8(ascii: "}"))
    }

    /// Opens the path of a slot, top down, so that each node takes its place the first time it is needed.
    private func open(_ slot: Int) {
        var parent = 0
        for n in slotPaths[slot] {
            if !opened[n] {
                opened[n] = true
                order[parent].append(n)
            }
            parent = n
        }
    }

    /// For each slot, the destination nodes from the top down to the slot's own node.
    static func slotPaths(nodes: [DestinationNode], slotCount: Int) -> [[Int]] {
        var parent = [Int?](repeating: nil, count: nodes.count)
        for (i, n) in nodes.enumerated() where i != 0 { for c in n.children { parent[c] = i } }
        var paths = [[Int]](repeating: [], count: slotCount)
        for (i, n) in nodes.enumerated() {
            guard let slot = n.slot else { continue }
            var path: [Int] = []
            var node: Int? = i
            while let x = node {
                path.append(x)
                node = parent[x]
            }
            paths[slot] = path.reversed()
        }
        return paths
    }

    private func writeChildren(of node: Int) -> Int {
        var count = 0
        for child in order[node] {
            if count > 0 { output.writeRaw(UInt8(ascii: ",")) }
            count += 1
            output.writeRaw(nodes[child].keyBytes)
            if let slot = nodes[child].slot {
                let source = slotSource[slot]
                if let part = source.part {
                    output.writeRaw(fields[source.field].parts[part].bytes)
                } else {
                    output.writeRaw(fields[source.field].result.output.bytes)
                }
            } else {
                output.writeRaw(UInt8(ascii: "{"))
                _ = writeChildren(of: child)
                output.writeRaw(UInt8(ascii: "}"))
            }
        }
        return count
    }
}
