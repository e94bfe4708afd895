// ArrowSchema.swift — the Arrow columns of a mapper's output, found from the mapper alone (before any record is
// read), and the checks that make every mapped value fit its column.

/// The type of an Arrow column (or of a child of one), as StreamMap writes it.
public indirect enum ArrowType: Sendable, Hashable, CustomStringConvertible {
    /// `bool`: JSON `true`/`false`.
    case bool
    /// `int64`: JSON integers from −2⁶³ to 2⁶³−1 (a record with an integer outside that range is rejected).
    case int64
    /// `float64` (`double`): JSON numbers, each the nearest double to its decimal text; integers are exact up to 2⁵³.
    case float64
    /// `utf8` (`string`): JSON strings' text.
    case utf8
    /// `timestamp[unit, tz=UTC]`: instants (ISO 8601 date strings with a zone) as `unit`s since
    /// 1970-01-01T00:00:00Z; a field's `"column": "timestamp(…)"` asks for it.
    case timestamp(ColumnType.TimeUnit)
    /// `decimal128(precision, scale)`: JSON numbers, exactly; a field's `"column": "decimal(P,S)"` asks for it.
    case decimal128(precision: Int, scale: Int)
    /// `utf8` holding each value's compact JSON text: what a field declared `"object"` or `"array"` without its
    /// shape becomes (whatever the value is, its text is kept whole).
    case jsonText
    /// `list<item>`: JSON arrays whose elements are all of the item type.
    case list(ArrowType)
    /// `struct<…>`: JSON objects with these fields (a field the object lacks is null).
    case structure([ArrowField])

    /// `int64`, `list<utf8>`, `struct<id: int64, name: utf8>`.
    public var description: String {
        switch self {
        case .bool: return "bool"
        case .int64: return "int64"
        case .float64: return "float64"
        case .utf8: return "utf8"
        case .jsonText: return "utf8 (JSON text)"
        case .timestamp(let unit): return "timestamp[\(unit.rawValue), UTC]"
        case .decimal128(let p, let s): return "decimal128(\(p), \(s))"
        case .list(let item): return "list<\(item)>"
        case .structure(let fields): return "struct<" + fields.map { "\($0.name): \($0.type)" }.joined(separator: ", ") + ">"
        }
    }

    /// Whether a value of this type must be checked as it is mapped: numbers (an integer beyond int64, a number
    /// beyond a double's range or a decimal's digits), dates (a timestamp's unit and range), anywhere inside.
    var needsCheck: Bool {
        switch self {
        case .int64, .float64, .timestamp, .decimal128: return true
        case .bool, .utf8, .jsonText: return false
        case .list(let item): return item.needsCheck
        case .structure(let fields): return fields.contains { $0.type.needsCheck }
        }
    }
}

/// A named Arrow column, or a child of a struct column. Every field is nullable: an absent or null value is a null.
public struct ArrowField: Sendable, Hashable {
    /// The key the mapped records have.
    public var name: String
    /// The column's type.
    public var type: ArrowType

    /// A field named `name` of `type`.
    public init(_ name: String, _ type: ArrowType) {
        self.name = name
        self.type = type
    }
}

/// Why a mapper's output cannot be written as Arrow columns: the fields whose type the spec leaves open, or whose
/// values can be of types that one column cannot hold.
public struct ArrowSchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One output field and what is wrong with it (`name: its type is not declared`).
    public struct Problem: Sendable, Equatable {
        /// The field's destination path, its steps joined with `.`.
        public var field: String
        /// What keeps it from a column.
        public var reason: String
    }

    /// Every field that cannot be typed, in output order (or one problem about the whole output).
    public var problems: [Problem]

    public var description: String {
        let untyped = problems.filter { $0.reason == Self.undeclared }.map(\.field)
        var parts: [String] = []
        if !untyped.isEmpty {
            parts.append("the type of \(untyped.count == 1 ? "this output field" : "these output fields") is not known from the spec: "
                         + untyped.joined(separator: ", ")
                         + "; declare it (\"type\" in the spec, or --type SRC=TYPE), or write a typed spec with 'streammap infer'")
        }
        parts += problems.filter { $0.reason != Self.undeclared }.map { $0.field.isEmpty ? $0.reason : "\($0.field): \($0.reason)" }
        return parts.joined(separator: "; ")
    }

    static let undeclared = "its type is not declared"
}

