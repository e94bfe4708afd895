/// The Swift API: the same mapper values that spec files build.
///
/// ```swift
/// let person = Mapper.object {
///     Field("first_name", to: "firstName")
///     Field("homepage", to: "homepage", .optionally(.url()))
///     Field("age", to: "age", .optionally(.integer))
/// }
/// ```
extension Mapper {
    public static let identity = Mapper(.identity)
    /// Absent or null is a fatal `required` error (Hydrant's `HYDMapNotNull()` as documented).
    public static let required = Mapper(.notNull(.identity))
    public static func notNull(_ inner: Mapper = .identity) -> Mapper { Mapper(.notNull(inner)) }

    /// Hydrant's `HYDMapOptionally`: absent, null or a fatal failure of `inner` gives `default` (absent when nil)
    /// plus a non-fatal error. `reverseDefault` is the default of the reverse mapper.
    public static func optionally(_ inner: Mapper = .identity, default: JSONValue? = nil, reverseDefault: JSONValue? = nil) -> Mapper {
        Mapper(.nonFatal(.notNull(inner), fallback: `default`.map(Fallback.value), reverseFallback: reverseDefault.map(Fallback.value)))
    }

    /// Hydrant's `HYDMapOptionallyWithDefaultFactory`.
    public static func optionally(_ inner: Mapper = .identity, defaultFactory: @escaping @Sendable () -> JSONValue) -> Mapper {
        Mapper(.nonFatal(.notNull(inner), fallback: .factory(defaultFactory), reverseFallback: nil))
    }

    /// Hydrant's `HYDMapNonFatally`: only a fatal failure of `inner` falls back (absent passes as absent).
    public static func nonFatally(_ inner: Mapper, default: JSONValue? = nil, reverseDefault: JSONValue? = nil) -> Mapper {
        Mapper(.nonFatal(inner, fallback: `default`.map(Fallback.value), reverseFallback: reverseDefault.map(Fallback.value)))
    }

    /// The common "optional, silently": absent or null leaves the field out with no warning (`null: .keepNull`
    /// writes null instead); a value that `inner` rejects still rejects the record. The spec's
    /// `"missing": "omit", "null": "omit"`. (Hydrant's `optionally` also forgives an invalid value, with a warning
    /// for every absent one.)
    public static func omitWhenAbsent(_ inner: Mapper = .identity, null: FieldPolicy.Action = .omit) -> Mapper {
        policy(inner, missing: .omit, null: null, invalid: .fail)
    }

    /// Explicit per-case handling: e.g. `.policy(.integer, missing: .omit, null: .omit, invalid: .fail)`.
    public static func policy(
        _ inner: Mapper = .identity, missing: FieldPolicy.Action = .fail, null: FieldPolicy.Action = .fail,
        invalid: FieldPolicy.Action = .fail
    ) -> Mapper {
        Mapper(.policy(inner, FieldPolicy(missing: missing, null: null, invalid: invalid)))
    }

    public static func check(_ types: JSONTypeSet) -> Mapper { Mapper(.check(types)) }
    public static let string = check(.string)
    /// A JSON integer: no fraction, no exponent, any size.
    public static let integer = check(.integer)
    public static let number = check(.number)
    public static let boolean = check(.boolean)
    public static let objectValue = check(.object)
    public static let arrayValue = check(.array)
    public static let null = check(.null)

