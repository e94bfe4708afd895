// JSONValueDecoder.swift — the Codable bridge, JSON → model: decodes any `Decodable` from a `JSONValue`.
//
// The decoder reads the tree engine's `JSONValue` directly (no JSON text in between), so numbers keep their exact
// source text until a model asks for a value: an `Int64`, `UInt64` or `Int128` field gets exactly the written
// integer, and a `JSONValue` field gets the subtree unchanged.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes `Decodable` values from a `JSONValue`.
///
/// ```swift
/// struct Person: Codable { var name: String; var age: Int; var homepage: URL? }
/// let person = try JSONValueDecoder().decode(Person.self, from: record)
/// ```
///
/// The rules follow Foundation's `JSONDecoder` with its default strategies, except where StreamMap's exact numbers
/// and canonical scalar forms call for something stricter:
///
/// - **Integers are exact.** `Int`, `Int8`…`Int64`, `UInt`…`UInt64`, `Int128` and `UInt128` read the number's
///   lexeme digit by digit, never through `Double`: `18446744073709551615` is `UInt64.max`. A lexeme with a
///   fraction or exponent is accepted when its value is an exact integer (`1e2` → 100, `1.0` → 1, `-0` → 0);
///   `1.5`, or a value out of the type's range, throws `DecodingError.dataCorrupted`.
/// - **Floating point** (`Double`, `Float`) parses the lexeme with correct rounding straight to the target type
///   (`0.1` → `0.1`, a `Float` is not rounded twice through `Double`). A value beyond the type's range
///   (`1e400`) throws `dataCorrupted`; underflow gives ±0.
/// - **No coercions:** a string is never read as a number or a bool, nor the other way round (`typeMismatch`).
/// - **Special types** use StreamMap's canonical text forms (the ones `JSONValueEncoder` writes):
///   - `Date`: an ISO 8601 / RFC 3339 date-time string, `YYYY-MM-DDThh:mm:ss`, an optional fraction of any length
///     (after `.` or `,`), and a required zone: `Z`, `±hh:mm`, `±hhmm` or `±hh` (`T` and `Z` in either case).
///     Years 0000–9999; no leap second (`:60`); no zone-less local times. The result is the `Date` nearest to the
///     written instant (its seconds since 2001 rounded once, correctly, to a `Double`). Note that
///     `Date(timeIntervalSince1970: 1409444955.123)` is not always that `Date`: it rounds the Unix time first.
///   - `URL`: a string that `URL(string:)` accepts and that has a scheme (an absolute URL).
///   - `UUID`: an 8-4-4-4-12 hexadecimal string in any case.
///   - `Data`: standard base64 (RFC 4648 §4) with padding, strictly (no whitespace, canonical final bits).
///   - `JSONValue`: the value itself, unchanged (numbers keep their exact text; `null` is `.null`). An optional
///     `JSONValue?` property reads `null` as `nil`, like any optional; a non-optional one keeps `.null`.
/// - **Errors** are the standard ones, with the coding path of the offending value (array elements appear as
///   `"Index N"` keys with `intValue` N): `keyNotFound` for a missing key, `valueNotFound` for `null` where a
///   non-optional value is expected (also for a container), `typeMismatch` for a value of the wrong JSON type,
///   `dataCorrupted` for a value of the right type that does not convert.
/// - **Optionals:** `decodeIfPresent` (what synthesized `Codable` uses for optional properties) gives `nil` for
///   an absent key and for `null`. `decodeNil(forKey:)` throws `keyNotFound` for an absent key, like `JSONDecoder`.
/// - **`superDecoder(forKey:)`** for an absent key decodes from `null`, like `JSONDecoder`.
///
/// Decoding recurses only as deep as the model's own `init(from:)` calls do.
public struct JSONValueDecoder: Sendable {
    /// Made available to the types being decoded as `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// A decoder with no `userInfo`.
    public init() {}

    /// Decodes a value of `type` from `value`.
    ///
    /// - Throws: `DecodingError` with the coding path of the value that failed (see the type's documentation).
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let decoder = JSONValueDecoderImpl(value: value, codingPath: [], userInfo: userInfo.mapValues { $0 })
        return try decoder.unbox(value, as: type, at: CodingLocation(parent: [], key: nil))
    }
}

// MARK: - Coding keys and locations

/// A coding key for object members read or written by name, and for array elements (`"Index N"`, `intValue` N),
/// as in Foundation's `JSONDecoder` error paths.
struct CodableBridgeKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    init(_ string: String) { self.init(stringValue: string) }

    /// The key `superDecoder()` and `superEncoder()` use.
    static let `super` = CodableBridgeKey(stringValue: "super")
}