/// The Arrow schema of a mapper's output: one column per output field, in output order; nested objects mapped
/// field by field become structs, arrays mapped element by element lists.
///
/// Types come from the spec, never from the records: a declared `"type"` (`integer` → int64, `number` → float64,
/// `string` → utf8, `boolean` → bool, `object`/`array` without a shape → utf8 JSON text), what a conversion makes
/// (`dateToNumber` → int64; `stringToNumber`, `multiply`, `add` → float64, or int64 from integers by integers;
/// dates, URLs, UUIDs, `toString` → utf8), an enum's values, `arrayOf` → list, and defaults, which must agree
/// with the rest. A field whose type stays open (a plain rename of an unchecked value) is an
/// ``ArrowSchemaError``.
public struct ArrowSchema: Sendable, Hashable {
    /// The columns, in output order.
    public let fields: [ArrowField]

    /// A schema of these columns.
    public init(fields: [ArrowField]) { self.fields = fields }

    /// The schema of `mapper`'s output, which must be an object of named fields, each of a known type.
    public init(mapper: Mapper) throws(ArrowSchemaError) {
        var inference = TypeInference()
        let typing: Typing
        do {
            typing = try inference.typing(of: mapper, input: .unknown)
        } catch {
            throw ArrowSchemaError(problems: [.init(field: error.path, reason: error.reason)])
        }
        guard case .known(.structure(let fields)) = typing else {
            throw ArrowSchemaError(problems: [.init(field: "", reason: "the mapping's result is not an object of named fields (\(inference.openReason ?? "its keys are not known from the spec"))")])
        }
        var problems: [ArrowSchemaError.Problem] = []
        Self.collectUnknown(fields, under: [], into: &problems)
        guard problems.isEmpty else { throw ArrowSchemaError(problems: problems) }
        self.fields = fields
    }

    /// The schema of the records `explosion` makes of records of this schema: the list column it explodes holds
    /// one element instead (`list<T>` becomes `T`). Throws when the path is not a list column of this schema.
    public func exploding(_ explosion: RecordExplosion) throws(ArrowSchemaError) -> ArrowSchema {
        func replaced(_ fields: [ArrowField], depth: Int) -> [ArrowField]? {
            guard let i = fields.firstIndex(where: { bytesEqual($0.name, explosion.path[depth]) }) else { return nil }
            var out = fields
            switch fields[i].type {
            case .list(let element) where depth == explosion.path.count - 1:
                out[i].type = element
            case .structure(let children) where depth < explosion.path.count - 1:
                guard let inner = replaced(children, depth: depth + 1) else { return nil }
                out[i].type = .structure(inner)
            default:
                return nil
            }
            return out
        }
        guard let fields = replaced(fields, depth: 0) else {
            throw ArrowSchemaError(problems: [.init(field: explosion.path.joined(separator: "."),
                                                    reason: "explode names it, but it is not a list column of the output (\(describe(explosion.path)))")])
        }
        return ArrowSchema(fields: fields)
    }

    /// What the column at `path` is, for a message: `its type is utf8` or `no such column`.
    private func describe(_ path: [String]) -> String {
        var fields = self.fields
        for (depth, key) in path.enumerated() {
            guard let f = fields.first(where: { bytesEqual($0.name, key) }) else { return "no such column" }
            if depth == path.count - 1 { return "its type is \(f.type)" }
            guard case .structure(let children) = f.type else { return "\(f.name) is of type \(f.type)" }
            fields = children
        }
        return "no such column"
    }

