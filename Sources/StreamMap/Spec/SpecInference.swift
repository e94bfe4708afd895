/// Infers a spec from sample records (`streammap infer`): feed it records with `add(_:)` (or `add(json:)`), then
/// read `document` — a spec that maps every record it was fed.
///
/// What it proposes, per path, in first-seen order:
/// - the JSON type seen (`integer`; `number` when fractions or exponents were seen too; `string`, `boolean`, `null`),
///   no type when the path held values of different types;
/// - a nested `{"object": …}` spec for objects; `{"arrayOf": M}` for arrays whose elements (none null) all take one
///   mapper `M` by these rules (`{"object": …}`, `"integer"`, a date format, …), `"array"` for the others;
/// - for strings, a conversion when **every** sampled value maps with it and maps back to the same text (so the
///   reverse mapping gives each value back): a date format StreamMap knows (`iso8601`, `twitter`, …), then `url`,
///   then `uuid`; else a small closed set of strings (at most `Limits.maximumEnumValues` distinct values, each seen
///   `Limits.enumRepetition` times on average, `Limits.enumMinimumStrings` strings at least) as an `enum` table
///   mapping each value to itself;
/// - `required` for a path present and non-null in every object that could hold it; the others
///   `"missing": "omit", "null": "null"`;
/// - destination names in `keyStyle` (made unique within their object; keys containing the delimiter are `literal`).
///
/// Memory is bounded by `Limits.maximumPaths` distinct paths (keys beyond them are not tracked: their object passes
/// them through with `"unmapped": "keep"`, and `notes` says so), `Limits.maximumDepth` levels (deeper values get
/// their JSON type only) and per path a fixed amount of string evidence; time is linear in the records' size.
public struct SpecInference: Sendable {
    /// How much an inference tracks: the bounds on its memory, and when it proposes an `enum`.
    public struct Limits: Sendable {
        /// Distinct paths tracked (array elements of one path are one path).
        public var maximumPaths = 10_000
        /// Nesting levels looked into; a deeper object or array is typed `object` or `array`.
        public var maximumDepth = 64
        /// Most distinct strings of a path proposed as an `enum` table.
        public var maximumEnumValues = 10
        /// Longest string (UTF-8 bytes) an `enum` table holds.
        public var maximumEnumValueBytes = 64
        /// An `enum` is proposed only when the path held at least this many strings per distinct value…
        public var enumRepetition = 4
        /// …and at least this many strings in all.
        public var enumMinimumStrings = 10

        /// The defaults: 10 000 paths, 64 levels, enums of at most 10 values of at most 64 bytes.
        public init() {}
    }

    /// Destination names in this style (nil: the source key).
    public var keyStyle: KeyStyle?
    /// The bounds this inference keeps to.
    public let limits: Limits
    /// Records fed so far.
    public private(set) var recordCount = 0

    /// Node 0 is the record; every other node is a path (an object member or the elements of an array).
    private var nodes: [PathNode] = [PathNode()]

    /// An inference that has seen no record yet.
    public init(keyStyle: KeyStyle? = nil, limits: Limits = Limits()) {
        self.keyStyle = keyStyle
        self.limits = limits
    }

    /// Feeds one record.
    public mutating func add(_ record: JSONValue) {
        recordCount += 1
        observe(record, at: 0, depth: 0)
    }

    /// Parses one record's JSON text and feeds it; invalid JSON is thrown and feeds nothing.
    public mutating func add(json record: UnsafeRawBufferPointer) throws(JSONSyntaxError) {
        let (value, depth) = try JSONParser.parseWithDepth(record)
        add(value)
        if depth > JSONValue.iterativeReleaseDepth { JSONValue.release(consume value) }
    }

    /// Paths not tracked: more than `limits.maximumPaths` distinct paths were seen.
    public var droppedPaths: Bool { nodes.contains { $0.keysDropped } }

    /// What the spec cannot show: limits that were reached.
    public var notes: [String] {
        var notes: [String] = []
        if droppedPaths {
            notes.append(
                "more than \(limits.maximumPaths) distinct paths: keys beyond them are not inferred, their objects pass them through (\"unmapped\": \"keep\")"
            )
        }
        if nodes.contains(where: { $0.tooDeep }) {
            notes.append(
                "values nested deeper than \(limits.maximumDepth) levels are typed \"object\" or \"array\", not looked into"
            )
        }
        return notes
    }

    // MARK: Observing

