// JSONValueEncoder.swift — the Codable bridge, model → JSON: encodes any `Encodable` to a `JSONValue`.
//
// The result is the tree engine's `JSONValue`, so a model can be mapped (or reversed) and written by the one
// canonical `JSONWriter` like any parsed record.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes `Encodable` values to a `JSONValue`.
///
/// ```swift
/// let record = try JSONValueEncoder().encode(person)
/// print(record)  // {"name":"Ada","age":36}
/// ```
///
/// The rules follow Foundation's `JSONEncoder` with its default strategies, except where StreamMap's exact numbers
/// and canonical scalar forms call for something else:
///
/// - **Key order** is the order in which the value encodes its keys (for synthesized `Codable`: declaration
///   order). Encoding a key twice keeps its first position and its last value. `[String: V]` dictionaries have no
///   order of their own, so their keys come out in the dictionary's (unspecified) iteration order.
/// - **Integers** are written as their exact decimal text (`UInt64.max`, `Int128` values included).
/// - **Floating point** is written as Swift's `description`: the shortest text that reads back as the same
///   value, always a valid JSON number (`0.1`, `1e-05`, `1e+20`, `-0.0`). Integral values keep their `.0`
///   (`3.0`, not `3` as `JSONEncoder` writes), so they stay JSON numbers rather than integers
///   (`JSONType.number`); decoding `3.0` into an `Int` still gives 3. Infinity and NaN throw
///   `EncodingError.invalidValue`.
/// - **`nil`:** `encodeNil` writes `null`; `encodeIfPresent` with `nil` (what synthesized `Codable` uses for
///   optional properties) writes nothing, so the key is absent.
/// - **Special types** use StreamMap's canonical text forms (the ones `JSONValueDecoder` reads):
///   - `Date`: RFC 3339 in UTC, `2014-08-31T00:29:15Z`. A fraction is written only when the date is not a whole
///     second: the shortest one (at most 9 digits, so no trailing zeros) that `JSONValueDecoder` reads back as
///     exactly the same `Date` (`2014-08-31T00:29:15.25Z`), like the shortest round-trip text of a `Double`.
///     A `Date` made by rounding another time scale (`Date(timeIntervalSince1970: 1409444955.123)` rounds the
///     Unix time) may need more digits than were written there (`…15.1229999Z`); the `Date` nearest to
///     `…15.123` (`Date(timeIntervalSinceReferenceDate: 431137755.123)`, or the decoded text) is written
///     `…15.123Z`. Only within about 97 days of 2001-01-01 can sub-nanosecond detail be lost (the nearest
///     nanosecond is written). Dates outside the years 0000–9999 throw `invalidValue`.
///   - `URL`: its `absoluteString`.
///   - `UUID`: lowercase 8-4-4-4-12 hexadecimal (`JSONEncoder` writes uppercase).
///   - `Data`: standard base64 (RFC 4648 §4) with padding.
///   - `JSONValue`: the value itself, unchanged (numbers keep their exact text).
/// - A nested value that encodes nothing becomes `{}`; a top-level value that encodes nothing throws
///   `invalidValue`, as with `JSONEncoder`.
/// - Misuse that `JSONEncoder` traps on traps here too: asking one encoder for two different kinds of container,
///   or encoding twice through a single-value container.
///
/// Encoding recurses only as deep as the model's own `encode(to:)` calls do.
public struct JSONValueEncoder: Sendable {
    /// Made available to the types being encoded as `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// An encoder with no `userInfo`.
    public init() {}

    /// Encodes `value` as a JSON value.
    ///
    /// - Throws: `EncodingError.invalidValue` with the coding path of the value that could not be encoded.
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let encoder = JSONValueEncoderImpl(codingPath: [], userInfo: userInfo.mapValues { $0 })
        let here = CodingLocation(parent: [], key: nil)
        if let special = try encoder.boxSpecial(value, at: here) { return special }
        try value.encode(to: encoder)
        guard let result = encoder.takeValue() else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription: "Top-level \(T.self) did not encode any values."
                )
            )
        }
        return result
    }
}

// MARK: - Values under construction

/// A value that one `encode(to:)` call is still building: containers stay open (nested containers and
/// super-encoders write into them) until the call returns and the encoder takes its value.
enum PendingJSONValue {
    case value(JSONValue)
    case object(PendingJSONObject)
    case array(PendingJSONArray)
    /// The slot of a `superEncoder()`: whatever that encoder ends up holding.
    case encoder(JSONValueEncoderImpl)

