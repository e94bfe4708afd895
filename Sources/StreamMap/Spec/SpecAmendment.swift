/// One-liner amendments to a spec document — what the command line's flags do — applied to the spec file's
/// document or to a new one, so that flags and spec files share one language (and `--print-spec` shows the result
/// as a spec file). The spec schema's one owner is `Spec/`: the command line only fills this in.
///
/// Rules (README, "Flags and spec files"):
/// - `--field SRC=DST`, `--require`, `--type`, `--default` amend the spec's field for the same source key path
///   (flags win), or add a field after the spec's, in the order `--field`, `--require`, `--type`, `--default`.
/// - A field added by a flag leaves an absent value out and writes null as null; `--require` makes absent and null
///   reject the record, `--default` writes a value for both, `--type` checks the type (absent passes).
/// - `--key-style` renames what the flags do not spell out: the keys of `--field SRC` without `=DST` (and of fields
///   added by `--require`, `--type`, `--default`), the keys nested in their values, and passed-through keys with
///   their nested keys. Destinations in the spec file are kept.
/// - `--key-collisions` sets `"collisions"` on the key styles `--key-style` adds, or on the spec's `unmapped` style.
/// - `--require`, `--type`, `--default` on their own (no spec, no `--field`, no `--drop-unmapped`) check in place
///   (`"unmapped": "inPlace"`): every other key of the record stays, nested ones too, in input order; a default for
///   an absent key is added at the end of its object. With `--key-style`, the whole record is then renamed (a
///   `mapper`: the in-place object, then `keys`).
/// - Unmapped keys: `--keep-unmapped` / `--drop-unmapped`; otherwise the spec's setting; without a spec, dropped
///   when `--field` is given, else kept (so `streammap --require id` validates and passes everything through).
/// - `--where` sets the document's `where` (replacing the spec's), with a whole-record `mapper` too; alone, without
///   a spec, it filters records that are copied (`"mapper": "identity"`).
public struct SpecAmendment: Sendable {
    /// Keys no field reads: kept or dropped (`--keep-unmapped`, `--drop-unmapped`); nil: the spec decides.
    public enum Unmapped: Sendable {
        /// Passed through (`--keep-unmapped`).
        case keep
        /// Left out (`--drop-unmapped`).
        case drop
    }

    /// `SRC` or `SRC=DST` (`--field`).
    public var fields: [String] = []
    /// `DST=EXPR` (`--set`): computed fields, written after the `--field` ones.
    public var computed: [String] = []
    /// `--key-style`.
    public var keyStyle: KeyStyle?
    /// `--key-collisions`.
    public var keyCollisions: KeyCollisions?
    /// Source paths (`--require`).
    public var required: [String] = []
    /// `PATH=TYPE` (`--type`).
    public var types: [String] = []
    /// `PATH=COLUMN` (`--column`): the column type typed outputs give the field (`timestamp`, `decimal(18,2)`).
    public var columns: [String] = []
    /// `PATH=JSON` (`--default`).
    public var defaults: [String] = []
    /// `--keep-unmapped` or `--drop-unmapped`; nil when neither is given.
    public var unmapped: Unmapped?
    /// An expression in the `where` grammar (`--where`).
    public var filter: String?
    /// The output array to explode (`--explode`): the spec's `explode`.
    public var explode: String?
    /// What a record without elements gives (`--explode-empty`); with `explode` (or the spec's).
    public var explodeEmpty: RecordExplosion.Empty?

    /// An empty amendment, for the flags' values to be set on.
    public init() {}

    /// Whether anything amends the spec.
    public var amendsSpec: Bool { amendsMapping || filter != nil || explode != nil || explodeEmpty != nil }

    /// Whether anything amends the mapping (all but `filter` and `explode`).
    private var amendsMapping: Bool {
        !fields.isEmpty || !computed.isEmpty || keyStyle != nil || keyCollisions != nil || !required.isEmpty || !types.isEmpty || !columns.isEmpty
            || !defaults.isEmpty || unmapped != nil
    }

    /// `a=b` → ("a", "b"); `a` → ("a", nil). Splits at the first `=`.
    public static func split(_ s: String) -> (String, String?) {
        guard let i = s.firstIndex(of: "=") else { return (s, nil) }
        return (String(s[..<i]), String(s[s.index(after: i)...]))
    }

