import Testing
@testable import StreamMap

@Suite("Spec validation")
struct SpecValidationTests {
    /// The issues a spec produces, as "pointer: message" lines.
    func issues(_ spec: String) -> [String] {
        do {
            _ = try Spec(json: spec, file: "spec.json")
            return []
        } catch {
            return error.issues.map(\.description)
        }
    }

    @Test func theIssueExampleMessage() throws {
        do {
            _ = try Spec(json: #"{"fields":{"age":{"to":"age","via":"integr"}}}"#, file: "spec.json")
            Issue.record("accepted")
        } catch {
            #expect(error.description == #"spec.json: /fields/age/via: unknown mapper "integr" (did you mean "integer"?)"#)
        }
    }

    @Test("every class of spec error is located and explained", arguments: [
        // Not JSON at all, with line and column.
        ("{\n  \"fields\": {,}\n}", "line 2, column 1"),
        (#"{"fields":{"a":"b","a":"c"}}"#, "line 1, column"),  // duplicate keys in a spec are an error
        ("[]", "a spec must be a JSON object, found array"),
        (#"{"feilds":{}}"#, #"/feilds: unknown key "feilds" (did you mean "fields"?)"#),
        (#"{"streammap":2}"#, "/streammap: unsupported spec version 2"),
        (#"{"fields":3}"#, "/fields: expected an object (source → destination) or an array of fields, found integer 3"),
        (#"{"fields":{"a":5}}"#, "/fields/a: expected a destination key path"),
        (#"{"fields":{"a":{"to":"b","via":"strng"}}}"#, #"/fields/a/via: unknown mapper "strng" (did you mean "string"?)"#),
        (#"{"fields":{"a":{"to":"b","via":{"arrayOff":"string"}}}}"#, #"/fields/a/via: unknown mapper "arrayOff" (did you mean "arrayOf"?)"#),
        (#"{"fields":{"a":{"to":"b","via":{"arrayOf":"string","first":[]}}}}"#, "/fields/a/via: one mapper per object"),
        (#"{"fields":{"a":{"to":"b","via":{"first":[]}}}}"#, "/fields/a/via/first: expected at least one mapper"),
        (#"{"fields":{"a":{"to":"b","via":{"first":"string"}}}}"#, "/fields/a/via/first: expected an array of mappers"),
        (#"{"fields":{"a":{"to":"b","via":["string",{"arrayOf":"nope"}]}}}"#, #"/fields/a/via/1/arrayOf: unknown mapper "nope""#),
        (#"{"fields":{"a":{"too":"b"}}}"#, #"/fields/a/too: unknown key "too" (did you mean "to"?)"#),
        (#"{"fields":{"a":{"to":3}}}"#, "/fields/a/to: expected a key path or a non-empty array of key paths, found integer 3"),
        (#"{"fields":[{"to":"b"}]}"#, #"/fields/0: a field in a list needs "from""#),
        (#"{"fields":{"a":{"to":"b","type":"strin"}}}"#, #"/fields/a/type: unknown type "strin" (did you mean "string"?)"#),
        (#"{"fields":{"a":{"to":"b","optional":true,"missing":"omit"}}}"#, "/fields/a/optional: \"optional\" cannot be combined"),
        (#"{"fields":{"a":{"to":"b","optional":true,"required":true}}}"#, "/fields/a/required: a field cannot be both required and optional"),
        (#"{"fields":{"a":{"to":"b","missing":"skip"}}}"#, "/fields/a/missing: expected \"fail\", \"omit\", \"null\" or {\"default\": VALUE}"),
        (#"{"fields":{"a":{"to":"b","reverseDefault":1}}}"#, "/fields/a/reverseDefault: \"reverseDefault\" needs \"optional\": true"),
        (#"{"fields":{"a":"x","b":"x"}}"#, #"/fields: destination "x" overlaps destination "x""#),
        (#"{"fields":{"a":"x","b":"x.y"}}"#, #"/fields: destination "x.y" overlaps destination "x""#),
        (#"{"unmapped":"kept"}"#, "/unmapped: expected \"drop\", \"keep\""),
        (#"{"unmapped":{"keys":"camle"}}"#, #"/unmapped/keys: unknown key style "camle" (did you mean "camel"?)"#),
        (#"{"delimiter":""}"#, "/delimiter: expected a non-empty string"),
        (#"{"nullToEmpty":{"except":"a"}}"#, "/nullToEmpty/except: expected an array of destination keys"),
        (#"{"types":{"date":"nope"}}"#, #"/types/date: unknown mapper "nope""#),
        (#"{"mapper":"identity","fields":{}}"#, #"/fields: "fields" cannot be combined with "mapper""#),
        (#"{"mapper":{"type":"integr"}}"#, #"/mapper/type: unknown type "integr" (did you mean "integer"?)"#),
        (#"{"mapper":{"enum":{}}}"#, "/mapper/enum: an enum table needs at least one entry"),
        (#"{"mapper":{"enum":[[1,"a"],[1.0,"b"]]}}"#, "/mapper/enum/1: duplicate enum entry 1.0"),
        (#"{"mapper":{"enum":[[1]]}}"#, "/mapper/enum/0: expected a [from, to] pair"),
        (#"{"mapper":{"stringToDate":"rfc3339x"}}"#, #"/mapper/stringToDate: unknown date format "rfc3339x" (did you mean "rfc3339"?)"#),
        (#"{"mapper":{"stringToDate":{"pattern":"yyyy-QQ"}}}"#, "/mapper/stringToDate/pattern: "),
        (#"{"mapper":{"stringToDate":"iso8601","timeZone":"+25:00"}}"#, "/mapper/timeZone: expected a UTC offset"),
        (#"{"mapper":{"numberToDate":"sec"}}"#, "/mapper/numberToDate: expected a unit (ms, s, min, h)"),
        (#"{"mapper":{"url":[]}}"#, "/mapper/url: expected true or a non-empty array of URL schemes"),
        (#"{"mapper":{"base64":true,"from":"hex"}}"#, "/mapper/from: expected standard or url"),
        (#"{"mapper":{"split":"identity"}}"#, #"/mapper: "split" needs "reverse""#),
        (#"{"mapper":{"forward":1}}"#, "/mapper/forward: expected a key path"),
        (#"{"mapper":{"keys":"snake","deep":"yes"}}"#, "/mapper/deep: expected true or false"),
        (#"{"mapper":{"object":[]}}"#, "/mapper/object: expected an object mapping"),
        (#"{"mapper":{"object":{"fields":{"a":"b"},"unmaped":"keep"}}}"#, #"/mapper/object/unmaped: unknown key "unmaped" (did you mean "unmapped"?)"#),
        (#"{"mapper":7}"#, "/mapper: expected a mapper name, an array (a pipeline) or an object, found integer 7"),
    ])
    func errorClass(_ spec: String, _ expectedPrefix: String) {
        let found = issues(spec)
        #expect(found.contains { $0.hasPrefix(expectedPrefix) }, "issues: \(found)")
    }

    @Test func allIssuesAreReportedAtOnce() {
        let found = issues(#"{"fields":{"a":{"to":"b","via":"nope"},"c":{"to":"d","type":"nope"}},"unmapped":1}"#)
        #expect(found.count == 3, "\(found)")
    }

    /// Every problem of one field, each with its pointer and hint — not just the first — and a broken field still
    /// counts for the destinations another field repeats.
    @Test func everyProblemOfAFieldIsReported() {
        #expect(issues(#"{"fields":{"a":{"to":"a","via":"strng","type":"intger"}}}"#) == [
            #"/fields/a/via: unknown mapper "strng" (did you mean "string"?)"#,
            #"/fields/a/type: unknown type "intger" (did you mean "integer"?) (declare custom types under "types")"#,
        ])
        #expect(issues(#"{"fields":{"a":{"to":"x","via":"strng"},"b":"x"}}"#) == [
            #"/fields/a/via: unknown mapper "strng" (did you mean "string"?)"#,
            #"/fields: destination "x" overlaps destination "x""#,
        ])
        #expect(issues(#"{"fields":{"c":{"to":7,"via":"nope","optional":"yes"}}}"#).count == 3)
        #expect(issues(#"{"fields":{"d":["strng",5]}}"#) == [
            #"/fields/d/0: unknown mapper "strng" (did you mean "string"?)"#,
            #"/fields/d/1: expected the destination key path, found integer 5"#,
        ])
    }

    /// "Did you mean": a typo (at most 2 edits, or a third of the word), else a name the word begins (3 letters or
    /// more), as people coming from Miller or Python write `int`, `bool`, `str`.
    @Test(arguments: [
        ("integr", "integer"), ("strnig", "string"), ("int", "integer"), ("bool", "boolean"), ("str", "string"),
        ("INT", "integer"), ("numbr", "number"), ("in", nil), ("float", nil), ("intege", "integer"), ("", nil),
    ] as [(String, String?)])
    func suggestions(word: String, expected: String?) {
        #expect(Suggest.closest(to: word, in: Self.typeNames) == expected)
    }

    static let typeNames = ["null", "boolean", "integer", "number", "string", "array", "object"]

    /// A candidate that keeps none of the word's letters is no typo of it, however short both are.
    @Test func aSuggestionKeepsSomeLetter() {
        #expect(Suggest.closest(to: "x", in: ["a"]) == nil)
        #expect(Suggest.closest(to: "zz", in: ["id"]) == nil)
        #expect(Suggest.closest(to: "zz", in: ["id", "za"]) == "za")
        #expect(Suggest.closest(to: "x", in: ["xy"]) == "xy")
        #expect(Suggest.closest(to: "usr", in: ["tags", "user"]) == "user")
    }

    @Test func theShortestNameAWordBeginsIsSuggested() {
        #expect(Suggest.closest(to: "str", in: ["stringToNumber", "strings", "strict"]) == "strict")
        #expect(Suggest.closest(to: "stri", in: ["stringToNumber", "string"]) == "string")
        #expect(issues(#"{"fields":{"a":{"to":"b","type":"int"}}}"#)
                == [#"/fields/a/type: unknown type "int" (did you mean "integer"?) (declare custom types under "types")"#])
    }

    /// A spec is hostile input: names of any length, any number of them, never cost more than linear time.
    @Test func suggestionsAreBounded() {
        let long = String(repeating: "a", count: Suggest.longestWord + 1)
        #expect(Suggest.closest(to: long, in: [long + "b"]) == nil)  // too long a word to be a typo
        #expect(Suggest.closest(to: String(long.dropLast()), in: [long]) == long)
        let huge = String(repeating: "b", count: Suggest.longestCandidate)
        #expect(Suggest.closest(to: "bbb", in: [huge + "b"]) == nil)  // too long a candidate
        #expect(Suggest.closest(to: "bbb", in: [huge]) == huge)
        // The budget: spent, the rest of the candidates are not looked at; what is left stays for the next.
        var budget = 10
        #expect(Suggest.closest(to: "integr", in: Array(repeating: "zzzzzzzzzz", count: 5) + ["integer"], budget: &budget) == nil)
        #expect(budget <= 0)
        budget = 1000
        #expect(Suggest.closest(to: "integr", in: ["integer"], budget: &budget) == "integer")
        #expect(budget > 0 && budget < 1000)
    }

    /// Thousands of unknown type names against thousands of declared types: the first issues reported with their
    /// hints, the rest counted, in time linear in the spec (this took minutes when each name was compared with every
    /// type). Timed as a ratio of two sizes, so a slow or busy machine does not decide.
    @Test func manyUnknownNamesAgainstManyTypesAreReportedQuickly() throws {
        func spec(_ n: Int) -> String {
            let types = (0..<n).map { #""t\#($0)":"integer""# }.joined(separator: ",")
            let fields = (0..<n).map { #""f\#($0)":{"to":"g\#($0)","type":"u\#($0)x"}"# }.joined(separator: ",")
            return #"{"types":{\#(types)},"fields":{\#(fields)}}"#
        }
        let found = issues(spec(4000))
        #expect(found.count == SpecError.mostIssues)
        #expect(found.first?.contains("did you mean") == true, "\(found.first ?? "")")  // the first ones get their hint
        let small = spec(250), large = spec(250 * LibraryScalingTests.factor)
        try LibraryScalingTests.expectLinear("unknown type names", n: 1) { _ = issues($0 == 1 ? small : large) }
    }

    /// An object mapping's `types` hold in it and in the objects nested in it, shadow an outer type of the same
    /// name there, and end with it.
    @Test func customTypesAreScopedToTheirObject() throws {
        let spec = try Spec(json: #"""
            {"types": {"t": "toString"},
             "fields": {
               "a": {"to": "a", "type": "t"},
               "o": {"to": "o", "via": {"object": {"types": {"t": "stringToNumber"}, "fields": {
                 "x": {"to": "x", "type": "t"},
                 "y": {"to": "y", "via": {"object": {"fields": {"z": {"to": "z", "type": "t"}}}}}}}}},
               "b": {"to": "b", "type": "t"}}}
            """#)
        let result = spec.mapper.map(try JSONParser.parse(#"{"a":1,"o":{"x":"2","y":{"z":"3"}},"b":4}"#))
        #expect(result.value.map(JSONWriter.string) == #"{"a":"1","o":{"x":2,"y":{"z":3}},"b":"4"}"#)
        #expect(issues(#"{"fields":{"p":{"to":"p","via":{"object":{"types":{"u":"toString"}}}},"q":{"to":"q","type":"u"}}}"#)
                == [#"/fields/q/type: unknown type "u" (declare custom types under "types")"#])
    }

    /// Mappers nest at most `deepestMapper` levels (each level is a recursion of the compiler and of every walk
    /// of the mapper after it); past that, one issue, where the limit is crossed.
    @Test func mappersNestAtMostTheLimit() throws {
        func spec(_ depth: Int) -> String {
            #"{"fields":{"a":{"to":"a","via":"# + String(repeating: #"{"arrayOf":"#, count: depth) + #""integer""#
                + String(repeating: "}", count: depth) + "}}}"
        }
        let limit = SpecCompiler.deepestMapper
        #expect(issues(spec(limit - 1)) == [])  // `via` is a level too
        let found = issues(spec(limit + 500))
        #expect(found.count == 1)
        #expect(found.first == "/fields/a/via" + String(repeating: "/arrayOf", count: limit)
                + ": mappers nested deeper than \(limit) levels")
    }

    /// At most `SpecError.mostIssues` issues are kept, the rest counted: a spec with a problem at every level of
    /// a deep nesting would otherwise be reported in text quadratic in its depth.
    @Test func issuesBeyondTheMostAreCounted() {
        let depth = 400
        let text = #"{"fields":{"a":{"to":"a","via":"# + String(repeating: #"{"x":1,"arrayOf":"#, count: depth) + #""integer""#
            + String(repeating: "}", count: depth) + "}}}"
        do {
            _ = try Spec(json: text, file: "spec.json")
            Issue.record("accepted")
        } catch {
            #expect(error.issues.count == SpecError.mostIssues)
            #expect(error.moreIssues == depth - SpecError.mostIssues)
            #expect(error.issues.first?.description == #"/fields/a/via/x: unknown key "x""#)
            #expect(error.description.hasSuffix("\nspec.json: … and \(depth - SpecError.mostIssues) more issues"))
        }
    }

    @Test func keysWithSlashAndTildeAreEscapedInPointers() {
        let found = issues(#"{"fields":{"a/b~c":{"to":"x","via":"nope"}}}"#)
        #expect(found.first?.hasPrefix("/fields/a~1b~0c/via:") == true, "\(found)")
    }

    @Test func validSpecsCompile() throws {
        for spec in [
            #"{}"#, #"{"streammap":1,"fields":{}}"#, #"{"mapper":"identity"}"#,
            #"{"fields":{"a":"b","c.d":"e.f","g":{"via":["string",{"policy":"identity","null":"omit"}]}}}"#,
            #"{"fields":[{"from":"a","to":"b"},{"from":"a","to":"c","via":"toString"}]}"#,
            #"{"fields":{"x":{"to":"y","literal":true}},"delimiter":"->","unmapped":{"keys":"hydrant.snake","values":"identity"}}"#,
            #"{"mapper":{"arrayOf":{"optional":{"object":{"fields":{"name":"firstName"}}}}}}"#,
            #"{"mapper":{"stringToDate":["twitter","rfc822",{"pattern":"dd/MM/yyyy"}],"timeZone":"+01:00"}}"#,
        ] {
            _ = try Spec(json: spec)
        }
    }
}