    public static func object(_ mapping: ObjectMapping) -> Mapper { Mapper(.object(mapping)) }
    public static func object(unmapped: ObjectMapping.Unmapped = .drop, @FieldsBuilder _ fields: () -> [ObjectMapping.Field]) -> Mapper {
        Mapper(.object(ObjectMapping(fields: fields(), unmapped: unmapped)))
    }
    public static func arrayOf(_ item: Mapper) -> Mapper { Mapper(.arrayOf(item)) }
    public static func first(_ alternatives: Mapper...) -> Mapper { Mapper(.first(alternatives)) }
    public static func thread(_ stages: Mapper...) -> Mapper { Mapper(.thread(stages)) }
    public static func split(_ forward: Mapper, reverse: Mapper) -> Mapper { Mapper(.split(forward: forward, reverse: reverse)) }
    public static func forward(_ path: String, _ inner: Mapper = .identity, delimiter: String = ".") -> Mapper {
        Mapper(.forward(KeyPath(path, delimiter: delimiter), inner))
    }
    public static func backward(_ path: String, _ inner: Mapper = .identity, delimiter: String = ".") -> Mapper {
        Mapper(.backward(KeyPath(path, delimiter: delimiter), inner))
    }
    public static func enumTable(_ pairs: [(JSONValue, JSONValue)]) -> Mapper {
        Mapper(.enumTable(EnumTable(pairs.map { (from: $0.0, to: $0.1) })))
    }

    public static func stringToDate(_ formats: DateSyntax...) -> Mapper { Mapper(.convert(.stringToDate(formats))) }
    public static func stringToDate(_ formats: [DateSyntax]) -> Mapper { Mapper(.convert(.stringToDate(formats))) }
    public static func dateToString(_ format: DateSyntax) -> Mapper { Mapper(.convert(.dateToString(format))) }
    public static func numberToDate(_ unit: EpochUnit) -> Mapper { Mapper(.convert(.numberToDate(unit))) }
    public static func dateToNumber(_ unit: EpochUnit) -> Mapper { Mapper(.convert(.dateToNumber(unit))) }
    public static let stringToNumber = Mapper(.convert(.stringToNumber))
    public static let numberToString = Mapper(.convert(.numberToString))
    public static let toString = Mapper(.convert(.anyToString))
    public static func url(schemes: [String]? = nil) -> Mapper { Mapper(.convert(.stringToURL(schemes: schemes))) }
    public static let uuid = Mapper(.convert(.stringToUUID))
    public static func base64(from: Base64Text.Alphabet, to: Base64Text.Alphabet) -> Mapper { Mapper(.convert(.base64(from: from, to: to))) }
    /// A number times `factor`, exactly.
    public static func multiply(by factor: JSONNumber) -> Mapper { Mapper(.convert(.multiply(factor))) }
    /// A number plus `term`, exactly.
    public static func add(_ term: JSONNumber) -> Mapper { Mapper(.convert(.add(term))) }
    public static func keys(_ style: KeyStyle, deep: Bool = false, collisions: KeyCollisions = .fail) -> Mapper {
        Mapper(.convert(.keys(style, deep: deep, collisions: collisions)))
    }

    /// A Swift closure. Give `reverse` to make it reversible.
    public static func block(
        _ name: String = "block", _ forward: @escaping @Sendable (JSONValue?) -> MapResult,
        reverse: (@Sendable (JSONValue?) -> MapResult)? = nil
    ) -> Mapper {
        Mapper(.block(Block(name: name, forward: forward, reverse: reverse)))
    }

    /// Runs `self`, then `post` with the original input and the result.
    public func postProcessed(
        _ name: String = "postProcess", _ post: @escaping @Sendable (JSONValue?, MapResult) -> MapResult,
        reverse: (@Sendable (JSONValue?, MapResult) -> MapResult)? = nil
    ) -> Mapper {
        Mapper(.postProcess(self, PostProcessor(name: name, forward: post, reverse: reverse)))
    }
}

public typealias Field = ObjectMapping.Field

@resultBuilder
public enum FieldsBuilder {
    public static func buildExpression(_ field: ObjectMapping.Field) -> [ObjectMapping.Field] { [field] }
    public static func buildBlock(_ parts: [ObjectMapping.Field]...) -> [ObjectMapping.Field] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [ObjectMapping.Field]?) -> [ObjectMapping.Field] { part ?? [] }
    public static func buildEither(first: [ObjectMapping.Field]) -> [ObjectMapping.Field] { first }
    public static func buildEither(second: [ObjectMapping.Field]) -> [ObjectMapping.Field] { second }
    public static func buildArray(_ parts: [[ObjectMapping.Field]]) -> [ObjectMapping.Field] { parts.flatMap { $0 } }
}