    /// Fields typed `.jsonText` stand in for unknown ones during inference (`TypeInference.unknownMarker`).
    private static func collectUnknown(_ fields: [ArrowField], under prefix: [String], into problems: inout [ArrowSchemaError.Problem]) {
        for f in fields {
            var type = f.type
            while case .list(let element) = type { type = element }  // (the fields of a list of objects too)
            if type == TypeInference.unknownMarker {
                problems.append(.init(field: (prefix + [f.name]).joined(separator: "."), reason: ArrowSchemaError.undeclared))
            } else if case .structure(let inner) = type {
                collectUnknown(inner, under: prefix + [f.name], into: &problems)
            }
        }
    }

    /// `mapper` with a check on every field whose values hold numbers: an integer that int64 cannot hold, or a
    /// number beyond a double's range, fails the field with its path (a `value` error), so the record is rejected
    /// as any other invalid record is — never written as a rounded or wrong value. The rest of the mapping is
    /// unchanged; both engines run the checks alike.
    public func checking(_ mapper: Mapper) -> Mapper {
        guard case .object(var o) = mapper.kind else {
            return Self.checked(mapper, as: .structure(fields))
        }
        var inference = TypeInference()
        for i in o.fields.indices {
            guard var t = try? inference.typing(of: o.fields[i].mapper, input: .unknown) else { continue }
            // (A one-to-many field's value is the array its destinations take their elements from.)
            if let column = o.fields[i].column {
                if o.fields[i].destinations.count > 1, t == .unknown { t = .known(.list(TypeInference.unknownMarker)) }
                guard let typed = try? TypeInference.typing(t, column: column) else { continue }
                t = typed
            }
            guard case .known(let type) = t, type.needsCheck, !(type == .int64 && Self.alwaysFits(o.fields[i].mapper)) else { continue }
            o.fields[i].mapper = Self.checked(o.fields[i].mapper, as: type)
        }
        return Mapper(.object(o))
    }

    /// Whether every value `m` gives fits int64 whatever the record: a date without a fraction (Twitter's,
    /// RFC 822's, Hydrant's RFC 3339, RFC 3339 with milliseconds for `ms`) as whole seconds or milliseconds since
    /// the epoch (years 0 to 9999: within ±2^48 ms), with defaults that fit. Such a field needs no check, and keeps
    /// its fused conversion in the stream engine.
    static func alwaysFits(_ m: Mapper) -> Bool {
        func fits(_ v: JSONValue?) -> Bool {
            guard let v else { return true }
            if case .null = v { return true }
            return ArrowValueCheck.problem(v, .int64) == nil
        }
        switch m.kind {
        case .notNull(let inner), .split(let inner, _):
            return alwaysFits(inner)
        case .policy(let inner, let p):
            return alwaysFits(inner) && [p.missing, p.null, p.invalid].allSatisfy { a in
                if case .useDefault(let v) = a { return fits(v) } else { return true }
            }
        case .nonFatal(let inner, let fallback, _):
            guard alwaysFits(inner) else { return false }
            switch fallback {
            case nil: return true
            case .value(let v)?: return fits(v)
            case .factory?: return false
            }
        case .thread(let stages):
            guard let (formats, unit) = Mapper.dateToNumberStages(stages), unit == .milliseconds || unit == .seconds else { return false }
            return formats.allSatisfy { f in
                switch f {
                case .named(.twitter), .named(.rfc822), .named(.rfc3339): return true
                case .named(.rfc3339Milliseconds): return unit == .milliseconds
                default: return false
                }
            }
        default:
            return false
        }
    }

    private static func checked(_ inner: Mapper, as type: ArrowType) -> Mapper {
        var post = PostProcessor(name: "fits \(type)") { _, result in
            guard !result.isFatal, let value = result.value, let problem = ArrowValueCheck.problem(value, type) else { return result }
            // The source path goes as far as it is known: through array indices, which arrays keep, not past a key,
            // which the mapping may have renamed.
            let source = JSONPath(Array(problem.path.components.prefix { if case .index = $0 { return true } else { return false } }))
            return .failure(result.errors + [MapError(.value, problem.message, sourcePath: source, destinationPath: problem.path)])
        }
        post.unchangedWhen = { text in ArrowValueCheck.fits(text, type) }
        return Mapper(.postProcess(inner, post))
    }
}

