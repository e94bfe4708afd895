/// A mapping from one JSON value to another: the algebra of Hydrant, KVMapper, ClassMapper and CYZBaseModel as
/// inspectable values.
///
/// A mapper is plain data (`kind`), so the same value can be run by the tree engine (`map(_:)`, the reference
/// semantics), compiled by the stream engine, explained, and reversed (`reversed()`, Hydrant's `reverseMapper`).
/// Spec files and the Swift API build the same values.
///
/// The input is `JSONValue?`: `nil` is *absent* (the key does not exist), `.null` is JSON null.
public struct Mapper: Sendable {
    /// What a mapper does: one case per operation of the algebra, each holding its inner mappers.
    public indirect enum Kind: Sendable {
        /// Returns its input unchanged. Never fails.
        case identity
        /// Runs `inner`; when it reported no error but produced absent or null, fails (`required`).
        case notNull(Mapper)
        /// Runs `inner`; a fatal failure becomes `fallback` (absent when nil) plus the errors as non-fatal.
        case nonFatal(Mapper, fallback: Fallback?, reverseFallback: Fallback?)
        /// Per-field policies for an absent value, a null value and a value `inner` cannot map.
        case policy(Mapper, FieldPolicy)
        /// Passes values whose type is in the set; absent passes; anything else fails (`type`).
        case check(JSONTypeSet)
        /// Maps an object field by field (Hydrant's `HYDMapObject`, KVMapper's pass-through).
        case object(ObjectMapping)
        /// Maps every element (Hydrant's `HYDMapArrayOf`).
        case arrayOf(Mapper)
        /// The first alternative that succeeds; earlier failures are kept as non-fatal errors.
        case first([Mapper])
        /// A pipeline: each mapper's output feeds the next; a fatal error stops it.
        case thread([Mapper])
        /// Maps with `forward`; its reverse is `reverse` (Hydrant's `HYDMapSplit`).
        case split(forward: Mapper, reverse: Mapper)
        /// Walks into `path` and maps what is there with `inner` (Hydrant's `HYDMapForward`).
        case forward(KeyPath, Mapper)
        /// Maps with `inner` and builds the result out along `path` (Hydrant's `HYDMapBackward`).
        case backward(KeyPath, Mapper)
        /// A lookup table (Hydrant's `HYDMapEnum`).
        case enumTable(EnumTable)
        /// A scalar conversion (dates, numbers, URLs, UUIDs, base64, key styles).
        case convert(Conversion)
        /// A Swift closure (library users only; not expressible in spec files).
        case block(Block)
        /// Runs `inner`, then always `post` (Hydrant's `HYDMapWithPostProcessing`).
        case postProcess(Mapper, PostProcessor)
        /// A computed value: evaluates the expression with its paths read from the input (for a field, the object
        /// it is a field of), then maps the result with `then` as a field maps the value it reads (`then` holds
        /// the field's checks and its `missing` and `null` policies). An error in evaluating the expression is
        /// handled by `invalid`, as the policy in `then` handles the errors of its own mapper.
        case compute(ValueExpression, invalid: FieldPolicy.Action, then: Mapper)
    }

    /// The operation, with its inner mappers (inspectable: the engines, `explain` and `reversed()` switch on it).
    public let kind: Kind
    /// A mapper of `kind`. The static builders (`.object { … }`, `.notNull(_:)`, `.url()`…) read better.
    public init(_ kind: Kind) { self.kind = kind }
}

extension Mapper {
    /// Whether the mapper gives the same result every time for the same input: true unless a closure of the
    /// library's user runs somewhere inside (a block, a post-processor, a default factory). Mappers from spec
    /// files always are. (Lets the stream engine work out once what an absent value maps to.)
    var isDeterministic: Bool {
        switch kind {
        case .identity, .check, .enumTable, .convert:
            return true
        case .compute(_, _, let then):
            return then.isDeterministic
        case .postProcess(let m, let post) where post.unchangedWhen != nil:
            // (The library's own result checks, the Arrow output's: they read the result alone.)
            return m.isDeterministic
        case .block, .postProcess:
            return false
        case .notNull(let m), .arrayOf(let m), .policy(let m, _), .forward(_, let m), .backward(_, let m):
            return m.isDeterministic
        case .nonFatal(let m, let fallback, let reverseFallback):
            return m.isDeterministic && fallback?.isFactory != true && reverseFallback?.isFactory != true
        case .first(let ms), .thread(let ms):
            return ms.allSatisfy(\.isDeterministic)
        case .split(let forward, let reverse):
            return forward.isDeterministic && reverse.isDeterministic
        case .object(let o):
            if case .keep(_, let values?, _) = o.unmapped, !values.isDeterministic { return false }
            return o.fields.allSatisfy { $0.mapper.isDeterministic }
        }
    }
}

/// A default value, or a closure that makes one each time it is needed (Hydrant's default factory).
public enum Fallback: Sendable {
    /// This value, every time.
    case value(JSONValue)
    /// A closure called each time a default is needed (a fresh value per record).
    case factory(@Sendable () -> JSONValue)

    /// The default: the value, or what the factory returns now.
    public func make() -> JSONValue {
        switch self {
        case .value(let v): return v
        case .factory(let f): return f()
        }
    }

    var isFactory: Bool {
        if case .factory = self { return true }
        return false
    }
}

