import Foundation
import Testing
import StreamMap

/// README.md's library examples, verbatim (keep the two in step).
@Suite("README library example")
struct ReadmeLibraryExampleTests {
    // The same mapper as Examples/person.spec.json, with the Swift API (a test holds the two equal):
    static let child = Mapper.object {
        Field("first_name", to: "firstName")
        Field("last_name", to: "lastName")
        Field("age")                                    // Field("id") keeps the name; required, like "age": "age"
    }
    static let person = Mapper.object {
        Field("first_name", to: "firstName")
        Field("last_name", to: "lastName")
        Field("homepage", .notNull(.url()))             // a mapper as given adds no required check: notNull does
        Field("age")
        Field("children", .notNull(.arrayOf(child)))
    }

    @Test func theSwiftPersonIsTheSpecsPerson() throws {
        let specPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/person.spec.json").path
        let spec = try Spec(json: Array(try Data(contentsOf: URL(fileURLWithPath: specPath))), file: specPath)
        let records = [
            #"{"first_name":"Ann","last_name":"Lee","homepage":"https://ann.example","age":40,"children":[{"first_name":"Bo","last_name":"Lee","age":7}]}"#,
            #"{"first_name":"Ann","last_name":"Lee","homepage":"https://ann.example","age":40,"children":[]}"#,
            #"{"first_name":"Ann","last_name":"Lee","age":40,"children":[]}"#,                       // no homepage
            #"{"first_name":"Ann","last_name":"Lee","homepage":null,"age":40,"children":[]}"#,
            #"{"first_name":"Ann","last_name":"Lee","homepage":"not a url","age":40,"children":[]}"#,
            #"{"first_name":"Ann","last_name":"Lee","homepage":"https://a.b","age":40}"#,              // no children
            #"{"first_name":"Ann","last_name":"Lee","homepage":"https://a.b","age":40,"children":[{"first_name":"Bo"}]}"#,
            #"{"first_name":"Ann","homepage":"https://a.b","age":40,"children":[]}"#,                 // no last name
            #"{"last_name":"Lee","homepage":"https://a.b","age":null,"children":[]}"#,
            #"{"first_name":"Ann","last_name":"Lee","homepage":"https://a.b","age":40,"children":{}}"#,
            "[]",
        ]
        for record in records {
            let swift = Self.person.map(try JSONParser.parse(record))
            let fromSpec = spec.mapper.map(try JSONParser.parse(record))
            #expect(swift == fromSpec, "\(record)")
        }
        // And back: both reverse alike.
        let mapped = try JSONParser.parse(#"{"firstName":"Ann","lastName":"Lee","homepage":"https://a.b","age":4,"children":[]}"#)
        #expect(try Self.person.reversed().map(mapped) == spec.mapper.reversed().map(mapped))
    }

    @Test func theLenientExampleRunsAsDocumented() throws {
        let child = Self.child
        // Hydrant's forgiving style: optional fields warn, a bad child is dropped with a warning.
        let lenient = Mapper.object {
            Field("first_name", to: "firstName")
            Field("homepage", to: "homepage", .optionally(.url(schemes: ["https", "http"])))
            Field("children", to: "children", .arrayOf(.optionally(child)))
        }
        let result = lenient.map(try JSONParser.parse(#"{"first_name":"Ann","children":[{"first_name":"Bo"}]}"#))
        #expect(result.isFatal == false)
        #expect(result.value?.description == #"{"firstName":"Ann","children":[]}"#)
        #expect(result.errors.map(\.sourcePath.pointer) == ["/homepage", "/children/0/last_name", "/children/0/age"])
        #expect(result.errors.allSatisfy { !$0.isFatal })
        let back = try lenient.reversed()
        #expect(back.map(result.value!).value?.description == #"{"first_name":"Ann","children":[]}"#)
    }

    @Test func whatNewcomersReachFor() throws {
        let fields = Mapper.object {
            Field("created_at", to: "createdAt", .stringToDate(.iso8601))          // date formats as specs name them
            Field("posted", .stringToDate(.twitter, .rfc822))                       // the first that parses
            Field("day", .stringToDate("yyyy-MM-dd"))                               // an LDML pattern (UTC)
            Field("age", .omitWhenAbsent(.integer))      // absent or null: left out, no warning; "x": the record is rejected
            Field("id", to: "ref", .transform(from: Int.self, to: String.self) { "#\($0)" })   // a typed closure
        }
        let input = #"{"created_at":"2020-01-02T03:04:05+01:00","posted":"Sun, 31 Aug 2014 00:29:15 +0000","day":"2020-01-02","id":5}"#
        let result = fields.map(try JSONParser.parse(input))
        #expect(result.errors.isEmpty)
        #expect(result.value?.description
                == ##"{"createdAt":"2020-01-02T02:04:05Z","posted":"2014-08-31T00:29:15Z","day":"2020-01-02T00:00:00Z","ref":"#5"}"##)
        let bad = fields.map(try JSONParser.parse(#"{"created_at":"2020-01-02T03:04:05Z","posted":"Sun, 31 Aug 2014 00:29:15 +0000","day":"2020-01-02","id":5,"age":"x"}"#))
        #expect(bad.isFatal && bad.errors.map(\.description) == [#"/age: expected integer, found string "x""#])
    }
}