/// Whether a JSON value fits a column of a type; the same test the writer's parsing of the value relies on.
enum ArrowValueCheck {
    struct Problem {
        var path: JSONPath
        var message: String
    }

    /// Whether a scalar value's canonical JSON text (as the engines write it) certainly fits a column of `type`
    /// (`problem` would find nothing): the same parsing as the writer's. False for anything it does not decide
    /// (containers, another JSON type): then `problem` decides on the value.
    static func fits(_ text: UnsafeRawBufferPointer, _ type: ArrowType) -> Bool {
        guard let first = text.first else { return false }
        if first == UInt8(ascii: "n") { return true }  // null
        switch type {
        case .int64:
            if let (_, end) = ColumnBuilder.int64Prefix(text, at: 0), end == text.count { return true }
            return ColumnBuilder.int64(text) != nil
        case .float64: return first != UInt8(ascii: "\"") && ColumnBuilder.double(text) != nil
        case .timestamp(let unit):
            guard first == UInt8(ascii: "\""), text.count >= 2 else { return false }
            if case .success = ArrowScalars.timestamp(jsonString: text, unit) { return true }
            return false
        case .decimal128(let p, let s):
            if case .success = ArrowScalars.decimal(text.assumingMemoryBound(to: UInt8.self), precision: p, scale: s) { return true }
            return false
        case .bool, .utf8, .jsonText, .list, .structure:
            return false
        }
    }

    static func problem(_ value: JSONValue, _ type: ArrowType, at path: JSONPath = .root) -> Problem? {
        if case .null = value { return nil }
        switch (type, value) {
        case (.jsonText, _), (.bool, .bool), (.utf8, .string): return nil
        case (.int64, .number(let n)):
            if Int64(n.text) != nil { return nil }  // (a fraction or an exponent is no Int64 either)
            return Problem(path: path, message: n.isInteger
                ? "\(n.text) does not fit the int64 column (−2^63 to 2^63−1); map it with numberToString to keep its digits"
                : "\(MapError.describe(value)) is not an integer, and the column is int64")
        case (.float64, .number(let n)):
            if let d = Double(n.text), d.isFinite { return nil }
            return Problem(path: path, message: "\(n.text) is beyond the range of the float64 column; map it with numberToString to keep its digits")
        case (.timestamp(let unit), .string(let text)):
            var text = text
            return text.withUTF8 { bytes in
                if case .failure(let e) = ArrowScalars.timestamp(bytes, unit) { return Problem(path: path, message: e.message) }
                return nil
            }
        case (.decimal128(let p, let s), .number(let n)):
            var text = n.text
            return text.withUTF8 { bytes in
                if case .failure(let e) = ArrowScalars.decimal(bytes, precision: p, scale: s) { return Problem(path: path, message: e.message) }
                return nil
            }
        case (.list(let item), .array(let elements)):
            for (i, e) in elements.enumerated() {
                if let p = problem(e, item, at: JSONPath(path.components + [.index(i)])) { return p }
            }
            return nil
        case (.structure(let fields), .object(let o)):
            // Mapped objects have their keys in the fields' order: each is looked for from after the last one
            // found, so a wide struct costs one pass, not one search per key.
            var next = 0
            for (key, v) in o {
                // A key the column has no child for cannot be written: not one the spec's fields make.
                let at = fields[next...].firstIndex(where: { $0.name == key }) ?? fields.firstIndex(where: { $0.name == key })
                guard let at else {
                    return Problem(path: JSONPath(path.components + [.key(key)]), message: "the key \(MapError.quoted(key)) is not one of the column's fields")
                }
                next = at + 1 < fields.count ? at + 1 : 0
                if let p = problem(v, fields[at].type, at: JSONPath(path.components + [.key(key)])) { return p }
            }
            return nil
        default:
            return Problem(path: path, message: "expected \(type), found \(MapError.describe(value))\(hint(value, type))")
        }
    }

