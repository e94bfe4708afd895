import Testing

@testable import StreamMap

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - Fixtures

private struct Person: Codable, Equatable {
    var name: String
    var age: Int
    var nickname: String?
}

private struct Address: Codable, Equatable {
    var street: String
    var zip: String
}

private struct Team: Codable, Equatable {
    var name: String
    var people: [Person]
    var address: Address
    var tags: [String]
    var lead: Person?
    var ratings: [Double]
    var matrix: [[Int]]
}

private enum Color: String, Codable, Equatable {
    case red, green
    case deepBlue = "deep-blue"
}

private enum Level: Int, Codable, Equatable {
    case low = 1
    case high = 10
}

private struct Palette: Codable, Equatable {
    var primary: Color
    var level: Level
    var others: [Color]
}

private struct Special: Codable, Equatable {
    var when: Date
    var site: URL
    var id: UUID
    var blob: Data
}

private struct Envelope: Codable, Equatable {
    var id: UInt64
    var payload: JSONValue
    var extra: JSONValue?
}

/// Encodes its keys in a fixed, non-alphabetical order, and one explicit null.
private struct Ordered: Encodable {
    enum CodingKeys: String, CodingKey { case zebra, apple, mango, none }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(1, forKey: .zebra)
        try container.encode("two", forKey: .apple)
        try container.encodeIfPresent(Int?.none, forKey: .mango)
        try container.encodeNil(forKey: .none)
        try container.encode(3, forKey: .zebra)  // a second write keeps the first position
    }
}

private class Animal: Codable {
    var legs: Int
    init(legs: Int) { self.legs = legs }
}

private final class Dog: Animal {
    var name: String
    enum CodingKeys: String, CodingKey { case name }

    init(name: String, legs: Int) {
        self.name = name
        super.init(legs: legs)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try super.encode(to: container.superEncoder())
    }
}

private func number(_ text: String) -> JSONValue {
    .number(JSONNumber(text)!)
}

private func keys(_ path: [any CodingKey]) -> [String] { path.map(\.stringValue) }

private let decoder = JSONValueDecoder()
private let encoder = JSONValueEncoder()

private struct Box<T: Codable>: Codable { var value: T }

/// Decodes `{"value": <value>}` as `Box<T>`.
private func decodeBoxed<T: Codable>(_ type: T.Type, _ value: JSONValue) throws -> T {
    try decoder.decode(Box<T>.self, from: ["value": value]).value
}

// MARK: - Tests