    private mutating func observe(_ value: JSONValue, at node: Int, depth: Int) {
        nodes[node].seen += 1
        switch value {
        case .null: nodes[node].nulls += 1
        case .bool: nodes[node].kinds.insert(.boolean)
        case .number(let n): nodes[node].kinds.insert(n.isInteger ? .integer : .fraction)
        case .string(let s):
            nodes[node].kinds.insert(.string)
            nodes[node].strings.observe(s, limits: limits)
        case .object(let o):
            nodes[node].kinds.insert(.object)
            nodes[node].objects += 1
            guard depth < limits.maximumDepth else {
                nodes[node].tooDeep = true
                return
            }
            for (key, member) in o {
                guard let child = child(of: node, key: key) else { continue }
                observe(member, at: child, depth: depth + 1)
            }
        case .array(let elements):
            nodes[node].kinds.insert(.array)
            guard depth < limits.maximumDepth else {
                nodes[node].tooDeep = true
                return
            }
            guard !elements.isEmpty else { return }
            guard let element = elementNode(of: node) else { return }
            for e in elements { observe(e, at: element, depth: depth + 1) }
        }
    }

    private mutating func child(of node: Int, key: String) -> Int? {
        if let c = nodes[node].children[ByteKey(key)] { return c }
        guard nodes.count < limits.maximumPaths else {
            nodes[node].keysDropped = true
            return nil
        }
        nodes.append(PathNode())
        nodes[node].children[ByteKey(key)] = nodes.count - 1
        nodes[node].childOrder.append(key)
        return nodes.count - 1
    }

    private mutating func elementNode(of node: Int) -> Int? {
        if let e = nodes[node].element { return e }
        guard nodes.count < limits.maximumPaths else {
            nodes[node].tooDeep = true
            return nil
        }
        nodes.append(PathNode())
        nodes[node].element = nodes.count - 1
        return nodes.count - 1
    }

    // MARK: The spec

    /// The inferred spec document (deterministic: the same records give the same document).
    public var document: JSONValue {
        var doc = JSONObject()
        doc["streammap"] = .number(JSONNumber(1))
        doc["description"] = .string(
            "inferred by streammap infer from \(recordCount) record\(recordCount == 1 ? "" : "s")")
        let root = nodes[0]
        if root.kinds == [.object] && root.nulls == 0 && !root.tooDeep {
            for (k, v) in objectSpec(0) { doc[k] = v }
        } else {
            // A null record passes as null (a type check or an object mapping would reject it).
            doc["mapper"] =
                expression(0).map { root.nulls > 0 ? ["policy": $0, "missing": "omit", "null": "null"] : $0 }
                ?? "identity"
        }
        return doc.asValue
    }

    /// The spec as indented text (one field per line), as `streammap infer` prints it.
    public var text: String { IndentedJSON.text(document) }

    private func objectSpec(_ node: Int) -> JSONObject {
        let n = nodes[node]
        var fields = JSONObject()
        var used = Set<ByteKey>()
        for key in n.childOrder {
            let index = n.children[ByteKey(key)]!
            let c = nodes[index]
            let destination = uniqueDestination(for: key, used: &used)
            let required = c.seen - c.nulls == n.objects
            let literal = key.isEmpty || key.utf8.contains(UInt8(ascii: "."))
            var via = expression(index)
            var type: JSONValue?
            if let name = via?.stringValue, SpecCompiler.jsonTypeNames.contains(name) {
                type = via
                via = nil
            }
            if required && via == nil && type == nil && !literal {
                fields[key] = .string(destination)
                continue
            }
            var field = JSONObject()
            field["to"] = .string(destination)
            if let type { field["type"] = type }
            if let via { field["via"] = via }
            if literal { field["literal"] = .bool(true) }
            if required {
                if via != nil { field["required"] = .bool(true) }
            } else {
                field["missing"] = .string("omit")
                field["null"] = .string("null")
            }
            fields[key] = field.asValue
        }
        var spec = JSONObject()
        spec["fields"] = fields.asValue
        if n.keysDropped { spec["unmapped"] = .string("keep") }
        return spec
    }

    /// The destination for `key`: in the key style, else the key, else the key with a number; never one used before.
    private func uniqueDestination(for key: String, used: inout Set<ByteKey>) -> String {
        var candidates = [keyStyle.map { $0.apply(key) } ?? key, key]
        candidates = candidates.filter { !$0.utf8.contains(UInt8(ascii: ".")) && !$0.isEmpty } + [key]
        var chosen = candidates.first { !used.contains(ByteKey($0)) }
        var i = 2
        while chosen == nil {
            let numbered = "\(candidates[0])_\(i)"
            if !used.contains(ByteKey(numbered)) { chosen = numbered }
            i += 1
        }
        used.insert(ByteKey(chosen!))
        return chosen!
    }

