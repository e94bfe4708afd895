// `SpecInference` (`streammap infer`): the spec it infers from records is valid and deterministic, maps every valid
// record of the sample (the same bytes in both engines), and its reverse gives each record back — on the seed
// tweets and GitHub events, and on the records the differential tests generate.

import Foundation
import Testing

@testable import StreamMap

@Suite("Spec inference")
struct SpecInferenceTests {
    // MARK: Helpers

    /// Infers a spec from `records` (invalid JSON is left out, as `streammap infer` does).
    static func infer(_ records: [[UInt8]], keyStyle: KeyStyle? = nil, limits: SpecInference.Limits = .init())
        -> SpecInference
    {
        var inference = SpecInference(keyStyle: keyStyle, limits: limits)
        for r in records { try? r.withUnsafeBytes { try inference.add(json: $0) } }
        return inference
    }

    static func lines(_ text: String) -> [[UInt8]] { text.split(separator: "\n").map { Array($0.utf8) } }

    /// The value with every object's members sorted by key bytes: equality regardless of key order (numbers still
    /// by their exact text).
    static func sortedKeys(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let o):
            return .object(
                JSONObject(
                    o.entries.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
                        .map { ($0.key, sortedKeys($0.value)) }))
        case .array(let a): return .array(a.map(sortedKeys))
        default: return v
        }
    }

    /// Checks everything the issue promises of an inferred spec for `records`; returns what is wrong.
    static func problems(_ inference: SpecInference, records: [[UInt8]]) -> [String] {
        var problems: [String] = []
        let document = inference.document
        let spec: Spec
        do {
            spec = try Spec(document: document, file: "inferred")
        } catch {
            return ["the inferred spec does not compile: \(error)\n\(inference.text)"]
        }
        // The printed text is the same spec.
        if (try? JSONParser.parse(inference.text)) != document {
            problems.append("the printed text is not the document")
        }
        guard let back = try? spec.reversed() else { return problems + ["the inferred spec is not reversible"] }
        let valid = records.compactMap { try? JSONParser.parse($0) }
        // Both engines: same bytes, nothing rejected.
        let mismatches = findMismatches(
            mapper: spec.mapper, records: records, makeCandidate: makeStreamEngine, pieces: 0x1F)
        if let m = mismatches.first { problems.append("engines disagree: \(m)") }
        let tree = TreeEngine(mapper: spec.mapper)
        let reverse = TreeEngine(mapper: back)
        for (i, record) in valid.enumerated() {
            var w = JSONWriter()
            guard case .mapped(let warnings, _) = tree.map(value: record, into: &w) else {
                problems.append("valid record \(i) rejected: \(JSONWriter.string(record))\n\(inference.text)")
                continue
            }
            if !warnings.isEmpty { problems.append("record \(i) mapped with warnings \(warnings)") }
            var r = JSONWriter()
            guard let mapped = try? JSONParser.parse(w.bytes), case .mapped = reverse.map(value: mapped, into: &r),
                let restored = try? JSONParser.parse(r.bytes)
            else {
                problems.append("record \(i): the reverse mapping failed")
                continue
            }
            if sortedKeys(restored) != sortedKeys(record) {
                problems.append(
                    "record \(i) not given back:\n  \(JSONWriter.string(record))\n  \(JSONWriter.string(restored))")
            }
        }
        return problems
    }

    // MARK: Seed data

    /// `Samples/seed/NAME` in the repository (real sample records: Samples/seed/README.md).
    static func seed(_ name: String) throws -> [[UInt8]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("Samples/seed/\(name)"))
        return data.split(separator: UInt8(ascii: "\n")).map { Array($0) }
    }

    @Test("GitHub events: types, enums, dates, URLs, optional paths; maps and reverses every event")
    func githubEvents() throws {
        let records = try Self.seed("gh_events.ndjson")
        let inference = Self.infer(records)
        #expect(Self.problems(inference, records: records) == [])
        let fields = try #require(inference.document["fields"]?.objectValue)
        #expect(fields["type"]?["via"]?["enum"]?["PushEvent"] == "PushEvent")
        #expect(fields["created_at"] == ["to": "created_at", "via": ["stringToDate": "iso8601"], "required": true])
        #expect(fields["id"] == ["to": "id", "type": "string"])
        let actor = try #require(fields["actor"]?["via"]?["object"]?["fields"]?.objectValue)
        #expect(actor["avatar_url"] == ["to": "avatar_url", "via": "url", "required": true])
        #expect(actor["id"] == ["to": "id", "type": "integer"])
        // CreateEvents have no commits: optional, absent left out, null written.
        let payload = try #require(fields["payload"]?["via"]?["object"]?["fields"]?.objectValue)
        #expect(payload["commits"]?["missing"] == "omit")
        #expect(payload["commits"]?["via"]?["arrayOf"]?["object"] != nil)
        // Deterministic: the same input, the same spec.
        #expect(Self.infer(records).text == inference.text)
    }

    @Test(
        "Tweets: Twitter dates, nested users, null-or-integer ids; camelCase destinations; maps and reverses every tweet"
    )
    func tweets() throws {
        let records = try Self.seed("tweets.ndjson")
        let inference = Self.infer(records, keyStyle: .foundationCamel)
        #expect(Self.problems(inference, records: records) == [])
        let fields = try #require(inference.document["fields"]?.objectValue)
        #expect(fields["created_at"] == ["to": "createdAt", "via": ["stringToDate": "twitter"], "required": true])
        #expect(
            fields["in_reply_to_status_id"] == [
                "to": "inReplyToStatusId", "type": "integer", "missing": "omit", "null": "null"
            ])
        let user = try #require(fields["user"]?["via"]?["object"]?["fields"]?.objectValue)
        #expect(user["created_at"]?["via"] == ["stringToDate": "twitter"])
        #expect(user["screen_name"]?["to"] == "screenName")
        #expect(Self.infer(records, keyStyle: .foundationCamel).text == inference.text)
    }

    // MARK: Generated records (the differential generators)

    @Test(
        "Records the differential tests generate: every inferred spec is valid, maps its sample in both engines alike and reverses"
    )
    func generatedRecords() throws {
        var failures: [String] = []
        var inferred = 0
        for i in 0..<300 where failures.count < 3 {
            let seed = SplitMix64.derive(0x1AFE_5EED, UInt64(i))
            let c = try GeneratedCase.make(seed: seed, index: i)
            let style: KeyStyle? = i % 3 == 0 ? nil : KeyStyle.allCases[i % KeyStyle.allCases.count]
            let inference = Self.infer(c.records, keyStyle: style)
            guard inference.recordCount > 0 else { continue }
            inferred += 1
            let p = Self.problems(inference, records: c.records)
            if !p.isEmpty {
                failures.append("seed \(seed) (style \(style.map { "\($0)" } ?? "none")): \(p.joined(separator: "\n"))")
            }
        }
        #expect(failures == [])
        #expect(inferred > 250, "most generated cases have valid records to infer from")
    }

    // MARK: Rules

    @Test(
        "Mixed types get no type; integers and fractions are numbers; only-null is null; strings that do not convert back stay strings"
    )
    func typeRules() throws {
        let records = Self.lines(
            """
            {"a":1,"b":1,"c":null,"d":"2014-08-31T00:29:15.000Z","e":"x","f":"550e8400-e29b-41d4-a716-446655440000"}
            {"a":"1","b":1.5,"c":null,"d":"2014-08-31T00:29:16Z","e":"y","f":"550E8400-E29B-41D4-A716-446655440000"}
            {"a":true,"b":2e3,"d":"2014-08-31T00:29:17Z","e":"z","f":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}
            """)
        let inference = Self.infer(records)
        #expect(Self.problems(inference, records: records) == [])
        let fields = try #require(inference.document["fields"]?.objectValue)
        #expect(fields["a"] == "a")
        #expect(fields["b"] == ["to": "b", "type": "number"])
        #expect(fields["c"] == ["to": "c", "type": "null", "missing": "omit", "null": "null"])
        // ".000Z" would come back as "Z", and uppercase UUIDs as lowercase: not proposed.
        #expect(fields["d"] == ["to": "d", "type": "string"])
        #expect(fields["f"] == ["to": "f", "type": "string"])
        // Three distinct strings in three records: not a closed set.
        #expect(fields["e"] == ["to": "e", "type": "string"])
    }

    @Test("Arrays whose elements take one mapper get arrayOf it — typed lists in Arrow; the others stay arrays")
    func arraysOfOneKind() throws {
        let records = Self.lines("""
            {"tags":["a","b"],"ids":[1,2],"xs":[1,2.5],"at":["2014-08-31T00:29:15Z"],"grid":[[1],[2,3]],"mixed":[1,"a"],"holes":["a",null],"none":[],"objs":[{"k":1}]}
            {"tags":[],"ids":[3],"xs":[],"at":[],"grid":[],"mixed":[],"holes":["b"],"none":[],"objs":[]}
            """)
        let inference = Self.infer(records)
        #expect(Self.problems(inference, records: records) == [])
        let fields = try #require(inference.document["fields"]?.objectValue)
        let vias = ["tags", "ids", "xs", "at", "grid", "mixed", "holes", "none", "objs"].map { key in
            fields[key]?["via"].map(JSONWriter.string) ?? fields[key]?["type"].map(JSONWriter.string) ?? "-"
        }
        #expect(vias == [
            #"{"arrayOf":"string"}"#, #"{"arrayOf":"integer"}"#, #"{"arrayOf":"number"}"#,
            #"{"arrayOf":{"stringToDate":"iso8601"}}"#, #"{"arrayOf":{"arrayOf":"integer"}}"#,
            #""array""#, #""array""#, #""array""#, #"{"arrayOf":{"object":{"fields":{"k":{"to":"k","type":"integer"}}}}}"#,
        ])
        let schema = try ArrowSchema(mapper: Spec(document: inference.document).mapper)
        #expect(schema.fields.prefix(5).map(\.type) == [.list(.utf8), .list(.int64), .list(.float64), .list(.utf8), .list(.list(.int64))])
    }

    @Test("A small closed set of strings becomes an enum table; one value too many, or too long, does not")
    func enums() throws {
        let kinds = ["open", "closed", "merged"]
        let records = (0..<12).map { Array("{\"state\":\"\(kinds[$0 % 3])\",\"n\":\($0)}".utf8) }
        let fields = try #require(Self.infer(records).document["fields"]?.objectValue)
        #expect(
            fields["state"] == [
                "to": "state", "via": ["enum": ["open": "open", "closed": "closed", "merged": "merged"]],
                "required": true
            ])
        var limits = SpecInference.Limits()
        limits.maximumEnumValues = 2
        #expect(Self.infer(records, limits: limits).document["fields"]?["state"] == ["to": "state", "type": "string"])
        limits = SpecInference.Limits()
        limits.maximumEnumValueBytes = 5
        #expect(Self.infer(records, limits: limits).document["fields"]?["state"] == ["to": "state", "type": "string"])
    }

    @Test(
        "Keys with the delimiter, empty keys, canonically equivalent keys and key-style collisions all map and come back"
    )
    func awkwardKeys() throws {
        let records = Self.lines(
            #"""
            {"a.b":1,"":2,"\u00e9":3,"e\u0301":4,"user_id":5,"userId":6,"0":7}
            {"a.b":1,"":2,"\u00e9":3,"e\u0301":4,"user_id":5,"userId":6,"0":7}
            """#)
        for style in [nil, KeyStyle.foundationCamel, .foundationSnake, .lowercase] {
            let inference = Self.infer(records, keyStyle: style)
            #expect(Self.problems(inference, records: records) == [], "style \(String(describing: style))")
        }
        let fields = try #require(Self.infer(records, keyStyle: .foundationCamel).document["fields"]?.objectValue)
        #expect(fields["a.b"]?["literal"] == true)
        #expect(fields["user_id"]?["to"] == "userId")
        #expect(fields["userId"]?["to"] == "userId_2")
        #expect(fields.count == 7)
    }

    @Test("Records that are not all objects get a whole-record mapper")
    func nonObjectRecords() {
        for text in ["[1,2]\n[3]", "1\n2.5", "{\"a\":1}\n[1]", "null\n{\"a\":1}"] {
            let records = Self.lines(text)
            let inference = Self.infer(records)
            #expect(inference.document["fields"] == nil)
            #expect(Self.problems(inference, records: records) == [], "\(text)")
        }
    }

    // MARK: Limits: bounded memory, linear time

    @Test(
        "More distinct paths than the limit: the rest pass through, a note says so, the sample still maps and comes back"
    )
    func pathLimit() {
        var limits = SpecInference.Limits()
        limits.maximumPaths = 50
        let records = (0..<5).map { r in
            Array(("{" + (0..<40).map { "\"k\(r)_\($0)\":\($0)" }.joined(separator: ",") + "}").utf8)
        }
        let inference = Self.infer(records, limits: limits)
        #expect(inference.droppedPaths)
        #expect(inference.notes.count == 1)
        #expect(inference.document["unmapped"] == "keep")
        #expect(inference.document["fields"]?.objectValue?.count == 49)
        #expect(Self.problems(inference, records: records) == [])
    }

    @Test(
        "Values deeper than the depth limit are typed, not looked into; a record nested 10 000 deep (the parser's limit) is fine"
    )
    func depthLimit() {
        var limits = SpecInference.Limits()
        limits.maximumDepth = 3
        let records = Self.lines(#"{"a":{"b":{"c":{"d":1}}},"l":[[[[1]]]]}"#)
        let inference = Self.infer(records, limits: limits)
        #expect(inference.notes.count == 1)
        #expect(Self.problems(inference, records: records) == [])
        let deep = [
            Array((String(repeating: "{\"a\":", count: 10_000) + "1" + String(repeating: "}", count: 10_000)).utf8)
        ]
        let deepInference = Self.infer(deep)
        #expect(deepInference.recordCount == 1)
        #expect((try? Spec(document: deepInference.document)) != nil)
    }
}
