// Explain.swift — what the stream engine does with a mapper: the output order, which fields are required, and
// which source values are mapped while they are parsed and which are built in memory first (`streammap explain`).
//
// How each value is handled is read off the compiled sinks themselves (`ValueSink.handling`: the engine's own plan,
// compiled once for the explanation), not derived from rules of its own: identity, type checks, key styles,
// required, nonFatal (optional), policies, arrayOf, split (its forward side), dates to epoch numbers and object
// mappings whose destinations are prefix-free stream; every other mapper — and every many-to-one or one-to-many
// field — gets its value built whole first.
// What a field does with an absent or null value is not derived from the rules but measured: the field's mapper is
// run on absent and on null with the tree engine's `Mapper.map`, so the answer is the engines' own.

/// How the stream engine handles a value.
public enum StreamHandling: Sendable, Equatable, CustomStringConvertible {
    /// Mapped while it is parsed: containers are never built in memory (their mapped output is).
    case streamed
    /// Built in memory first (a scalar costs nothing; a large object or array here is held whole), because of the
    /// named mapper or rule.
    case materialized(because: String)

    /// Whether the value is mapped while it is parsed (``streamed``).
    public var isStreamed: Bool { self == .streamed }

    public var description: String {
        switch self {
        case .streamed: return "streamed"
        case .materialized(let reason): return "materialized (\(reason))"
        }
    }
}

/// What a field writes when its source is absent or null (measured by running its mapper on that input).
public enum AbsenceOutcome: Sendable, Equatable, CustomStringConvertible {
    /// A fatal error: the record is rejected.
    case rejectsRecord
    /// The field is left out (`warns`: with a non-fatal error).
    case omitted(warns: Bool)
    /// The field is written with this value (a default, null, or a converted value; `warns`: with a warning).
    case writes(JSONValue, warns: Bool)

    public var description: String {
        switch self {
        case .rejectsRecord: return "reject"
        case .omitted(let w): return w ? "omit+warn" : "omit"
        case .writes(let v, let w): return JSONWriter.string(v) + (w ? "+warn" : "")
        }
    }
}

/// The stream engine's plan for a mapper, for people (`description`) and tools (`jsonValue`).
public struct MapperExplanation: Sendable {
    /// The mapper, briefly: its chain of wrappers down to the mapper that does the work (`required · enum`).
    public var summary: String
    /// How the value this mapper receives is handled.
    public var handling: StreamHandling
    /// The structure below, when the mapper is an object mapping or an array of something.
    public var structure: Structure?
    /// The record's fields are written straight from where the record's projection finds their values
    /// (`ProjectedFields`), for every record whose values need nothing more (the others are mapped from events).
    public var fieldsFromProjection = false
    /// The mapper is a built-in conversion of scalars (dates, numbers, URLs, UUIDs, base64, arithmetic): its
    /// value is built in memory, but a valid one is a single string or number, which costs nothing. A closure
    /// (`block`), `toString`, an enum table or a key style may be handed a whole object or array.
    public var convertsScalars: Bool

    /// What is below a container mapper.
    public indirect enum Structure: Sendable {
        /// An object mapping: its fields, output order and unmapped keys.
        case object(ObjectExplanation)
        /// An array: the plan for every element.
        case arrayOf(MapperExplanation)
    }

    /// Explains `mapper` (forward; explain `try mapper.reversed()` for the reverse direction).
    public init(_ mapper: Mapper) {
        let plan = CompiledPlan(mapper)
        self.init(mapper, sink: plan.root)
        fieldsFromProjection = plan.projectedFields != nil
    }