    /// The mapper for the values a path held (nil: identity — the values were of different types).
    private func expression(_ node: Int) -> JSONValue? {
        let n = nodes[node]
        switch n.kinds {
        case []: return n.nulls > 0 ? "null" : nil
        case [.boolean]: return "boolean"
        case [.integer]: return "integer"
        case [.integer, .fraction], [.fraction]: return "number"
        case [.string]: return n.strings.proposal(limits: limits) ?? "string"
        case [.object]:
            return n.tooDeep ? "object" : ["object": objectSpec(node).asValue]
        case [.array]:
            // Elements all of one shape (no null among them): `arrayOf` that shape's mapper — objects' spec, a
            // scalar's type or conversion, a nested array's — so that Arrow gets a typed list.
            guard !n.tooDeep, let e = n.element else { return "array" }
            let element = nodes[e]
            guard element.nulls == 0, !element.tooDeep, let mapper = expression(e), mapper != "array", mapper != "object"
            else { return "array" }
            return ["arrayOf": mapper]
        default: return nil
        }
    }
}

/// What was seen at one path.
private struct PathNode: Sendable {
    struct Kinds: OptionSet, Sendable {
        let rawValue: UInt8
        static let boolean = Kinds(rawValue: 1), integer = Kinds(rawValue: 2), fraction = Kinds(rawValue: 4)
        static let string = Kinds(rawValue: 8), object = Kinds(rawValue: 16), array = Kinds(rawValue: 32)
    }

    /// Values seen here, null included.
    var seen = 0
    var nulls = 0
    var kinds: Kinds = []
    /// Objects seen here (the count a member must reach to be required).
    var objects = 0
    /// Member keys by their UTF-8 bytes (as JSON objects compare them).
    var children: [ByteKey: Int] = [:]
    var childOrder: [String] = []
    /// The node of this array's elements.
    var element: Int?
    /// Some member keys were not tracked (the path limit).
    var keysDropped = false
    /// Some value here was not looked into (the depth or path limit).
    var tooDeep = false
    var strings = StringEvidence()
}

/// What the strings at one path have in common, in bounded memory.
private struct StringEvidence: Sendable {
    /// Strings seen.
    var count = 0
    /// Which of `StringShape.all` every string so far maps with and back (bit i: shape i).
    var shapes: UInt32 = StringShape.allBits
    /// The distinct strings in first-seen order, nil once there are too many or one is too long.
    var distinct: [String]? = []

    mutating func observe(_ s: String, limits: SpecInference.Limits) {
        count += 1
        var bits = shapes
        while bits != 0 {
            let i = bits.trailingZeroBitCount
            bits &= bits - 1
            if !StringShape.all[i].roundTrips(s) { shapes &= ~(1 << UInt32(i)) }
        }
        if var values = distinct {
            if !values.contains(where: { bytesEqual($0, s) }) {
                if values.count >= limits.maximumEnumValues || s.utf8.count > limits.maximumEnumValueBytes {
                    distinct = nil
                    return
                }
                values.append(s)
                distinct = values
            }
        }
    }

    func proposal(limits: SpecInference.Limits) -> JSONValue? {
        if shapes != 0 { return StringShape.all[shapes.trailingZeroBitCount].via }
        if let values = distinct, !values.isEmpty,
            count >= max(limits.enumMinimumStrings, values.count * limits.enumRepetition)
        {
            return ["enum": JSONObject(values.map { ($0, JSONValue.string($0)) }).asValue]
        }
        return nil
    }
}

/// A conversion proposed for strings: the spec text and the mappers it compiles to (compiled by `SpecCompiler`, so
/// what is checked is what the spec will do).
private struct StringShape: Sendable {
    let via: JSONValue
    let forward: Mapper
    let reverse: Mapper

    /// Dates first (in `NamedDateFormat` order), then URLs, then UUIDs.
    static let all: [StringShape] = {
        let vias: [JSONValue] =
            NamedDateFormat.allCases.map { ["stringToDate": .string($0.rawValue)] } + ["url", "uuid"]
        return vias.compactMap { via in
            var compiler = SpecCompiler()
            guard let m = compiler.compileMapper(via, at: "", scope: SpecCompiler.Scope()), let r = try? m.reversed()
            else { return nil }
            return StringShape(via: via, forward: m, reverse: r)
        }
    }()
    static let allBits: UInt32 = (1 << UInt32(all.count)) - 1

    /// `s` maps without warnings, and the result maps back to `s`.
    func roundTrips(_ s: String) -> Bool {
        let there = forward.map(.string(s))
        guard there.errors.isEmpty, let value = there.value else { return false }
        let back = reverse.map(value)
        return back.errors.isEmpty && back.value == .string(s)
    }
}

extension JSONObject {
    var asValue: JSONValue { .object(self) }
}
