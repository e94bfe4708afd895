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
    /// Passes its input through unchanged, absent and null included; never fails.
    public static let identity = Mapper(.identity)
    /// Absent or null is a fatal `required` error (Hydrant's `HYDMapNotNull()` as documented).
    public static let required = Mapper(.notNull(.identity))

    /// A computed value: `expression`'s result, mapped with `then` (required by default: an absent or null result
    /// fails the record); `invalid` handles an error in evaluating it (`.omit`, `.keepNull`, a default).
    ///
    ///     ObjectMapping.Field(computing: try ValueExpression("price * qty"), to: "total")
    public static func compute(_ expression: ValueExpression, invalid: FieldPolicy.Action = .fail, then: Mapper = .required) -> Mapper {
        Mapper(.compute(expression, invalid: invalid, then: then))
    }
    /// Runs `inner`; when it produced absent or null without an error, that is a fatal `required` error.
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

    /// Passes a value whose type is in `types`, and absent; anything else is a fatal `type` error
    /// (`expected integer, found string "x"`). Values are never converted.
    public static func check(_ types: JSONTypeSet) -> Mapper { Mapper(.check(types)) }
    /// A JSON string (absent passes; wrap in `notNull` to require one).
    public static let string = check(.string)
    /// A JSON integer: no fraction, no exponent, any size.
    public static let integer = check(.integer)
    /// A JSON number, integer or not, of any size.
    public static let number = check(.number)
    /// `true` or `false`.
    public static let boolean = check(.boolean)
    /// A JSON object, passed through as it is.
    public static let objectValue = check(.object)
    /// A JSON array, passed through as it is.
    public static let arrayValue = check(.array)
    /// JSON `null` (and absent).
    public static let null = check(.null)

    /// Maps an object field by field; absent stays absent, a value that is not an object is a fatal `type` error.
    public static func object(_ mapping: ObjectMapping) -> Mapper { Mapper(.object(mapping)) }
    /// Maps an object with the fields listed in the closure; keys no field reads are dropped unless `unmapped`
    /// keeps them.
    ///
    /// ```swift
    /// Mapper.object(unmapped: .keep) {
    ///     Field("user.name", to: "name")
    ///     Field("age", .omitWhenAbsent(.integer))
    /// }
    /// ```
    public static func object(unmapped: ObjectMapping.Unmapped = .drop, @FieldsBuilder _ fields: () -> [ObjectMapping.Field]) -> Mapper {
        Mapper(.object(ObjectMapping(fields: fields(), unmapped: unmapped)))
    }
    /// Maps every element of an array with `item`; the index is part of each error's path (`/tags/1`). A value that
    /// is not an array, absent included, is a fatal `type` error; so is an element's fatal error.
    public static func arrayOf(_ item: Mapper) -> Mapper { Mapper(.arrayOf(item)) }
    /// The result of the first alternative that succeeds with a value, the failures before it kept as warnings;
    /// when none does, a fatal failure with every alternative's errors (absent when none reported any).
    public static func first(_ alternatives: Mapper...) -> Mapper { Mapper(.first(alternatives)) }
    /// Runs the stages one after the other, each on the previous one's output; the first fatal error stops it.
    /// `.thread(.stringToDate(.twitter), .dateToNumber(.milliseconds))`.
    public static func thread(_ stages: Mapper...) -> Mapper { Mapper(.thread(stages)) }
    /// Maps with `forward`; its `reversed()` is `split(reverse, forward)`, which maps with `reverse`.
    public static func split(_ forward: Mapper, reverse: Mapper) -> Mapper { Mapper(.split(forward: forward, reverse: reverse)) }
    /// Maps the value found at `path` (steps split at `delimiter`) inside the input with `inner`; a path that
    /// leads nowhere gives `inner` an absent value. An absent input is a fatal `read` error.
    public static func forward(_ path: String, _ inner: Mapper = .identity, delimiter: String = ".") -> Mapper {
        Mapper(.forward(KeyPath(path, delimiter: delimiter), inner))
    }
    /// Maps with `inner` and returns an object with the result at `path` (nested objects made along the way; an
    /// empty object when the result is absent).
    public static func backward(_ path: String, _ inner: Mapper = .identity, delimiter: String = ".") -> Mapper {
        Mapper(.backward(KeyPath(path, delimiter: delimiter), inner))
    }
    /// Looks the value up in a table of `(from, to)` pairs (see ``EnumTable``); a value not in it is a fatal
    /// `value` error, an absent one a `required` error. Reversible when the table is one-to-one.
    public static func enumTable(_ pairs: [(JSONValue, JSONValue)]) -> Mapper {
        Mapper(.enumTable(EnumTable(pairs.map { (from: $0.0, to: $0.1) })))
    }

    /// A date string in any of `formats` (tried in order) → the canonical date string (RFC 3339, UTC).
    /// `.stringToDate(.twitter, .rfc822)`, `.stringToDate("yyyy-MM-dd")`.
    public static func stringToDate(_ formats: DateSyntax...) -> Mapper { Mapper(.convert(.stringToDate(formats))) }
    /// A date string in any of `formats` (tried in order) → the canonical date string (RFC 3339, UTC).
    public static func stringToDate(_ formats: [DateSyntax]) -> Mapper { Mapper(.convert(.stringToDate(formats))) }
    /// A canonical date string (any ISO 8601 date-time) → its text in `format`.
    public static func dateToString(_ format: DateSyntax) -> Mapper { Mapper(.convert(.dateToString(format))) }
    /// A number of `unit`s since 1970-01-01T00:00:00Z → the canonical date string, exactly (no floating point).
    public static func numberToDate(_ unit: EpochUnit) -> Mapper { Mapper(.convert(.numberToDate(unit))) }
    /// A canonical date string → the exact number of `unit`s since the epoch.
    public static func dateToNumber(_ unit: EpochUnit) -> Mapper { Mapper(.convert(.dateToNumber(unit))) }
    /// A decimal string (`"1,234.50"`, `" +7 "`; locale-free) → a number; anything else is a `value` error.
    public static let stringToNumber = Mapper(.convert(.stringToNumber))
    /// A number → a string of its exact text (`1E+2` stays `"1E+2"`).
    public static let numberToString = Mapper(.convert(.numberToString))
    /// Anything → a string: numbers as their text, booleans as `"true"`/`"false"`, arrays and objects as compact
    /// JSON; null gives absent. Not reversible.
    public static let toString = Mapper(.convert(.anyToString))
    /// An absolute URL string → the URL, percent-escaped; with `schemes`, its scheme must be one of them (compared
    /// case-insensitively). Anything else is a `value` error.
    public static func url(schemes: [String]? = nil) -> Mapper { Mapper(.convert(.stringToURL(schemes: schemes))) }
    /// An 8-4-4-4-12 hex UUID in any case → its lowercase canonical form; anything else is a `value` error.
    public static let uuid = Mapper(.convert(.stringToUUID))
    /// Base64 text in the `from` alphabet (validated strictly) → the same bytes in the `to` alphabet.
    public static func base64(from: Base64Text.Alphabet, to: Base64Text.Alphabet) -> Mapper { Mapper(.convert(.base64(from: from, to: to))) }
    /// A number times `factor`, exactly.
    public static func multiply(by factor: JSONNumber) -> Mapper { Mapper(.convert(.multiply(factor))) }
    /// A number plus `term`, exactly.
    public static func add(_ term: JSONNumber) -> Mapper { Mapper(.convert(.add(term))) }
    /// Renames an object's keys with `style` (`deep`: also in nested objects and arrays); other values pass. Two
    /// keys that become one name are an error (`collisions: .fail`) or a warning, the later value kept (`.warn`).
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

