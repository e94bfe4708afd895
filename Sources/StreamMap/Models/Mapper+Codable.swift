/// A record that could not become a model: invalid JSON, a fatal mapping error, or no output.
public struct MappingFailure: Error, Sendable, CustomStringConvertible {
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