    /// What would make a value of the wrong JSON type fit its column, when the value says: a number written as a
    /// string (`"12.50"` for a decimal column), an epoch number for a timestamp column. Empty otherwise.
    private static func hint(_ value: JSONValue, _ type: ArrowType) -> String {
        switch (type, value) {
        case (.int64, .string(let s)), (.float64, .string(let s)), (.decimal128, .string(let s)):
            guard s.utf8.count <= 64, NumberText.parseLenient(s) != nil else { return "" }
            return #"; a number written as a string: map it with "stringToNumber" first"#
        case (.timestamp, .number):
            return #"; a number since the epoch: map it with {"numberToDate": "s"} (or "ms") first"#
        default:
            return ""
        }
    }
}

/// What a mapper's output can be, as far as the spec tells.
enum Typing: Equatable {
    /// Nothing but null or absent (no constraint on the column).
    case nothing
    /// Values of one Arrow type (or null).
    case known(ArrowType)
    /// Not known from the spec.
    case unknown
}

struct TypeConflict: Error {
    var path: String
    var reason: String
}

/// Finds `Typing`s: a walk over the mapper's kinds.
struct TypeInference {
    /// Stands for a field of unknown type inside a struct, until `ArrowSchema` lists them.
    static let unknownMarker = ArrowType.structure([ArrowField("\u{0}unknown", .bool)])
    /// Why the output is not an object of named fields, when it is not.
    var openReason: String?

    mutating func typing(of mapper: Mapper, input: Typing) throws(TypeConflict) -> Typing {
        switch mapper.kind {
        case .identity:
            return input
        case .notNull(let m), .split(let m, _):
            return try typing(of: m, input: input)
        case .nonFatal(let m, let fallback, _):
            let t = try typing(of: m, input: input)
            guard case .value(let v)? = fallback else { return fallback == nil ? t : .unknown }
            return try merge(t, default: v)
        case .policy(let m, let policy):
            var t = try typing(of: m, input: input)
            for action in [policy.missing, policy.null, policy.invalid] {
                if case .useDefault(let v) = action { t = try merge(t, default: v) }
            }
            return t
        case .check(let types):
            return try Self.typing(of: types, input: input)
        case .object(let o):
            return try typing(of: o)
        case .arrayOf(let item):
            var itemInput = Typing.unknown
            if case .known(.list(let i)) = input { itemInput = .known(i) }
            switch try typing(of: item, input: itemInput) {
            case .known(let i): return .known(.list(i))
            case .nothing, .unknown: return .known(.list(Self.unknownMarker))
            }
        case .first(let alternatives):
            guard var t = try alternatives.first.map({ m throws(TypeConflict) in try typing(of: m, input: input) }) else { return .unknown }
            for m in alternatives.dropFirst() { t = try merge(t, try typing(of: m, input: input), "another alternative") }
            return t
        case .thread(let stages):
            var t = input
            for stage in stages { t = try typing(of: stage, input: t) }
            return t
        case .forward(_, let m):
            return try typing(of: m, input: .unknown)
        case .backward, .block, .postProcess:
            return .unknown
        case .enumTable(let table):
            var t = Typing.nothing
            for pair in table.pairs { t = try merge(t, literal: pair.to, "the enum's value \(JSONWriter.string(pair.to))") }
            return t
        case .convert(let c):
            return Self.typing(of: c, input: input)
        case .compute(let e, let invalid, let then):
            var t = try typing(of: then, input: try typing(of: e))
            if case .useDefault(let v) = invalid { t = try merge(t, default: v) }
            return t
        }
    }