/// Where a value sits: its container's coding path and its own key (none for a single-value container).
/// The full path is built only when it is needed (an error, or a nested decoder).
struct CodingLocation {
    let parent: [any CodingKey]
    let key: (any CodingKey)?

    var path: [any CodingKey] {
        guard let key else { return parent }
        return parent + [key]
    }
}

// MARK: - The decoder

/// A `Decoder` over one `JSONValue`. Also serves as its own single-value container.
final class JSONValueDecoderImpl: Decoder, SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    init(value: JSONValue, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        self.value = value
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    /// A decoder for a value inside this one.
    func decoder(for value: JSONValue, at path: [any CodingKey]) -> JSONValueDecoderImpl {
        JSONValueDecoderImpl(value: value, codingPath: path, userInfo: userInfo)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw Self.mismatch(
                JSONObject.self,
                value,
                CodingLocation(parent: codingPath, key: nil),
                what: "keyed decoding container"
            )
        }
        return KeyedDecodingContainer(JSONValueKeyedDecodingContainer<Key>(decoder: self, object: object))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw Self.mismatch(
                [JSONValue].self,
                value,
                CodingLocation(parent: codingPath, key: nil),
                what: "unkeyed decoding container"
            )
        }
        return JSONValueUnkeyedDecodingContainer(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single-value container

    private var here: CodingLocation { CodingLocation(parent: codingPath, key: nil) }

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value, at: here) }
    func decode(_ type: String.Type) throws -> String { try unboxString(value, at: here) }
    func decode(_ type: Double.Type) throws -> Double { try unboxFloat(value, as: type, at: here) }
    func decode(_ type: Float.Type) throws -> Float { try unboxFloat(value, as: type, at: here) }
    func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, as: type, at: here) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unboxInteger(value, as: type, at: here) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unboxInteger(value, as: type, at: here) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try unboxInteger(value, as: type, at: here) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: type, at: here) }
}

// MARK: - Unboxing

extension JSONValueDecoderImpl {
    /// Decodes any `Decodable`: the special types directly, everything else through its `init(from:)`.
    func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type, at location: CodingLocation) throws -> T {
        if type == JSONValue.self { return value as! T }
        if type == Date.self { return try unboxDate(value, at: location) as! T }
        if type == URL.self { return try unboxURL(value, at: location) as! T }
        if type == UUID.self { return try unboxUUID(value, at: location) as! T }
        if type == Data.self { return try unboxData(value, at: location) as! T }
        return try T(from: decoder(for: value, at: location.path))
    }

    func unboxBool(_ value: JSONValue, at location: CodingLocation) throws -> Bool {
        guard case .bool(let bool) = value else { throw Self.mismatch(Bool.self, value, location) }
        return bool
    }

    func unboxString(_ value: JSONValue, at location: CodingLocation) throws -> String {
        guard case .string(let string) = value else { throw Self.mismatch(String.self, value, location) }
        return string
    }

    func unboxInteger<I: FixedWidthInteger>(
        _ value: JSONValue,
        as type: I.Type,
        at location: CodingLocation
    ) throws
        -> I
    {
        guard case .number(let number) = value else { throw Self.mismatch(type, value, location) }
        guard let integer = CodableIntegerText.value(of: number.text, as: type) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Parsed JSON number <\(number.text)> does not fit in \(type)."
                )
            )
        }
        return integer
    }

    func unboxFloat<F: BinaryFloatingPoint & LosslessStringConvertible>(
        _ value: JSONValue,
        as type: F.Type,
        at location: CodingLocation
    ) throws -> F {
        guard case .number(let number) = value else { throw Self.mismatch(type, value, location) }
        // `F(String)` also accepts "inf", "nan" and hexadecimal forms; a JSON lexeme is checked first.
        guard NumberText.isValid(number.text), let float = F(number.text), float.isFinite else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Parsed JSON number <\(number.text)> does not fit in \(type)."
                )
            )
        }
        return float
    }

    func unboxDate(_ value: JSONValue, at location: CodingLocation) throws -> Date {
        let text = try unboxString(value, at: location, as: Date.self)
        guard let date = CodableDateText.date(from: text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Expected an ISO 8601 date-time with a time zone, found \"\(text)\"."
                )
            )
        }
        return date
    }

    func unboxURL(_ value: JSONValue, at location: CodingLocation) throws -> URL {
        let text = try unboxString(value, at: location, as: URL.self)
        guard let url = URL(string: text), url.scheme != nil else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Expected an absolute URL, found \"\(text)\"."
                )
            )
        }
        return url
    }

    func unboxUUID(_ value: JSONValue, at location: CodingLocation) throws -> UUID {
        let text = try unboxString(value, at: location, as: UUID.self)
        guard let uuid = UUID(uuidString: text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Expected a UUID string, found \"\(text)\"."
                )
            )
        }
        return uuid
    }

    func unboxData(_ value: JSONValue, at location: CodingLocation) throws -> Data {
        let text = try unboxString(value, at: location, as: Data.self)
        guard let bytes = Base64Text.decode(text, alphabet: .standard) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Encountered Data is not valid Base64."
                )
            )
        }
        return Data(bytes)
    }

    /// The string of a special type's text form; a mismatch names the special type.
    private func unboxString(_ value: JSONValue, at location: CodingLocation, as type: Any.Type) throws -> String {
        guard case .string(let string) = value else { throw Self.mismatch(type, value, location) }
        return string
    }

    /// `valueNotFound` for `null`, else `typeMismatch`, as `JSONDecoder` reports them.
    static func mismatch(
        _ type: Any.Type,
        _ value: JSONValue,
        _ location: CodingLocation,
        what: String? = nil
    )
        -> DecodingError
    {
        let expected = what ?? "\(type)"
        if value.isNull {
            return DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Cannot get \(expected) -- found null value instead"
                )
            )
        }
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: location.path,
                debugDescription: "Expected to decode \(expected) but found \(describe(value)) instead."
            )
        )
    }

    private static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a bool"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// MARK: - Keyed container

