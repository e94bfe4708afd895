/// The terminal of a field's source path: marks the field found and hands the value to its sink.
final class FieldInput: EventConsumer {
    let sink: ValueSink
    @exclusivity(unchecked) private(set) var found = false
    init(_ sink: ValueSink) { self.sink = sink }
    /// Set when the projection lifts this field's values out (`LiftedStrings`, which the compiled plan keeps alive
    /// for as long as this input: no reference counting per value).
    private unowned(unsafe) var lifts: LiftedStrings?
    override func start(_ e: JSONEvent) throws -> Bool {
        found = true
        if let lifts {
            switch e {
            case .string(let placeholder, _):
                if let raw = lifts.take(placeholder, string: true) { return try sink.startLifted(raw, lifts) }
            case .number(let placeholder):
                if let raw = lifts.take(placeholder, string: false) { return try sink.start(lifts.event(raw)) }
            default: break
            }
        }
        return try sink.start(e)
    }
    override func next(_ e: JSONEvent) throws -> Bool { try sink.next(e) }
    override func resetFound() { found = false }
    override func projectionNode(in builder: inout ProjectionBuilder) -> Int32? { sink.projectionNode(in: &builder) }
    /// A field's input is the whole consumer of its member: it takes the strings lifted out for it.
    override func takesLiftedStrings(from lifts: LiftedStrings?) -> Bool {
        self.lifts = lifts
        return lifts != nil
    }
}

/// `object(mapping)`, streamed: keys are matched as raw bytes, unread subtrees are skipped without allocating,
/// each field's value is mapped into its own slot as it arrives, and at the end of the object the output is
/// assembled in spec order — reproducing `ObjectMapping.map` rule for rule (README, "Semantics").
final class ObjectSink: ValueSink {
    override var handling: StreamHandling { .streamed }
    /// Each field's compiled sink (for a field with several sources or destinations, the one that maps its
    /// gathered value), and the pass-through values' sink: what `explain` reads.
    var fieldSinks: [ValueSink] { fields.map(\.result) }
    var passThroughValues: ValueSink? { passThroughSink }
    /// The operand stack of the computed fields' expressions, its memory kept from record to record.
    private var expressionStack: [ValueExpression.Operand] = []
    /// One source path of a field: its input terminal and, for each step after the first key, the route node and
    /// child that walk it.
    struct Source {
        let path: KeyPath
        let input: FieldInput
        /// (No node where the step is part of a `KeyChain`: never an array index.)
        let hops: [(node: RouteNode?, child: Int)]
        /// The path as keys (what `walkedPath` is unless the walk went through an array), built once.
        let keyPath: JSONPath

        init(path: KeyPath, input: FieldInput, hops: [(node: RouteNode?, child: Int)]) {
            self.path = path
            self.input = input
            self.hops = hops
            keyPath = JSONPath(path.steps.map { .key($0) })
        }

        /// The path actually walked (indexes where the walk went through arrays), or the path as keys if absent.
        func walkedPath() -> JSONPath {
            guard input.found, hops.contains(where: { $0.node?.viaArray[$0.child] == true }) else { return keyPath }
            var components: [PathComponent] = [.key(path.steps[0])]
            for (i, step) in path.steps.dropFirst().enumerated() {
                if hops[i].node?.viaArray[hops[i].child] == true, let index = KeyPath.arrayIndex(step) {
                    components.append(.index(index))
                } else {
                    components.append(.key(step))
                }
            }
            return JSONPath(components)
        }
    }

    /// A field's compiled state (a class: read per record without copying).
    final class FieldPlan {
        let field: ObjectMapping.Field
        /// A computed field's expression: its paths are the sources, gathered, and it is evaluated on them.
        let computed: ValueExpression?
        /// A computed field's `invalid` policy and the mapper its value goes through (read once, not per record).
        let computing: (invalid: FieldPolicy.Action, then: Mapper)?
        var sources: [Source] = []
        /// The sink whose result the field writes: the streaming sink of a single source, or a sink that
        /// evaluates the field's mapper on the sources' captured values.
        let result: ValueSink
        let destinationPaths: [JSONPath]
        /// Output slots, one per destination.
        let slots: [Int]
        @exclusivity(unchecked) var parts: [JSONWriter]

