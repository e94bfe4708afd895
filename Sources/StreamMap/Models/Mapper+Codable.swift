/// A record that could not become a model: invalid JSON, a fatal mapping error, or no output.
public struct MappingFailure: Error, Sendable, CustomStringConvertible {
    /// Why: the record's syntax error, the mapper's errors, or that it produced nothing.
    public var failure: RecordFailure
    public var description: String {
        failure.description
    }
}

extension Mapper {
    /// Maps a JSON value and decodes the result into a model — what ObjectMapper, ClassMapper and CYZBaseModel
    /// users come for: `try mapper.decode(Person.self, from: bytes)`. Warnings are not reported here (use `map`).
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, using decoder: JSONValueDecoder = .init()) throws -> T {
        let result = map(value)
        if result.isFatal { throw MappingFailure(failure: .mapping(result.errors)) }
        guard let mapped = result.value else { throw MappingFailure(failure: .noOutput(warnings: result.errors)) }
        return try decoder.decode(type, from: mapped)
    }

    /// Parses one JSON text, maps it and decodes the result.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], using decoder: JSONValueDecoder = .init()) throws -> T {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw MappingFailure(failure: .syntax(error))
        }
        return try decode(type, from: value, using: decoder)
    }

    /// Encodes a model and maps it back through the reverse mapper: model → the original JSON shape.
    public func encode<T: Encodable>(_ model: T, using encoder: JSONValueEncoder = .init()) throws -> JSONValue {
        let reverse = try reversed()
        let result = reverse.map(try encoder.encode(model))
        if result.isFatal { throw MappingFailure(failure: .mapping(result.errors)) }
        guard let json = result.value else { throw MappingFailure(failure: .noOutput(warnings: result.errors)) }
        return json
    }
}

// MARK: Typed transforms

extension Mapper {
    /// A typed closure, ObjectMapper's `TransformOf<From, To>` on the Codable bridge: the value is decoded as
    /// `From` (with `JSONValueDecoder`), `forward` makes a `To`, which is encoded back (with `JSONValueEncoder`).
    ///
    /// ```swift
    /// Field("id", to: "ref", .transform(from: Int.self, to: String.self) { "#\($0)" })
    /// ```
    ///
    /// An absent value is a `required` error (wrap the transform in `.optionally` or `.omitWhenAbsent` for
    /// optional fields); null is decoded like any value (an `Int?` takes it; an `Int` reports `expected Int, found
    /// null`); a value that does not decode as `From` is a `type` error at the path inside it that failed; an error `forward` throws is a `value` error with its description (a `MapError`
    /// thrown is reported as it is, its paths below the value's). Like every mapper's, the errors' paths start at
    /// the record's root. Not reversible: give `reverse` (the overload for `Codable` types) for that.
    public static func transform<From: Decodable, To: Encodable>(
        _ name: String = "transform", from: From.Type, to: To.Type,
        _ forward: @escaping @Sendable (From) throws -> To
    ) -> Mapper {
        .block(name, TypedTransform(forward).map)
    }

    /// A reversible typed closure: `forward` maps input to output, `reverse` output back to input (for
    /// `reversed()` and `encode`).
    public static func transform<From: Codable, To: Codable>(
        _ name: String = "transform", from: From.Type, to: To.Type,
        _ forward: @escaping @Sendable (From) throws -> To, reverse: @escaping @Sendable (To) throws -> From
    ) -> Mapper {
        .block(name, TypedTransform(forward).map, reverse: TypedTransform(reverse).map)
    }
}

/// One direction of a typed transform: decode, call, encode, every failure a `MapError`.
struct TypedTransform<From: Decodable, To: Encodable>: Sendable {
    let body: @Sendable (From) throws -> To

    init(_ body: @escaping @Sendable (From) throws -> To) { self.body = body }

    @Sendable func map(_ value: JSONValue?) -> MapResult {
        guard let value else { return .failure(MapError(.required, "value is required, found absent")) }
        let input: From
        do {
            input = try JSONValueDecoder().decode(From.self, from: value)
        } catch {
            return .failure(.decoding(error, expected: From.self, in: value, atDestination: false))
        }
        let output: To
        do {
            output = try body(input)
        } catch let e as MapError {
            return .failure(e)
        } catch {
            return .failure(MapError(.value, String(describing: error)))
        }
        do {
            return .success(try JSONValueEncoder().encode(output))
        } catch {
            return .failure(MapError(.value, "\(To.self) could not be encoded: \(error)"))
        }
    }
}

extension MapError {
    /// A decoding error as a mapping error: `type` (or `required` for a missing key), at the coding path.
    /// `atDestination`: the value decoded is a mapped record (the path is in the output), else a mapper's input.
    static func decoding(_ error: any Error, expected: Any.Type, in value: JSONValue, atDestination: Bool) -> MapError {
        guard let error = error as? DecodingError else { return MapError(.type, "expected \(expected): \(error)") }
        let path: [any CodingKey]
        let message: String
        var code = MapError.Code.type
        switch error {
        case .typeMismatch(let type, let context):
            path = context.codingPath
            message = "expected \(type), found " + MapError.describe(Self.value(at: path, in: value))
        case .valueNotFound(let type, let context):
            path = context.codingPath
            message = "expected \(type), found " + MapError.describe(Self.value(at: path, in: value))
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
            message = "value is required, found absent"
            code = .required
        case .dataCorrupted(let context):
            path = context.codingPath
            message = context.debugDescription
        @unknown default:
            path = []
            message = "\(error)"
        }
        let steps = path.map { key -> PathComponent in key.intValue.map { .index($0) } ?? .key(key.stringValue) }
        return atDestination ? MapError(code, message, destinationPath: JSONPath(steps))
            : MapError(code, message, sourcePath: JSONPath(steps))
    }

    /// The value at a coding path (nil where it is absent).
    static func value(at path: [any CodingKey], in root: JSONValue) -> JSONValue? {
        var current: JSONValue? = root
        for key in path {
            switch current {
            case .object(let o)?: current = o[key.stringValue]
            case .array(let a)?: current = key.intValue.flatMap { a.indices.contains($0) ? a[$0] : nil }
            default: return nil
            }
        }
        return current
    }
}

extension MappedRecord {
    /// The mapped record decoded into a model, through `JSONValueDecoder`.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONValueDecoder().decode(type, from: value())
    }
}