struct JSONValueKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: JSONValueDecoderImpl
    let object: JSONObject

    var codingPath: [any CodingKey] { decoder.codingPath }

    /// The object's keys that `Key` accepts, in the object's order.
    var allKeys: [Key] { object.entries.compactMap { Key(stringValue: $0.key) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func location(_ key: Key) -> CodingLocation { CodingLocation(parent: codingPath, key: key) }

    private func value(forKey key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."
                )
            )
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(forKey: key).isNull }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder.unboxBool(value(forKey: key), at: location(key))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder.unboxString(value(forKey: key), at: location(key))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder.unboxFloat(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder.unboxFloat(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try decoder.unboxInteger(value(forKey: key), as: type, at: location(key))
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unbox(value(forKey: key), as: type, at: location(key))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder.decoder(for: value(forKey: key), at: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.decoder(for: value(forKey: key), at: codingPath + [key]).unkeyedContainer()
    }

    /// A decoder for the value under `"super"` (`null` when absent).
    func superDecoder() throws -> any Decoder {
        decoder.decoder(
            for: object[CodableBridgeKey.super.stringValue] ?? .null,
            at: codingPath + [CodableBridgeKey.super]
        )
    }

    /// A decoder for the value under `key` (`null` when absent).
    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder.decoder(for: object[key.stringValue] ?? .null, at: codingPath + [key])
    }
}

// MARK: - Unkeyed container