    /// An amendment that cannot apply (`message` names the flag's spelling).
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// Why, naming the flag: `--type age=int: unknown type "int" (did you mean "integer"?)`.
        public var message: String
        public var description: String { message }
    }

    /// The amended document. `base` is the spec file's document (nil without one).
    public func apply(to base: JSONValue?) throws(Refusal) -> JSONValue {
        var doc = base?.objectValue ?? JSONObject()
        if let filter {
            if base == nil && !amendsMapping { doc["mapper"] = .string("identity") }
            doc["where"] = .string(filter)
        }
        if explode != nil || explodeEmpty != nil {
            var path = explode.map(JSONValue.string)
            if path == nil, let given = doc["explode"] { path = given.stringValue.map(JSONValue.string) ?? given.objectValue?["path"] }
            guard let path else {
                throw Refusal(message: "--explode-empty needs --explode PATH (or a spec with \"explode\")")
            }
            if base == nil && !amendsMapping { doc["mapper"] = .string("identity") }
            doc["explode"] = explodeEmpty.map { .object(JSONObject([("path", path), ("empty", .string($0.rawValue))])) } ?? path
        }
        guard amendsMapping else { return .object(doc) }
        if doc["mapper"] != nil {
            throw Refusal(message: "the spec has a whole-record \"mapper\" and no fields: --field, --set, --key-style, --require, --type, --column, --default and --keep-unmapped/--drop-unmapped cannot amend it")
        }
        let delimiter = doc["delimiter"]?.stringValue ?? "."
        let style = keyStyle
        var table = FieldTable(doc["fields"])
        let collisions: JSONValue? = keyCollisions.map { .string($0.rawValue) }
        let styledValue: JSONValue? = style.map {
            var keys = JSONObject([("keys", .string($0.rawValue)), ("deep", .bool(true))])
            keys["collisions"] = collisions
            return .object(keys)
        }

        func styled(_ path: String) -> String {
            guard let style else { return path }
            return KeyPath(path, delimiter: delimiter).steps.map(style.apply).joined(separator: delimiter)
        }
        // Checks and defaults on their own (no spec, no --field, no --drop-unmapped): the record as it comes, every
        // key where it is, nested ones too, with the checked values in place and defaults added; a key style then
        // renames the whole record.
        let inPlace = base == nil && fields.isEmpty && computed.isEmpty && unmapped != .drop

        /// The field reading `source`, added (in flag form) when the spec has none.
        func ensure(_ source: String) -> Int {
            if let i = table.index(of: source) { return i }
            var f = JSONObject()
            f["to"] = .string(inPlace ? source : styled(source))
            if !inPlace, let styledValue { f["via"] = styledValue }
            f["missing"] = .string("omit")
            f["null"] = .string("null")
            return table.append(source, f, addedByFlag: true)
        }

        for flag in fields {
            let (source, destination) = Self.split(flag)
            let i = ensure(source)
            if let destination { table[i]["to"] = .string(destination) }
        }
        for flag in computed {
            let (destination, expression) = Self.split(flag)
            if table.index(of: destination) != nil && !table.isList {
                throw Refusal(message: "--set \(flag): the spec's fields already have the key \(JSONWriter.string(.string(destination))); write the computed field in the spec")
            }
            var f = JSONObject()
            if table.isList { f["to"] = .string(destination) }
            f["expr"] = .string(expression ?? "")
            f["missing"] = .string("omit")
            f["null"] = .string("null")
            _ = table.append(destination, f, addedByFlag: true, reads: false)
        }
        for source in required {
            let i = ensure(source)
            for k in ["optional", "missing", "null", "default", "reverseDefault"] { table[i][k] = nil }
            table[i]["required"] = .bool(true)
            // `required` checks what the field's mapper gives, so a mapper that hides absence (an `optional`
            // inside `via`) would let it through: the value must also be there after the mapper.
            if let via = table[i]["via"], styledValue == nil || via != styledValue {
                var stages = via.arrayValue ?? [via]
                if stages.last != .string("required") { stages.append(.string("required")) }
                table[i]["via"] = .array(stages)
            }
        }
        for flag in types {
            let (source, type) = Self.split(flag)
            try checkType(type!, in: doc, flag: flag)
            let i = ensure(source)
            table[i]["type"] = .string(type!)
        }
        for flag in columns {
            let (source, column) = Self.split(flag)
            if case .failure(let e) = ColumnType.parse(column ?? "") { throw Refusal(message: "--column \(flag): \(e.message)") }
            let i = ensure(source)
            table[i]["column"] = .string(column!)
        }
        for flag in defaults {
            let (source, text) = Self.split(flag)
            let value = (try? JSONParser.parse(text!)) ?? .null
            let i = ensure(source)
            if table[i]["optional"] != .bool(true) {
                table[i]["missing"] = nil
                table[i]["null"] = nil
            }
            table[i]["required"] = nil
            table[i]["default"] = value
        }
        if !table.entries.isEmpty { doc["fields"] = table.document }

        if inPlace {
            guard let styledValue else {
                doc["unmapped"] = .string("inPlace")
                return .object(doc)
            }
            let checks = JSONObject([("fields", doc["fields"] ?? .object(JSONObject())), ("unmapped", .string("inPlace"))])
            doc["fields"] = nil
            doc["mapper"] = .array([.object(JSONObject([("object", .object(checks))])), styledValue])
            return .object(doc)
        }

        // Unmapped keys.
        let keep: Bool
        switch unmapped {
        case .keep?: keep = true
        case .drop?: keep = false
        case nil:
            if base != nil {
                switch doc["unmapped"] {
                case nil, .string("drop")?: keep = false
                default: keep = true
                }
            } else {
                keep = fields.isEmpty && computed.isEmpty
            }
        }
        if !keep {
            if unmapped == .drop { doc["unmapped"] = .string("drop") }
        } else if let style {
            var u = JSONObject()
            u["keys"] = .string(style.rawValue)
            // The spec's own values mapper stays; otherwise nested keys get the style too.
            u["values"] = doc["unmapped"]?.objectValue?["values"] ?? styledValue
            u["collisions"] = collisions ?? doc["unmapped"]?.objectValue?["collisions"]
            doc["unmapped"] = .object(u)
        } else if let collisions, var u = doc["unmapped"]?.objectValue, u["keys"] != nil {
            u["collisions"] = collisions  // the spec's own key style
            doc["unmapped"] = .object(u)
        } else if doc["unmapped"] == nil || doc["unmapped"] == .string("drop") {
            doc["unmapped"] = .string("keep")
        }
        return .object(doc)
    }

    private func checkType(_ type: String, in doc: JSONObject, flag: String) throws(Refusal) {
        let declared = doc["types"]?.objectValue?.keys ?? []
        let known = JSONType.allCases.map(\.rawValue) + declared
        guard known.contains(type) else {
            throw Refusal(message: "--type \(flag): unknown type \"\(type)\"" + Suggest.hint(type, known)
                          + " (one of \(known.joined(separator: ", ")))")
        }
    }
}