    /// Explains `mapper`, compiled as `sink`.
    init(_ mapper: Mapper, sink: ValueSink) {
        // Wrappers down to the mapper that does the work. Presence (required, policies for absent and null) is left
        // out of the summary: a field's absent and null outcomes are measured and shown on their own.
        var wrappers: [String] = []
        var current = mapper
        var currentSink = sink
        /// The sink a wrapper sink compiled its inner mapper to.
        func inner(_ s: ValueSink) -> ValueSink {
            switch s {
            case let w as WrapperSink: return w.inner
            default: return s
            }
        }
        unwrap: while true {
            switch current.kind {
            case .notNull(let wrapped):
                current = wrapped
                currentSink = inner(currentSink)
            case .nonFatal(let wrapped, let fallback, _):
                currentSink = inner(currentSink)
                if case .notNull(let innermost) = wrapped.kind {
                    wrappers.append(fallback == nil ? "optional" : "optional(default)")
                    current = innermost
                    currentSink = inner(currentSink)
                } else {
                    wrappers.append(fallback == nil ? "nonFatal" : "nonFatal(default)")
                    current = wrapped
                }
            case .policy(let wrapped, let policy):
                if policy.invalid != .fail && policy.invalid != .passToMapper { wrappers.append("invalid: " + Self.describe(policy.invalid)) }
                current = wrapped
                currentSink = inner(currentSink)
            case .split(let forward, _):
                wrappers.append("split")
                current = forward  // compiled as its forward side
            default:
                break unwrap
            }
        }
        summary = (wrappers + [Self.name(current)]).joined(separator: " · ")
        handling = currentSink.handling
        convertsScalars = Self.convertsScalars(current)
        switch current.kind {
        case .arrayOf(let item):
            structure = .arrayOf(MapperExplanation(item, sink: (currentSink as? ArraySink)?.item ?? ValueSink(item)))
        case .object(let mapping):
            structure = .object(ObjectExplanation(mapping, sink: currentSink as? ObjectSink))
        default:
            structure = nil
        }
    }

    /// Every container in this plan is streamed: nothing but scalars is built in memory, so a record of any size
    /// maps in constant memory. A built-in scalar conversion (`convertsScalars`) does not count as materialized; a
    /// closure does, since it is handed whatever value comes.
    public var streamsEverything: Bool {
        switch structure {
        case .object(let o)?:
            return handling.isStreamed && o.fields.allSatisfy {
                $0.value.streamsEverything && ($0.handling.isStreamed || $0.handling == $0.value.handling && $0.value.convertsScalars)
            } && (o.unmapped.values?.streamsEverything ?? true)
        case .arrayOf(let item)?: return handling.isStreamed && item.streamsEverything
        case nil: return handling.isStreamed || convertsScalars
        }
    }

    /// Whether `m` is a built-in conversion whose input, when valid, is a scalar (see `convertsScalars`).
    static func convertsScalars(_ m: Mapper) -> Bool {
        switch m.kind {
        case .convert(.anyToString), .convert(.keys): return false
        case .convert: return true
        case .thread(let stages): return stages.first.map(convertsScalars) ?? false  // later stages get its output
        case .first(let alternatives): return !alternatives.isEmpty && alternatives.allSatisfy(convertsScalars)
        default: return false
        }
    }

    static func describe(_ action: FieldPolicy.Action) -> String {
        switch action {
        case .fail: return "fail"
        case .omit: return "omit"
        case .keepNull: return "null"
        case .passToMapper: return "pass"
        case .useDefault(let v): return "default " + JSONWriter.string(v)
        }
    }

    /// The mapper's kind, without arguments (`thread`, `enum`, `stringToDate`).
    static func kindName(_ m: Mapper) -> String {
        switch m.kind {
        case .convert(let c): return c.name
        case .block(let b): return b.name
        case .postProcess(_, let post): return post.name
        case .compute: return "expr"
        default:
            let full = name(m)
            return String(full.prefix { $0 != "(" })
        }
    }

    /// The longest name `name` writes, in UTF-8 bytes, before it cuts the rest short with "…": a summary is
    /// written at every level of a nested mapper, so a full name at each would make `explain` quadratic in the
    /// nesting.
    static let longestName = 160

    /// A short name for a mapper that is not a wrapper (`arrayOf(type(integer))`; past `longestName`, "…").
    static func name(_ m: Mapper) -> String {
        var out = ""
        appendName(m, to: &out)
        return out
    }