/// A field of an object mapper: `Field("first_name", to: "firstName")` (see ``ObjectMapping/Field``).
public typealias Field = ObjectMapping.Field

/// Builds the field list of `Mapper.object { … }`: fields, `if`/`else` and `for` loops of fields.
@resultBuilder
public enum FieldsBuilder {
    /// A single field.
    public static func buildExpression(_ field: ObjectMapping.Field) -> [ObjectMapping.Field] { [field] }
    /// The fields of a block, in order.
    public static func buildBlock(_ parts: [ObjectMapping.Field]...) -> [ObjectMapping.Field] { parts.flatMap { $0 } }
    /// The fields of an `if` without `else` (none when the condition is false).
    public static func buildOptional(_ part: [ObjectMapping.Field]?) -> [ObjectMapping.Field] { part ?? [] }
    /// The fields of an `if` branch.
    public static func buildEither(first: [ObjectMapping.Field]) -> [ObjectMapping.Field] { first }
    /// The fields of an `else` branch.
    public static func buildEither(second: [ObjectMapping.Field]) -> [ObjectMapping.Field] { second }
    /// The fields of a `for` loop, in order.
    public static func buildArray(_ parts: [[ObjectMapping.Field]]) -> [ObjectMapping.Field] { parts.flatMap { $0 } }
}