/// What a field does when its value is absent, null, or cannot be mapped.
public struct FieldPolicy: Sendable {
    /// What to do in one of the three cases.
    public enum Action: Sendable, Equatable {
        /// Fail the record (a fatal error).
        case fail
        /// Leave the field out.
        case omit
        /// Write this value instead.
        case useDefault(JSONValue)
        /// Write `null`.
        case keepNull
        /// Give the value to the inner mapper as if no policy applied (for `invalid`, the same as `fail`).
        case passToMapper
    }
    /// When the value is absent (the key does not exist).
    public var missing: Action
    /// When the value is JSON `null`.
    public var null: Action
    /// When the inner mapper fails fatally on the value (`passToMapper` fails too).
    public var invalid: Action

    /// A policy; every case fails the record unless given.
    public init(missing: Action = .fail, null: Action = .fail, invalid: Action = .fail) {
        self.missing = missing
        self.null = null
        self.invalid = invalid
    }
}

/// A set of JSON types, for type checks and unions (`["string", "null"]`).
public struct JSONTypeSet: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `null`.
    public static let null = JSONTypeSet(rawValue: 1)
    /// `true` and `false`.
    public static let boolean = JSONTypeSet(rawValue: 2)
    /// Integers only: numbers with no fraction and no exponent.
    public static let integer = JSONTypeSet(rawValue: 4)
    /// Every number; includes `integer`.
    public static let number: JSONTypeSet = [JSONTypeSet(rawValue: 8), .integer]
    /// Strings.
    public static let string = JSONTypeSet(rawValue: 16)
    /// Arrays, of any elements.
    public static let array = JSONTypeSet(rawValue: 32)
    /// Objects.
    public static let object = JSONTypeSet(rawValue: 64)

    /// The set of one type (`.number` includes `.integer`, as JSON Schema's `number` does).
    public init(_ type: JSONType) {
        switch type {
        case .null: self = .null
        case .boolean: self = .boolean
        case .integer: self = .integer
        case .number: self = .number
        case .string: self = .string
        case .array: self = .array
        case .object: self = .object
        }
    }

    /// Whether the value's type is in the set (an integer is a `number` too).
    public func contains(_ value: JSONValue) -> Bool { contains(JSONTypeSet(value.type)) }

    /// `integer`, `string or null`.
    public var description: String {
        switch self {  // (one type: a message per rejected record names it, with nothing built)
        case .integer: return "integer"
        case .number: return "number"
        case .string: return "string"
        case .boolean: return "boolean"
        case .object: return "object"
        case .array: return "array"
        case .null: return "null"
        default: break
        }
        var names: [String] = []
        if contains(.number) { names.append("number") } else if contains(.integer) { names.append("integer") }
        for (t, n) in [(JSONTypeSet.string, "string"), (.boolean, "boolean"), (.object, "object"), (.array, "array"), (.null, "null")]
        where contains(t) { names.append(n) }
        return names.isEmpty ? "nothing" : names.joined(separator: " or ")
    }
}

/// A user closure mapper. `forward` gets the input (nil = absent) and returns a result; `reverse`, when given,
/// makes the mapper reversible.
public struct Block: Sendable {
    /// The name `explain` and errors show (`block` by default).
    public var name: String
    /// Maps the input (nil when absent) to a result: a value or none, and errors.
    public var forward: @Sendable (JSONValue?) -> MapResult
    /// The inverse of `forward`, used by `reversed()`; nil makes the mapper not reversible.
    public var reverse: (@Sendable (JSONValue?) -> MapResult)?

    /// A closure mapper named `name`; give `reverse` to make it reversible.
    public init(
        name: String = "block", forward: @escaping @Sendable (JSONValue?) -> MapResult,
        reverse: (@Sendable (JSONValue?) -> MapResult)? = nil
    ) {
        self.name = name
        self.forward = forward
        self.reverse = reverse
    }
}

/// Runs after a mapper with the original input and the mapper's result, and may change the result.
public struct PostProcessor: Sendable {
    /// The name `explain` and errors show (`postProcess` by default).
    public var name: String
    /// Gets the inner mapper's input (nil when absent) and its result, and returns the result to keep.
    public var forward: @Sendable (_ source: JSONValue?, _ result: MapResult) -> MapResult
    /// The same on the way back, used by `reversed()`; nil makes the mapper not reversible.
    public var reverse: (@Sendable (_ source: JSONValue?, _ result: MapResult) -> MapResult)?
    /// For a post-processor that reads only the result (its `forward` ignores the source): a test on a non-fatal
    /// result value's canonical JSON text that is true only when `forward` would return the result unchanged
    /// (a number that fits its column). The stream engine then keeps the inner mapper's result as it streamed it,
    /// and calls `forward` (with no source) only when the test fails — so the value is not built for every record.
    var unchangedWhen: (@Sendable (UnsafeRawBufferPointer) -> Bool)?

    /// A post-processor named `name`; give `reverse` to make it reversible.
    public init(
        name: String = "postProcess",
        forward: @escaping @Sendable (_ source: JSONValue?, _ result: MapResult) -> MapResult,
        reverse: (@Sendable (_ source: JSONValue?, _ result: MapResult) -> MapResult)? = nil
    ) {
        self.name = name
        self.forward = forward
        self.reverse = reverse
    }
}

/// A mapper that has no reverse, with the reason.
public struct NotReversibleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name of the mapper that has no reverse (`enum`, a block's name, a conversion's name…).
    public var mapper: String
    /// Why (`no reverse closure`, `the table is not one-to-one`…).
    public var reason: String
    public var description: String { "\(mapper) is not reversible: \(reason)" }
}
