import Testing
import StreamMap

/// README.md's library example, verbatim (keep the two in step).
@Suite("README library example")
struct ReadmeLibraryExampleTests {
    @Test func theExampleRunsAsDocumented() throws {
        // The same mapper as Examples/person.spec.json, with the Swift API:
        let child = Mapper.object {
            Field("first_name", to: "firstName")
            Field("last_name", to: "lastName")
            Field("age", to: "age", .optionally(.integer))
        }
        let person = Mapper.object {
            Field("first_name", to: "firstName")
            Field("homepage", to: "homepage", .optionally(.url(schemes: ["https", "http"])))
            Field("children", to: "children", .arrayOf(.optionally(child)))
        }

        let result = person.map(try JSONParser.parse(#"{"first_name":"Ann","children":[{"first_name":"Bo"}]}"#))
        #expect(result.isFatal == false)
        #expect(result.value?.description == #"{"firstName":"Ann","children":[]}"#)
        #expect(result.errors.map(\.sourcePath.pointer) == ["/homepage", "/children/0/last_name", "/children/0/age"])
        #expect(result.errors.allSatisfy { !$0.isFatal })
        let back = try person.reversed()
        #expect(back.map(result.value!).value?.description == #"{"first_name":"Ann","children":[]}"#)
    }
}