        /// The source paths as keys, when no walk can differ from them (no step after the first is an array
        /// index): then errors need no paths walked per record.
        /// The sources' inputs, for evaluating a computed field without copying a `Source` per path and record
        /// (`sources` keeps them alive).
        private(set) lazy var sourceInputs: [Unmanaged<FieldInput>] = sources.map { Unmanaged.passUnretained($0.input) }

        private(set) lazy var keySourcePaths: [JSONPath]? = {
            if computed != nil { return [.root] }  // (its errors name the paths they are about)
            let keysOnly = sources.allSatisfy { $0.path.steps.dropFirst().allSatisfy { KeyPath.arrayIndex($0) == nil } }
            return keysOnly ? sources.map(\.keyPath) : nil
        }()

        init(field: ObjectMapping.Field, result: ValueSink, destinationPaths: [JSONPath], slots: [Int], parts: [JSONWriter]) {
            self.field = field
            self.computed = field.computed
            if case .compute(_, let invalid, let then) = field.mapper.kind { computing = (invalid, then) } else { computing = nil }
            self.result = result
            self.destinationPaths = destinationPaths
            self.slots = slots
            self.parts = parts
        }
    }

    private let fields: [FieldPlan]
    /// Per field, for the assembly at the end of each object without reference counting (`fields` keeps them
    /// alive): the input of a field with one source (nil for several), the sink whose result it writes, and its
    /// slot when it has one destination (-1 for several).
    private let fieldInputs: [Unmanaged<FieldInput>?]
    private let fieldResults: [Unmanaged<ValueSink>]
    private let fieldSlots: [Int]
    /// The consumers of the first keys of the source paths.
    private let routeKeys: KeyTable
    /// `routeKeys`, for skipping unmapped members inside yajl (when they are dropped).
    private let routeFilter: KeyFilter
    private let routes: [EventConsumer]
    private let routeRefs: [ConsumerRef]
    private let skipperRef: ConsumerRef
    private let passThroughRef: ConsumerRef?
    private let keepUnmapped: Bool
    private let passThroughSink: ValueSink?
    /// The fields' destinations, and the object's text around the filled ones.
    private let destinations: DestinationTree
    /// Per record: whether a slot has a value, and where its bytes are.
    @exclusivity(unchecked) private var slotFilled: [Bool]
    private let slotSource: [(field: Int, part: Int?)]

    // Per-object streaming state.
    @exclusivity(unchecked) private var current: ConsumerRef?
    @exclusivity(unchecked) private var currentPassThroughKey: Int32?
    private let skipper = Skipper()
    @exclusivity(unchecked) private var passThrough: PassThroughMembers