    /// Appends `m`'s name to `out`, stopping with "…" once `out` holds `longestName` bytes (a user's key path or
    /// type list is cut short too).
    private static func appendName(_ m: Mapper, to out: inout String) {
        func put(_ text: String) {
            guard !out.hasSuffix("…") else { return }
            let room = longestName - out.utf8.count
            if text.utf8.count <= room {
                out += text
            } else {
                out.unicodeScalars.append(contentsOf: text.unicodeScalars.prefix(max(room, 0)))
                out += "…"
            }
        }
        func wrapped(_ head: String, _ inner: [Mapper], first: String? = nil) {
            put(head + "(")
            if let first { put(first + ", ") }
            for (i, x) in inner.enumerated() {
                if i > 0 { put(", ") }
                appendName(x, to: &out)
                if out.hasSuffix("…") { break }
            }
            out += ")"
        }
        guard out.utf8.count < longestName else {
            if !out.hasSuffix("…") { out += "…" }
            return
        }
        switch m.kind {
        case .identity: put("identity")
        case .check(let types): put("type(\(types))")
        case .notNull(let inner): wrapped("required", [inner])
        case .nonFatal(let inner, _, _): wrapped("nonFatal", [inner])
        case .policy(let inner, _): wrapped("policy", [inner])
        case .object: put("object")
        case .arrayOf(let item): wrapped("arrayOf", [item])
        case .first(let list): wrapped("first", list)
        case .thread(let list): wrapped("thread", list)
        case .split(let forward, _): wrapped("split", [forward])
        case .forward(let path, let inner): wrapped("forward", [inner], first: "\(path)")
        case .backward(let path, let inner): wrapped("backward", [inner], first: "\(path)")
        case .enumTable: put("enum")
        case .convert(let c):
            if case .keys(let style, let deep, let collisions) = c {
                put("keys(\(style.rawValue)\(deep ? ", deep" : "")\(collisions == .warn ? ", collisions: warn" : ""))")
            } else {
                put(c.name)
            }
        case .block(let b): put(b.name)
        case .postProcess(let inner, let post): wrapped(post.name, [inner])
        case .compute(let e, _, let then): wrapped("expr", [then], first: JSONWriter.string(.string(e.text)))
        }
    }
}

/// The plan for an object mapping.
public struct ObjectExplanation: Sendable {
    /// The plan for one field.
    public struct Field: Sendable {
        /// Source key paths (several: many-to-one; for a computed field, the paths its expression reads).
        public var sources: [KeyPath]
        /// A computed field's expression (nil for a field that reads its sources).
        public var expression: String? = nil
        /// Destination key paths (several: one-to-many).
        public var destinations: [KeyPath]
        /// When a source is absent.
        public var whenAbsent: AbsenceOutcome
        /// When the (single) source is null; for a many-to-one field, when every source is null.
        public var whenNull: AbsenceOutcome
        /// How the field's value is handled: its mapper's plan, unless the field has several sources or
        /// destinations (then its values are built whole).
        public var handling: StreamHandling
        /// The field's mapper.
        public var value: MapperExplanation

        /// An absent source rejects the record (a computed field's sources are not listed as required: which of
        /// them must be there depends on the expression).
        public var isRequired: Bool { whenAbsent == .rejectsRecord && expression == nil }
    }

    /// What happens to the keys no field reads.
    public struct Unmapped: Sendable {
        /// Input keys no field reads are passed through (else they are skipped while parsing, never built).
        public var kept: Bool
        /// The key style applied to passed-through keys.
        public var keyStyle: KeyStyle?
        /// The mapper applied to passed-through values (nil: copied as they are, streamed).
        public var values: MapperExplanation?
        /// Every key stays where the input has it, the fields' results written back in place (`"inPlace"`).
        public var inPlace = false
    }

    /// Fields in spec order.
    public var fields: [Field]
    /// Output keys in the order they are written: spec order, a nested destination at its first field's place.
    /// Each entry names the field (index into `fields`) writing it.
    public var destinationOrder: [(destination: KeyPath, field: Int)]
    /// The keys no field reads: kept or skipped, and how.
    public var unmapped: Unmapped
    /// Destinations repeat or nest in each other: the stream engine builds this object whole.
    public var destinationsOverlap: Bool

    /// Source paths whose values every record must have (their absence rejects the record), in output order.
    public var requiredSources: [KeyPath] {
        var seen = Set<Int>()
        return destinationOrder.map(\.field).filter { seen.insert($0).inserted && fields[$0].isRequired }.flatMap { fields[$0].sources }
    }

    /// Explains `mapping` as the stream engine compiles it.
    public init(_ mapping: ObjectMapping) {
        let plan = CompiledPlan(Mapper(.object(mapping)))
        self.init(mapping, sink: plan.root as? ObjectSink)
    }