    /// An expression's result type, found by running its program on types: each step's result from its
    /// operands' (a path's value is unknown), merging where jumps meet.
    func typing(of e: ValueExpression) throws(TypeConflict) -> Typing {
        var stack: [Typing] = []
        var arriving: [Int: Typing] = [:]  // types that jumps bring to a step
        func top() -> Typing { stack.last ?? .unknown }
        for (pc, step) in e.program.enumerated() {
            if let t = arriving[pc] { stack[stack.count - 1] = try merge(top(), t, "another branch of the expression") }
            func jumpTo(_ target: Int, _ t: Typing) throws(TypeConflict) {
                arriving[target] = try arriving[target].map { a throws(TypeConflict) in try merge(a, t, "another branch of the expression") } ?? t
            }
            switch step {
            case .literal(let v): stack.append(v.isNull ? .nothing : Self.typing(of: v))
            case .path: stack.append(.unknown)
            case .negate: break
            case .not, .requireBoolean: stack[stack.count - 1] = .known(.bool)
            case .compare:
                stack.removeLast()
                stack[stack.count - 1] = .known(.bool)
            case .arithmetic(let op):
                let b = stack.removeLast(), a = stack.removeLast()
                switch (a, b) {
                case (.known(.utf8), _), (_, .known(.utf8)): stack.append(op == .add ? .known(.utf8) : .unknown)
                case (.known(.int64), .known(.int64)) where op != .divide: stack.append(.known(.int64))
                case (.known(.int64), .known(.int64)), (.known(.int64), .known(.float64)), (.known(.float64), .known(.int64)),
                     (.known(.float64), .known(.float64)):
                    stack.append(.known(.float64))
                default: stack.append(.unknown)
                }
            case .andJump(let target), .orJump(let target):
                try jumpTo(target, .known(.bool))
                stack.removeLast()
            case .branch:
                stack.removeLast()
            case .jump(let target), .coalesceJump(let target):
                try jumpTo(target, top())
                stack.removeLast()
            case .regex(_, let replaces):
                if replaces { stack.removeLast() }
                stack[stack.count - 1] = .known(replaces ? .utf8 : .bool)
            case .call(let function, let count):
                stack.removeLast(count)
                switch function {
                case .coalesce, .number: stack.append(.unknown)
                case .length: stack.append(.known(.int64))
                case .contains, .startsWith, .endsWith, .matches: stack.append(.known(.bool))
                case .split: stack.append(.known(.list(.utf8)))
                case .lower, .upper, .trim, .trimStart, .trimEnd, .replace, .substring, .join, .string, .replaceMatches:
                    stack.append(.known(.utf8))
                }
            }
        }
        if let t = arriving[e.program.count] { return try merge(top(), t, "another branch of the expression") }
        return top()
    }

    static func typing(of conversion: Conversion, input: Typing) -> Typing {
        switch conversion {
        case .stringToDate, .dateToString, .numberToDate, .numberToString, .anyToString, .stringToURL, .urlToString,
             .stringToUUID, .uuidToString, .base64:
            return .known(.utf8)
        case .dateToNumber:
            return .known(.int64)
        case .stringToNumber:
            return .known(.float64)
        case .multiply(let n), .add(let n):
            return input == .known(.int64) && n.isInteger ? .known(.int64) : .known(.float64)
        case .keys:
            return input
        }
    }

    static func typing(of types: JSONTypeSet, input: Typing) throws(TypeConflict) -> Typing {
        let set = types.subtracting(.null)
        if set.isEmpty { return .nothing }
        if set == .integer {
            return input == .known(.int64) ? input : .known(.int64)
        }
        if set == .number { return input == .known(.int64) ? input : .known(.float64) }
        if set == .string { return .known(.utf8) }
        if set == .boolean { return .known(.bool) }
        if set == .array {
            if case .known(.list) = input { return input }
            return .known(.jsonText)
        }
        if set == .object {
            if case .known(.structure) = input { return input }
            return .known(.jsonText)
        }
        throw TypeConflict(path: "", reason: "its values are \(types), which one column cannot hold")
    }

