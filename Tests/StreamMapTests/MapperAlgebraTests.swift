// The mapping algebra's reference semantics (docs/semantics.md; Hydrant's documented behaviour).
//
// Every test asserts concrete outputs (as canonical JSON text), error codes, fatality and both error paths
// (rendered as JSON Pointers). An error is written as `"<code> <F|NF> [<source pointer>] [<destination pointer>]"`,
// with `[]` for the root.

import Synchronization
import Testing

@testable import StreamMap

// MARK: - Helpers

private func j(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

/// Maps `input` (JSON text, or nil for an absent value).
private func run(_ mapper: Mapper, _ input: String?) throws -> MapResult {
    guard let input else { return mapper.map(Optional<JSONValue>.none) }
    return mapper.map(try JSONParser.parse(input))
}

private func out(_ r: MapResult) -> String? { r.value.map { JSONWriter.string($0) } }

private func errs(_ r: MapResult) -> [String] {
    r.errors.map { "\($0.code.rawValue) \($0.isFatal ? "F" : "NF") [\($0.sourcePath.pointer)] [\($0.destinationPath.pointer)]" }
}

/// Checks a result's value (nil = absent), its errors, and that fatality follows them (a fatal result has no value).
private func expectResult(
    _ r: MapResult, _ value: String?, _ errors: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
) {
    // Compared as UTF-8 bytes: Swift's String == would equate canonically-equivalent text.
    let got = out(r)
    #expect(got.map { Array($0.utf8) } == value.map { Array($0.utf8) }, "value: got \(got ?? "absent"), expected \(value ?? "absent")",
            sourceLocation: sourceLocation)
    #expect(errs(r).map { Array($0.utf8) } == errors.map { Array($0.utf8) }, "errors: got \(errs(r)), expected \(errors)",
            sourceLocation: sourceLocation)
    let fatal = errors.contains { $0.contains(" F ") }
    #expect(r.isFatal == fatal, sourceLocation: sourceLocation)
    if fatal { #expect(out(r) == nil, "a fatal result carries no value", sourceLocation: sourceLocation) }
}

private func message(_ r: MapResult, _ i: Int = 0) -> String? { i < r.errors.count ? r.errors[i].message : nil }

/// The NotReversibleError thrown by `reversed()`, or nil when it does not throw.
private func notReversible(_ m: Mapper) -> NotReversibleError? {
    do {
        _ = try m.reversed()
        return nil
    } catch {
        return error
    }
}