    /// The finished value. Only containers opened within one `encode(to:)` call are pending (a nested `Encodable`
    /// is finished before it is stored), so this recurses only as deep as that call's nested containers.
    var resolved: JSONValue {
        switch self {
        case .value(let value):
            return value
        case .object(let object):
            var result = JSONObject()
            for entry in object.entries { result[entry.key] = entry.value.resolved }
            return .object(result)
        case .array(let array):
            return .array(array.elements.map(\.resolved))
        case .encoder(let encoder):
            return encoder.takeValue() ?? .object(JSONObject())
        }
    }
}

/// An object under construction. Keys compare by UTF-8 bytes, like `JSONObject`'s; setting a key again keeps its
/// first position.
final class PendingJSONObject {
    private(set) var entries: [(key: String, value: PendingJSONValue)] = []
    private var positions: [ByteKey: Int] = [:]

    subscript(key: String) -> PendingJSONValue? {
        positions[ByteKey(key)].map { entries[$0].value }
    }

    func set(_ value: PendingJSONValue, forKey key: String) {
        if let position = positions[ByteKey(key)] {
            entries[position].value = value
        } else {
            positions[ByteKey(key)] = entries.count
            entries.append((key, value))
        }
    }
}

/// An array under construction.
final class PendingJSONArray {
    private(set) var elements: [PendingJSONValue] = []

    func append(_ element: PendingJSONValue) { elements.append(element) }
}

// MARK: - The encoder

