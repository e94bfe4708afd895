import Testing
@testable import StreamMap

/// `mapper.decode(Person.self, from: bytes)` and `mapper.encode(person)`, on Hydrant's Person example.
@Suite("Model mapping")
struct ModelMappingTests {
    struct Person: Codable, Equatable {
        var firstName: String
        var lastName: String
        var homepage: String?
        var age: Int
        var children: [Person]?
    }

    let spec = try! Spec(json: DocumentedExamplesTests.personSpec)

    @Test func decodesAMappedRecordIntoAModelAndEncodesItBack() throws {
        let john = try spec.mapper.decode(Person.self, from: Array(DocumentedExamplesTests.john.utf8))
        #expect(john.firstName == "John")
        #expect(john.homepage == "http://example.com")
        #expect(john.children?.map(\.firstName) == ["Ann", "Bob"])
        #expect(john.children?.first?.children == nil)
        let json = try spec.mapper.encode(john)
        #expect(json == (try JSONParser.parse(DocumentedExamplesTests.john)))
    }

    @Test func aFatalMappingErrorIsThrownWithItsPaths() {
        let bytes = Array(#"{"first_name":"John","last_name":"Doe","homepage":"x","age":24,"children":[]}"#.utf8)
        do {
            _ = try spec.mapper.decode(Person.self, from: bytes)
            Issue.record("decoded an invalid record")
        } catch let error as MappingFailure {
            #expect(error.description == #"/homepage: string "x" is not an absolute URL"#)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func invalidJSONIsAMappingFailure() {
        #expect(throws: MappingFailure.self) { try spec.mapper.decode(Person.self, from: Array("{".utf8)) }
    }

    @Test func aDecodingErrorAfterMappingIsTheDecodersError() {
        // `age` maps (it is just required), but a string does not decode into Int.
        let bytes = Array(#"{"first_name":"J","last_name":"D","homepage":"http://a.b","age":"old","children":[]}"#.utf8)
        #expect(throws: DecodingError.self) { try spec.mapper.decode(Person.self, from: bytes) }
    }
}
