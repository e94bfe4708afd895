/// Hydrant's object mapping: source key paths → destination key paths, each field with its mapper, plus
/// KVMapper's treatment of the keys that no field names.
public struct ObjectMapping: Sendable {
    /// One field: where its value is read, how it is mapped, and where the result is written.
    public struct Field: Sendable {
        /// One path, or several (many-to-one: the value is the array of their values, absent if any is absent).
        public var sources: [KeyPath]
        /// One path, or several (one-to-many: the value must be an array with one element per destination).
        public var destinations: [KeyPath]
        /// Maps the value read from the sources; its result (absent: the field is left out) goes to the destinations.
        public var mapper: Mapper
        /// The column type typed outputs (Arrow) give the field's values, where the spec asks for one (`"column"`):
        /// a timestamp for dates, an exact decimal for numbers. Nil: the type the mapper's values have.
        public var column: ColumnType?

        /// A field with every part given; `sources` and `destinations` must not be empty (a precondition).
        public init(sources: [KeyPath], destinations: [KeyPath], mapper: Mapper, column: ColumnType? = nil) {
            precondition(!sources.isEmpty && !destinations.isEmpty, "a field needs a source and a destination")
            self.sources = sources
            self.destinations = destinations
            self.mapper = mapper
            self.column = column
        }

        /// `"src": "dst"`: a required plain field (absent or null is fatal).
        public init(_ source: String, to destination: String, delimiter: String = ".") {
            self.init(
                sources: [KeyPath(source, delimiter: delimiter)], destinations: [KeyPath(destination, delimiter: delimiter)],
                mapper: .required)
        }

        /// `"id"`: a required field that keeps its name (`Field("id")` is `Field("id", to: "id")`).
        public init(_ name: String, delimiter: String = ".") {
            self.init(name, to: name, delimiter: delimiter)
        }

        /// A field that keeps its name, through `mapper` as given: `Field("age", .omitWhenAbsent(.integer))`.
        public init(_ name: String, delimiter: String = ".", _ mapper: Mapper) {
            self.init(name, to: name, delimiter: delimiter, mapper)
        }

        /// A computed field: reads the object it is a field of (`KeyPath.root`), writes `mapper`'s result — a
        /// `Mapper.compute` — at `destination`: `Field(computing: try ValueExpression("price * qty"), to: "total")`.
        public init(computing expression: ValueExpression, to destination: String, delimiter: String = ".",
                    invalid: FieldPolicy.Action = .fail, then: Mapper = .required) {
            self.init(sources: [.root], destinations: [KeyPath(destination, delimiter: delimiter)],
                      mapper: .compute(expression, invalid: invalid, then: then))
        }

        /// The expression of a computed field (one source, the root, and a `compute` mapper), else nil.
        var computed: ValueExpression? {
            guard sources.count == 1, sources[0].steps.isEmpty, case .compute(let e, _, _) = mapper.kind else { return nil }
            return e
        }

        /// `"src": [mapper, "dst"]`: the mapper as given (no required check added, as in Hydrant).
        public init(_ source: String, to destination: String, delimiter: String = ".", _ mapper: Mapper) {
            self.init(
                sources: [KeyPath(source, delimiter: delimiter)], destinations: [KeyPath(destination, delimiter: delimiter)],
                mapper: mapper)
        }
    }

    /// What happens to input keys that no field reads (a key is "read" when it is the first step of a source path).
    public enum Unmapped: Sendable {
        /// Left out of the output (Hydrant).
        case drop
        /// Passed through after the mapped fields, in input order (KVMapper), with an optional key style and an
        /// optional mapper applied to each value. A pass-through key whose output name equals the first step of a
        /// mapped destination is left out with a warning: mapped fields win. Two keys that the style gives one
        /// name collide (`collisions`: an error, or a warning with the later value kept at the earlier place).
        case keep(keyStyle: KeyStyle?, values: Mapper?, collisions: KeyCollisions = .fail)
        /// Kept where they are: the output is the input object, every key (nested ones too) in input order, with
        /// each field's result written in place at its source path — a field writes where it reads (one source,
        /// the same destination). A result that is absent removes the key; a key the input lacks (a default) is
        /// added at the end of its object. What one-liner checks and defaults (`--type`, `--require`,
        /// `--default` on their own) map with: they never change the other keys. The stream engine copies such an
        /// object as it streams and maps it whole only when a field changes it (`InPlaceSink`).
        case inPlace

        /// Passed through as they are, after the mapped fields.
        public static let keep = Unmapped.keep(keyStyle: nil, values: nil)
    }

    /// The fields, in the order their results are written.
    public var fields: [Field]
    /// What happens to the input's keys that no field reads.
    public var unmapped: Unmapped

    /// An object mapping of `fields`; unread keys are dropped unless `unmapped` says otherwise.
    public init(fields: [Field], unmapped: Unmapped = .drop) {
        self.fields = fields
        self.unmapped = unmapped
    }

    /// First steps of every source path: these input keys are consumed and never passed through.
    /// The paths a computed field's expression reads count as its sources.
    var consumedSourceKeys: Set<ByteKey> {
        Set(fields.flatMap { ($0.computed?.paths ?? $0.sources).compactMap { $0.steps.first.map(ByteKey.init) } })
    }
    /// First steps of every destination path: pass-through keys with these names are left out.
    var reservedDestinationKeys: Set<ByteKey> { Set(fields.flatMap { $0.destinations.compactMap { $0.steps.first.map(ByteKey.init) } }) }
}

/// Builds an object by inserting values at (possibly nested) destination paths, in call order.
struct ObjectBuilder {
    private(set) var object = JSONObject()

    /// Inserts `value` at `path`. Fails when the path runs into a non-object or the key is already written.
    mutating func insert(_ value: JSONValue, at path: KeyPath) -> Bool {
        Self.insert(value, steps: path.steps[...], into: &object)
    }

    private static func insert(_ value: JSONValue, steps: ArraySlice<String>, into object: inout JSONObject) -> Bool {
        guard let head = steps.first else { return false }
        let rest = steps.dropFirst()
        if rest.isEmpty {
            guard object[head] == nil else { return false }
            object[head] = value
            return true
        }
        var child: JSONObject
        switch object[head] {
        case nil: child = JSONObject()
        case .object(let o)?: child = o
        default: return false
        }
        object[head] = .null  // release our reference so `child` is uniquely owned while it grows
        let ok = insert(value, steps: rest, into: &child)
        object[head] = .object(child)
        return ok
    }
}