/// The `fields` of a spec in either form (object: source → field; array: fields with `"from"`), with each field
/// the flags touch normalized to the object form.
struct FieldTable {
    struct Entry {
        var source: String
        /// The field as a JSON object (only meaningful when `touched`); `original` is the spec's text of it.
        var field: JSONObject
        var original: JSONValue
        var touched = false
    }

    var entries: [Entry] = []
    var isList = false
    /// The first entry of each source (`index(of:)` without a scan per flag).
    private var firstOfSource: [String: Int] = [:]

    init(_ fields: JSONValue?) {
        switch fields {
        case .object(let table)?:
            for (source, value) in table { entries.append(Entry(source: source, field: Self.normalized(value), original: value)) }
        case .array(let list)?:
            isList = true
            for value in list {
                // (A computed field has no source: it is keyed by its destination, as in the object form.)
                let o = value.objectValue
                let source = o?["from"]?.stringValue ?? (o?["expr"] != nil ? o?["to"]?.stringValue : nil) ?? ""
                entries.append(Entry(source: source, field: Self.normalized(value), original: value))
            }
        default:
            break
        }
        for (i, e) in entries.enumerated() where firstOfSource[e.source] == nil { firstOfSource[e.source] = i }
    }

    /// `"dst"` → `{"to": "dst"}` (both required plain fields); `[MAPPER, "dst"]` → `{"to": "dst", "via": MAPPER}`
    /// (both the mapper as given, no required check).
    static func normalized(_ value: JSONValue) -> JSONObject {
        switch value {
        case .string(let destination): return JSONObject([("to", .string(destination))])
        case .array(let pair) where pair.count == 2: return JSONObject([("to", pair[1]), ("via", pair[0])])
        case .object(let o): return o
        default: return JSONObject()
        }
    }

    func index(of source: String) -> Int? { firstOfSource[source] }

    /// `reads`: the field reads `source` (false: a computed field, keyed by its destination).
    mutating func append(_ source: String, _ field: JSONObject, addedByFlag: Bool, reads: Bool = true) -> Int {
        var f = field
        if isList && reads { f = JSONObject([("from", .string(source))] + f.entries.map { ($0.key, $0.value) }) }
        entries.append(Entry(source: source, field: f, original: .object(f), touched: true))
        if firstOfSource[source] == nil { firstOfSource[source] = entries.count - 1 }
        return entries.count - 1
    }

    subscript(i: Int) -> JSONObject {
        get { entries[i].field }
        set { entries[i].field = newValue; entries[i].touched = true }
    }

    var document: JSONValue {
        if isList { return .array(entries.map { $0.touched ? .object($0.field) : $0.original }) }
        return .object(JSONObject(entries.map { ($0.source, $0.touched ? .object($0.field) : $0.original) }))
    }
}