    /// Compiles a streamable object mapping, or returns nil when its destinations repeat or nest in each other, or
    /// it maps in place (then the materializing base sink gives the tree's exact behaviour, write errors included).
    init?(_ mapper: Mapper, mapping: ObjectMapping, exclusive: Bool, compiler: StreamCompiler) {
        // In place, every key stays where the input has it: the materializing base sink maps the object whole.
        if case .inPlace = mapping.unmapped { return nil }
        // A field that reads the whole object (and does not compute from its paths) gets the object built.
        if mapping.fields.contains(where: { $0.computed == nil && $0.sources.contains { $0.steps.isEmpty } }) { return nil }
        let allDestinations = mapping.fields.flatMap { $0.destinations.map(\.steps) }
        if KeyPath.earlierOverlaps(allDestinations).contains(where: { $0 != nil }) { return nil }

        // The source paths as a tree of prefixes; a value read by several consumers (a `FanOut`) may not be
        // skipped inside yajl by any of them.
        let trie = SourceTrie()
        var terminals: [(field: Int, source: Int)] = []
        /// A computed field's sources are the paths its expression reads.
        func sources(_ field: ObjectMapping.Field) -> [KeyPath] { field.computed?.paths ?? field.sources }
        for (fi, field) in mapping.fields.enumerated() {
            for (si, path) in sources(field).enumerated() {
                var node = trie
                for step in path.steps { node = node.child(Array(step.utf8)) }
                node.inputs.append(terminals.count)
                terminals.append((fi, si))
            }
        }
        var alone = [Bool](repeating: false, count: terminals.count)
        for child in trie.children { child.markAlone(exclusive, &alone) }

        var plans: [FieldPlan] = []
        var inputs: [FieldInput] = []
        let destinations = DestinationTree()
        var slotSource: [(field: Int, part: Int?)] = []
        for (fi, field) in mapping.fields.enumerated() {
            let single = field.computed == nil && field.sources.count == 1 && field.destinations.count == 1
            let resultSink: ValueSink
            if single {
                resultSink = compiler.compile(field.mapper, exclusive: alone[inputs.count])
            } else {
                resultSink = ValueSink(field.mapper)
                resultSink.keepsValue = true
            }
            for _ in sources(field) {
                let sink: ValueSink
                if field.computed == nil && field.sources.count == 1 {
                    sink = resultSink
                } else {
                    sink = ValueSink(.identity)
                    sink.keepsValue = true
                }
                inputs.append(FieldInput(sink))
            }
            var slots: [Int] = []
            for (pi, destination) in field.destinations.enumerated() {
                slotSource.append((fi, field.destinations.count == 1 ? nil : pi))
                slots.append(destinations.addSlot(destination.steps))
            }
            plans.append(FieldPlan(
                field: field, result: resultSink,
                destinationPaths: field.destinations.map(\.destinationPath), slots: slots,
                parts: Array(repeating: JSONWriter(), count: field.destinations.count)))
        }
        routes = trie.children.map { $0.consumer(inputs: inputs, skip: compiler.skip) }
        routeRefs = routes.map(ConsumerRef.init)
        routeKeys = KeyTable(trie.keys)
        routeFilter = KeyFilter(routeKeys)
        for (t, terminal) in terminals.enumerated() {
            let path = sources(mapping.fields[terminal.field])[terminal.source]
            var hops: [(node: RouteNode?, child: Int)] = []
            var node = trie.children[trie.index(of: Array(path.steps[0].utf8))!]
            for step in path.steps.dropFirst() {
                let child = node.index(of: Array(step.utf8))!
                hops.append((node.route, child))
                node = node.children[child]
            }
            plans[terminal.field].sources.append(Source(path: path, input: inputs[t], hops: hops))
        }
        self.fields = plans
        fieldInputs = plans.map { $0.computed == nil && $0.sources.count == 1 ? .passUnretained($0.sources[0].input) : nil }
        fieldResults = plans.map { .passUnretained($0.result) }
        fieldSlots = plans.map { $0.slots.count == 1 ? $0.slots[0] : -1 }
        self.destinations = destinations
        self.slotSource = slotSource
        self.slotFilled = Array(repeating: false, count: slotSource.count)
        var keyStyle: KeyStyle? = nil
        var collisions = KeyCollisions.fail
        switch mapping.unmapped {
        case .drop, .inPlace:  // (an in-place mapping is never compiled here: see `init`)
            keepUnmapped = false
            passThroughSink = nil
        case .keep(let style, let values, let onCollision):
            keepUnmapped = true
            keyStyle = style
            collisions = onCollision
            passThroughSink = values.map { compiler.compile($0, exclusive: exclusive) } ?? CopySink(.identity, allowed: nil)
            if exclusive { passThroughSink?.parseSkip = compiler.skip }
        }
        passThrough = PassThroughMembers(style: keyStyle, reserved: mapping.reservedDestinationKeys, collisions: collisions)
        skipperRef = ConsumerRef(skipper)
        passThroughRef = passThroughSink.map(ConsumerRef.init)
        super.init(mapper)
    }

    deinit { passThrough.deallocate() }

    /// Members of no source path are skipped (when they are dropped); the others are what their routes keep.
    override func projectionNode(in builder: inout ProjectionBuilder) -> Int32? {
        guard !keepUnmapped, parseSkip != nil, let node = builder.addNode() else { return nil }
        for (i, key) in routeKeys.keys.enumerated() { builder.addMember(key, to: node, consumer: routes[i]) }
        return node
    }

    override func startContainer(_ e: JSONEvent) throws -> Bool {
        if case .startArray = e {
            setResult(.failure(.typeMismatch(expected: "object", found: .array([]))))
            return skipRejectedContainer()
        }
        pendingConsumer = nil
        currentPassThroughKey = nil
        current = nil
        for r in routeRefs { r.resetFound() }
        if keepUnmapped {
            passThrough.beginObject()
        } else {
            parseSkip?.filterKeys(routeFilter)
        }
        return false
    }