@Suite("Codable bridge")
struct CodableBridgeTests {
    @Test func roundTripsNestedStructsArraysAndOptionals() throws {
        let team = Team(
            name: "Core",
            people: [Person(name: "Ada", age: 36, nickname: nil), Person(name: "Linus", age: 54, nickname: "L")],
            address: Address(street: "1 Loop", zip: "00501"),
            tags: ["a", "b"],
            lead: Person(name: "Grace", age: 85, nickname: nil),
            ratings: [0.5, 2.0, -1e-7],
            matrix: [[1, 2], [], [3]]
        )
        let encoded = try encoder.encode(team)
        #expect(
            encoded.description
                == #"{"name":"Core","people":[{"name":"Ada","age":36},{"name":"Linus","age":54,"nickname":"L"}],"#
                + #""address":{"street":"1 Loop","zip":"00501"},"tags":["a","b"],"lead":{"name":"Grace","age":85},"#
                + #""ratings":[0.5,2.0,-1e-07],"matrix":[[1,2],[],[3]]}"#
        )
        #expect(try decoder.decode(Team.self, from: encoded) == team)
    }

    @Test func optionalsAbsentAndNullBothDecodeAsNil() throws {
        #expect(try decoder.decode(Person.self, from: ["name": "A", "age": 1]).nickname == nil)
        #expect(try decoder.decode(Person.self, from: ["name": "A", "age": 1, "nickname": nil]).nickname == nil)
        #expect(try decoder.decode(Person.self, from: ["name": "A", "age": 1, "nickname": "n"]).nickname == "n")
        // nil is omitted by synthesized encoding (encodeIfPresent) ...
        let encoded = try encoder.encode(Person(name: "A", age: 1, nickname: nil))
        #expect(encoded.objectValue?.keys == ["name", "age"])
        // ... and an Optional encoded on its own is null.
        #expect(try encoder.encode([Int?.none, 2]) == [nil, 2])
        #expect(try decoder.decode([Int?].self, from: [nil, 2]) == [nil, 2])
    }

    @Test func keyOrderIsTheEncodingOrder() throws {
        let encoded = try encoder.encode(Ordered())
        #expect(encoded.objectValue?.keys == ["zebra", "apple", "none"])
        #expect(encoded.description == #"{"zebra":3,"apple":"two","none":null}"#)
    }

    @Test func enumsWithRawValues() throws {
        let palette = Palette(primary: .deepBlue, level: .high, others: [.red, .green])
        let encoded = try encoder.encode(palette)
        #expect(encoded == ["primary": "deep-blue", "level": 10, "others": ["red", "green"]])
        #expect(try decoder.decode(Palette.self, from: encoded) == palette)

        let unknown = #expect(throws: DecodingError.self) {
            try decoder.decode(Palette.self, from: ["primary": "purple", "level": 1, "others": []])
        }
        guard case .dataCorrupted(let context)? = unknown else {
            Issue.record("expected dataCorrupted, got \(String(describing: unknown))")
            return
        }
        #expect(keys(context.codingPath) == ["primary"])
        #expect(throws: DecodingError.self) {
            try decoder.decode(Palette.self, from: ["primary": "red", "level": 2, "others": []])
        }
    }

    @Test func specialTypesUseCanonicalText() throws {
        let special = Special(
            when: Date(timeIntervalSince1970: 1_409_444_955),
            site: URL(string: "https://example.com/a?b=c")!,
            id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            blob: Data([1, 2, 3, 255])
        )
        let encoded = try encoder.encode(special)
        #expect(
            encoded == [
                "when": "2014-08-31T00:29:15Z", "site": "https://example.com/a?b=c",
                "id": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "blob": "AQID/w==",
            ]
        )
        #expect(try decoder.decode(Special.self, from: encoded) == special)

        // Decoding accepts other offsets, fraction lengths and cases.
        let variant: JSONValue = [
            "when": "2014-08-31T02:29:15.000+02:00", "site": "https://example.com/a?b=c",
            "id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "blob": "AQID/w==",
        ]
        #expect(try decoder.decode(Special.self, from: variant) == special)
    }

    @Test(arguments: [
        ("2014-08-31T00:29:15Z", 1_409_444_955.0),
        ("2014-08-30T19:29:15-0500", 1_409_444_955.0),
        ("2014-08-31T01:29:15+01", 1_409_444_955.0),
        ("2014-08-31t00:29:15.5z", 1_409_444_955.5),
        ("2014-08-31T00:29:15,25Z", 1_409_444_955.25),
        ("1969-12-31T23:59:59.75Z", -0.25),
        ("2000-02-29T00:00:00Z", 951_782_400.0),
        ("0001-01-01T00:00:00Z", -62_135_596_800.0),
    ])
    func datesParse(text: String, unixSeconds: Double) throws {
        let date = try decoder.decode(Date.self, from: .string(text))
        #expect(date == Date(timeIntervalSince1970: unixSeconds))
    }

    @Test(arguments: [
        "2014-08-31T00:29:15", "2014-08-31 00:29:15Z", "2014-02-29T00:00:00Z", "2014-13-01T00:00:00Z",
        "2014-08-31T24:00:00Z", "2014-08-31T00:29:60Z", "2014-08-31T00:29:15.Z", "2014-08-31T00:29Z",
        "2014-08-31T00:29:15+5:00", "2014-08-31T00:29:15Zjunk", "14-08-31T00:29:15Z", "",
    ])
    func malformedDatesAreDataCorrupted(text: String) {
        let error = #expect(throws: DecodingError.self) { try decodeBoxed(Date.self, .string(text)) }
        guard case .dataCorrupted(let context)? = error else {
            Issue.record("expected dataCorrupted for \(text), got \(String(describing: error))")
            return
        }
        #expect(keys(context.codingPath) == ["value"])
    }

    @Test func datesFormatWithTheShortestExactFraction() throws {
        #expect(try encoder.encode(Date(timeIntervalSince1970: 1_409_444_955.25)) == "2014-08-31T00:29:15.25Z")
        #expect(try encoder.encode(Date(timeIntervalSinceReferenceDate: 431_137_755.123)) == "2014-08-31T00:29:15.123Z")
        #expect(
            try decoder.decode(Date.self, from: "2014-08-31T00:29:15.123Z").timeIntervalSinceReferenceDate
                == 431_137_755.123
        )
        // A Unix-time Date is not always the Date nearest to its decimal; it still round-trips exactly.
        let unix = Date(timeIntervalSince1970: 1_409_444_955.123)
        let unixText = try encoder.encode(unix)
        #expect(unixText.stringValue?.hasPrefix("2014-08-31T00:29:15.12") == true)
        #expect(try decoder.decode(Date.self, from: unixText) == unix)
        #expect(try encoder.encode(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.5Z")
        #expect(try encoder.encode(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(try encoder.encode(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00Z")
        #expect(try encoder.encode(Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31T23:59:59Z")
        // Every formatted date parses back to the same Date, except for sub-nanosecond detail within 2^23 s
        // (about 97 days) of 2001-01-01, where a Double resolves finer than 9 digits.
        for seconds in stride(from: -3e9, through: 3e9, by: 7_777_777.7771) {
            let date = Date(timeIntervalSince1970: seconds)
            let text = try encoder.encode(date)
            let decoded = try decoder.decode(Date.self, from: text)
            if abs(date.timeIntervalSinceReferenceDate) >= 8_388_608 {
                #expect(decoded == date, "\(text)")
            } else {
                #expect(abs(decoded.timeIntervalSince(date)) <= 0.5e-9, "\(text)")
            }
        }
        for _ in 0..<1000 {
            let date = Date(timeIntervalSinceReferenceDate: .random(in: 1e7...2e9))
            #expect(try decoder.decode(Date.self, from: encoder.encode(date)) == date)
        }
        #expect(throws: EncodingError.self) { try encoder.encode(Date(timeIntervalSince1970: 253_402_300_800)) }
        #expect(throws: EncodingError.self) { try encoder.encode(Date(timeIntervalSince1970: -62_167_219_201)) }
        #expect(throws: EncodingError.self) { try encoder.encode(Date(timeIntervalSinceReferenceDate: 1e300)) }
        #expect(throws: EncodingError.self) { try encoder.encode(Date(timeIntervalSinceReferenceDate: -.infinity)) }
    }

    @Test func urlsUUIDsAndDataAreValidated() {
        #expect(throws: DecodingError.self) { try decodeBoxed(URL.self, "/relative/path") }
        #expect(throws: DecodingError.self) { try decodeBoxed(UUID.self, "e621e1f8-c36c-495a-93fc-0c247a3e6e5") }
        #expect(throws: DecodingError.self) { try decodeBoxed(Data.self, "AQI") }  // padding is required
        #expect(throws: DecodingError.self) { try decodeBoxed(Data.self, "AQ I=") }
        let error = #expect(throws: DecodingError.self) { try decodeBoxed(URL.self, 5) }
        guard case .typeMismatch(let type, _)? = error else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(URL.self))
    }

    @Test func bigIntegersAreExact() throws {
        struct Big: Codable, Equatable {
            var max: Int64
            var min: Int64
            var umax: UInt64
        }
        let big = Big(max: .max, min: .min, umax: .max)
        let encoded = try encoder.encode(big)
        #expect(
            encoded.description
                == #"{"max":9223372036854775807,"min":-9223372036854775808,"umax":18446744073709551615}"#
        )
        #expect(try decoder.decode(Big.self, from: encoded) == big)

        #expect(try decodeBoxed(UInt64.self, number("18446744073709551615")) == UInt64.max)
        #expect(try decodeBoxed(Int64.self, number("-9223372036854775808")) == Int64.min)

        let error = #expect(throws: DecodingError.self) {
            try decodeBoxed(UInt64.self, number("18446744073709551616"))
        }
        guard case .dataCorrupted(let context)? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(keys(context.codingPath) == ["value"])
        #expect(throws: DecodingError.self) { try decodeBoxed(Int64.self, number("9223372036854775808")) }
        #expect(throws: DecodingError.self) { try decodeBoxed(Int64.self, number("-9223372036854775809")) }
        #expect(throws: DecodingError.self) { try decodeBoxed(UInt8.self, number("256")) }
        #expect(throws: DecodingError.self) { try decodeBoxed(UInt.self, number("-1")) }
        #expect(throws: DecodingError.self) { try decodeBoxed(Int8.self, number("-129")) }
        #expect(try decodeBoxed(Int8.self, number("-128")) == -128)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test func int128IsExact() throws {
        struct Wide: Codable, Equatable {
            var signed: Int128
            var unsigned: UInt128
        }
        let wide = Wide(signed: .min, unsigned: .max)
        let encoded = try encoder.encode(wide)
        #expect(
            encoded.description
                == #"{"signed":-170141183460469231731687303715884105728,"#
                + #""unsigned":340282366920938463463374607431768211455}"#
        )
        #expect(try decoder.decode(Wide.self, from: encoded) == wide)
        #expect(throws: DecodingError.self) {
            try decodeBoxed(UInt128.self, number("340282366920938463463374607431768211456"))
        }
    }

    @Test(arguments: [
        ("1e2", 100), ("1.0", 1), ("2.50e1", 25), ("-0", 0), ("0e999999999999999", 0), ("-1.2e1", -12),
        ("100e-2", 1), ("9223372036854775807", Int.max),
    ])
    func integralNumbersDecodeIntoIntegers(text: String, expected: Int) throws {
        #expect(try decodeBoxed(Int.self, number(text)) == expected)
    }

    @Test(arguments: ["1.5", "1e-1", "1e19", "1e999999999999", "1e-999999999999", "0.1e1000000000"])
    func nonIntegralOrHugeNumbersDoNotDecodeIntoInt(text: String) {
        #expect(throws: DecodingError.self) { try decodeBoxed(Int.self, number(text)) }
    }

    @Test func doublesAndFloatsAreExact() throws {
        #expect(try decodeBoxed(Double.self, number("0.1")) == 0.1)
        #expect(try decodeBoxed(Double.self, number("1E+2")) == 100)
        #expect(try decodeBoxed(Double.self, number("-0")).sign == .minus)
        #expect(try decodeBoxed(Float.self, number("0.1")) == Float(0.1))
        #expect(try decodeBoxed(Double.self, number("12345678901234567890")) == 12_345_678_901_234_567_890.0)
        #expect(throws: DecodingError.self) { try decodeBoxed(Double.self, number("1e400")) }
        #expect(throws: DecodingError.self) { try decodeBoxed(Float.self, number("1e39")) }
        #expect(throws: DecodingError.self) { try decodeBoxed(Double.self, "0.1") }  // no coercion from strings

        #expect(try encoder.encode(0.1) == number("0.1"))
        #expect(try encoder.encode(Float(0.1)) == number("0.1"))
        #expect(try encoder.encode(1.0) == number("1.0"))
        #expect(try encoder.encode(1e-5) == number("1e-05"))
        #expect(try encoder.encode(1e20) == number("1e+20"))
        #expect(try encoder.encode(-0.0) == number("-0.0"))
        for value in [0.1, 1.0 / 3, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -123.456e-78] {
            let encoded = try encoder.encode(value)
            guard case .number(let n) = encoded else {
                Issue.record("not a number: \(encoded)")
                continue
            }
            #expect(NumberText.isValid(n.text), "\(n.text)")
            #expect(try decoder.decode(Double.self, from: encoded) == value)
        }

        let error = #expect(throws: EncodingError.self) { try encoder.encode(Box(value: [1, .infinity])) }
        guard case .invalidValue(_, let context)? = error else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
            return
        }
        #expect(keys(context.codingPath) == ["value", "Index 1"])
        #expect(throws: EncodingError.self) { try encoder.encode(Float.nan) }
    }

    @Test func wrongTypeDeepInsideAnArrayReportsItsPath() {
        let input: JSONValue = [
            "name": "Core",
            "people": [["name": "A", "age": 1], ["name": "B", "age": 2], ["name": "C", "age": "three"]],
        ]
        struct Crew: Decodable {
            var name: String
            var people: [Person]
        }
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Crew.self, from: input) }
        guard case .typeMismatch(let type, let context)? = error else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(keys(context.codingPath) == ["people", "Index 2", "age"])
        #expect(context.codingPath.dropFirst().first?.intValue == 2)
    }

    @Test func missingKeyIsKeyNotFound() {
        let error = #expect(throws: DecodingError.self) {
            try decoder.decode(Box<Person>.self, from: ["value": ["name": "A"]])
        }
        guard case .keyNotFound(let key, let context)? = error else {
            Issue.record("expected keyNotFound, got \(String(describing: error))")
            return
        }
        #expect(key.stringValue == "age")
        #expect(keys(context.codingPath) == ["value"])
    }

    @Test func nullForANonOptionalIsValueNotFound() {
        let scalar = #expect(throws: DecodingError.self) {
            try decoder.decode(Person.self, from: ["name": "A", "age": nil])
        }
        guard case .valueNotFound(let type, let context)? = scalar else {
            Issue.record("expected valueNotFound, got \(String(describing: scalar))")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(keys(context.codingPath) == ["age"])

        let nested = #expect(throws: DecodingError.self) { try decoder.decode(Box<Address>.self, from: ["value": nil]) }
        guard case .valueNotFound(_, let nestedContext)? = nested else {
            Issue.record("expected valueNotFound, got \(String(describing: nested))")
            return
        }
        #expect(keys(nestedContext.codingPath) == ["value"])

        let wrongType = #expect(throws: DecodingError.self) {
            try decoder.decode(Box<Address>.self, from: ["value": 3])
        }
        guard case .typeMismatch? = wrongType else {
            Issue.record("expected typeMismatch, got \(String(describing: wrongType))")
            return
        }
    }

    @Test func jsonValueFieldsPassThroughExactly() throws {
        let payload: JSONValue = [
            "big": number("123456789012345678901234567890"), "exp": number("1E+2"), "neg": number("-0"),
            "list": [number("0.10"), nil, true, "s"], "nested": ["z": 1, "a": 2],
        ]
        let input: JSONValue = ["id": number("18446744073709551615"), "payload": payload, "extra": nil]
        let envelope = try decoder.decode(Envelope.self, from: input)
        #expect(envelope.id == UInt64.max)
        #expect(envelope.payload == payload)
        #expect(envelope.payload["big"] == number("123456789012345678901234567890"))
        #expect(envelope.extra == nil)  // an Optional<JSONValue> reads null as nil (decodeIfPresent)

        let encoded = try encoder.encode(envelope)
        #expect(encoded == ["id": number("18446744073709551615"), "payload": payload])
        #expect(
            encoded.description
                == #"{"id":18446744073709551615,"payload":{"big":123456789012345678901234567890,"exp":1E+2,"#
                + #""neg":-0,"list":[0.10,null,true,"s"],"nested":{"z":1,"a":2}}}"#
        )

        // A non-optional JSONValue field keeps an explicit null.
        #expect(try decodeBoxed(JSONValue.self, nil) == .null)
        #expect(try encoder.encode(Box(value: JSONValue.null)) == ["value": nil])
        // At the top level the value is returned unchanged.
        #expect(try decoder.decode(JSONValue.self, from: payload) == payload)
        #expect(try encoder.encode(payload) == payload)
    }

    @Test func jsonValueThroughAForeignEncoderAndDecoder() throws {
        let value: JSONValue = ["a": [1, number("2.5"), nil, false, "x"], "b": ["c": number("18446744073709551615")]]
        let data = try JSONEncoder().encode(value)
        let roundTripped = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(roundTripped["a"] == [1, number("2.5"), nil, false, "x"])
        #expect(roundTripped["b"] == ["c": number("18446744073709551615")])
    }

    @Test func unkeyedContainersTrackTheirPosition() throws {
        struct Pair: Decodable {
            var first: Int
            var rest: [String]
            var indices: [Int]
            var atEnd: Bool

            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                var indices = [container.currentIndex]
                first = try container.decode(Int.self)
                indices.append(container.currentIndex)
                #expect(try container.decodeNil() == false)  // a non-null element is not consumed
                #expect(container.currentIndex == 1)
                #expect(throws: DecodingError.self) { try container.decode(Bool.self) }  // nor is a failed one
                rest = []
                while !container.isAtEnd {
                    if try container.decodeNil() { continue }
                    rest.append(try container.decode(String.self))
                }
                indices.append(container.currentIndex)
                self.indices = indices
                atEnd = container.isAtEnd
                let error = #expect(throws: DecodingError.self) { try container.decode(Int.self) }
                guard case .valueNotFound(_, let context)? = error else {
                    Issue.record("expected valueNotFound at end, got \(String(describing: error))")
                    return
                }
                #expect(keys(context.codingPath) == ["Index 4"])
            }
        }
        let pair = try decoder.decode(Pair.self, from: [7, "a", nil, "b"])
        #expect(pair.first == 7)
        #expect(pair.rest == ["a", "b"])
        #expect(pair.indices == [0, 1, 4])
        #expect(pair.atEnd)
    }

    @Test func nestedContainersAndSuperCoders() throws {
        let dog = Dog(name: "Rex", legs: 4)
        let encoded = try encoder.encode(dog)
        #expect(encoded.description == #"{"name":"Rex","super":{"legs":4}}"#)
        let decoded = try decoder.decode(Dog.self, from: encoded)
        #expect(decoded.name == "Rex" && decoded.legs == 4)

        struct Manual: Codable, Equatable {
            var x: Int
            var ys: [Int]
            enum Outer: String, CodingKey { case inner, list }
            enum Inner: String, CodingKey { case x }

            init(x: Int, ys: [Int]) {
                self.x = x
                self.ys = ys
            }

            init(from decoder: any Decoder) throws {
                let outer = try decoder.container(keyedBy: Outer.self)
                x = try outer.nestedContainer(keyedBy: Inner.self, forKey: .inner).decode(Int.self, forKey: .x)
                var list = try outer.nestedUnkeyedContainer(forKey: .list)
                var ys: [Int] = []
                while !list.isAtEnd {
                    var row = try list.nestedUnkeyedContainer()
                    ys.append(try row.decode(Int.self))
                }
                self.ys = ys
            }

            func encode(to encoder: any Encoder) throws {
                var outer = encoder.container(keyedBy: Outer.self)
                var inner = outer.nestedContainer(keyedBy: Inner.self, forKey: .inner)
                try inner.encode(x, forKey: .x)
                var list = outer.nestedUnkeyedContainer(forKey: .list)
                for y in ys {
                    var row = list.nestedUnkeyedContainer()
                    try row.encode(y)
                }
            }
        }
        let manual = Manual(x: 1, ys: [2, 3])
        let manualEncoded = try encoder.encode(manual)
        #expect(manualEncoded == ["inner": ["x": 1], "list": [[2], [3]]])
        #expect(try decoder.decode(Manual.self, from: manualEncoded) == manual)

        let error = #expect(throws: DecodingError.self) {
            try decoder.decode(Manual.self, from: ["inner": ["x": 1], "list": [[2], ["no"]]])
        }
        guard case .typeMismatch(_, let context)? = error else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(keys(context.codingPath) == ["list", "Index 1", "Index 0"])
    }

    @Test func dictionariesAndUserInfo() throws {
        #expect(try decoder.decode([String: Int].self, from: ["b": 1, "a": 2]) == ["b": 1, "a": 2])
        #expect(try encoder.encode(["k": [1, 2]]) == ["k": [1, 2]])

        struct Scaled: Codable {
            static let key = CodingUserInfoKey(rawValue: "scale")!
            var value: Int
            init(value: Int) { self.value = value }
            init(from decoder: any Decoder) throws {
                value = try decoder.singleValueContainer().decode(Int.self) * (decoder.userInfo[Self.key] as? Int ?? 1)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(value * (encoder.userInfo[Self.key] as? Int ?? 1))
            }
        }
        var scalingDecoder = JSONValueDecoder()
        scalingDecoder.userInfo[Scaled.key] = 10
        #expect(try scalingDecoder.decode([Scaled].self, from: [1, 2]).map(\.value) == [10, 20])
        var scalingEncoder = JSONValueEncoder()
        scalingEncoder.userInfo[Scaled.key] = 3
        #expect(try scalingEncoder.encode(["x": Scaled(value: 2)]) == ["x": 6])
    }

    @Test func topLevelValueThatEncodesNothingThrows() {
        struct Empty: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(throws: EncodingError.self) { try encoder.encode(Empty()) }
        #expect((try? encoder.encode(Box(value: 1))) == ["value": 1])
    }
}
