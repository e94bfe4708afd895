import Testing
@testable import StreamMap

/// The examples from the seed libraries' documentation, as spec files, mapped as their docs say.
@Suite("Documented examples")
struct DocumentedExamplesTests {
    func map(_ spec: String, _ input: String) throws -> MapResult {
        try Spec(json: spec).mapper.map(try JSONParser.parse(input))
    }

    /// Hydrant's "Getting Started" JSON, with Ann's "age" spelled as intended.
    static let john = #"{"first_name":"John","last_name":"Doe","homepage":"http://example.com","age":24,"children":[{"first_name":"Ann","last_name":"Doe","age":6},{"first_name":"Bob","last_name":"Doe","age":6}]}"#

    static let personSpec = #"""
        {"fields": {
          "first_name": "firstName",
          "last_name": "lastName",
          "homepage": {"to": "homepage", "via": "url"},
          "age": "age",
          "children": {"to": "children", "via": {"arrayOf": {"object": {"fields": {
            "first_name": "firstName", "last_name": "lastName", "age": "age"}}}}}
        }}
        """#

    /// docs/semantics.md's reverse law for dates: the instant comes back, written in the first format, in UTC —
    /// not the text that was read.
    @Test func aReversedDateKeepsTheInstantNotTheText() throws {
        let cases: [(spec: String, input: String, back: String)] = [
            (#"{"fields":{"d":{"to":"d","via":{"stringToDate":"twitter"}}}}"#, "Sun Aug 31 02:29:15 +0200 2014", "Sun Aug 31 00:29:15 +0000 2014"),
            (#"{"fields":{"d":{"to":"d","via":{"stringToDate":"iso8601"}}}}"#, "2014-08-31T02:29:15.500+02:00", "2014-08-31T00:29:15.5Z"),
            (#"{"fields":{"d":{"to":"d","via":{"stringToDate":"iso8601"}}}}"#, "2014-08-31", "2014-08-31T00:00:00Z"),
        ]
        for c in cases {
            let spec = try Spec(json: c.spec)
            let mapped = spec.mapper.map(.object(JSONObject([("d", .string(c.input))])))
            #expect(mapped.errors.isEmpty)
            let back = try spec.reversed().map(mapped.value!)
            #expect(back.value == .object(JSONObject([("d", .string(c.back))])), "\(c.input)")
            // The same instant: mapping the text that came back gives the same canonical date.
            #expect(spec.mapper.map(back.value!).value == mapped.value)
        }
    }

    @Test func hydrantPersonMapsAndReversesToTheInput() throws {
        let spec = try Spec(json: Self.personSpec)
        let input = try JSONParser.parse(Self.john)
        let mapped = spec.mapper.map(input)
        #expect(mapped.errors.isEmpty)
        #expect(JSONWriter.string(mapped.value!) == #"{"firstName":"John","lastName":"Doe","homepage":"http://example.com","age":24,"children":[{"firstName":"Ann","lastName":"Doe","age":6},{"firstName":"Bob","lastName":"Doe","age":6}]}"#)
        let back = try spec.reversed().map(mapped.value!)
        #expect(back.errors.isEmpty)
        #expect(back.value == input)
    }

    /// The docs' own input spells Ann's key "Age": with a required "age", the child fails, so `children` fails,
    /// so the record fails — the docs' `[error isFatal]` branch, with the path to the culprit.
    @Test func hydrantPersonAsLiterallyWrittenIsFatalAtTheChild() throws {
        let literal = #"{"first_name":"John","last_name":"Doe","homepage":"http://example.com","age":24,"children":[{"first_name":"Ann","last_name":"Doe","Age":6},{"first_name":"Bob","last_name":"Doe","age":6}]}"#
        let r = try map(Self.personSpec, literal)
        #expect(r.isFatal)
        #expect(r.value == nil)
        #expect(r.errors.map(\.sourcePath.pointer) == ["/children/0/age"])
        #expect(r.errors.map(\.destinationPath.pointer) == ["/children/0/age"])
        #expect(r.errors.first?.code == .required)
    }

    /// "Marking fields as Optional": homepage and age optional; children's age optional.
    @Test func hydrantOptionalFields() throws {
        let spec = #"""
            {"fields": {
              "first_name": "firstName", "last_name": "lastName",
              "homepage": {"to": "homepage", "via": {"optional": "url"}},
              "age": {"to": "age", "optional": true},
              "children": {"to": "children", "via": {"arrayOf": {"object": {"fields": {
                "first_name": "firstName", "last_name": "lastName", "age": {"to": "age", "optional": true}}}}}}
            }}
            """#
        let input = #"{"first_name":"John","last_name":"Doe","homepage":null,"age":null,"children":[{"first_name":"Ann","last_name":"Doe","Age":6}]}"#
        let r = try map(spec, input)
        #expect(!r.isFatal)
        #expect(JSONWriter.string(r.value!) == #"{"firstName":"John","lastName":"Doe","children":[{"firstName":"Ann","lastName":"Doe"}]}"#)
        #expect(Set(r.errors.map(\.sourcePath.pointer)) == ["/homepage", "/age", "/children/0/age"])
        #expect(r.errors.allSatisfy { !$0.isFatal })
    }

    /// `HYDMapArrayOf(HYDMapOptionallyTo(personMapper))` drops bad elements; the swapped order drops the array.
    @Test func arrayOfOptionallyVersusOptionallyArrayOf() throws {
        let people = #"[{},{"name":"John"},{"last":"first"}]"#
        let drops = try map(#"{"mapper":{"arrayOf":{"optional":{"object":{"fields":{"name":"firstName"}}}}}}"#, people)
        #expect(JSONWriter.string(drops.value!) == #"[{"firstName":"John"}]"#)
        #expect(!drops.isFatal && drops.errors.map(\.sourcePath.pointer) == ["/0/name", "/2/name"])
        let whole = try map(#"{"mapper":{"optional":{"arrayOf":{"object":{"fields":{"name":"firstName"}}}}}}"#, people)
        #expect(whole.value == nil && !whole.isFatal && whole.errors.count == 2)
    }

    /// KVMapper's cats: snake_case keys to llama case, every age through a value transformer (×6, as the docs'
    /// output shows), and the values mapper's errors reported per key.
    @Test func kvmapperCats() throws {
        let spec = #"{"unmapped": {"keys": "kvmapper.llama", "values": {"multiply": 6}}}"#
        let r = try map(spec, #"{"maggy_the_ninja":5,"magrat_the_rockstar":6,"mable_the_wizard":2}"#)
        #expect(JSONWriter.string(r.value!) == #"{"maggyTheNinja":30,"magratTheRockstar":36,"mableTheWizard":12}"#)
        let bad = try map(spec, #"{"maggy_the_ninja":"five","mable_the_wizard":2.5}"#)
        #expect(bad.isFatal)
        #expect(bad.errors.map(\.sourcePath.pointer) == ["/maggy_the_ninja"])
        #expect(bad.errors.map(\.destinationPath.pointer) == ["/maggyTheNinja"])
        #expect(try Spec(json: #"{"mapper":{"multiply":4}}"#).reversed().map(.number(JSONNumber("30")!)).value == .number(JSONNumber("7.5")!))
        #expect(throws: NotReversibleError.self) { try Spec(json: spec).reversed() }
    }

    /// CYZBaseModel: a dotted source path into a property, and null → typed empty value with exceptions.
    @Test func cyzBaseModelNullToEmpty() throws {
        let spec = #"""
            {"nullToEmpty": {"except": ["nickname"]},
             "fields": {
               "name.oldName": {"to": "name", "type": "string"},
               "tags": {"to": "tags", "type": "array"},
               "meta": {"to": "meta", "type": "object"},
               "count": {"to": "count", "type": "integer"},
               "nickname": {"to": "nickname", "type": "string", "null": "null"}}}
            """#
        let r = try map(spec, #"{"name":{"oldName":null},"tags":null,"meta":null,"count":null,"nickname":null}"#)
        #expect(JSONWriter.string(r.value!) == #"{"name":"","tags":[],"meta":{},"count":0,"nickname":null}"#)
        let typed = try map(spec, #"{"name":{"oldName":7},"tags":[],"meta":{},"count":1,"nickname":"n"}"#)
        #expect(typed.isFatal && typed.errors.map(\.sourcePath.pointer) == ["/name/oldName"])
    }

    /// ClassMapper: every field declared as a date goes through the same processor; reversed on the way out.
    @Test func classMapperTypeProcessors() throws {
        let spec = try Spec(json: #"""
            {"types": {"date": {"stringToDate": "twitter"}},
             "fields": {"created_at": {"to": "createdAt", "type": "date"}, "user.updated": {"to": "updatedAt", "type": "date"}}}
            """#)
        let input = try JSONParser.parse(#"{"created_at":"Sun Aug 31 00:29:15 +0000 2014","user":{"updated":"Mon Sep 01 10:00:00 +0200 2014"}}"#)
        let r = spec.mapper.map(input)
        #expect(JSONWriter.string(r.value!) == #"{"createdAt":"2014-08-31T00:29:15Z","updatedAt":"2014-09-01T08:00:00Z"}"#)
        let back = try spec.reversed().map(r.value!)
        #expect(JSONWriter.string(back.value!) == #"{"created_at":"Sun Aug 31 00:29:15 +0000 2014","user":{"updated":"Mon Sep 01 08:00:00 +0000 2014"}}"#)
    }

    /// ObjectMapper's nested keys, array indexes, `nested: false` and a custom delimiter.
    @Test func objectMapperKeyPaths() throws {
        let r = try map(#"""
            {"delimiter": "->", "fields": [
              {"from": "distance->value", "to": "distance"},
              {"from": "distances->0->value", "to": "firstDistance"},
              {"from": "app.identifier", "to": "identifier"},
              {"from": "com.myapp.info->com.myapp.name", "to": "appName"}
            ]}
            """#, #"{"distance":{"text":"102 ft","value":31},"distances":[{"value":7}],"app.identifier":"x","com.myapp.info":{"com.myapp.name":"Maps"}}"#)
        #expect(JSONWriter.string(r.value!) == #"{"distance":31,"firstDistance":7,"identifier":"x","appName":"Maps"}"#)
        let literal = try map(#"{"fields":[{"from":"app.identifier","to":"identifier","literal":true}]}"#, #"{"app.identifier":"x","app":{"identifier":"y"}}"#)
        #expect(JSONWriter.string(literal.value!) == #"{"identifier":"x"}"#)
    }
}