    override func nextInContainer(_ e: JSONEvent) throws -> Bool {
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
        case .key(let k, _):
            if let i = routeFilter.index(of: k) {
                let r = routeRefs[i]
                r.resetFound()
                pendingConsumer = r
            } else if keepUnmapped {
                currentPassThroughKey = try passThrough.key(k)
                pendingConsumer = passThroughRef
            } else if let parseSkip {
                parseSkip.skipNextValue()
            } else {
                pendingConsumer = skipperRef
            }
            return false
        default:
            finish()  // endObject
            return true
        }
    }

    /// The consumer of the member whose key just arrived.
    @exclusivity(unchecked) private var pendingConsumer: ConsumerRef?

    /// A member's value has completed; a pass-through value is stored now (its sink is reused for the next key).
    private func valueDone() {
        current = nil
        guard let key = currentPassThroughKey, let sink = passThroughSink else { return }
        currentPassThroughKey = nil
        passThrough.add(key: key, from: sink)
    }

    // MARK: Assembly at the end of the object

    private func finish() {
        var errs: [MapError] = []
        for s in slotFilled.indices { slotFilled[s] = false }
        for fi in fieldResults.indices {
            let result = fieldResults[fi]
            if let input = fieldInputs[fi] {
                if !input._withUnsafeGuaranteedRef({ $0.found }) { result._withUnsafeGuaranteedRef { $0.resolveAbsent() } }
            } else if let expression = fields[fi].computed {
                mapComputed(fi, expression)
            } else {
                mapSeveralSources(fi)
            }
            let (clean, usable) = result._withUnsafeGuaranteedRef { r in
                r.errors.isEmpty ? (true, r.kind != .absent) : (false, !r.isFatal && r.kind != .absent)
            }
            if !clean { collectErrors(fi, into: &errs) }
            guard usable else { continue }
            if fieldSlots[fi] >= 0 {
                slotFilled[fieldSlots[fi]] = true
            } else {
                splitIntoDestinations(fi, &errs)
            }
        }

        if keepUnmapped { passThrough.collect(into: &errs) }

        clear()
        errors = errs
        if errs.contains(where: \.isFatal) {
            kind = .absent
            return
        }
        writeObject()
        kind = .value
    }

    /// A field with several sources maps the array of their values (nil if one is missing).
    private func mapSeveralSources(_ fi: Int) {
        let plan = fields[fi]
        var values: [JSONValue] = []
        var complete = true
        for s in plan.sources {
            if s.input.found, let v = s.input.sink.value { values.append(v) } else { complete = false }
        }
        plan.result.clear()
        plan.result.setResult(plan.field.mapper.map(complete ? .array(values) : nil))
    }

    /// A computed field evaluates its expression on the values gathered at its paths.
    private func mapComputed(_ fi: Int, _ expression: ValueExpression) {
        let plan = fields[fi]
        guard let (invalid, then) = plan.computing else { return }
        let inputs = plan.sourceInputs
        let evaluation = expression.evaluate(stack: &expressionStack) { i in
            let input = inputs[i].takeUnretainedValue()
            return input.found ? input.sink.value : nil
        }
        plan.result.clear()
        plan.result.setResult(Mapper.finishComputing(expression, evaluation, invalid: invalid, then: then))
    }

    /// A field's errors, with the paths walked to its sources and its destinations. Paths are built only for
    /// errors (most records have none).
    private func collectErrors(_ fi: Int, into errs: inout [MapError]) {
        let plan = fields[fi]
        let errors = plan.result.errors
        // A rejected record mostly fails in several fields: room for one error per field, at the first.
        if errs.isEmpty { errs.reserveCapacity(max(fieldResults.count, errors.count)) }
        let sourcePaths = plan.keySourcePaths ?? plan.sources.map { $0.walkedPath() }
        let focus = plan.sources.count == 1 || plan.computed != nil ? 0 : plan.sources.firstIndex { !$0.input.found } ?? 0
        for var e in errors {
            e.sourcePath = ObjectMapping.attach(e.sourcePath, to: sourcePaths, focus: focus)
            e.destinationPath = ObjectMapping.attach(e.destinationPath, to: plan.destinationPaths)
            errs.append(e)
        }
    }

    /// A field with several destinations: its value must be an array with one element per destination.
    private func splitIntoDestinations(_ fi: Int, _ errs: inout [MapError]) {
        let plan = fields[fi]
        guard case .array(let parts)? = plan.result.value, parts.count == plan.slots.count else {
            let n = plan.slots.count
            let error = MapError(.write, "expected an array of \(n) values for \(n) destinations, found \(MapError.describe(plan.result.value))")
            errs.append(error.prefixed(source: plan.computed == nil ? plan.sources[0].walkedPath() : .root, destination: .root))
            return
        }
        for (pi, part) in parts.enumerated() {
            plan.parts[pi].removeAll()
            plan.parts[pi].write(part)
            slotFilled[plan.slots[pi]] = true
        }
    }

    private func writeObject() {
        let anyFilled = slotFilled.contains(true)
        destinations.withLayout(filled: slotFilled) { layout in
            layout.write(to: &output) { slot, output in writeSlot(slot, to: &output) }
        }
        var count = anyFilled ? 1 : 0
        if keepUnmapped { passThrough.write(to: &output, count: &count) }
        output.writeRaw(UInt8(ascii: "}"))
    }

    private func writeSlot(_ slot: Int, to output: inout ByteBuffer) {
        let source = slotSource[slot]
        if let part = source.part {
            fields[source.field].parts[part].bytes.withUnsafeBytes { output.append($0) }
        } else {
            // A field of one destination fills one slot: its result is written once, then cleared at the next value.
            fieldResults[source.field]._withUnsafeGuaranteedRef { r in output.appendReleasing(r.output.bytes) }
        }
    }
}