    /// A literal's typing (a default, an enum's value).
    static func typing(of value: JSONValue) -> Typing {
        switch value {
        case .null: return .nothing
        case .bool: return .known(.bool)
        case .number(let n): return .known(n.isInteger ? .int64 : .float64)
        case .string: return .known(.utf8)
        case .array, .object: return .known(.jsonText)
        }
    }

    /// `a` with a default: a default takes the column as the mapping makes it — null, or a value that fits (an
    /// integer in a float64 column, a list or object with the column's items or fields, anything in JSON text) —
    /// else the spec cannot be written as Arrow (a float default in an int64 column is not widened to float64,
    /// an integer beyond int64 is not left to reject every record that lacks the value).
    func merge(_ a: Typing, default v: JSONValue) throws(TypeConflict) -> Typing {
        let what = "its default \(JSONWriter.string(v))"
        guard case .known(let type) = a else { return try merge(a, Self.typing(of: v), what) }
        if let problem = ArrowValueCheck.problem(v, type) {
            throw TypeConflict(path: "", reason: "its values are \(type), and \(what) does not fit: \(problem.message)")
        }
        return a
    }

    /// `a` with a literal value (an enum's value): a value that fits `a`'s column as it is (a list
    /// default for a list, an object with the struct's fields) keeps the type; others widen it as `merge` says.
    func merge(_ a: Typing, literal v: JSONValue, _ what: String) throws(TypeConflict) -> Typing {
        if case .known(let type) = a, ArrowValueCheck.problem(v, type) == nil { return a }
        return try merge(a, Self.typing(of: v), what)
    }

    func merge(_ a: Typing, _ b: Typing, _ what: String) throws(TypeConflict) -> Typing {
        switch (a, b) {
        case (.nothing, let x), (let x, .nothing): return x
        case (.unknown, _), (_, .unknown): return .unknown
        case (.known(let x), .known(let y)):
            if let t = Self.merge(x, y) { return .known(t) }
            throw TypeConflict(path: "", reason: "its values are \(x), but \(what) is \(y)")
        }
    }

    static func merge(_ x: ArrowType, _ y: ArrowType) -> ArrowType? {
        if x == y { return x }
        switch (x, y) {
        case (.jsonText, _), (_, .jsonText): return .jsonText
        case (.int64, .float64), (.float64, .int64): return .float64
        case (.list(let a), .list(let b)): return merge(a, b).map { .list($0) }
        default: return nil
        }
    }

    /// `t` in the column a field's `"column"` asks for: a timestamp in place of strings, a decimal in place of
    /// numbers (in lists too: each element); a type the spec leaves open takes the column's (the values are
    /// checked as they are mapped).
    static func typing(_ t: Typing, column: ColumnType) throws(TypeConflict) -> Typing {
        let target = column.arrowType
        func replaced(_ x: ArrowType) throws(TypeConflict) -> ArrowType {
            switch (column, x) {
            case (.timestamp, .utf8), (.decimal, .int64), (.decimal, .float64): return target
            case (_, .list(let item)) where item != unknownMarker: return .list(try replaced(item))
            case (_, .list): return .list(target)
            default:
                let needs = if case .timestamp = column { "date strings" } else { "numbers" }
                throw TypeConflict(path: "", reason: "\"column\": \"\(column)\" holds \(needs), and its values are \(x)")
            }
        }
        switch t {
        case .known(let x) where x == unknownMarker: return .known(target)
        case .known(let x): return .known(try replaced(x))
        case .nothing, .unknown: return .known(target)
        }
    }

    /// The literal values a field's mapper can give in place of the value (defaults, in the mapper's outer
    /// layers): each must fit the field's column.
    static func defaults(of m: Mapper) -> [JSONValue] {
        switch m.kind {
        case .notNull(let inner), .split(let inner, _): return defaults(of: inner)
        case .policy(let inner, let p):
            return defaults(of: inner) + [p.missing, p.null, p.invalid].compactMap { a in
                if case .useDefault(let v) = a { return v } else { return nil }
            }
        case .nonFatal(let inner, let fallback, _):
            if case .value(let v)? = fallback { return defaults(of: inner) + [v] }
            return defaults(of: inner)
        case .thread(let stages): return stages.last.map(defaults(of:)) ?? []
        default: return []
        }
    }