struct JSONValueUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: JSONValueDecoderImpl
    let elements: [JSONValue]
    private(set) var currentIndex = 0

    init(decoder: JSONValueDecoderImpl, elements: [JSONValue]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var location: CodingLocation {
        CodingLocation(parent: codingPath, key: CodableBridgeKey(intValue: currentIndex))
    }

    /// Decodes the current element with `unbox` and moves past it; a failure leaves the index where it was.
    private mutating func next<T>(
        _ type: Any.Type,
        _ unbox: (JSONValueDecoderImpl, JSONValue, CodingLocation) throws -> T
    ) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(codingPath: location.path, debugDescription: "Unkeyed container is at end.")
            )
        }
        let result = try unbox(decoder, elements[currentIndex], location)
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any?.self,
                DecodingError.Context(codingPath: location.path, debugDescription: "Unkeyed container is at end.")
            )
        }
        guard elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try next(type) { try $0.unboxBool($1, at: $2) }
    }
    mutating func decode(_ type: String.Type) throws -> String {
        try next(type) { try $0.unboxString($1, at: $2) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        try next(type) { try $0.unboxFloat($1, as: type, at: $2) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        try next(type) { try $0.unboxFloat($1, as: type, at: $2) }
    }
    mutating func decode(_ type: Int.Type) throws -> Int {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: UInt.Type) throws -> UInt {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 {
        try next(type) { try $0.unboxInteger($1, as: type, at: $2) }
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(type) { try $0.unbox($1, as: type, at: $2) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next(KeyedDecodingContainer<NestedKey>.self) { decoder, value, location in
            try decoder.decoder(for: value, at: location.path).container(keyedBy: type)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { decoder, value, location in
            try decoder.decoder(for: value, at: location.path).unkeyedContainer()
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { decoder, value, location in
            decoder.decoder(for: value, at: location.path)
        }
    }
}

// MARK: - Exact integers

/// Exact conversion of JSON number lexemes to fixed-width integers, without floating point.
enum CodableIntegerText {
    /// The value of `text` (a JSON number lexeme) as an `I`, when it is an integer in `I`'s range.
    ///
    /// Fractions and exponents are allowed when the value is integral: `"1e2"` → 100, `"2.50e1"` → 25,
    /// `"-0"` → 0; `"1.5"`, `"1e-1"` and out-of-range values give `nil`, as does text that is not a JSON number.
    static func value<I: FixedWidthInteger>(of text: String, as type: I.Type) -> I? {
        guard NumberText.isValid(text) else { return nil }
        var bytes = Array(text.utf8)[...]
        let isNegative = bytes.first == UInt8(ascii: "-")
        if isNegative { bytes.removeFirst() }

        // Split `int[.frac][e±exp]`; the grammar has already been checked.
        let exponentStart = bytes.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        let mantissa = bytes[..<(exponentStart ?? bytes.endIndex)]
        let dot = mantissa.firstIndex(of: UInt8(ascii: "."))
        let fraction = dot.map { mantissa[($0 + 1)...] } ?? []
        var digits = Array((mantissa[..<(dot ?? mantissa.endIndex)] + fraction).drop { $0 == UInt8(ascii: "0") })
        if digits.isEmpty { return 0 }  // any zero, whatever its exponent

        var exponent = 0
        if let exponentStart {
            var exponentText = bytes[(exponentStart + 1)...]
            let exponentIsNegative = exponentText.first == UInt8(ascii: "-")
            if exponentText.first == UInt8(ascii: "-") || exponentText.first == UInt8(ascii: "+") {
                exponentText.removeFirst()
            }
            let magnitude = exponentText.drop { $0 == UInt8(ascii: "0") }
            // A non-zero value times 10^(±1e9 or more) is never an integer of at most 39 digits.
            guard magnitude.count < 10 else { return nil }
            exponent = magnitude.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            if exponentIsNegative { exponent = -exponent }
        }

        // value = digits × 10^scale, with the first digit non-zero.
        var scale = exponent - fraction.count
        if scale < 0 {
            let fractional = -scale
            guard fractional < digits.count, digits.suffix(fractional).allSatisfy({ $0 == UInt8(ascii: "0") })
            else { return nil }
            digits.removeLast(fractional)
            scale = 0
        }
        guard digits.count + scale <= 40 else { return nil }  // beyond any 128-bit integer

        var result: I = 0
        for digit in digits + repeatElement(UInt8(ascii: "0"), count: scale) {
            let (shifted, overflow) = result.multipliedReportingOverflow(by: 10)
            let unit = I(digit - UInt8(ascii: "0"))
            let (next, overflow2) =
                isNegative ? shifted.subtractingReportingOverflow(unit) : shifted.addingReportingOverflow(unit)
            guard !overflow && !overflow2 else { return nil }
            result = next
        }
        return result
    }
}

// MARK: - Dates

/// StreamMap's canonical date text for `Codable` dates: RFC 3339 date-times, computed with civil-calendar
/// arithmetic (proleptic Gregorian, no `DateFormatter`, no locale, no time-zone database).
enum CodableDateText {
    /// Seconds from 1970-01-01T00:00:00Z to 2001-01-01T00:00:00Z, `Date`'s reference date.
    static let unixToReference: Int64 = 978_307_200

    /// Parses `YYYY-MM-DD(T|t)hh:mm:ss[(.|,)fraction](Z|z|±hh:mm|±hhmm|±hh)`. The fraction may have any number of
    /// digits.
    static func date(from text: String) -> Date? {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
            let month = scanner.number(digits: 2), scanner.skip("-"),
            let day = scanner.number(digits: 2), scanner.skip("T") || scanner.skip("t"),
            let hour = scanner.number(digits: 2), scanner.skip(":"),
            let minute = scanner.number(digits: 2), scanner.skip(":"),
            let second = scanner.number(digits: 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }

        var fraction: [UInt8] = []
        if scanner.skip(".") || scanner.skip(",") {
            fraction = Array(scanner.digitRun())
            guard !fraction.isEmpty else { return nil }
        }

        var offsetSeconds = 0
        if scanner.skip("Z") || scanner.skip("z") {
            offsetSeconds = 0
        } else if let sign = scanner.sign() {
            guard let offsetHours = scanner.number(digits: 2), offsetHours < 24 else { return nil }
            var offsetMinutes = 0
            if !scanner.isAtEnd {
                _ = scanner.skip(":")
                guard let minutes = scanner.number(digits: 2), minutes < 60 else { return nil }
                offsetMinutes = minutes
            }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil  // a local time without a zone is ambiguous
        }
        guard scanner.isAtEnd else { return nil }

        let days = daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        let local = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        return makeDate(unixSeconds: local - Int64(offsetSeconds), fraction: fraction)
    }

    /// The `Date` nearest to whole Unix seconds plus a decimal fraction (ASCII digits, any number): the exact
    /// decimal time since 2001 is rounded once, correctly, to a `Double`. Formatting searches with this same
    /// function, so a formatted date parses back to exactly the same `Date`.
    static func makeDate(unixSeconds: Int64, fraction: [UInt8]) -> Date {
        let seconds = unixSeconds - unixToReference
        var digits = fraction
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        guard !digits.isEmpty else { return Date(timeIntervalSinceReferenceDate: Double(seconds)) }  // exact

        // Decimal text of `seconds + 0.digits`; when `seconds` is negative that is
        // `-((-seconds - 1) + (1 - 0.digits))`, and 1 − 0.d₁…dₖ has the digits (9 − d₁)…(9 − dₖ₋₁)(10 − dₖ).
        let text: String
        if seconds >= 0 {
            text = String(seconds) + "." + String(decoding: digits, as: UTF8.self)
        } else {
            var complement = digits.map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
            complement[complement.count - 1] += 1  // the last digit is not 0, so this stays a digit
            text = "-" + String(-seconds - 1) + "." + String(decoding: complement, as: UTF8.self)
        }
        // `Double(String)` is correctly rounded and locale-free; the text is always a valid decimal.
        return Date(timeIntervalSinceReferenceDate: Double(text) ?? .nan)
    }

    static func isLeapYear(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400  // [0, 399]
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // [0, 365]
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear  // [0, 146096]
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097  // [0, 146096]
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365  // [0, 399]
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // [0, 365]
        let monthFromMarch = (5 * dayOfYear + 2) / 153  // [0, 11]
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A cursor over ASCII text for the date parser.
    struct DigitScanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position == bytes.count }

        /// Exactly `digits` ASCII digits as a number.
        mutating func number(digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<(position + digits)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            position += digits
            return value
        }

        /// All ASCII digits from here on.
        mutating func digitRun() -> ArraySlice<UInt8> {
            let start = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            return bytes[start..<position]
        }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }

        /// `+1` or `-1` for a sign character.
        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}

// MARK: - JSONValue: Decodable

extension JSONValue: Decodable {
    /// Reads a JSON value from any decoder.
    ///
    /// From `JSONValueDecoder` this is the value itself, unchanged. Other decoders are probed for `null`, a bool,
    /// an integer (`Int64`, then `UInt64`), a `Double` (written as its shortest text), a string, a keyed container
    /// (an object, in the decoder's `allKeys` order, which Foundation's `JSONDecoder` does not preserve) and an
    /// unkeyed container (an array). Such decoders cannot hand over the exact lexeme, so numbers beyond `UInt64`
    /// or with fractions come through `Double`.
    public init(from decoder: any Decoder) throws {
        if let decoder = decoder as? JSONValueDecoderImpl {
            self = decoder.value
            return
        }
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() {
                self = .null
                return
            }
            if let bool = try? single.decode(Bool.self) {
                self = .bool(bool)
                return
            }
            if let integer = try? single.decode(Int64.self) {
                self = .number(JSONNumber(unchecked: String(integer)))
                return
            }
            if let integer = try? single.decode(UInt64.self) {
                self = .number(JSONNumber(unchecked: String(integer)))
                return
            }
            if let double = try? single.decode(Double.self), double.isFinite {
                self = .number(JSONNumber(unchecked: double.description))
                return
            }
            if let string = try? single.decode(String.self) {
                self = .string(string)
                return
            }
        }
        if let keyed = try? decoder.container(keyedBy: CodableBridgeKey.self) {
            var object = JSONObject()
            for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key) }
            self = .object(object)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !unkeyed.isAtEnd { elements.append(try unkeyed.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        throw DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "The value is not a JSON value.")
        )
    }
}