    /// Explains `mapping`, compiled as `sink` (nil: built whole, its destinations nest in each other).
    init(_ mapping: ObjectMapping, sink: ObjectSink?) {
        let all = mapping.fields.flatMap { $0.destinations.map(\.steps) }
        destinationsOverlap = KeyPath.earlierOverlaps(all).contains { $0 != nil }

        let fieldSinks = sink?.fieldSinks
        fields = mapping.fields.enumerated().map { i, f in
            let value = MapperExplanation(f.mapper, sink: fieldSinks?[i] ?? ValueSink(f.mapper))
            let handling: StreamHandling
            if f.computed != nil {
                handling = .materialized(because: "computed from the values its expression reads")
            } else if f.sources.count > 1 {
                handling = .materialized(because: "many-to-one field")
            } else if f.destinations.count > 1 {
                handling = .materialized(because: "one-to-many field")
            } else {
                handling = value.handling
            }
            let nullInput: JSONValue? = f.sources.count > 1 ? .array(f.sources.map { _ in .null }) : .null
            // A computed field: what an absent or null result gives.
            let presence: Mapper
            if case .compute(_, _, let then) = f.mapper.kind { presence = then } else { presence = f.mapper }
            return Field(
                sources: f.computed?.paths ?? f.sources, expression: f.computed?.text, destinations: f.destinations,
                whenAbsent: Self.outcome(presence.map(nil)), whenNull: Self.outcome(presence.map(f.computed == nil ? nullInput : .null)),
                handling: handling, value: value)
        }

        // The destination tree in first-appearance order, as ObjectSink assembles it.
        final class Node {
            let step: String
            var field: Int?
            var children: [Node] = []
            var childOfStep: [ByteKey: Node] = [:]
            init(_ step: String) { self.step = step }
        }
        let root = Node("")
        for (fi, f) in mapping.fields.enumerated() {
            for d in f.destinations {
                var node = root
                for step in d.steps {
                    if let existing = node.childOfStep[ByteKey(step)] {
                        node = existing
                    } else {
                        let child = Node(step)
                        node.children.append(child)
                        node.childOfStep[ByteKey(step)] = child
                        node = child
                    }
                }
                if node.field == nil { node.field = fi }
            }
        }
        // Depth first, in insertion order; `steps` is the path to the node on top (no path copied per node).
        var order: [(destination: KeyPath, field: Int)] = []
        var steps: [String] = []
        var stack: [(node: Node, depth: Int)] = root.children.reversed().map { ($0, 1) }
        while let (node, depth) = stack.popLast() {
            steps.removeSubrange((depth - 1)...)
            steps.append(node.step)
            if let fi = node.field { order.append((KeyPath(steps: steps), fi)) }
            for child in node.children.reversed() { stack.append((child, depth + 1)) }
        }
        destinationOrder = order

        switch mapping.unmapped {
        case .drop: unmapped = Unmapped(kept: false, keyStyle: nil, values: nil)
        case .inPlace: unmapped = Unmapped(kept: true, keyStyle: nil, values: nil, inPlace: true)
        case .keep(let style, let values, _):
            unmapped = Unmapped(kept: true, keyStyle: style, values: values.map { MapperExplanation($0, sink: sink?.passThroughValues ?? ValueSink($0)) })
        }
    }

    static func outcome(_ r: MapResult) -> AbsenceOutcome {
        if r.isFatal { return .rejectsRecord }
        let warns = !r.errors.isEmpty
        if let v = r.value { return .writes(v, warns: warns) }
        return .omitted(warns: warns)
    }
}

// MARK: - Rendering