    /// The struct of an object mapping's fields: destinations nest as their paths say.
    mutating func typing(of o: ObjectMapping) throws(TypeConflict) -> Typing {
        switch o.unmapped {
        case .keep:
            openReason = "unmapped keys are passed through (\"unmapped\": \"keep\")"
            return .unknown
        case .inPlace:
            openReason = "the records are kept as they come (\"unmapped\": \"inPlace\")"
            return .unknown
        case .drop:
            break
        }
        var root = Node()
        for field in o.fields {
            let name = field.destinations.map { $0.steps.joined(separator: ".") }.joined(separator: ", ")
            var t: Typing
            do {
                t = try typing(of: field.mapper, input: .unknown)
            } catch {
                throw TypeConflict(path: error.path.isEmpty ? name : name + "." + error.path, reason: error.reason)
            }
            if field.destinations.count > 1 {
                // One-to-many: each destination takes one element.
                if case .known(.list(let item)) = t { t = .known(item) } else if case .known = t { t = .unknown }
            }
            if let column = field.column {
                do throws(TypeConflict) {
                    t = try Self.typing(t, column: column)
                    for v in Self.defaults(of: field.mapper) {
                        guard case .known(let type) = t, let problem = ArrowValueCheck.problem(v, type) else { continue }
                        throw TypeConflict(path: "", reason: "its default \(JSONWriter.string(v)) does not fit its column: \(problem.message)")
                    }
                } catch {
                    throw TypeConflict(path: name, reason: error.reason)
                }
            }
            for d in field.destinations {
                do {
                    try root.insert(d.steps[...], t)
                } catch {
                    throw TypeConflict(path: d.steps.joined(separator: "."), reason: error.reason)
                }
            }
        }
        return .known(root.type)
    }

    /// Output paths as a tree: leaves with their typing, inner nodes structs.
    struct Node {
        var children: [(name: String, node: Node)] = []
        /// Each child's place in `children`, by name (a search through them made a spec of n fields take time n²).
        private var places: [String: Int] = [:]
        var leaf: Typing?

        var type: ArrowType {
            if let leaf {
                switch leaf {
                case .known(let t): return t
                case .nothing, .unknown: return TypeInference.unknownMarker
                }
            }
            return .structure(children.map { ArrowField($0.name, $0.node.type) })
        }

        mutating func insert(_ steps: ArraySlice<String>, _ t: Typing) throws(TypeConflict) {
            guard let step = steps.first else {
                if case .known(.structure(let fields)) = t, leaf == nil {
                    for f in fields { try insert([f.name][...], .known(f.type)) }
                    return
                }
                guard children.isEmpty else { throw TypeConflict(path: "", reason: "a value is written where other fields write an object's members") }
                if let leaf {
                    switch (leaf, t) {
                    case (.known(let a), .known(let b)):
                        guard let m = TypeInference.merge(a, b) else {
                            throw TypeConflict(path: "", reason: "two fields write it, with values of \(a) and \(b)")
                        }
                        self.leaf = .known(m)
                    case (.nothing, _): self.leaf = t
                    case (_, .nothing): break
                    default: self.leaf = .unknown
                    }
                } else {
                    leaf = t
                }
                return
            }
            if let leaf {
                guard case .known(.structure(let fields)) = leaf else {
                    throw TypeConflict(path: "", reason: "members are written into a value that is not an object")
                }
                self.leaf = nil
                for f in fields { try insert([f.name][...], .known(f.type)) }
            }
            if let i = places[step] {
                try children[i].node.insert(steps.dropFirst(), t)
            } else {
                var child = Node()
                try child.insert(steps.dropFirst(), t)
                places[step] = children.count
                children.append((step, child))
            }
        }
    }
}