/// `reverse(map(x)) == x`, with no errors either way.
private func expectRoundTrip(
    _ m: Mapper, _ input: String, forward expected: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let x = try j(input)
    let forward = m.map(x)
    #expect(forward.errors.isEmpty, "forward errors: \(errs(forward))", sourceLocation: sourceLocation)
    if let expected { #expect(out(forward) == expected, sourceLocation: sourceLocation) }
    let back = try m.reversed().map(forward.value)
    #expect(back.errors.isEmpty, "reverse errors: \(errs(back))", sourceLocation: sourceLocation)
    #expect(back.value == x, "reverse(map(x)) = \(out(back) ?? "absent"), x = \(input)", sourceLocation: sourceLocation)
}

/// Counts calls, for default factories.
private final class Counter: Sendable {
    let count = Atomic<Int>(0)
    func next() -> Int { count.wrappingAdd(1, ordering: .relaxed).newValue }
}

/// The Person/children mapping used by several suites.
private func personMapper() -> Mapper {
    .object {
        Field("first_name", to: "firstName")
        Field("last_name", to: "name.last")
        Field("homepage", to: "homepage", .optionally(.url()))
        Field("age", to: "age", .optionally(.integer))
        Field("born", to: "birthDate", .stringToDate(.named(.rfc822)))
        Field("role", to: "role", .enumTable([("A", "admin"), ("U", "user")]))
        Field("id", to: "uuid", .uuid)
        Field("meta.created", to: "createdMs", .thread(.stringToDate(.named(.iso8601)), .dateToNumber(.milliseconds)))
        Field("children", to: "kids", .arrayOf(.object {
            Field("name", to: "name")
            Field("age", to: "years", .integer)
        }))
    }
}

private let personInput = """
    {"first_name":"Ada","last_name":"Lovelace","homepage":"https://ada.example/notes","age":36,\
    "born":"Sun, 31 Aug 2014 00:29:15 +0000","role":"A","id":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f",\
    "meta":{"created":"2014-08-31T00:29:15.123Z"},"children":[{"name":"Byron","age":8},{"name":"Ada","age":6}]}
    """

private let personOutput = """
    {"firstName":"Ada","name":{"last":"Lovelace"},"homepage":"https://ada.example/notes","age":36,\
    "birthDate":"2014-08-31T00:29:15Z","role":"admin","uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f",\
    "createdMs":1409444955123,"kids":[{"name":"Byron","years":8},{"name":"Ada","years":6}]}
    """

// MARK: - Identity, notNull, nonFatal, policy

@Suite("MapperAlgebra identity, notNull, nonFatal, policy")
struct MapperAlgebraBasicKindsTests {
    @Test func identityReturnsItsInputAndNeverFails() throws {
        expectResult(try run(.identity, nil), nil)
        expectResult(try run(.identity, "null"), "null")
        expectResult(try run(.identity, #"{"a":[1,2.50,"x"],"b":{}}"#), #"{"a":[1,2.50,"x"],"b":{}}"#)
        expectResult(try run(Mapper(.identity), "false"), "false")
    }

    @Test func notNullRejectsAbsentAndNull() throws {
        let absent = try run(.required, nil)
        expectResult(absent, nil, ["required F [] []"])
        #expect(message(absent) == "value is required, found absent")
        let null = try run(.required, "null")
        expectResult(null, nil, ["required F [] []"])
        #expect(message(null) == "value is required, found null")
        // Falsy values are values.
        expectResult(try run(.required, "false"), "false")
        expectResult(try run(.required, "0"), "0")
        expectResult(try run(.required, #""""#), #""""#)
        expectResult(try run(.notNull(), "[]"), "[]")
    }

    @Test func notNullChecksTheInnerResult() throws {
        // The inner mapper's output is checked, not the input: toString(null) is absent.
        expectResult(try run(.notNull(.toString), "null"), nil, ["required F [] []"])
        expectResult(try run(.notNull(.toString), "5"), #""5""#)
        // An inner fatal error passes up unchanged.
        expectResult(try run(.notNull(.integer), #""x""#), nil, ["type F [] []"])
        // An inner non-fatal error passes through unchanged (Hydrant's rule): absent with a warning is not re-checked.
        expectResult(try run(.notNull(.optionally()), nil), nil, ["required NF [] []"])
    }

    @Test func nonFatallyFallsBackToTheDefaultOnlyOnAFatalFailure() throws {
        let m = Mapper.nonFatally(.integer, default: 0)
        expectResult(try run(m, #""x""#), "0", ["type NF [] []"])
        expectResult(try run(m, "5"), "5")
        // Absent passes `.integer` (a type check), so there is nothing to fall back from.
        expectResult(try run(m, nil), nil)
        // Without a default the value is absent.
        expectResult(try run(.nonFatally(.integer), #""x""#), nil, ["type NF [] []"])
        // The non-fatal error keeps its code.
        expectResult(try run(.nonFatally(.stringToNumber, default: "n/a"), #""abc""#), #""n/a""#, ["value NF [] []"])
    }

    @Test func optionallyGivesTheDefaultForAbsentNullAndInvalid() throws {
        let m = Mapper.optionally(.integer, default: -1)
        expectResult(try run(m, nil), "-1", ["required NF [] []"])
        // The inner type check sees null first, so the warning is a type error.
        expectResult(try run(m, "null"), "-1", ["type NF [] []"])
        expectResult(try run(m, "2.5"), "-1", ["type NF [] []"])
        expectResult(try run(.optionally(default: -1), "null"), "-1", ["required NF [] []"])
        expectResult(try run(m, "7"), "7")
        expectResult(try run(.optionally(.integer), nil), nil, ["required NF [] []"])
    }

    @Test func defaultFactoryIsCalledEachTimeADefaultIsNeeded() throws {
        let counter = Counter()
        let m = Mapper.optionally(.integer) { .number(JSONNumber(counter.next())) }
        expectResult(try run(m, "42"), "42")
        #expect(counter.count.load(ordering: .relaxed) == 0, "not called when the value maps")
        expectResult(try run(m, nil), "1", ["required NF [] []"])
        expectResult(try run(m, #""x""#), "2", ["type NF [] []"])
        let factory = Fallback.factory { .string("made") }
        #expect(factory.make() == "made")
        expectResult(try run(Mapper(.nonFatal(.integer, fallback: factory, reverseFallback: nil)), "true"), #""made""#, ["type NF [] []"])
    }

    @Test func reverseDefaultIsTheReverseMappersDefault() throws {
        let m = Mapper.optionally(.identity, default: "fwd", reverseDefault: "rev")
        expectResult(try run(m, nil), #""fwd""#, ["required NF [] []"])
        let back = try m.reversed()
        expectResult(try run(back, nil), #""rev""#, ["required NF [] []"])
        expectResult(try run(back, "3"), "3")
        expectResult(try run(try back.reversed(), nil), #""fwd""#, ["required NF [] []"])
        // A factory default becomes the reverse default of the reversed mapper.
        let made = Mapper.optionally(.integer) { "made" }
        expectResult(try run(try made.reversed(), nil), nil, ["required NF [] []"])
        expectResult(try run(try made.reversed().reversed(), nil), #""made""#, ["required NF [] []"])
    }

    @Test func policyMissingActions() throws {
        func p(_ a: FieldPolicy.Action) -> Mapper { .policy(.integer, missing: a) }
        let fail = try run(p(.fail), nil)
        expectResult(fail, nil, ["required F [] []"])
        #expect(message(fail) == "value is required, found absent")
        expectResult(try run(p(.omit), nil), nil)
        expectResult(try run(p(.useDefault(7)), nil), "7")
        expectResult(try run(p(.keepNull), nil), "null")
        // passToMapper: the inner mapper sees the absent value (here, optionally gives its default).
        expectResult(try run(.policy(.optionally(default: "d"), missing: .passToMapper), nil), #""d""#, ["required NF [] []"])
        expectResult(try run(.policy(.required, missing: .passToMapper), nil), nil, ["required F [] []"])
        // Missing actions do not apply to present values.
        expectResult(try run(p(.useDefault(7)), "3"), "3")
    }

    @Test func policyNullActions() throws {
        func p(_ a: FieldPolicy.Action) -> Mapper { .policy(.integer, missing: .omit, null: a) }
        let fail = try run(p(.fail), "null")
        expectResult(fail, nil, ["required F [] []"])
        #expect(message(fail) == "value is required, found null")
        expectResult(try run(p(.omit), "null"), nil)
        expectResult(try run(p(.useDefault(0)), "null"), "0")
        expectResult(try run(p(.keepNull), "null"), "null")
        // passToMapper: the inner mapper sees null; a type check that allows null passes it, `.integer` rejects it
        // (and that rejection is then an `invalid` case).
        expectResult(try run(.policy(.check([.integer, .null]), null: .passToMapper), "null"), "null")
        let rejected = try run(.policy(.integer, null: .passToMapper, invalid: .fail), "null")
        expectResult(rejected, nil, ["type F [] []"])
        #expect(message(rejected) == "expected integer, found null")
        expectResult(try run(.policy(.integer, null: .passToMapper, invalid: .useDefault(0)), "null"), "0", ["type NF [] []"])
    }

    @Test func policyInvalidActions() throws {
        func p(_ a: FieldPolicy.Action) -> Mapper { .policy(.integer, invalid: a) }
        expectResult(try run(p(.fail), #""x""#), nil, ["type F [] []"])
        expectResult(try run(p(.omit), #""x""#), nil, ["type NF [] []"])
        expectResult(try run(p(.useDefault(0)), #""x""#), "0", ["type NF [] []"])
        expectResult(try run(p(.keepNull), #""x""#), "null", ["type NF [] []"])
        // For `invalid`, passToMapper is the same as fail.
        expectResult(try run(p(.passToMapper), #""x""#), nil, ["type F [] []"])
        for action in [FieldPolicy.Action.fail, .omit, .useDefault(0), .keepNull, .passToMapper] {
            expectResult(try run(p(action), "12"), "12")
        }
    }

    @Test func policyAbsentOrNullOmitPresentButUnparseableReject() throws {
        let m = Mapper.object {
            Field("n", to: "count", .policy(.stringToNumber, missing: .omit, null: .omit, invalid: .fail))
            Field("k", to: "k")
        }
        expectResult(try run(m, #"{"n":"1,234","k":1}"#), #"{"count":1234,"k":1}"#)
        expectResult(try run(m, #"{"k":1}"#), #"{"k":1}"#)
        expectResult(try run(m, #"{"n":null,"k":1}"#), #"{"k":1}"#)
        let bad = try run(m, #"{"n":"abc","k":1}"#)
        expectResult(bad, nil, ["value F [/n] [/count]"])
        #expect(message(bad) == #"string "abc" is not a decimal number"#)
        expectResult(try run(m, #"{"n":12,"k":1}"#), nil, ["type F [/n] [/count]"])
    }
}

// MARK: - Type checks

@Suite("MapperAlgebra check")
struct MapperAlgebraCheckTests {
    static let cases: [(JSONTypeSet, String, Bool)] = [
        (.string, #""s""#, true), (.string, #""""#, true), (.string, "1", false), (.string, "null", false),
        (.integer, "1", true), (.integer, "-0", true), (.integer, "0", true),
        (.integer, "123456789012345678901234567890", true), (.integer, "-123456789012345678901234567890", true),
        (.integer, "1.0", false), (.integer, "1e2", false), (.integer, "1E+2", false), (.integer, "-0.0", false),
        (.integer, #""1""#, false), (.integer, "true", false),
        (.number, "1", true), (.number, "1.0", true), (.number, "1e2", true), (.number, "-0.5", true),
        (.number, "123456789012345678901234567890", true), (.number, #""1""#, false), (.number, "true", false),
        (.boolean, "true", true), (.boolean, "false", true), (.boolean, "0", false), (.boolean, "null", false),
        (.boolean, #""true""#, false),
        (.null, "null", true), (.null, "false", false), (.null, "0", false), (.null, #""""#, false),
        (.array, "[]", true), (.array, "[1]", true), (.array, "{}", false),
        (.object, "{}", true), (.object, #"{"a":1}"#, true), (.object, "[]", false),
        ([.string, .null], #""s""#, true), ([.string, .null], "null", true), ([.string, .null], "1", false),
        ([.integer, .boolean], "1", true), ([.integer, .boolean], "false", true), ([.integer, .boolean], "1.5", false),
        ([.number, .string], "1.5", true), ([.number, .string], #""x""#, true), ([.number, .string], "{}", false),
        ([.array, .object], "[]", true), ([.array, .object], "{}", true), ([.array, .object], "null", false),
    ]

    @Test("passes values of its types and rejects others with a fatal type error", arguments: MapperAlgebraCheckTests.cases)
    func check(_ types: JSONTypeSet, _ input: String, _ passes: Bool) throws {
        let r = try run(.check(types), input)
        if passes {
            expectResult(r, JSONWriter.string(try j(input)))
        } else {
            expectResult(r, nil, ["type F [] []"])
        }
    }

    @Test func absentPassesEveryCheck() throws {
        for types: JSONTypeSet in [.string, .integer, .number, .boolean, .null, .array, .object, [.string, .null], []] {
            expectResult(try run(.check(types), nil), nil)
        }
    }

    @Test func builderShorthandsAreTheChecks() throws {
        expectResult(try run(.string, #""a""#), #""a""#)
        expectResult(try run(.integer, "1.0"), nil, ["type F [] []"])
        expectResult(try run(.number, "1.0"), "1.0")
        expectResult(try run(.boolean, "true"), "true")
        expectResult(try run(.objectValue, "{}"), "{}")
        expectResult(try run(.arrayValue, "{}"), nil, ["type F [] []"])
        expectResult(try run(.null, "null"), "null")
    }

    @Test func messagesNameTheExpectedAndFoundTypes() throws {
        #expect(message(try run(.integer, "1.0")) == "expected integer, found number 1.0")
        #expect(message(try run(.integer, "1e2")) == "expected integer, found number 1e2")
        #expect(message(try run(.number, #""1""#)) == #"expected number, found string "1""#)
        #expect(message(try run(.check([.string, .null]), "12")) == "expected string or null, found integer 12")
        #expect(message(try run(.objectValue, "[1]")) == "expected object, found array")
        #expect(message(try run(.check([]), "1")) == "expected nothing, found integer 1")
        #expect(JSONTypeSet.integer.contains(try j("123456789012345678901234567890")))
        #expect(!JSONTypeSet.integer.contains(try j("1.0")))
        #expect(JSONTypeSet.number.contains(try j("1")))
    }
}

// MARK: - Object mappings

@Suite("MapperAlgebra object")
struct MapperAlgebraObjectTests {
    @Test func plainFieldsAreRequiredAndRenamed() throws {
        let m = Mapper.object {
            Field("first_name", to: "firstName")
            Field("last_name", to: "lastName")
        }
        expectResult(try run(m, #"{"last_name":"Lovelace","first_name":"Ada","x":1}"#), #"{"firstName":"Ada","lastName":"Lovelace"}"#)
        expectResult(try run(m, #"{"first_name":"Ada"}"#), nil, ["required F [/last_name] [/lastName]"])
        expectResult(try run(m, #"{"first_name":"Ada","last_name":null}"#), nil, ["required F [/last_name] [/lastName]"])
        // Every field is processed: all errors are reported, in field order.
        expectResult(try run(m, #"{"first_name":null}"#), nil, [
            "required F [/first_name] [/firstName]", "required F [/last_name] [/lastName]",
        ])
        // Falsy values are present.
        expectResult(try run(m, #"{"first_name":"","last_name":false}"#), #"{"firstName":"","lastName":false}"#)
    }

    @Test func objectOfAbsentIsAbsentAndOfANonObjectIsATypeError() throws {
        let m = Mapper.object { Field("a", to: "b") }
        expectResult(try run(m, nil), nil)
        for input in ["null", "[]", #""str""#, "1", "true"] {
            expectResult(try run(m, input), nil, ["type F [] []"])
        }
        #expect(message(try run(m, #""str""#)) == #"expected object, found string "str""#)
        expectResult(try run(Mapper.object { }, #"{"a":1}"#), "{}")
    }

    @Test func nestedSourcePaths() throws {
        let m = Mapper.object { Field("a.b.c", to: "x") }
        expectResult(try run(m, #"{"a":{"b":{"c":5,"d":6}}}"#), #"{"x":5}"#)
        expectResult(try run(m, #"{"a":{"b":{"c":null}}}"#), nil, ["required F [/a/b/c] [/x]"])
        // A step into null, a scalar or a missing key makes the whole path absent (no read error).
        for input in [#"{"a":{"b":1}}"#, #"{"a":null}"#, #"{"a":"s"}"#, #"{"a":{}}"#, "{}"] {
            expectResult(try run(m, input), nil, ["required F [/a/b/c] [/x]"])
            expectResult(try run(Mapper.object { Field("a.b.c", to: "x", .identity) }, input), "{}")
        }
        // Errors inside a nested value carry the full source path.
        expectResult(try run(Mapper.object { Field("a.b.c", to: "x", .integer) }, #"{"a":{"b":{"c":"7"}}}"#), nil, ["type F [/a/b/c] [/x]"])
    }

    @Test func arrayIndexPaths() throws {
        let input = #"{"items":[{"id":7},{"id":"8"}],"obj":{"0":"zero"}}"#
        expectResult(try run(Mapper.object { Field("items.0.id", to: "firstId") }, input), #"{"firstId":7}"#)
        expectResult(try run(Mapper.object { Field("items.1.id", to: "secondId") }, input), #"{"secondId":"8"}"#)
        // A digit step on an object is an ordinary key.
        expectResult(try run(Mapper.object { Field("obj.0", to: "z") }, input), #"{"z":"zero"}"#)
        // An index past the end is absent: no error with an explicit mapper, `required` for a plain field.
        expectResult(try run(Mapper.object { Field("items.5.id", to: "x", .identity) }, input), "{}")
        expectResult(try run(Mapper.object { Field("items.5.id", to: "x") }, input), nil, ["required F [/items/5/id] [/x]"])
        expectResult(try run(Mapper.object { Field("items.5.id", to: "x", .optionally()) }, input), "{}", ["required NF [/items/5/id] [/x]"])
        // Non-canonical indices are keys, which arrays do not have.
        expectResult(try run(Mapper.object { Field("items.01.id", to: "x", .identity) }, input), "{}")
        expectResult(try run(Mapper.object { Field("items.-1.id", to: "x", .identity) }, input), "{}")
        // The error path walks the array by index.
        let bad = try run(Mapper.object { Field("items.1.id", to: "x", .integer) }, input)
        expectResult(bad, nil, ["type F [/items/1/id] [/x]"])
        #expect(bad.errors.first?.sourcePath == [.key("items"), .index(1), .key("id")])
        #expect(KeyPath("a.0.b").read(from: try j(#"{"a":[{"b":true}]}"#))?.path == [.key("a"), .index(0), .key("b")])
    }

    @Test func literalKeysContainingTheDelimiter() throws {
        let input = #"{"birth.date":"flat","birth":{"date":"nested"}}"#
        let literal = Mapper.object(ObjectMapping(fields: [
            Field(sources: [.literal("birth.date")], destinations: [.literal("born.on")], mapper: .required),
        ]))
        expectResult(try run(literal, input), #"{"born.on":"flat"}"#)
        expectResult(try run(Mapper.object { Field("birth.date", to: "born.on") }, input), #"{"born":{"on":"nested"}}"#)
        // The error path names the literal key as one JSON Pointer token.
        expectResult(try run(literal, #"{"birth":{"date":"nested"}}"#), nil, ["required F [/birth.date] [/born.on]"])
        #expect(KeyPath.literal("a.b").steps == ["a.b"])
        // JSON Pointer escaping of `/` and `~` in keys.
        let slashed = Mapper.object(ObjectMapping(fields: [
            Field(sources: [.literal("a/b~c")], destinations: [.literal("d")], mapper: .required),
        ]))
        expectResult(try run(slashed, "{}"), nil, ["required F [/a~1b~0c] [/d]"])
    }

    @Test func customDelimiter() throws {
        #expect(KeyPath("a->b", delimiter: "->").steps == ["a", "b"])
        #expect(KeyPath("a->b.c", delimiter: "->").steps == ["a", "b.c"])
        #expect(KeyPath("a.b", delimiter: "").steps == ["a.b"])
        let input = #"{"a":{"b":1,"b.c":2},"a->b":3}"#
        expectResult(try run(Mapper.object { Field("a->b", to: "x.y", delimiter: "->", .identity) }, input), #"{"x.y":1}"#)
        expectResult(try run(Mapper.object { Field("a->b.c", to: "out->v", delimiter: "->") }, input), #"{"out":{"v":2}}"#)
        expectResult(try run(Mapper.object { Field("a->b", to: "x") }, input), #"{"x":3}"#)
        expectResult(try run(.forward("a->b.c", delimiter: "->"), input), "2")
        expectResult(try run(Mapper.object { Field("a->zz", to: "x", delimiter: "->") }, input), nil, ["required F [/a/zz] [/x]"])
    }

    @Test func nestedDestinationsBuildMergedObjects() throws {
        let m = Mapper.object {
            Field("first", to: "name.first")
            Field("age", to: "age")
            Field("last", to: "name.last")
            Field("city", to: "address.city")
            Field("zip", to: "address.code.zip")
        }
        expectResult(
            try run(m, #"{"zip":"12345","city":"London","last":"L","age":36,"first":"Ada"}"#),
            #"{"name":{"first":"Ada","last":"L"},"age":36,"address":{"city":"London","code":{"zip":"12345"}}}"#)
        // The destination path of an error is the nested path.
        expectResult(try run(m, #"{"zip":"12345","city":"London","last":"L","age":36}"#), nil, ["required F [/first] [/name/first]"])
    }

    @Test func manyToOne() throws {
        let when = Field(sources: [KeyPath("date"), KeyPath("time")], destinations: [KeyPath("when")], mapper: .identity)
        let m = Mapper.object(ObjectMapping(fields: [when]))
        expectResult(try run(m, #"{"time":"10:00","date":"2020-01-01"}"#), #"{"when":["2020-01-01","10:00"]}"#)
        // One missing source makes the whole value absent (not partial).
        expectResult(try run(m, #"{"date":"2020-01-01"}"#), "{}")
        let required = Mapper.object(ObjectMapping(fields: [
            Field(sources: [KeyPath("date"), KeyPath("time")], destinations: [KeyPath("when")], mapper: .required),
        ]))
        let missing = try run(required, #"{"date":"2020-01-01"}"#)
        #expect(out(missing) == nil)
        #expect(missing.errors.map(\.code) == [.required])
        #expect(missing.errors.map(\.isFatal) == [true])
        #expect(missing.errors.first?.destinationPath.pointer == "/when")
        // The error names the first missing source (with both missing, the first of them).
        #expect(missing.errors.first?.sourcePath.pointer == "/time")
        #expect(try run(required, "{}").errors.map(\.sourcePath.pointer) == ["/date"])
        // An error about the whole combined value names the first source.
        let wrongType = Mapper.object(ObjectMapping(fields: [
            Field(sources: [KeyPath("date"), KeyPath("time")], destinations: [KeyPath("when")], mapper: .string),
        ]))
        expectResult(try run(wrongType, #"{"time":"10:00","date":"2020-01-01"}"#), nil, ["type F [/date] [/when]"])
        // An error inside element i of the combined value is attributed to source i.
        let typed = Mapper.object(ObjectMapping(fields: [
            Field(sources: [KeyPath("a"), KeyPath("n.b")], destinations: [KeyPath("both")], mapper: .arrayOf(.integer)),
        ]))
        expectResult(try run(typed, #"{"a":1,"n":{"b":2}}"#), #"{"both":[1,2]}"#)
        expectResult(try run(typed, #"{"a":1,"n":{"b":"x"}}"#), nil, ["type F [/n/b] [/both/1]"])
        expectResult(try run(typed, #"{"a":"x","n":{"b":"x"}}"#), nil, ["type F [/a] [/both/0]", "type F [/n/b] [/both/1]"])
    }

    @Test func oneToMany() throws {
        let m = Mapper.object(ObjectMapping(fields: [
            Field(sources: [KeyPath("pair")], destinations: [KeyPath("first"), KeyPath("rest.last")], mapper: .identity),
        ]))
        expectResult(try run(m, #"{"pair":["A","B"]}"#), #"{"first":"A","rest":{"last":"B"}}"#)
        // The value must be an array with one element per destination.
        let short = try run(m, #"{"pair":["A"]}"#)
        expectResult(short, nil, ["write F [/pair] []"])
        #expect(message(short) == "expected an array of 2 values for 2 destinations, found array")
        expectResult(try run(m, #"{"pair":["A","B","C"]}"#), nil, ["write F [/pair] []"])
        expectResult(try run(m, #"{"pair":"A B"}"#), nil, ["write F [/pair] []"])
        // Absent writes nothing.
        expectResult(try run(m, "{}"), "{}")
        // Many-to-many swaps.
        let swap = Mapper.object(ObjectMapping(fields: [
            Field(sources: [KeyPath("a"), KeyPath("b")], destinations: [KeyPath("b"), KeyPath("a")], mapper: .identity),
        ]))
        expectResult(try run(swap, #"{"a":1,"b":2}"#), #"{"b":1,"a":2}"#)
    }

    @Test func unmappedKeysDropOrKeep() throws {
        let input = #"{"id":1,"firstName":"Ada","extra":{"innerKey":[1]},"n":null}"#
        let fields: [Field] = [Field("id", to: "identifier")]
        expectResult(try run(.object(ObjectMapping(fields: fields)), input), #"{"identifier":1}"#)
        expectResult(try run(.object(ObjectMapping(fields: fields, unmapped: .drop)), input), #"{"identifier":1}"#)
        expectResult(
            try run(.object(ObjectMapping(fields: fields, unmapped: .keep)), input),
            #"{"identifier":1,"firstName":"Ada","extra":{"innerKey":[1]},"n":null}"#)
        // The key style renames the top-level pass-through keys only.
        expectResult(
            try run(.object(ObjectMapping(fields: fields, unmapped: .keep(keyStyle: .hydrantSnake, values: nil))), input),
            #"{"identifier":1,"first_name":"Ada","extra":{"innerKey":[1]},"n":null}"#)
        // The values mapper maps each pass-through value; an absent result leaves the key out.
        expectResult(
            try run(.object(ObjectMapping(fields: fields, unmapped: .keep(keyStyle: nil, values: .toString))), input),
            #"{"identifier":1,"firstName":"Ada","extra":"{\"innerKey\":[1]}"}"#)
        expectResult(
            try run(.object(ObjectMapping(fields: fields, unmapped: .keep(keyStyle: .hydrantSnake, values: .keys(.hydrantSnake, deep: true)))), input),
            #"{"identifier":1,"first_name":"Ada","extra":{"inner_key":[1]},"n":null}"#)
    }

    @Test func passThroughValueErrorsCarryBothPaths() throws {
        let input = #"{"id":1,"fooBar":"s","bazQux":2}"#
        let nonFatal = Mapper.object(ObjectMapping(
            fields: [Field("id", to: "id")], unmapped: .keep(keyStyle: .hydrantSnake, values: .nonFatally(.string))))
        expectResult(try run(nonFatal, input), #"{"id":1,"foo_bar":"s"}"#, ["type NF [/bazQux] [/baz_qux]"])
        let fatal = Mapper.object(ObjectMapping(
            fields: [Field("id", to: "id")], unmapped: .keep(keyStyle: .hydrantSnake, values: .string)))
        expectResult(try run(fatal, input), nil, ["type F [/bazQux] [/baz_qux]"])
    }

    @Test func keysConsumedByAFieldAreNotPassedThrough() throws {
        let m = Mapper.object(unmapped: .keep) { Field("a.b", to: "x") }
        expectResult(try run(m, #"{"z":3,"a":{"b":1,"c":2}}"#), #"{"x":1,"z":3}"#)
        // Consumed even when the field's path is absent.
        expectResult(try run(Mapper.object(unmapped: .keep) { Field("a.q", to: "x", .identity) }, #"{"z":3,"a":{"b":1}}"#), #"{"z":3}"#)
    }

    @Test func passThroughKeysNamedLikeAMappedDestinationAreLeftOutWithAWarning() throws {
        let m = Mapper.object(unmapped: .keep) { Field("id", to: "name") }
        let r = try run(m, #"{"name":"old","id":1,"other":2}"#)
        expectResult(r, #"{"name":1,"other":2}"#, ["write NF [/name] [/name]"])
        #expect(r.errors.map(\.message) == [#"key "name" is left out: a field writes it"#])
        // Reserved even when the mapped field writes nothing.
        expectResult(try run(Mapper.object(unmapped: .keep) { Field("id", to: "name", .identity) }, #"{"name":"old","other":2}"#), #"{"other":2}"#,
                     ["write NF [/name] [/name]"])
        // The first step of a nested destination is reserved.
        expectResult(try run(Mapper.object(unmapped: .keep) { Field("id", to: "meta.id") }, #"{"id":1,"meta":"m"}"#), #"{"meta":{"id":1}}"#,
                     ["write NF [/meta] [/meta]"])
        // The comparison uses the output name (after the key style).
        let styled = Mapper.object(unmapped: .keep(keyStyle: .hydrantSnake, values: nil)) { Field("x", to: "first_name") }
        let s = try run(styled, #"{"x":1,"firstName":"A","lastName":"B"}"#)
        expectResult(s, #"{"first_name":1,"last_name":"B"}"#, ["write NF [/firstName] [/first_name]"])
        #expect(s.errors.map(\.message) == [#"key "firstName" is left out: a field writes "first_name""#])
    }

    @Test func passThroughKeysCollidingAfterTheKeyStyle() throws {
        // By default a collision rejects the record, naming both input keys, at the later one.
        let m = Mapper.object(unmapped: .keep(keyStyle: .hydrantSnake, values: nil)) { }
        let r = try run(m, #"{"fooBar":1,"x":0,"foo_bar":2}"#)
        expectResult(r, nil, ["write F [/foo_bar] [/foo_bar]"])
        #expect(r.errors.map(\.message) == [#"keys "fooBar" and "foo_bar" both become "foo_bar" (key style hydrant.snake)"#])
        // `.warn`: the later value at the first place, with a warning.
        let warn = Mapper.object(unmapped: .keep(keyStyle: .hydrantSnake, values: nil, collisions: .warn)) { }
        expectResult(try run(warn, #"{"fooBar":1,"x":0,"foo_bar":2}"#), #"{"foo_bar":2,"x":0}"#, ["write NF [/foo_bar] [/foo_bar]"])
        // A duplicate input key is no collision (last wins, as everywhere); a third key colliding names the first.
        expectResult(try run(m, #"{"fooBar":1,"fooBar":3}"#), #"{"foo_bar":3}"#)
        let three = try run(warn, #"{"fooBar":1,"foo_bar":2,"FooBar":3}"#)
        expectResult(three, #"{"foo_bar":3}"#, ["write NF [/foo_bar] [/foo_bar]", "write NF [/FooBar] [/foo_bar]"])
        #expect(three.errors.last?.message == #"keys "fooBar" and "FooBar" both become "foo_bar" (key style hydrant.snake)"#)
    }

    @Test func destinationConflictsAreFatalWriteErrors() throws {
        let same = Mapper.object {
            Field("a", to: "x")
            Field("b", to: "x")
        }
        let conflict = try run(same, #"{"a":1,"b":2}"#)
        expectResult(conflict, nil, ["write F [/b] [/x]"])
        #expect(message(conflict) == "cannot write to x: the destination is already taken")
        // No conflict when the first field writes nothing.
        let optionalFirst = Mapper.object {
            Field("a", to: "x", .identity)
            Field("b", to: "x")
        }
        expectResult(try run(optionalFirst, #"{"b":2}"#), #"{"x":2}"#)
        // A scalar where an object is needed, and an object where a scalar is written.
        expectResult(try run(Mapper.object {
            Field("a", to: "x")
            Field("b", to: "x.y")
        }, #"{"a":1,"b":2}"#), nil, ["write F [/b] [/x/y]"])
        expectResult(try run(Mapper.object {
            Field("a", to: "x.y")
            Field("b", to: "x")
        }, #"{"a":1,"b":2}"#), nil, ["write F [/b] [/x]"])
        // One-to-many into a taken destination.
        expectResult(try run(Mapper.object(ObjectMapping(fields: [
            Field("a", to: "first"),
            Field(sources: [KeyPath("pair")], destinations: [KeyPath("zero"), KeyPath("first")], mapper: .identity),
        ])), #"{"a":1,"pair":[2,3]}"#), nil, ["write F [/pair] [/first]"])
    }

    @Test func duplicateInputKeysLastWins() throws {
        let input = #"{"a":1,"b":2,"a":3}"#
        expectResult(try run(Mapper.object { Field("a", to: "A") }, input), #"{"A":3}"#)
        expectResult(try run(Mapper.object(unmapped: .keep) { }, input), #"{"a":3,"b":2}"#)
        expectResult(try run(.identity, input), #"{"a":3,"b":2}"#)
        expectResult(try run(Mapper.object { Field("a.x", to: "v") }, #"{"a":{"x":1},"a":{"y":2}}"#), nil, ["required F [/a/x] [/v]"])
    }

    @Test func keysMatchByUTF8Bytes() throws {
        // "é" precomposed (U+00E9) and decomposed (e + U+0301) are different keys, though Swift's String == says equal.
        let m = Mapper.object(unmapped: .keep) { Field("\u{E9}", to: "precomposed", .identity) }
        expectResult(try run(m, #"{"e\u0301":1}"#), "{\"e\u{301}\":1}")
        expectResult(try run(m, #"{"\u00e9":2,"e\u0301":1}"#), "{\"precomposed\":2,\"e\u{301}\":1}")
        expectResult(try run(Mapper.object { Field("\u{E9}", to: "x") }, #"{"e\u0301":1}"#), nil, ["required F [/\u{E9}] [/x]"])
    }

    @Test func outputOrderIsFieldOrderThenPassThroughInInputOrder() throws {
        let m = Mapper.object(unmapped: .keep) {
            Field("a", to: "A")
            Field("z", to: "Z")
        }
        expectResult(try run(m, #"{"z":1,"d":0,"b":2,"a":3,"c":4}"#), #"{"A":3,"Z":1,"d":0,"b":2,"c":4}"#)
    }

    @Test func explicitFieldMappersAndNull() throws {
        // An explicit mapper gets no required check: absent is left out, a mapped null is written as null.
        let m = Mapper.object { Field("k", to: "d", .identity) }
        expectResult(try run(m, "{}"), "{}")
        expectResult(try run(m, #"{"k":null}"#), #"{"d":null}"#)
        // An object-valued field: null is a type error, absent is left out.
        let nested = Mapper.object { Field("k", to: "d", .object { Field("a", to: "b") }) }
        expectResult(try run(nested, #"{"k":null}"#), nil, ["type F [/k] [/d]"])
        expectResult(try run(nested, "{}"), "{}")
        expectResult(try run(nested, #"{"k":{"a":1}}"#), #"{"d":{"b":1}}"#)
        // A policy can keep null explicitly.
        expectResult(try run(Mapper.object { Field("k", to: "d", .policy(null: .keepNull)) }, #"{"k":null}"#), #"{"d":null}"#)
    }
}

// MARK: - arrayOf, first, thread, split, forward, backward, enum

@Suite("MapperAlgebra containers and paths")
struct MapperAlgebraContainerTests {
    @Test func arrayOfMapsEveryElement() throws {
        expectResult(try run(.arrayOf(.integer), "[1,2,3]"), "[1,2,3]")
        expectResult(try run(.arrayOf(.integer), "[]"), "[]")
        expectResult(try run(.arrayOf(.stringToNumber), #"["1","2,000"]"#), "[1,2000]")
        // Every element is mapped; each bad one is reported at its index on both sides.
        expectResult(try run(.arrayOf(.integer), #"[1,"x",3,true]"#), nil, ["type F [/1] [/1]", "type F [/3] [/3]"])
    }

    @Test func arrayOfRejectsNonArraysIncludingAbsent() throws {
        let absent = try run(.arrayOf(.integer), nil)
        expectResult(absent, nil, ["type F [] []"])
        #expect(message(absent) == "expected array, found absent")
        expectResult(try run(.arrayOf(.integer), "{}"), nil, ["type F [] []"])
        expectResult(try run(.arrayOf(.integer), "null"), nil, ["type F [] []"])
        expectResult(try run(.arrayOf(.integer), "1"), nil, ["type F [] []"])
    }

    @Test func arrayOfElementRules() throws {
        // Non-fatal with a value: kept.
        expectResult(try run(.arrayOf(.optionally(.integer, default: 0)), #"[1,"x"]"#), "[1,0]", ["type NF [/1] [/1]"])
        // Non-fatal without a value: dropped.
        expectResult(try run(.arrayOf(.optionally(.integer)), #"[1,"x",2]"#), "[1,2]", ["type NF [/1] [/1]"])
        // Absent without an error: null (Hydrant writes NSNull).
        expectResult(try run(.arrayOf(.toString), "[null,1]"), #"[null,"1"]"#)
        // Indices are of the input: later elements keep their own index after a drop.
        expectResult(try run(.arrayOf(.optionally(.integer)), #"["a",1,"b"]"#), "[1]", ["type NF [/0] [/0]", "type NF [/2] [/2]"])
    }

    @Test func arrayOfPrefixesNestedPaths() throws {
        let m = Mapper.arrayOf(.object { Field("age", to: "years", .integer) })
        expectResult(try run(m, #"[{"age":1},{"age":"x"},{}]"#), nil, ["type F [/1/age] [/1/years]"])
        expectResult(try run(m, #"[{"age":1},{}]"#), #"[{"years":1},{}]"#)
    }

    @Test func firstTakesTheFirstSuccess() throws {
        let m = Mapper.first(.integer, .stringToNumber)
        expectResult(try run(m, "5"), "5")
        // Success via fallback: the earlier failure is a non-fatal warning.
        let fallback = try run(m, #""7""#)
        expectResult(fallback, "7", ["type NF [] []"])
        #expect(message(fallback) == #"expected integer, found string "7""#)
        // Nothing succeeds: fatal, with every alternative's error.
        expectResult(try run(m, #""x""#), nil, ["type F [] []", "value F [] []"])
        // An alternative that gives absent without error does not count as a success.
        expectResult(try run(.first(.forward("x"), .stringToNumber), #""3""#), "3")
        expectResult(try run(.first(.identity, .stringToNumber), #""3""#), #""3""#)
        expectResult(try run(.first(.identity, .stringToNumber), nil), nil, ["required F [] []"])
        // Every alternative absent without error: absent, no error.
        expectResult(try run(.first(.identity, .identity), nil), nil)
        expectResult(try run(.first(), "1"), nil)
        // Only non-fatal failures and no value: fatal.
        let noValue = try run(.first(.optionally(.integer)), #""x""#)
        expectResult(noValue, nil, ["type NF [] []", "value F [] []"])
        #expect(message(noValue, 1) == "no alternative produced a value")
        // A succeeding alternative's own warnings are kept after the earlier failures.
        expectResult(try run(.first(.integer, .optionally(.integer, default: 0)), #""x""#), "0", ["type NF [] []", "type NF [] []"])
    }

    @Test func threadIsAPipelineThatKeepsAllWarnings() throws {
        expectResult(try run(.thread(.stringToNumber, .numberToString), #""1,234""#), #""1234""#)
        expectResult(try run(.thread(), "1"), "1")
        // All non-fatal errors are kept (not only the last).
        let warnings = try run(.thread(.optionally(.integer, default: 1), .optionally(.string, default: "s")), #""x""#)
        expectResult(warnings, #""s""#, ["type NF [] []", "type NF [] []"])
        #expect(message(warnings, 0) == #"expected integer, found string "x""#)
        #expect(message(warnings, 1) == "expected string, found integer 1")
        // A fatal error stops the pipeline (the last stage would add a `required` error) and keeps earlier warnings.
        expectResult(try run(.thread(.optionally(.integer, default: "bad"), .integer, .required), #""x""#), nil, ["type NF [] []", "type F [] []"])
        // The inner mapper runs first.
        expectResult(try run(.thread(.toString, .stringToNumber), "12"), "12")
        expectResult(try run(.thread(.stringToNumber, .toString), "12"), nil, ["type F [] []"])
    }

    @Test func splitMapsForwardAndReversesToItsReverse() throws {
        let m = Mapper.split(.stringToNumber, reverse: .toString)
        expectResult(try run(m, #""12""#), "12")
        expectResult(try run(m, "12"), nil, ["type F [] []"])
        expectResult(try run(try m.reversed(), "12"), #""12""#)
        expectResult(try run(try m.reversed(), "true"), #""true""#)
        expectResult(try run(try m.reversed().reversed(), #""12""#), "12")
    }

    @Test func forwardWalksIntoAPath() throws {
        expectResult(try run(.forward("a.b"), #"{"a":{"b":1}}"#), "1")
        expectResult(try run(.forward("a.1"), #"{"a":[10,20]}"#), "20")
        // A missing path is absent without error; the inner mapper sees absent.
        expectResult(try run(.forward("a.b"), #"{"a":{}}"#), nil)
        expectResult(try run(.forward("a.b"), "5"), nil)
        expectResult(try run(.forward("a.b", .required), #"{"a":{}}"#), nil, ["required F [/a/b] []"])
        // Inner errors are prefixed on the source side only.
        expectResult(try run(.forward("a.1", .string), #"{"a":[1,2]}"#), nil, ["type F [/a/1] []"])
        expectResult(try run(.forward("a", .optionally(.string)), #"{"a":1}"#), nil, ["type NF [/a] []"])
        // An absent source cannot be read.
        expectResult(try run(.forward("a"), nil), nil, ["read F [] []"])
    }

    @Test func backwardBuildsAnObjectAlongAPath() throws {
        expectResult(try run(.backward("x.y"), "1"), #"{"x":{"y":1}}"#)
        expectResult(try run(.backward("x"), #"[1,2]"#), #"{"x":[1,2]}"#)
        expectResult(try run(.backward("x.y"), "null"), #"{"x":{"y":null}}"#)
        // Absent gives an empty object (Hydrant: nil → `{}`).
        expectResult(try run(.backward("x.y"), nil), "{}")
        // Inner errors are prefixed on the destination side only.
        expectResult(try run(.backward("x.y", .integer), #""s""#), nil, ["type F [] [/x/y]"])
        expectResult(try run(.backward("x", .optionally(.integer, default: 0)), #""s""#), #"{"x":0}"#, ["type NF [] [/x]"])
        expectResult(try run(.backward("x->y.z", delimiter: "->"), "1"), #"{"x":{"y.z":1}}"#)
    }

    @Test func enumTableMatchesStringsByBytes() throws {
        let m = Mapper.enumTable([("a", 1), ("b", 2), ("\u{E9}", 3)])
        expectResult(try run(m, #""a""#), "1")
        expectResult(try run(m, #""b""#), "2")
        expectResult(try run(m, #""\u00e9""#), "3")
        // Case-sensitive, and canonically-equivalent but different bytes do not match.
        let miss = try run(m, #""A""#)
        expectResult(miss, nil, ["value F [] []"])
        #expect(message(miss) == #"string "A" is not in the enum table"#)
        #expect("e\u{301}" == "\u{E9}", "Swift's String == would match")
        expectResult(try run(m, #""e\u0301""#), nil, ["value F [] []"])
        // Absent is required.
        expectResult(try run(m, nil), nil, ["required F [] []"])
        // Containers never match.
        expectResult(try run(m, #"["a"]"#), nil, ["value F [] []"])
    }

    @Test func enumTableMatchesNumbersByValue() throws {
        let m = Mapper.enumTable([(1, "one"), (100, "hundred"), (0, "zero")])
        for input in ["1", "1.0", "1e0", "10E-1", "0.1e1"] { expectResult(try run(m, input), #""one""#) }
        for input in ["100", "1E+2", "1e2", "100.000"] { expectResult(try run(m, input), #""hundred""#) }
        for input in ["0", "-0", "0.0", "0e5"] { expectResult(try run(m, input), #""zero""#) }
        for input in ["2.5", #""1""#, "true", "1.0000000000000000000001"] { expectResult(try run(m, input), nil, ["value F [] []"]) }
    }

    @Test func enumTableMatchesBooleansAndNull() throws {
        let m = Mapper.enumTable([(true, "yes"), (false, "no"), (.null, "unknown")])
        expectResult(try run(m, "true"), #""yes""#)
        expectResult(try run(m, "false"), #""no""#)
        expectResult(try run(m, "null"), #""unknown""#)
        // Booleans are not numbers in JSON.
        expectResult(try run(m, "1"), nil, ["value F [] []"])
        expectResult(try run(m, #""true""#), nil, ["value F [] []"])
        // The first entry of a repeated source wins.
        expectResult(try run(.enumTable([("k", 1), ("k", 2)]), #""k""#), "1")
    }

    @Test func enumTableReversesToItsInverse() throws {
        let m = Mapper.enumTable([("a", 1), ("b", 2)])
        let back = try m.reversed()
        expectResult(try run(back, "1"), #""a""#)
        expectResult(try run(back, "2.0"), #""b""#)
        expectResult(try run(back, #""a""#), nil, ["value F [] []"])
    }
}

// MARK: - Conversions

@Suite("MapperAlgebra conversions")
struct MapperAlgebraConversionTests {
    @Test func stringToDateWithNamedFormats() throws {
        let iso = Mapper.stringToDate(.named(.iso8601))
        expectResult(try run(iso, #""2014-08-31T00:29:15Z""#), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(iso, #""2014-08-31T02:29:15+02:00""#), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(iso, #""2014-08-31T00:29:15.250Z""#), #""2014-08-31T00:29:15.25Z""#)
        expectResult(try run(.stringToDate(.named(.rfc3339)), #""2014-01-14T14:35:23-0800""#), #""2014-01-14T22:35:23Z""#)
        expectResult(try run(.stringToDate(.named(.rfc3339Milliseconds)), #""2014-01-14T14:35:23.120-0800""#), #""2014-01-14T22:35:23.12Z""#)
        expectResult(try run(.stringToDate(.named(.rfc3339Milliseconds)), #""2014-01-14T14:35:23-0800""#), nil, ["value F [] []"])
        expectResult(try run(.stringToDate(.named(.rfc822)), #""Sun, 31 Aug 2014 00:29:15 GMT""#), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(.stringToDate(.named(.rfc822)), #""31 Aug 2014 00:29""#), #""2014-08-31T00:29:00Z""#)
        expectResult(try run(.stringToDate(.named(.twitter)), #""Sun Aug 31 00:29:15 +0000 2014""#), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(.stringToDate(.named(.dotnet)), #""/Date(1409444955123)/""#), #""2014-08-31T00:29:15.123Z""#)
        expectResult(try run(.stringToDate(.named(.dotnet)), #""/Date(1409444955123+0200)/""#), #""2014-08-31T00:29:15.123Z""#)
        // An impossible date is a value error.
        expectResult(try run(iso, #""2014-02-30T00:00:00Z""#), nil, ["value F [] []"])
    }

    @Test func stringToDateWithAPatternAndAZone() throws {
        let pattern = try DateFormat(pattern: "dd/MM/yyyy HH:mm", timeZoneOffsetSeconds: 3600)
        expectResult(try run(.stringToDate(.pattern(pattern)), #""31/08/2014 01:29""#), #""2014-08-31T00:29:00Z""#)
        expectResult(try run(.stringToDate(.pattern(pattern)), #""2014-08-31""#), nil, ["value F [] []"])
    }

    @Test func stringToDateTriesSeveralFormatsInOrderSilently() throws {
        let m = Mapper.stringToDate(.named(.rfc3339), .named(.rfc822), .named(.dotnet))
        expectResult(try run(m, #""2014-08-31T00:29:15+0000""#), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(m, #""Sun, 31 Aug 2014 00:29:15 +0000""#), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(m, #""/Date(0)/""#), #""1970-01-01T00:00:00Z""#)
        let none = try run(m, #""nope""#)
        expectResult(none, nil, ["value F [] []"])
        #expect(message(none) == #"string "nope" is not a date in any of the formats rfc3339, rfc822, dotnet"#)
        #expect(message(try run(.stringToDate(.named(.iso8601)), #""x""#)) == #"string "x" is not a date in format iso8601"#)
    }

    @Test func stringToDateRejectsNonStringsNullAndAbsent() throws {
        let m = Mapper.stringToDate(.named(.iso8601))
        let number = try run(m, "1409444955")
        expectResult(number, nil, ["type F [] []"])
        #expect(message(number) == "expected string, found integer 1409444955")
        expectResult(try run(m, "null"), nil, ["required F [] []"])
        expectResult(try run(m, nil), nil, ["required F [] []"])
    }

    @Test func dateToString() throws {
        let canonical = #""2014-08-31T00:29:15Z""#
        expectResult(try run(.dateToString(.named(.rfc822)), canonical), #""Sun, 31 Aug 2014 00:29:15 +0000""#)
        expectResult(try run(.dateToString(.named(.rfc3339)), canonical), #""2014-08-31T00:29:15+0000""#)
        expectResult(try run(.dateToString(.named(.twitter)), canonical), #""Sun Aug 31 00:29:15 +0000 2014""#)
        expectResult(try run(.dateToString(.named(.iso8601)), #""2014-08-31T02:29:15+02:00""#), canonical)
        expectResult(try run(.dateToString(.named(.dotnet)), #""2014-08-31T00:29:15.123Z""#), #""/Date(1409444955123)/""#)
        expectResult(try run(.dateToString(.named(.rfc3339Milliseconds)), #""2014-08-31T00:29:15.12Z""#), #""2014-08-31T00:29:15.120+0000""#)
        let pattern = try DateFormat(pattern: "yyyy-MM-dd HH:mm", timeZoneOffsetSeconds: 3600)
        expectResult(try run(.dateToString(.pattern(pattern)), canonical), #""2014-08-31 01:29""#)
        // A format that cannot represent the instant exactly is a value error (no truncation).
        expectResult(try run(.dateToString(.named(.rfc822)), #""2014-08-31T00:29:15.5Z""#), nil, ["value F [] []"])
        // The input must be an ISO 8601 date string.
        expectResult(try run(.dateToString(.named(.rfc822)), #""Sun, 31 Aug 2014 00:29:15 +0000""#), nil, ["value F [] []"])
        let number = try run(.dateToString(.named(.rfc822)), "1")
        expectResult(number, nil, ["type F [] []"])
        #expect(message(number) == "expected date string, found integer 1")
    }

    @Test func numberToDateInEachUnit() throws {
        expectResult(try run(.numberToDate(.milliseconds), "1409444955123"), #""2014-08-31T00:29:15.123Z""#)
        expectResult(try run(.numberToDate(.seconds), "1409444955"), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(.numberToDate(.seconds), "1.409444955e9"), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(.numberToDate(.seconds), "-1.5"), #""1969-12-31T23:59:58.5Z""#)
        expectResult(try run(.numberToDate(.minutes), "23490749.25"), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(.numberToDate(.hours), "391512.4875"), #""2014-08-31T00:29:15Z""#)
        expectResult(try run(.numberToDate(.seconds), "0"), #""1970-01-01T00:00:00Z""#)
        // Only numbers (JSON booleans are not numbers).
        expectResult(try run(.numberToDate(.seconds), #""1409444955""#), nil, ["type F [] []"])
        expectResult(try run(.numberToDate(.seconds), "true"), nil, ["type F [] []"])
        // Out of range.
        expectResult(try run(.numberToDate(.seconds), "1e30"), nil, ["value F [] []"])
    }

    @Test func dateToNumberInEachUnit() throws {
        let date = #""2014-08-31T00:29:15Z""#
        expectResult(try run(.dateToNumber(.milliseconds), date), "1409444955000")
        expectResult(try run(.dateToNumber(.seconds), date), "1409444955")
        expectResult(try run(.dateToNumber(.minutes), date), "23490749.25")
        expectResult(try run(.dateToNumber(.hours), date), "391512.4875")
        expectResult(try run(.dateToNumber(.milliseconds), #""2014-08-31T00:29:15.123Z""#), "1409444955123")
        expectResult(try run(.dateToNumber(.seconds), #""1969-12-31T23:59:58.5Z""#), "-1.5")
        let value = try run(.dateToNumber(.seconds), date).value
        #expect(value?.type == .integer, "a JSON number, not a string")
        expectResult(try run(.dateToNumber(.seconds), #""yesterday""#), nil, ["value F [] []"])
        expectResult(try run(.dateToNumber(.seconds), "5"), nil, ["type F [] []"])
    }

    @Test func stringToNumberIsLocaleFreeAndLenient() throws {
        let accepted: [(String, String)] = [
            ("12", "12"), (" 12 ", "12"), ("\t-3.5\n", "-3.5"), ("+5", "5"), ("1,235,555", "1235555"),
            ("-1,234.5", "-1234.5"), ("1e3", "1e3"), ("0", "0"), ("-0", "-0"),
            ("12345678901234567890123", "12345678901234567890123"),
        ]
        for (text, number) in accepted {
            expectResult(try run(.stringToNumber, JSONWriter.string(.string(text))), number)
        }
        for text in ["1,23", "1234,567", ",123", "1,234,", "007", ".5", "5.", "NaN", "Infinity", "0x10", "", " ", "+-1", "abc", "1.2.3", "1 2"] {
            let r = try run(.stringToNumber, JSONWriter.string(.string(text)))
            expectResult(r, nil, ["value F [] []"])
        }
        expectResult(try run(.stringToNumber, "5"), nil, ["type F [] []"])
        expectResult(try run(.stringToNumber, "null"), nil, ["required F [] []"])
    }

    @Test func numberToStringKeepsTheExactText() throws {
        for n in ["1E+2", "-0", "12.50", "12345678901234567890123"] {
            expectResult(try run(.numberToString, n), JSONWriter.string(.string(n)))
        }
        expectResult(try run(.numberToString, #""1""#), nil, ["type F [] []"])
    }

    @Test func toStringOfEachJSONType() throws {
        expectResult(try run(.toString, #""s""#), #""s""#)
        expectResult(try run(.toString, "12.50"), #""12.50""#)
        expectResult(try run(.toString, "true"), #""true""#)
        expectResult(try run(.toString, "false"), #""false""#)
        expectResult(try run(.toString, #"[1, {"a" : null}]"#), #""[1,{\"a\":null}]""#)
        expectResult(try run(.toString, #"{"b":"c"}"#), #""{\"b\":\"c\"}""#)
        // null gives absent, without error.
        expectResult(try run(.toString, "null"), nil)
        expectResult(try run(.toString, nil), nil, ["required F [] []"])
        expectResult(try run(Mapper.object { Field("a", to: "b", .toString) }, #"{"a":null}"#), "{}")
    }

    @Test func urlWithAndWithoutASchemeWhitelist() throws {
        expectResult(try run(.url(), #""https://example.com/a b""#), #""https://example.com/a%20b""#)
        expectResult(try run(.url(), #""HTTP://Example.com/x""#), #""HTTP://Example.com/x""#)
        expectResult(try run(.url(), #""mailto:a@b.c""#), #""mailto:a@b.c""#)
        expectResult(try run(.url(), #""https://example.com/caf\u00e9""#), #""https://example.com/caf%C3%A9""#)
        for bad in ["/relative", "a/b", "!!", "", "http:"] {
            let r = try run(.url(), JSONWriter.string(.string(bad)))
            expectResult(r, nil, ["value F [] []"])
        }
        #expect(message(try run(.url(), #""!!""#)) == #"string "!!" is not an absolute URL"#)
        expectResult(try run(.url(), "5"), nil, ["type F [] []"])
        let https = Mapper.url(schemes: ["https"])
        expectResult(try run(https, #""https://x.example""#), #""https://x.example""#)
        expectResult(try run(https, #""HTTPS://x.example""#), #""HTTPS://x.example""#)
        let http = try run(https, #""http://x.example""#)
        expectResult(http, nil, ["value F [] []"])
        #expect(message(http) == #"string "http://x.example" is not a URL with scheme https"#)
        expectResult(try run(.url(schemes: ["HTTP", "ftp"]), #""http://x.example""#), #""http://x.example""#)
        expectResult(try run(.url(schemes: ["HTTP", "ftp"]), #""gopher://x.example""#), nil, ["value F [] []"])
        // The reverse checks the whitelist again.
        let back = try https.reversed()
        expectResult(try run(back, #""https://x.example""#), #""https://x.example""#)
        expectResult(try run(back, #""http://x.example""#), nil, ["value F [] []"])
    }

    @Test func uuidAndUUIDToString() throws {
        expectResult(try run(.uuid, #""E621E1F8-C36C-495A-93FC-0C247A3E6E5F""#), #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#)
        expectResult(try run(.uuid, #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#), #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#)
        for bad in ["{e621e1f8-c36c-495a-93fc-0c247a3e6e5f}", "e621e1f8c36c495a93fc0c247a3e6e5f", "e621e1f8-c36c-495a-93fc-0c247a3e6e5", "g621e1f8-c36c-495a-93fc-0c247a3e6e5f"] {
            expectResult(try run(.uuid, JSONWriter.string(.string(bad))), nil, ["value F [] []"])
        }
        expectResult(try run(.uuid, "5"), nil, ["type F [] []"])
        let upper = Mapper(.convert(.uuidToString(uppercase: true)))
        expectResult(try run(upper, #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#), #""E621E1F8-C36C-495A-93FC-0C247A3E6E5F""#)
        let lower = Mapper(.convert(.uuidToString(uppercase: false)))
        expectResult(try run(lower, #""E621E1F8-C36C-495A-93FC-0C247A3E6E5F""#), #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#)
        expectResult(try run(upper, #""nope""#), nil, ["value F [] []"])
        // uuid reverses to lowercase uuidToString; uuidToString reverses to uuid.
        expectResult(try run(try Mapper.uuid.reversed(), #""E621E1F8-C36C-495A-93FC-0C247A3E6E5F""#), #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#)
        expectResult(try run(try upper.reversed(), #""E621E1F8-C36C-495A-93FC-0C247A3E6E5F""#), #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#)
    }

    @Test func base64StandardAndURL() throws {
        let toURL = Mapper.base64(from: .standard, to: .url)
        let toStandard = Mapper.base64(from: .url, to: .standard)
        expectResult(try run(toURL, #""+/8=""#), #""-_8""#)
        expectResult(try run(toURL, #""aGVsbG8=""#), #""aGVsbG8""#)
        expectResult(try run(toURL, #""""#), #""""#)
        expectResult(try run(toStandard, #""-_8""#), #""+/8=""#)
        expectResult(try run(toStandard, #""-_8=""#), #""+/8=""#)
        expectResult(try run(toStandard, #""aGVsbG8""#), #""aGVsbG8=""#)
        // Strict: padding required for standard, no foreign symbols, zero leftover bits.
        for bad in ["aGVsbG8", "-_8=", "aGVsbG9=", "aGVs bG8=", "a==="] {
            expectResult(try run(toURL, JSONWriter.string(.string(bad))), nil, ["value F [] []"])
        }
        expectResult(try run(toStandard, #""+/8""#), nil, ["value F [] []"])
        expectResult(try run(toURL, "1"), nil, ["type F [] []"])
        // The reverse swaps the alphabets.
        expectResult(try run(try toURL.reversed(), #""-_8""#), #""+/8=""#)
    }

    @Test func keysShallowAndDeep() throws {
        let input = #"{"fooBar":{"innerKey":1},"list":[{"aB":1},[{"cD":2}]],"n":null}"#
        expectResult(try run(.keys(.hydrantSnake), input), #"{"foo_bar":{"innerKey":1},"list":[{"aB":1},[{"cD":2}]],"n":null}"#)
        expectResult(try run(.keys(.hydrantSnake, deep: true), input), #"{"foo_bar":{"inner_key":1},"list":[{"a_b":1},[{"c_d":2}]],"n":null}"#)
        // A top-level array: shallow leaves it alone, deep renames inside it.
        expectResult(try run(.keys(.hydrantSnake), #"[{"fooBar":1}]"#), #"[{"fooBar":1}]"#)
        expectResult(try run(.keys(.hydrantSnake, deep: true), #"[{"fooBar":1},[],{}]"#), #"[{"foo_bar":1},[],{}]"#)
        // Scalars and null pass through; absent is required.
        expectResult(try run(.keys(.hydrantSnake, deep: true), "5"), "5")
        expectResult(try run(.keys(.hydrantSnake), "null"), "null")
        expectResult(try run(.keys(.hydrantSnake), nil), nil, ["required F [] []"])
        // Keys that collide after renaming: an error at the later key (naming both), or with `.warn` a warning and
        // the later value; in nested objects with `deep`, with the paths on both sides.
        let collision = try run(.keys(.hydrantSnake), #"{"fooBar":1,"foo_bar":2}"#)
        expectResult(collision, nil, ["write F [/foo_bar] [/foo_bar]"])
        #expect(collision.errors.first?.message == #"keys "fooBar" and "foo_bar" both become "foo_bar" (key style hydrant.snake)"#)
        expectResult(try run(.keys(.hydrantSnake, collisions: .warn), #"{"fooBar":1,"foo_bar":2}"#), #"{"foo_bar":2}"#, ["write NF [/foo_bar] [/foo_bar]"])
        expectResult(try run(.keys(.hydrantSnake, deep: true), #"{"outerKey":[{"aB":1,"a_b":2}],"xY":{"x_y":0}}"#), nil,
                     ["write F [/outerKey/0/a_b] [/outer_key/0/a_b]"])
        // Shallow: nested objects keep their keys, so nothing collides there.
        expectResult(try run(.keys(.hydrantSnake), #"{"o":{"aB":1,"a_b":2}}"#), #"{"o":{"aB":1,"a_b":2}}"#)
        // Duplicate input keys are not collisions: they collapse first (last wins at the first place).
        expectResult(try run(.keys(.hydrantSnake, deep: true), #"{"aB":1,"x":{"cD":1,"cD":2},"aB":3}"#), #"{"a_b":3,"x":{"c_d":2}}"#)
        // Other styles.
        expectResult(try run(.keys(.foundationSnake), #"{"myURLProperty":1}"#), #"{"my_url_property":1}"#)
        expectResult(try run(.keys(.hydrantCamel, deep: true), #"{"a_b":{"c_d":[{"e_f":1}]}}"#), #"{"aB":{"cD":[{"eF":1}]}}"#)
        // Reverses with the inverse style.
        expectResult(try run(try Mapper.keys(.hydrantSnake, deep: true).reversed(), #"{"foo_bar":{"inner_key":1}}"#), #"{"fooBar":{"innerKey":1}}"#)
        #expect(notReversible(.keys(.lowercase))?.mapper == "keys(lower)")
    }

    @Test func blockGetsTheInputAndReturnsAResult() throws {
        let describe = Mapper.block("describe") { v in
            .success(.string(v.map { JSONWriter.string($0) } ?? "absent"))
        }
        expectResult(try run(describe, "[1]"), #""[1]""#)
        expectResult(try run(describe, nil), #""absent""#)
        let failing = Mapper.block("fail") { _ in .failure(MapError(.custom, "nope")) }
        let failed = try run(Mapper.object { Field("k", to: "d", failing) }, #"{"k":1}"#)
        expectResult(failed, nil, ["custom F [/k] [/d]"])
        #expect(message(failed) == "nope")
        let warn = Mapper.block("warn") { v in .success(v, warnings: [MapError(.value, "odd")]) }
        expectResult(try run(Mapper.object { Field("k", to: "d", warn) }, #"{"k":1}"#), #"{"d":1}"#, ["value NF [/k] [/d]"])
    }

    @Test func blockReversesOnlyWithAReverseClosure() throws {
        let m = Mapper.block("inc", { _ in .success("forward") }, reverse: { _ in .success("reverse") })
        expectResult(try run(m, "1"), #""forward""#)
        expectResult(try run(try m.reversed(), "1"), #""reverse""#)
        expectResult(try run(try m.reversed().reversed(), "1"), #""forward""#)
        let oneWay = Mapper.block("oneWay") { v in .success(v) }
        #expect(notReversible(oneWay) == NotReversibleError(mapper: "oneWay", reason: "no reverse closure"))
    }

    @Test func postProcessedAlwaysRuns() throws {
        let m = Mapper.integer.postProcessed("note") { source, result in
            let src = source.map { JSONWriter.string($0) } ?? "absent"
            return .success(.string("\(src) \(result.isFatal ? "failed" : "ok:" + (result.value.map { JSONWriter.string($0) } ?? "absent"))"))
        }
        expectResult(try run(m, "5"), #""5 ok:5""#)
        expectResult(try run(m, #""x""#), #""\"x\" failed""#)
        expectResult(try run(m, nil), #""absent ok:absent""#)
        // A post-processor may turn a success into a failure.
        let strict = Mapper.identity.postProcessed { _, r in r.value == .null ? .failure(MapError(.custom, "no nulls")) : r }
        expectResult(try run(strict, "null"), nil, ["custom F [] []"])
        expectResult(try run(strict, "1"), "1")
    }

    @Test func postProcessedReversesWithItsReverseAndTheInnerReverse() throws {
        let m = Mapper.stringToNumber.postProcessed("tag", { _, r in r }, reverse: { _, r in
            guard case .string(let s)? = r.value else { return r }
            return .success(.string("#" + s), warnings: r.errors)
        })
        expectResult(try run(m, #""1,000""#), "1000")
        expectResult(try run(try m.reversed(), "1000"), ##""#1000""##)
        let oneWay = Mapper.identity.postProcessed("oneWay") { _, r in r }
        #expect(notReversible(oneWay) == NotReversibleError(mapper: "oneWay", reason: "no reverse closure"))
    }
}

// MARK: - Combinator rules (docs/semantics.md)

@Suite("MapperAlgebra combinator rules")
struct MapperAlgebraCombinatorRuleTests {
    @Test("ArrayOf(Optionally(X)): bad elements dropped, a non-fatal error per index")
    func arrayOfOptionally() throws {
        let m = Mapper.object { Field("tags", to: "labels", .arrayOf(.optionally(.integer))) }
        expectResult(try run(m, #"{"tags":[1,"x",3,null,4.5]}"#), #"{"labels":[1,3]}"#, [
            "type NF [/tags/1] [/labels/1]", "type NF [/tags/3] [/labels/3]", "type NF [/tags/4] [/labels/4]",
        ])
    }

    @Test("Optionally(ArrayOf(X)): any bad element drops the whole array, non-fatally")
    func optionallyArrayOf() throws {
        let m = Mapper.object { Field("tags", to: "labels", .optionally(.arrayOf(.integer))) }
        expectResult(try run(m, #"{"tags":[1,"x",3,"y"]}"#), "{}", ["type NF [/tags/1] [/labels/1]", "type NF [/tags/3] [/labels/3]"])
        expectResult(try run(m, #"{"tags":[1,2]}"#), #"{"labels":[1,2]}"#)
        expectResult(try run(m, "{}"), "{}", ["type NF [/tags] [/labels]"])
        let withDefault = Mapper.object { Field("tags", to: "labels", .optionally(.arrayOf(.integer), default: [])) }
        expectResult(try run(withDefault, #"{"tags":[1,"x"]}"#), #"{"labels":[]}"#, ["type NF [/tags/1] [/labels/1]"])
    }

    @Test("ArrayOf(X): fatal, one error per bad index; the parent fails unless wrapped")
    func arrayOfFatal() throws {
        let child = Mapper.object { Field("tags", to: "labels", .arrayOf(.integer)) }
        expectResult(try run(child, #"{"tags":[1,"x",3,"y"]}"#), nil, ["type F [/tags/1] [/labels/1]", "type F [/tags/3] [/labels/3]"])
        let parent = Mapper.object {
            Field("id", to: "id")
            Field("inner", to: "inner", child)
        }
        expectResult(try run(parent, #"{"id":1,"inner":{"tags":[1,"x"]}}"#), nil, ["type F [/inner/tags/1] [/inner/labels/1]"])
        let wrapped = Mapper.object {
            Field("id", to: "id")
            Field("inner", to: "inner", .optionally(child))
        }
        expectResult(try run(wrapped, #"{"id":1,"inner":{"tags":[1,"x"]}}"#), #"{"id":1}"#, ["type NF [/inner/tags/1] [/inner/labels/1]"])
    }

    @Test("a plain field: absent and null are both fatal (docs)")
    func requiredAbsentVersusNull() throws {
        let m = Mapper.object { Field("k", to: "d") }
        let absent = try run(m, "{}")
        expectResult(absent, nil, ["required F [/k] [/d]"])
        #expect(message(absent) == "value is required, found absent")
        let null = try run(m, #"{"k":null}"#)
        expectResult(null, nil, ["required F [/k] [/d]"])
        #expect(message(null) == "value is required, found null")
    }

    @Test("Optionally: absent and null give the default (docs) plus a non-fatal error")
    func optionallyDefaults() throws {
        let noDefault = Mapper.object { Field("k", to: "d", .optionally()) }
        expectResult(try run(noDefault, "{}"), "{}", ["required NF [/k] [/d]"])
        expectResult(try run(noDefault, #"{"k":null}"#), "{}", ["required NF [/k] [/d]"])
        expectResult(try run(noDefault, #"{"k":0}"#), #"{"d":0}"#)
        let withDefault = Mapper.object { Field("k", to: "d", .optionally(default: "x")) }
        expectResult(try run(withDefault, "{}"), #"{"d":"x"}"#, ["required NF [/k] [/d]"])
        expectResult(try run(withDefault, #"{"k":null}"#), #"{"d":"x"}"#, ["required NF [/k] [/d]"])
        expectResult(try run(withDefault, #"{"k":"v"}"#), #"{"d":"v"}"#)
        // An unmappable value also gives the default.
        let typed = Mapper.object { Field("k", to: "d", .optionally(.integer, default: 0)) }
        expectResult(try run(typed, #"{"k":"v"}"#), #"{"d":0}"#, ["type NF [/k] [/d]"])
    }

    @Test("an explicit mapper sees absent: formatters, enums and arrays fail, type checks and objects pass")
    func explicitMapperOnAbsent() throws {
        let failing: [(Mapper, String)] = [
            (.stringToDate(.named(.iso8601)), "required"), (.stringToNumber, "required"), (.url(), "required"),
            (.enumTable([("a", 1)]), "required"), (.arrayOf(.identity), "type"), (.required, "required"),
        ]
        for (mapper, code) in failing {
            expectResult(try run(Mapper.object { Field("k", to: "d", mapper) }, "{}"), nil, ["\(code) F [/k] [/d]"])
        }
        let passing: [Mapper] = [.identity, .integer, .check([.string, .null]), .object { Field("a", to: "b") }]
        for mapper in passing {
            expectResult(try run(Mapper.object { Field("k", to: "d", mapper) }, "{}"), "{}")
        }
    }

    @Test("an object-valued field: null is a type error, absent passes")
    func objectFieldNullVersusAbsent() throws {
        let m = Mapper.object { Field("k", to: "d", .object { Field("a", to: "b") }) }
        let null = try run(m, #"{"k":null}"#)
        expectResult(null, nil, ["type F [/k] [/d]"])
        #expect(message(null) == "expected object, found null")
        expectResult(try run(m, "{}"), "{}")
    }

    @Test("nested errors bubble up with prefixed source and destination paths")
    func nestedErrorPaths() throws {
        let kid = Mapper.object {
            Field("name", to: "name")
            Field("age", to: "years", .integer)
        }
        let m = Mapper.object {
            Field("name", to: "name")
            Field("children", to: "kids", .arrayOf(kid))
        }
        let r = try run(m, #"{"name":"P","children":[{"name":"A","age":3},{"name":"B","age":"old"},{"age":1}]}"#)
        expectResult(r, nil, ["type F [/children/1/age] [/kids/1/years]", "required F [/children/2/name] [/kids/2/name]"])
        #expect(r.errors.first?.sourcePath == [.key("children"), .index(1), .key("age")])
        #expect(r.errors.first?.destinationPath == [.key("kids"), .index(1), .key("years")])
        #expect(r.errors.first?.description == #"/children/1/age: expected integer, found string "old""#)
        // Nested paths on both sides, through a nested object.
        let deep = Mapper.object {
            Field("family.children", to: "data.kids", .arrayOf(.object { Field("info.age", to: "stats.years", .integer) }))
        }
        expectResult(try run(deep, #"{"family":{"children":[{"info":{"age":"x"}}]}}"#), nil, [
            "type F [/family/children/0/info/age] [/data/kids/0/stats/years]",
        ])
        // After NonFatal re-wrapping the container is not fatal; the paths are unchanged.
        let lenient = Mapper.object {
            Field("name", to: "name")
            Field("children", to: "kids", .arrayOf(.optionally(kid)))
        }
        let ok = try run(lenient, #"{"name":"P","children":[{"name":"A","age":3},{"name":"B","age":"old"}]}"#)
        expectResult(ok, #"{"name":"P","kids":[{"name":"A","years":3}]}"#, ["type NF [/children/1/age] [/kids/1/years]"])
        #expect(ok.errors.first?.description == #"/children/1/age: warning: expected integer, found string "old""#)
    }

    @Test("containers collect all errors and are fatal iff any error is fatal")
    func containersCollectAllErrors() throws {
        let m = Mapper.object {
            Field("a", to: "a", .optionally(.integer))
            Field("b", to: "b")
            Field("c", to: "c", .optionally(.string, default: "c"))
        }
        expectResult(try run(m, #"{"a":"x","c":1}"#), nil, ["type NF [/a] [/a]", "required F [/b] [/b]", "type NF [/c] [/c]"])
        expectResult(try run(m, #"{"a":"x","b":2,"c":1}"#), #"{"b":2,"c":"c"}"#, ["type NF [/a] [/a]", "type NF [/c] [/c]"])
        expectResult(try run(m, #"{"a":1,"b":2,"c":"z"}"#), #"{"a":1,"b":2,"c":"z"}"#)
    }

    @Test("First(A, B): success via the fallback carries a non-fatal error")
    func firstFallbackWarning() throws {
        let m = Mapper.object {
            Field("when", to: "at", .first(.stringToDate(.named(.rfc3339)), .stringToDate(.named(.rfc822))))
        }
        let r = try run(m, #"{"when":"Sun, 31 Aug 2014 00:29:15 GMT"}"#)
        expectResult(r, #"{"at":"2014-08-31T00:29:15Z"}"#, ["value NF [/when] [/at]"])
        expectResult(try run(m, #"{"when":"2014-08-31T00:29:15+0000"}"#), #"{"at":"2014-08-31T00:29:15Z"}"#)
        expectResult(try run(m, #"{"when":"x"}"#), nil, ["value F [/when] [/at]", "value F [/when] [/at]"])
        // A list of formats in one stringToDate is silent.
        let silent = Mapper.object { Field("when", to: "at", .stringToDate(.named(.rfc3339), .named(.rfc822))) }
        expectResult(try run(silent, #"{"when":"Sun, 31 Aug 2014 00:29:15 GMT"}"#), #"{"at":"2014-08-31T00:29:15Z"}"#)
    }
}

// MARK: - Reverses

@Suite("MapperAlgebra reverses")
struct MapperAlgebraReverseTests {
    @Test func personRoundTrip() throws {
        try expectRoundTrip(personMapper(), personInput, forward: personOutput)
    }

    @Test func personForwardErrors() throws {
        let input = personInput.replacing(#""age":6"#, with: #""age":"six""#)
        #expect(input != personInput)
        expectResult(try run(personMapper(), input), nil, ["type F [/children/1/age] [/kids/1/years]"])
        // Optional fields absent: non-fatal, and the reverse leaves them out again.
        let partial = #"{"first_name":"Ada","last_name":"L","born":"Sun, 31 Aug 2014 00:29:15 +0000","role":"U","id":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","meta":{"created":"1970-01-01T00:00:00Z"},"children":[]}"#
        let forward = try run(personMapper(), partial)
        expectResult(forward, #"{"firstName":"Ada","name":{"last":"L"},"birthDate":"2014-08-31T00:29:15Z","role":"user","uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","createdMs":0,"kids":[]}"#,
                     ["required NF [/homepage] [/homepage]", "required NF [/age] [/age]"])
        let back = try personMapper().reversed().map(forward.value)
        #expect(try back.value == j(partial))
        #expect(errs(back) == ["required NF [/homepage] [/homepage]", "required NF [/age] [/age]"])
    }

    @Test func roundTripsOfEveryReversibleKind() throws {
        let cases: [(String, Mapper, String)] = [
            ("identity", .identity, #"{"a":[1,null]}"#),
            ("notNull", .notNull(.stringToNumber), #""12""#),
            ("nonFatal", .nonFatally(.stringToNumber, default: 0), #""1.5""#),
            ("optionally", .optionally(.uuid), #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#),
            ("policy", .policy(.stringToNumber, missing: .omit, null: .keepNull), #""-7""#),
            ("check", .check([.string, .null]), "null"),
            ("object", .object { Field("a.b", to: "x"); Field("c", to: "y.z", .stringToNumber) }, #"{"a":{"b":1},"c":"2"}"#),
            ("arrayOf", .arrayOf(.stringToNumber), #"["1","2.5","-3"]"#),
            ("first", .first(.stringToDate(.named(.rfc822)), .numberToDate(.seconds)), #""Sun, 31 Aug 2014 00:29:15 +0000""#),
            ("thread", .thread(.stringToNumber, .enumTable([(1, "one"), (2, "two")])), #""2""#),
            ("split", .split(.stringToNumber, reverse: .numberToString), #""3""#),
            ("forward", .forward("a.b", .stringToNumber), #"{"a":{"b":"4"}}"#),
            ("backward", .backward("a.b", .stringToNumber), #""4""#),
            ("enumTable", .enumTable([("A", "admin"), ("U", "user")]), #""U""#),
            ("stringToDate", .stringToDate(.named(.twitter)), #""Sun Aug 31 00:29:15 +0000 2014""#),
            ("dateToString", .dateToString(.named(.dotnet)), #""2014-08-31T00:29:15.123Z""#),
            ("numberToDate ms", .numberToDate(.milliseconds), "1409444955123"),
            ("numberToDate h", .numberToDate(.hours), "391512.4875"),
            ("dateToNumber min", .dateToNumber(.minutes), #""2014-08-31T00:29:15Z""#),
            ("stringToNumber", .stringToNumber, #""12345678901234567890123""#),
            ("numberToString", .numberToString, "1E+2"),
            ("url", .url(schemes: ["https"]), #""https://example.com/a%20b""#),
            ("uuid", .uuid, #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#),
            ("uuidToString", Mapper(.convert(.uuidToString(uppercase: false))), #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#),
            ("base64", .base64(from: .standard, to: .url), #""+/8=""#),
            ("keys", .keys(.hydrantSnake, deep: true), #"{"fooBar":[{"bazQux":1}]}"#),
            ("block", .block("b", { v in .success(.array([v ?? .null])) }, reverse: { v in .success(v?.arrayValue?.first) }), #""x""#),
            ("postProcess", Mapper.stringToNumber.postProcessed("p", { _, r in r }, reverse: { _, r in r }), #""8""#),
        ]
        for (name, mapper, input) in cases {
            let x = try j(input)
            let forward = mapper.map(x)
            #expect(forward.errors.isEmpty, "\(name): forward errors \(errs(forward))")
            let back = try mapper.reversed().map(forward.value)
            #expect(back.errors.isEmpty, "\(name): reverse errors \(errs(back))")
            #expect(back.value == x, "\(name): reverse(map(\(input))) = \(out(back) ?? "absent")")
        }
    }

    @Test func threadReversesTheOrderOfItsStages() throws {
        let m = Mapper.thread(.stringToNumber, .enumTable([(1, "one")]))
        expectResult(try run(m, #""1""#), #""one""#)
        // Reversed: the inverse table first, then numberToString (the other order would fail on "one").
        expectResult(try run(try m.reversed(), #""one""#), #""1""#)
        guard case .thread(let stages) = try m.reversed().kind else {
            Issue.record("not a thread")
            return
        }
        #expect(stages.count == 2)
        if case .enumTable = stages[0].kind {} else { Issue.record("first stage should be the inverted enum") }
        if case .convert(.numberToString) = stages[1].kind {} else { Issue.record("second stage should be numberToString") }
    }

    @Test func defaultsSwapWithReverseDefaults() throws {
        let m = Mapper.object { Field("a", to: "b", .optionally(.stringToNumber, default: 0, reverseDefault: "zero")) }
        expectResult(try run(m, "{}"), #"{"b":0}"#, ["required NF [/a] [/b]"])
        let back = try m.reversed()
        expectResult(try run(back, "{}"), #"{"a":"zero"}"#, ["required NF [/b] [/a]"])
        expectResult(try run(back, #"{"b":"x"}"#), #"{"a":"zero"}"#, ["type NF [/b] [/a]"])
        expectResult(try run(try back.reversed(), "{}"), #"{"b":0}"#, ["required NF [/a] [/b]"])
    }

    @Test func splitAndForwardBackwardSwap() throws {
        expectResult(try run(try Mapper.split(.identity, reverse: .toString).reversed(), "1"), #""1""#)
        expectResult(try run(try Mapper.forward("a.b").reversed(), "5"), #"{"a":{"b":5}}"#)
        expectResult(try run(try Mapper.backward("x.y").reversed(), #"{"x":{"y":5}}"#), "5")
        if case .backward(let p, _) = try Mapper.forward("a.b").reversed().kind {
            #expect(p.steps == ["a", "b"])
        } else {
            Issue.record("forward should reverse to backward")
        }
        if case .forward(let p, _) = try Mapper.backward("x").reversed().kind {
            #expect(p.steps == ["x"])
        } else {
            Issue.record("backward should reverse to forward")
        }
    }

    @Test func objectReversalSwapsSourcesAndDestinations() throws {
        let m = Mapper.object(ObjectMapping(fields: [
            Field("id", to: "identifier"),
            Field(sources: [KeyPath("date"), KeyPath("time")], destinations: [KeyPath("when")], mapper: .identity),
            Field("loc.lat", to: "position.0", .stringToNumber),
        ]))
        try expectRoundTrip(m, #"{"id":1,"date":"d","time":"t","loc":{"lat":"51.5"}}"#,
                            forward: #"{"identifier":1,"when":["d","t"],"position":{"0":51.5}}"#)
    }

    @Test func enumThatIsNotOneToOneIsNotReversible() throws {
        for pairs: [(JSONValue, JSONValue)] in [[("a", 1), ("b", 1)], [("a", 1), ("a", 2)], [("a", [1]), ("b", 2)]] {
            let e = notReversible(.enumTable(pairs))
            #expect(e == NotReversibleError(mapper: "enum", reason: "the table is not one-to-one"))
        }
        // Numeric equality counts: 1 and 1.0 are the same target.
        let onePointZero = try j("1.0")
        let numeric = Mapper.enumTable([("a", 1), ("b", onePointZero)])
        #expect(notReversible(numeric) != nil)
        // Errors propagate out of containers.
        #expect(notReversible(.object { Field("k", to: "d", .arrayOf(.enumTable([("a", 1), ("b", 1)]))) })?.mapper == "enum")
    }

    @Test func toStringAndOneWayBlocksAreNotReversible() throws {
        #expect(notReversible(.toString)?.mapper == "toString")
        #expect(notReversible(.thread(.identity, .toString))?.mapper == "toString")
        #expect(notReversible(.object { Field("a", to: "b", .toString) })?.mapper == "toString")
        #expect(notReversible(.block("f") { v in .success(v) })?.mapper == "f")
        #expect(notReversible(.optionally(.block("g") { v in .success(v) }))?.mapper == "g")
        #expect(notReversible(Mapper(.convert(.stringToDate([])))) != nil)
        // split makes a lossy mapper reversible.
        #expect(notReversible(.split(.toString, reverse: .identity)) == nil)
    }

    @Test func unmappedKeepWithHydrantSnakeReversesToHydrantCamel() throws {
        let m = Mapper.object(unmapped: .keep(keyStyle: .hydrantSnake, values: nil)) { Field("id", to: "identifier") }
        try expectRoundTrip(m, #"{"id":7,"firstName":"Ada","homePage":"x"}"#,
                            forward: #"{"identifier":7,"first_name":"Ada","home_page":"x"}"#)
        guard case .object(let mapping) = try m.reversed().kind, case .keep(let style, let values, _) = mapping.unmapped else {
            Issue.record("the reverse should keep unmapped keys")
            return
        }
        #expect(style == .hydrantCamel)
        #expect(values == nil)
        #expect(mapping.fields.first?.sources == [KeyPath("identifier")])
        #expect(mapping.fields.first?.destinations == [KeyPath("id")])
        // A values mapper is reversed too.
        let valued = Mapper.object(unmapped: .keep(keyStyle: nil, values: .stringToNumber)) { }
        try expectRoundTrip(valued, #"{"a":"1","b":"2.5"}"#, forward: #"{"a":1,"b":2.5}"#)
        // A key style without an inverse is not reversible.
        let lossy = Mapper.object(unmapped: .keep(keyStyle: .lowercase, values: nil)) { }
        #expect(notReversible(lossy) == NotReversibleError(mapper: "unmapped keys (lower)", reason: "the key style has no inverse"))
    }

    @Test func checkAndNotNullReverseToThemselves() throws {
        expectResult(try run(try Mapper.integer.reversed(), #""x""#), nil, ["type F [] []"])
        expectResult(try run(try Mapper.required.reversed(), "null"), nil, ["required F [] []"])
        let policy = try Mapper.policy(.stringToNumber, missing: .omit, null: .keepNull).reversed()
        expectResult(try run(policy, "12"), #""12""#)
        expectResult(try run(policy, nil), nil)
        expectResult(try run(policy, "null"), "null")
    }
}

// MARK: - Exact numbers

@Suite("MapperAlgebra exact numbers")
struct MapperAlgebraExactNumberTests {
    static let numbers = ["12345678901234567890123", "1E+2", "-0", "0.1000000000000000000000000000000000000001"]

    @Test("pass through identity byte for byte", arguments: MapperAlgebraExactNumberTests.numbers)
    func identity(_ n: String) throws {
        expectResult(try run(.identity, n), n)
        #expect(JSONWriter.bytes(try run(.identity, n).value!) == Array(n.utf8))
        expectResult(try run(.number, n), n)
    }

    @Test("pass through object mappings byte for byte", arguments: MapperAlgebraExactNumberTests.numbers)
    func objects(_ n: String) throws {
        let m = Mapper.object(unmapped: .keep) {
            Field("a", to: "x.y")
            Field("b", to: "b", .optionally(.number))
            Field("c.0", to: "first")
        }
        let input = #"{"a":\#(n),"b":\#(n),"c":[\#(n)],"d":\#(n)}"#
        expectResult(try run(m, input), #"{"x":{"y":\#(n)},"b":\#(n),"first":\#(n),"d":\#(n)}"#)
        try expectRoundTrip(Mapper.object { Field("a", to: "x.y") }, #"{"a":\#(n)}"#, forward: #"{"x":{"y":\#(n)}}"#)
    }

    @Test("pass through arrays byte for byte", arguments: MapperAlgebraExactNumberTests.numbers)
    func arrays(_ n: String) throws {
        expectResult(try run(.arrayOf(.number), "[\(n),\(n)]"), "[\(n),\(n)]")
        expectResult(try run(.arrayOf(.optionally(.number, default: 0)), "[\(n)]"), "[\(n)]")
        expectResult(try run(.first(.string, .number), n), n, ["type NF [] []"])
        expectResult(try run(.thread(.numberToString, .stringToNumber), n), n)
        expectResult(try run(.backward("v", .forward("w")), #"{"w":\#(n)}"#), #"{"v":\#(n)}"#)
    }

    @Test func integerChecksAreLexical() throws {
        expectResult(try run(.integer, "12345678901234567890123"), "12345678901234567890123")
        expectResult(try run(.integer, "-0"), "-0")
        expectResult(try run(.integer, "1E+2"), nil, ["type F [] []"])
        expectResult(try run(.integer, "0.1000000000000000000000000000000000000001"), nil, ["type F [] []"])
        // Numeric enum matching is exact, even beyond Double precision.
        let big = try j("12345678901234567890123")
        let m = Mapper.enumTable([(big, "big"), (100, "hundred")])
        expectResult(try run(m, "12345678901234567890123"), #""big""#)
        expectResult(try run(m, "1.2345678901234567890123e22"), #""big""#)
        expectResult(try run(m, "12345678901234567890124"), nil, ["value F [] []"])
        expectResult(try run(m, "1E+2"), #""hundred""#)
    }
}