extension MapperExplanation: CustomStringConvertible {
    /// A readable plan, e.g.
    ///
    /// ```
    /// record: object, streamed
    ///   #  destination   source       absent  null    mapper                    handling
    ///   1  id            id           reject  reject  required · identity       streamed
    ///   2  kind          type         reject  reject  policy(…) · enum          materialized (enum)
    ///   other keys: dropped, skipped while parsing
    ///   required: id, type
    /// ```
    public var description: String {
        var lines: [String] = []
        render(label: "record", indent: "", depth: 0, into: &lines)
        if fieldsFromProjection, let required = lines.firstIndex(where: { $0.hasPrefix("  required: ") }) {
            lines.insert("  fields: written from where the record's projection finds their values (records that need more: from events)",
                         at: required + 1)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The nesting shown by `description`: below it, one line says how much more there is (each line's label and
    /// indentation grow with the depth, so showing every level of a deep mapper would be quadratic in it).
    /// `jsonValue` shows every level.
    static let deepestShown = 32

    func render(label: String, indent: String, depth: Int, into lines: inout [String]) {
        guard depth <= Self.deepestShown else {
            lines.append("\(indent)… \(nestingBelow) more nested level\(nestingBelow == 1 ? "" : "s") (explain --json shows them)")
            return
        }
        switch structure {
        case nil:
            lines.append("\(indent)\(label): \(summary), \(handling)")
        case .arrayOf(let item)?:
            lines.append("\(indent)\(label): array, \(handling); each element:")
            item.render(label: label + "[]", indent: indent + "  ", depth: depth + 1, into: &lines)
        case .object(let o)?:
            let head = summary == "object" ? "object" : "\(summary)"
            lines.append("\(indent)\(label): \(head), \(handling)")
            o.render(indent: indent + "  ", depth: depth + 1, into: &lines)
        }
    }

    /// The levels of containers from this one down, along its deepest branch (1 for a scalar's plan).
    var nestingBelow: Int {
        var deepest = 0
        var stack: [(MapperExplanation, Int)] = [(self, 1)]
        while let (e, depth) = stack.popLast() {
            deepest = max(deepest, depth)
            switch e.structure {
            case .arrayOf(let item)?: stack.append((item, depth + 1))
            case .object(let o)?:
                for f in o.fields where f.value.structure != nil { stack.append((f.value, depth + 1)) }
            case nil: break
            }
        }
        return deepest
    }

    /// The plan as JSON (for `streammap explain --json`).
    public var jsonValue: JSONValue {
        var o = JSONObject()
        o["mapper"] = .string(summary)
        o["streamed"] = .bool(handling.isStreamed)
        if case .materialized(let reason) = handling { o["materializedBecause"] = .string(reason) }
        switch structure {
        case .object(let object)?: o["object"] = object.jsonValue
        case .arrayOf(let item)?: o["arrayOf"] = item.jsonValue
        case nil: break
        }
        return .object(o)
    }
}

extension ObjectExplanation {
    func render(indent: String, depth: Int, into lines: inout [String]) {
        var rows: [[String]] = [["#", "destination", "source", "absent", "null", "mapper", "handling"]]
        var nested: [(String, MapperExplanation)] = []
        var seenField = Set<Int>()
        for (i, entry) in destinationOrder.enumerated() {
            let f = fields[entry.field]
            let source = f.expression.map { "= " + $0 } ?? f.sources.map(\.description).joined(separator: " + ")
            let destination = entry.destination.description
            rows.append([String(i + 1), destination, source, f.whenAbsent.description, f.whenNull.description, f.value.summary,
                         f.handling.description])
            if f.value.structure != nil, seenField.insert(entry.field).inserted, f.handling.isStreamed {
                nested.append((destination, f.value))
            }
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for row in rows { for (c, cell) in row.enumerated() { widths[c] = max(widths[c], cell.count) } }
        for row in rows {
            var line = indent
            for (c, cell) in row.enumerated() {
                line += c == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count + 2)
            }
            lines.append(line)
        }
        if rows.count == 1 { lines.append(indent + "(no fields)") }
        if unmapped.inPlace {
            lines.append(indent + "other keys: kept in place, nested ones too, in input order; the fields' results written back where they were read")
        } else if unmapped.kept {
            var text = "other keys: passed through"
            if let style = unmapped.keyStyle { text += ", keys renamed \(style.rawValue)" }
            if let values = unmapped.values {
                text += ", values mapped with \(values.summary), \(values.handling)"
            } else {
                text += ", values copied, streamed"
            }
            lines.append(indent + text)
        } else {
            lines.append(indent + "other keys: dropped, skipped while parsing")
        }
        let required = requiredSources.map(\.description)
        lines.append(indent + "required: " + (required.isEmpty ? "none" : required.joined(separator: ", ")))
        if destinationsOverlap { lines.append(indent + "note: destinations nest in each other, so this object is built whole") }
        for (destination, value) in nested { value.render(label: destination, indent: indent, depth: depth, into: &lines) }
    }

    var jsonValue: JSONValue {
        var o = JSONObject()
        o["fields"] = .array(destinationOrder.map { entry in
            let f = fields[entry.field]
            var fo = JSONObject()
            fo["destination"] = .string(entry.destination.description)
            fo["sources"] = .array(f.sources.map { .string($0.description) })
            if let e = f.expression { fo["expr"] = .string(e) }
            fo["required"] = .bool(f.isRequired)
            fo["absent"] = .string(f.whenAbsent.description)
            fo["null"] = .string(f.whenNull.description)
            fo["streamed"] = .bool(f.handling.isStreamed)
            if case .materialized(let reason) = f.handling { fo["materializedBecause"] = .string(reason) }
            fo["value"] = f.value.jsonValue
            return .object(fo)
        })
        var u = JSONObject()
        u["kept"] = .bool(unmapped.kept)
        if unmapped.inPlace { u["inPlace"] = .bool(true) }
        if let s = unmapped.keyStyle { u["keyStyle"] = .string(s.rawValue) }
        if let v = unmapped.values { u["values"] = v.jsonValue }
        o["unmapped"] = .object(u)
        o["required"] = .array(requiredSources.map { .string($0.description) })
        return .object(o)
    }
}