/// An `Encoder` that builds one `JSONValue`. Also serves as its own single-value container.
final class JSONValueEncoderImpl: Encoder, SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    private var storage: PendingJSONValue?

    init(codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    /// The finished value, or `nil` when nothing was encoded.
    func takeValue() -> JSONValue? { storage?.resolved }

    private var pathDescription: String {
        codingPath.isEmpty ? "the top level" : codingPath.map(\.stringValue).joined(separator: ".")
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: PendingJSONObject
        switch storage {
        case nil:
            object = PendingJSONObject()
            storage = .object(object)
        case .object(let existing)?:
            object = existing  // e.g. a subclass and its superclass sharing one encoder
        default:
            preconditionFailure(
                "Keyed container requested after another kind of value was encoded at \(pathDescription)."
            )
        }
        return KeyedEncodingContainer(
            JSONValueKeyedEncodingContainer<Key>(encoder: self, object: object, codingPath: codingPath)
        )
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: PendingJSONArray
        switch storage {
        case nil:
            array = PendingJSONArray()
            storage = .array(array)
        case .array(let existing)?:
            array = existing
        default:
            preconditionFailure(
                "Unkeyed container requested after another kind of value was encoded at \(pathDescription)."
            )
        }
        return JSONValueUnkeyedEncodingContainer(encoder: self, array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single-value container

    private var here: CodingLocation { CodingLocation(parent: codingPath, key: nil) }

    private func store(_ value: JSONValue) {
        precondition(
            storage == nil,
            "Attempt to encode a second value through a single value container at \(pathDescription)."
        )
        storage = .value(value)
    }

    func encodeNil() throws { store(.null) }
    func encode(_ value: Bool) throws { store(.bool(value)) }
    func encode(_ value: String) throws { store(.string(value)) }
    func encode(_ value: Double) throws { store(try boxFloat(value, at: here)) }
    func encode(_ value: Float) throws { store(try boxFloat(value, at: here)) }
    func encode(_ value: Int) throws { store(boxInteger(value)) }
    func encode(_ value: Int8) throws { store(boxInteger(value)) }
    func encode(_ value: Int16) throws { store(boxInteger(value)) }
    func encode(_ value: Int32) throws { store(boxInteger(value)) }
    func encode(_ value: Int64) throws { store(boxInteger(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func encode(_ value: Int128) throws { store(boxInteger(value)) }
    func encode(_ value: UInt) throws { store(boxInteger(value)) }
    func encode(_ value: UInt8) throws { store(boxInteger(value)) }
    func encode(_ value: UInt16) throws { store(boxInteger(value)) }
    func encode(_ value: UInt32) throws { store(boxInteger(value)) }
    func encode(_ value: UInt64) throws { store(boxInteger(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func encode(_ value: UInt128) throws { store(boxInteger(value)) }
    func encode<T: Encodable>(_ value: T) throws { store(try box(value, at: here)) }
}

// MARK: - Boxing

extension JSONValueEncoderImpl {
    /// Encodes any `Encodable`: the special types directly, everything else through its `encode(to:)` on a fresh
    /// encoder, whose value is finished before it is returned.
    func box<T: Encodable>(_ value: T, at location: CodingLocation) throws -> JSONValue {
        if let special = try boxSpecial(value, at: location) { return special }
        let encoder = JSONValueEncoderImpl(codingPath: location.path, userInfo: userInfo)
        try value.encode(to: encoder)
        return encoder.takeValue() ?? .object(JSONObject())
    }

    /// The canonical form of `JSONValue`, `Date`, `URL`, `UUID` and `Data`; `nil` for any other type.
    func boxSpecial<T: Encodable>(_ value: T, at location: CodingLocation) throws -> JSONValue? {
        if T.self == JSONValue.self { return (value as! JSONValue) }
        if T.self == Date.self {
            let date = value as! Date
            guard let text = CodableDateText.string(from: date) else {
                throw EncodingError.invalidValue(
                    value,
                    EncodingError.Context(
                        codingPath: location.path,
                        debugDescription: "Date \(date.timeIntervalSinceReferenceDate) is outside the years 0000–9999."
                    )
                )
            }
            return .string(text)
        }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == UUID.self { return .string((value as! UUID).uuidString.lowercased()) }
        if T.self == Data.self { return .string(Base64Text.encode(Array(value as! Data), alphabet: .standard)) }
        return nil
    }

    func boxInteger<I: FixedWidthInteger>(_ value: I) -> JSONValue {
        .number(JSONNumber(unchecked: String(value)))
    }

    /// Swift's shortest round-trip `description`, which is a valid JSON number for every finite value.
    func boxFloat<F: BinaryFloatingPoint & CustomStringConvertible>(
        _ value: F,
        at location: CodingLocation
    ) throws
        -> JSONValue
    {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: location.path,
                    debugDescription: "Unable to encode \(F.self) \(value) directly in JSON."
                )
            )
        }
        return .number(JSONNumber(unchecked: value.description))
    }
}

// MARK: - Keyed container

struct JSONValueKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONValueEncoderImpl
    let object: PendingJSONObject
    let codingPath: [any CodingKey]

    private func location(_ key: Key) -> CodingLocation { CodingLocation(parent: codingPath, key: key) }

    private func set(_ value: JSONValue, _ key: Key) { object.set(.value(value), forKey: key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(try encoder.boxFloat(value, at: location(key)), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(try encoder.boxFloat(value, at: location(key)), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { set(encoder.boxInteger(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try encoder.box(value, at: location(key)), key)
    }

    /// A keyed container for `key`; a second request for the same key continues the same object.
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested: PendingJSONObject
        if case .object(let existing)? = object[key.stringValue] {
            nested = existing
        } else {
            nested = PendingJSONObject()
            object.set(.object(nested), forKey: key.stringValue)
        }
        return KeyedEncodingContainer(
            JSONValueKeyedEncodingContainer<NestedKey>(encoder: encoder, object: nested, codingPath: codingPath + [key])
        )
    }

    /// An unkeyed container for `key`; a second request for the same key continues the same array.
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested: PendingJSONArray
        if case .array(let existing)? = object[key.stringValue] {
            nested = existing
        } else {
            nested = PendingJSONArray()
            object.set(.array(nested), forKey: key.stringValue)
        }
        return JSONValueUnkeyedEncodingContainer(encoder: encoder, array: nested, codingPath: codingPath + [key])
    }

    /// An encoder whose value is stored under `"super"`.
    mutating func superEncoder() -> any Encoder { superEncoder(at: CodableBridgeKey.super) }

    /// An encoder whose value is stored under `key`.
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(at: key) }

    private func superEncoder(at key: any CodingKey) -> any Encoder {
        let sub = JSONValueEncoderImpl(codingPath: codingPath + [key], userInfo: encoder.userInfo)
        object.set(.encoder(sub), forKey: key.stringValue)
        return sub
    }
}

// MARK: - Unkeyed container

struct JSONValueUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: JSONValueEncoderImpl
    let array: PendingJSONArray
    let codingPath: [any CodingKey]

    var count: Int { array.elements.count }

    private var location: CodingLocation { CodingLocation(parent: codingPath, key: CodableBridgeKey(intValue: count)) }

    private func append(_ value: JSONValue) { array.append(.value(value)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try encoder.boxFloat(value, at: location)) }
    mutating func encode(_ value: Float) throws { append(try encoder.boxFloat(value, at: location)) }
    mutating func encode(_ value: Int) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: Int8) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: Int16) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: Int32) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: Int64) throws { append(encoder.boxInteger(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: UInt) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: UInt8) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: UInt16) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: UInt32) throws { append(encoder.boxInteger(value)) }
    mutating func encode(_ value: UInt64) throws { append(encoder.boxInteger(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { append(encoder.boxInteger(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { append(try encoder.box(value, at: location)) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = PendingJSONObject()
        let path = location.path
        array.append(.object(nested))
        return KeyedEncodingContainer(
            JSONValueKeyedEncodingContainer<NestedKey>(encoder: encoder, object: nested, codingPath: path)
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = PendingJSONArray()
        let path = location.path
        array.append(.array(nested))
        return JSONValueUnkeyedEncodingContainer(encoder: encoder, array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let sub = JSONValueEncoderImpl(codingPath: location.path, userInfo: encoder.userInfo)
        array.append(.encoder(sub))
        return sub
    }
}

// MARK: - Date formatting

extension CodableDateText {
    /// `YYYY-MM-DDThh:mm:ss[.fraction]Z` in UTC. The fraction is the shortest (0 to 9 digits) that parses back to
    /// exactly `date`; when none does (sub-nanosecond detail), the nearest nanosecond. `nil` for years outside
    /// 0000–9999.
    static func string(from date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        // Years 0000–9999 lie well within ±1e12 seconds of 2001; the civil check below is the exact one.
        guard interval.isFinite, abs(interval) < 1e12 else { return nil }
        let whole = interval.rounded(.down)
        var seconds = Int64(whole) + unixToReference
        var nanoseconds = Int64(((interval - whole) * 1e9).rounded())  // `interval - whole` is exact
        if nanoseconds == 1_000_000_000 {
            seconds += 1
            nanoseconds = 0
        }

        var step: Int64 = 1_000_000_000
        for _ in 0...9 {
            var candidateSeconds = seconds
            var candidateNanoseconds = (nanoseconds + step / 2) / step * step
            if candidateNanoseconds == 1_000_000_000 {
                candidateSeconds += 1
                candidateNanoseconds = 0
            }
            let fraction = Array(padded(candidateNanoseconds, 9).utf8)
            if makeDate(unixSeconds: candidateSeconds, fraction: fraction) == date {
                seconds = candidateSeconds
                nanoseconds = candidateNanoseconds
                break
            }
            step /= 10
        }

        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        guard (0...9999).contains(year) else { return nil }

        var text = padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + "T"
        text += padded(secondOfDay / 3600, 2) + ":" + padded(secondOfDay / 60 % 60, 2) + ":"
        text += padded(secondOfDay % 60, 2)
        if nanoseconds != 0 {
            var fraction = Substring(padded(nanoseconds, 9))
            while fraction.last == "0" { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

// MARK: - JSONValue: Encodable

extension JSONValue: Encodable {
    /// Writes the value's natural JSON shape to any encoder.
    ///
    /// Through `JSONValueEncoder` the value is stored unchanged. Other encoders get `nil`, bools, strings, unkeyed
    /// containers for arrays and keyed containers for objects (in order); a number goes as `Int64` or `UInt64` when
    /// it is an integer lexeme in range, else as the nearest `Double` (which may round: those encoders cannot
    /// write an exact lexeme). A number beyond `Double`'s range throws `EncodingError.invalidValue`.
    public func encode(to encoder: any Encoder) throws {
        if let encoder = encoder as? JSONValueEncoderImpl {
            try encoder.encode(self)
            return
        }
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .number(let number):
            var container = encoder.singleValueContainer()
            if number.isInteger, let integer = Int64(number.text) {
                try container.encode(integer)
            } else if number.isInteger, let integer = UInt64(number.text) {
                try container.encode(integer)
            } else if let double = NumberText.double(number.text) {
                try container.encode(double)
            } else {
                throw EncodingError.invalidValue(
                    self,
                    EncodingError.Context(
                        codingPath: encoder.codingPath,
                        debugDescription: "The number \(number.text) cannot be represented as a Double."
                    )
                )
            }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let object):
            var container = encoder.container(keyedBy: CodableBridgeKey.self)
            for (key, value) in object { try container.encode(value, forKey: CodableBridgeKey(key)) }
        }
    }
}