/// The fields' source paths as a tree of prefixes, at compile time: each node is a value some sources read or
/// walk through.
final class SourceTrie {
    private(set) var keys: [[UInt8]] = []
    private(set) var children: [SourceTrie] = []
    private var indexOfKey: [[UInt8]: Int] = [:]
    /// The terminals (indexes of field inputs) whose path ends here.
    var inputs: [Int] = []
    /// The node's route, once built (when paths continue below it).
    private(set) var route: RouteNode?

    func child(_ key: [UInt8]) -> SourceTrie {
        if let i = indexOfKey[key] { return children[i] }
        indexOfKey[key] = keys.count
        keys.append(key)
        children.append(SourceTrie())
        return children[children.count - 1]
    }

    func index(of key: [UInt8]) -> Int? { indexOfKey[key] }

    /// Whether the value here goes to several consumers (then through a `FanOut`).
    private var fans: Bool { inputs.count + (children.isEmpty ? 0 : 1) > 1 }
    /// Whether this node's consumers receive its events alone (set by `markAlone`).
    private var alone = false

    func markAlone(_ parentAlone: Bool, _ terminals: inout [Bool]) {
        alone = parentAlone && !fans
        for i in inputs { terminals[i] = alone }
        for c in children { c.markAlone(alone, &terminals) }
    }

    /// The consumer of this node's value: a field input, a route node, or a fan-out to several of them.
    func consumer(inputs fieldInputs: [FieldInput], skip: ParseSkip) -> EventConsumer {
        var parts: [EventConsumer] = inputs.map { fieldInputs[$0] }
        if let (keys, end) = run(), keys.count >= KeyChain.minimumSteps {
            let chain = KeyChain(keys: keys, end: end.consumer(inputs: fieldInputs, skip: skip))
            if alone { chain.parseSkip = skip }
            parts.append(chain)
        } else if !children.isEmpty {
            let node = RouteNode(keys: keys, children: children.map { $0.consumer(inputs: fieldInputs, skip: skip) })
            if alone { node.parseSkip = skip }
            route = node
            parts.append(node)
        }
        return parts.count == 1 ? parts[0] : FanOut(parts)
    }

    /// The keys of the run of single children below this node that no field reads in between (none an array
    /// index), and the node where the run ends; nil when this node has not exactly one such child.
    private func run() -> ([[UInt8]], SourceTrie)? {
        var keys: [[UInt8]] = []
        var node = self
        while node.children.count == 1, KeyPath.arrayIndex(String(decoding: node.keys[0], as: UTF8.self)) == nil {
            keys.append(node.keys[0])
            node = node.children[0]
            if !node.inputs.isEmpty { break }
        }
        return keys.isEmpty ? nil : (keys, node)
    }
}
