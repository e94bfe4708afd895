#if canImport(Glibc)
import Glibc
#endif
import Testing
import CJSONScan
@testable import StreamMap
import StreamMapTestSupport

/// Arrow output: the schema found from a spec, the checks that reject what a column cannot hold (both engines
/// alike), and the writer's batches read back (by the tests' own reader, `ArrowReading`) equal to the NDJSON
/// output, typed. The proof against pyarrow, DuckDB and Polars is Integrations/arrow (scripts/arrow-test.sh).
@Suite("Arrow output")
struct ArrowOutputTests {
    static func schema(_ spec: String) throws -> ArrowSchema { try ArrowSchema(mapper: try Spec(json: spec).mapper) }

    static func schemaError(_ spec: String) throws -> ArrowSchemaError? {
        do {
            _ = try ArrowSchema(mapper: try Spec(json: spec).mapper)
            return nil
        } catch let e as ArrowSchemaError {
            return e
        }
    }

    @Test func theTweetSpecsColumns() throws {
        let spec = """
            {"fields": {
              "id": {"to": "id", "type": "integer"}, "id_str": {"to": "idStr", "type": "string"},
              "created_at": {"to": "createdAtMs", "via": [{"stringToDate": "twitter"}, {"dateToNumber": "ms"}]},
              "user.id": {"to": "user.id", "type": "integer"}, "user.name": {"to": "user.name", "type": "string"},
              "user.verified": {"to": "user.verified", "type": "boolean", "default": false},
              "score": {"type": "number", "optional": true}, "tags": {"via": {"arrayOf": "string"}, "optional": true},
              "meta": {"type": "object", "optional": true}, "kind": {"via": {"enum": {"a": "x", "b": "y"}}},
              "ms": {"via": {"multiply": 1000}, "type": "integer"}, "price": {"via": "numberToString"}
            }}
            """
        let s = try Self.schema(spec)
        #expect(s.fields == [
            ArrowField("id", .int64), ArrowField("idStr", .utf8), ArrowField("createdAtMs", .int64),
            ArrowField("user", .structure([ArrowField("id", .int64), ArrowField("name", .utf8), ArrowField("verified", .bool)])),
            ArrowField("score", .float64), ArrowField("tags", .list(.utf8)), ArrowField("meta", .jsonText),
            ArrowField("kind", .utf8), ArrowField("ms", .int64), ArrowField("price", .utf8),
        ])
    }

    @Test func fieldsOfUnknownTypeAreNamedAll() throws {
        let e = try #require(try Self.schemaError(#"{"fields": {"a": "b", "c": {"to": "d.e"}, "n": {"type": "integer"}, "l": {"via": {"arrayOf": "identity"}}}}"#))
        #expect(e.problems.map(\.field) == ["b", "d.e", "l"])
        #expect(e.description.contains("not known from the spec: b, d.e, l"))
        #expect(e.description.contains("--type") && e.description.contains("streammap infer"))
    }

    @Test func valuesOneColumnCannotHoldAreSpecErrors() throws {
        let wrongDefault = try #require(try Self.schemaError(#"{"fields": {"n": {"type": "integer", "default": "none"}}}"#))
        #expect(wrongDefault.description == #"n: its values are int64, and its default "none" does not fit: expected int64, found string "none""#)
        let union = try #require(try Self.schemaError(#"{"fields": {"n": {"via": {"type": ["string", "integer"]}}}}"#))
        #expect(union.description.contains("string or integer") || union.description.contains("integer or string"))
        let keep = try #require(try Self.schemaError(#"{"fields": {"n": {"type": "integer"}}, "unmapped": "keep"}"#))
        #expect(keep.description.contains("unmapped"))
        // An integer default in a number column widens nothing: the column is float64.
        #expect(try Self.schema(#"{"fields": {"n": {"type": "number", "default": 0}}}"#).fields == [ArrowField("n", .float64)])
        // A null default or a string-or-null type adds nothing.
        #expect(try Self.schema(#"{"fields": {"n": {"via": {"type": ["string", "null"]}, "default": null}}}"#).fields == [ArrowField("n", .utf8)])
    }

    /// A default that fits a list or struct column keeps it (found by the pyarrow suite: it made the column JSON
    /// text); one that does not widens it to JSON text, which holds anything.
    @Test func containerDefaultsKeepTheirColumns() throws {
        #expect(try Self.schema(#"{"fields": {"a": {"via": {"arrayOf": "integer"}, "default": [1, 2]}}}"#).fields == [ArrowField("a", .list(.int64))])
        #expect(try Self.schema(#"{"fields": {"a": {"via": {"arrayOf": "string"}, "missing": {"default": ["x"]}, "null": "null"}}}"#).fields
                == [ArrowField("a", .list(.utf8))])
        #expect(try Self.schema(#"{"fields": {"a": {"via": {"arrayOf": "integer"}, "default": []}}}"#).fields == [ArrowField("a", .list(.int64))])
        #expect(try Self.schema(#"{"fields": {"a": {"via": {"object": {"fields": {"b": {"type": "integer"}}}}, "default": {"b": 1}}}}"#).fields
                == [ArrowField("a", .structure([ArrowField("b", .int64)]))])
        // A default that does not fit is a spec error, never a wider column.
        for (spec, message) in [
            (#"{"fields": {"a": {"via": {"arrayOf": "integer"}, "default": [1, "x"]}}}"#, #"a: its values are list<int64>, and its default [1,"x"] does not fit: expected int64, found string "x""#),
            (#"{"fields": {"a": {"type": "integer", "default": 1.5}}}"#, "a: its values are int64, and its default 1.5 does not fit: number 1.5 is not an integer, and the column is int64"),
            (#"{"fields": {"a": {"type": "integer", "default": 18446744073709551621}}}"#, "a: its values are int64, and its default 18446744073709551621 does not fit: 18446744073709551621 does not fit the int64 column (−2^63 to 2^63−1); map it with numberToString to keep its digits"),
        ] {
            #expect(try Self.schemaError(spec)?.description == message, "\(spec)")
        }
        #expect(try Self.schema(#"{"fields": {"a": {"type": "object", "default": [1, "x"]}}}"#).fields == [ArrowField("a", .jsonText)])
    }

    /// The checks reject an integer beyond int64 and a number beyond a double, with their paths, in both engines.
    @Test func valuesThatDoNotFitRejectTheirRecordInBothEngines() throws {
        let spec = try Spec(json: #"{"fields": {"id": {"type": "integer"}, "x": {"to": "a.x", "type": "number", "optional": true}, "l": {"via": {"arrayOf": "integer"}, "optional": true}}}"#)
        let schema = try ArrowSchema(mapper: spec.mapper)
        let checked = schema.checking(spec.mapper)
        let input = """
            {"id": 9223372036854775807, "x": 1.5}
            {"id": 9223372036854775808}
            {"id": -9223372036854775808, "x": 1e308}
            {"id": 1, "x": 1e309}
            {"id": 2, "l": [1, 99999999999999999999]}
            {"id": 3, "l": []}

            """
        var results: [[RecordResult]] = []
        for engine in [MappingOptions.Engine.stream, .tree] {
            let feedResults: [RecordResult]
            switch engine {
            case .stream:
                let feed = MappingFeed(engine: StreamEngine(mapper: checked))
                feedResults = feed.feed(input) + feed.finish()
            case .tree:
                let feed = MappingFeed(engine: TreeEngine(mapper: checked))
                feedResults = feed.feed(input) + feed.finish()
            }
            results.append(feedResults)
        }
        #expect(results[0] == results[1])
        let rejected = results[0].compactMap { r -> String? in
            guard case .rejected(let x) = r else { return nil }
            return "\(x.location.line): " + x.failure.fatalErrors.map(\.description).joined(separator: "; ")
        }
        #expect(rejected == [
            "2: /id: 9223372036854775808 does not fit the int64 column (−2^63 to 2^63−1); map it with numberToString to keep its digits",
            "4: /x: 1e309 is beyond the range of the float64 column; map it with numberToString to keep its digits",
            "5: /l/1: 99999999999999999999 does not fit the int64 column (−2^63 to 2^63−1); map it with numberToString to keep its digits",
        ])
    }

    /// A date without a fraction as epoch ms always fits int64: no check, the fused conversion stays; an ISO 8601
    /// date (any fraction) is checked. The extreme years map the same in both engines.
    @Test func datesThatAlwaysFitAreNotChecked() throws {
        let spec = try Spec(json: #"{"fields": {"t": {"via": [{"stringToDate": "twitter"}, {"dateToNumber": "ms"}], "required": true}, "i": {"via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}], "optional": true}}}"#)
        let checked = try ArrowSchema(mapper: spec.mapper).checking(spec.mapper)
        guard case .object(let o) = checked.kind else { Issue.record("not an object"); return }
        let wrapped = o.fields.map { f -> Bool in if case .postProcess = f.mapper.kind { return true } else { return false } }
        #expect(wrapped == [false, true])
        let input = """
            {"t": "Fri Dec 31 23:59:59 +0000 9999", "i": "0001-01-01T00:00:00.0005Z"}
            {"t": "Sat Jan 01 00:00:00 +0000 0000", "i": "9999-12-31T23:59:59.999Z"}
            {"t": "Fri Dec 31 23:59:59 +0000 9999"}

            """
        let stream = MappingFeed(engine: StreamEngine(mapper: checked)), tree = MappingFeed(engine: TreeEngine(mapper: checked))
        let results = stream.feed(input) + stream.finish()
        #expect(results == tree.feed(input) + tree.finish())
        #expect(results.map { r -> String in
            switch r {
            case .mapped(let m): return m.text
            case .rejected(let x): return x.failure.fatalErrors.map(\.description).joined()
            }
        } == [
            "/i: number -62135596799999.5 is not an integer, and the column is int64",
            #"{"t":-62167219200000,"i":253402300799999}"#,
            #"{"t":253402300799000}"#,
        ])
    }

    /// `"column"` gives a field a timestamp or decimal128 column, in lists too, with `--column` its flag; a
    /// column that does not match what the field's values are, a default that does not fit it, or a spelling that
    /// is not one, is an error before any record is read.
    @Test func columnTypesFromTheSpec() throws {
        let s = try Self.schema("""
            {"fields": {
              "at": {"via": {"stringToDate": "twitter"}, "column": "timestamp"},
              "ms": {"via": {"numberToDate": "ms"}, "column": "timestamp(ms)", "to": "t.ms"},
              "iso": {"type": "string", "column": "timestamp(ns)", "optional": true, "default": "2014-08-31T00:00:00.000000001Z"},
              "open": {"column": "timestamp(s)"},
              "dates": {"via": {"arrayOf": {"stringToDate": "iso8601"}}, "column": "timestamp"},
              "price": {"via": "stringToNumber", "column": "decimal(18, 2)", "default": 0},
              "big": {"type": "integer", "column": "decimal(38,0)"},
              "amounts": {"via": {"arrayOf": "number"}, "column": "decimal(5,5)"}
            }}
            """)
        #expect(s.fields == [
            ArrowField("at", .timestamp(.microseconds)), ArrowField("t", .structure([ArrowField("ms", .timestamp(.milliseconds))])),
            ArrowField("iso", .timestamp(.nanoseconds)), ArrowField("open", .timestamp(.seconds)),
            ArrowField("dates", .list(.timestamp(.microseconds))), ArrowField("price", .decimal128(precision: 18, scale: 2)),
            ArrowField("big", .decimal128(precision: 38, scale: 0)), ArrowField("amounts", .list(.decimal128(precision: 5, scale: 5))),
        ])
        #expect(s.fields.map(\.type.description) == [
            "timestamp[us, UTC]", "struct<ms: timestamp[ms, UTC]>", "timestamp[ns, UTC]", "timestamp[s, UTC]", "list<timestamp[us, UTC]>",
            "decimal128(18, 2)", "decimal128(38, 0)", "list<decimal128(5, 5)>",
        ])
        for (spec, message) in [
            (#"{"fields": {"b": {"type": "boolean", "column": "timestamp"}}}"#, #"b: "column": "timestamp(us)" holds date strings, and its values are bool"#),
            (#"{"fields": {"n": {"type": "string", "column": "decimal(3,1)"}}}"#, #"n: "column": "decimal(3,1)" holds numbers, and its values are utf8"#),
            (#"{"fields": {"d": {"via": {"stringToDate": "iso8601"}, "column": "timestamp(s)", "default": "2014-08-31T00:00:00.5Z"}}}"#,
             #"d: its default "2014-08-31T00:00:00.5Z" does not fit its column: "2014-08-31T00:00:00.5Z" is finer than the timestamp[s, UTC] column's unit; declare "column": "timestamp(ms)" to keep it (it is never truncated)"#),
            (#"{"fields": {"p": {"type": "number", "column": "decimal(4,2)", "default": 123}}}"#,
             "p: its default 123 does not fit its column: 123 has more than 2 digits before the point, and the column is decimal128(4, 2)"),
        ] {
            #expect(try Self.schemaError(spec)?.description == message, "\(spec)")
        }
        for (column, message) in [
            ("\"timestmp\"", #"unknown column type "timestmp" (one of timestamp, timestamp(s), timestamp(ms), timestamp(us), timestamp(ns), decimal(P,S))"#),
            ("\"timestamp(m)\"", #"unknown timestamp unit "m" (one of s, ms, us, ns)"#),
            ("\"decimal(39,2)\"", "a decimal's precision is 1 to 38 digits (decimal128), not 39"),
            ("\"decimal(5,6)\"", "a decimal's scale is 0 to its precision (5), not 6"),
            ("\"decimal(5)\"", "expected decimal(PRECISION,SCALE), e.g. decimal(18,2)"),
            ("true", "expected a column type (timestamp, timestamp(s), timestamp(ms), timestamp(us), timestamp(ns), decimal(P,S)), found boolean true"),
        ] {
            #expect(throws: (any Error).self) { try Spec(json: #"{"fields": {"a": {"type": "number", "column": \#(column)}}}"#) }
            do {
                _ = try Spec(json: #"{"fields": {"a": {"type": "number", "column": \#(column)}}}"#)
            } catch {
                #expect("\(error)".contains("/fields/a/column: " + message), "\(error)")
            }
        }
        // The flag sets the field's "column" (and adds the field when the spec has none).
        var amendment = SpecAmendment()
        amendment.fields = ["at"]
        amendment.columns = ["at=timestamp(ms)"]
        let amended = try amendment.apply(to: nil)
        #expect(JSONWriter.string(amended) == #"{"fields":{"at":{"to":"at","missing":"omit","null":"null","column":"timestamp(ms)"}}}"#)
        #expect(try ArrowSchema(mapper: Spec(document: amended).mapper).fields == [ArrowField("at", .timestamp(.milliseconds))])
        amendment.columns = ["at=decimal(1,2)"]
        #expect(throws: SpecAmendment.Refusal.self) { try amendment.apply(to: nil) }
    }

    /// Timestamps and decimals are exact or the record is rejected with its path — never truncated, rounded or
    /// nulled — alike in both engines; what is written reads back as the same instants and numbers.
    @Test func timestampsAndDecimalsAreExactOrRejected() throws {
        let spec = try Spec(json: #"{"fields": {"t": {"type": "string", "column": "timestamp", "required": false}, "n": {"type": "string", "column": "timestamp(ns)", "required": false}, "d": {"type": "number", "column": "decimal(6,2)", "required": false}, "b": {"type": "number", "column": "decimal(38,0)", "required": false}}}"#)
        let schema = try ArrowSchema(mapper: spec.mapper)
        let checked = schema.checking(spec.mapper)
        let input = #"""
            {"t": "2014-08-31T00:29:15.123456Z", "n": "2014-08-31T02:29:15.123456789+02:00", "d": 1234.5, "b": 99999999999999999999999999999999999999}
            {"t": "2014-08-31T00:29:15.1234567Z"}
            {"n": "2262-04-12T00:00:00Z"}
            {"n": "1677-09-21T00:12:43.145224192Z", "t": "0001-01-01", "d": -0.01, "b": -99999999999999999999999999999999999999}
            {"d": 12345.6}
            {"d": 0.001}
            {"d": 1e-400}
            {"b": 1e38}
            {"t": "Sun Aug 31 00:29:15 +0000 2014"}
            {"t": 5}
            {"t": "2014-08-31T00:29:15Z", "d": 12.50e1, "b": 0}

            """#
        let stream = MappingFeed(engine: StreamEngine(mapper: checked)), tree = MappingFeed(engine: TreeEngine(mapper: checked))
        let results = stream.feed(input) + stream.finish()
        #expect(results == tree.feed(input) + tree.finish())
        let rejected = results.compactMap { r -> String? in
            guard case .rejected(let x) = r else { return nil }
            return "\(x.location.line): " + x.failure.fatalErrors.map(\.description).joined(separator: "; ")
        }
        #expect(rejected == [
            #"2: /t: "2014-08-31T00:29:15.1234567Z" is finer than the timestamp[us, UTC] column's unit; declare "column": "timestamp(ns)" to keep it (it is never truncated)"#,
            #"3: /n: "2262-04-12T00:00:00Z" is beyond the range of the timestamp[ns, UTC] column (int64 nanoseconds since 1970)"#,
            "5: /d: 12345.6 has more than 4 digits before the point, and the column is decimal128(6, 2)",
            "6: /d: 0.001 has more than 2 digits after the point, and the column is decimal128(6, 2); a larger scale keeps them (it is never rounded)",
            "7: /d: 1e-400 has more than 2 digits after the point, and the column is decimal128(6, 2); a larger scale keeps them (it is never rounded)",
            "8: /b: 1e38 has more than 38 digits before the point, and the column is decimal128(38, 0)",
            #"9: /t: "Sun Aug 31 00:29:15 +0000 2014" is not a date with a zone (ISO 8601, as stringToDate writes it: 2014-08-31T00:29:15Z), and the column is timestamp[us, UTC]; map it with stringToDate"#,
            "10: /t: expected string, found integer 5",
        ])
        var writer = ArrowRecordWriter(schema: schema, format: .file)
        var out: [UInt8] = []
        for case .mapped(let m) in results { try m.bytes.withUnsafeBytes { try writer.append($0) } }
        writer.finish(into: &out)
        let table = try ArrowReading.read(out)
        #expect(table.schema == schema)
        #expect(table.rows.map(JSONWriter.string) == [
            #"{"t":"2014-08-31T00:29:15.123456Z","n":"2014-08-31T00:29:15.123456789Z","d":1.2345e3,"b":9.9999999999999999999999999999999999999e37}"#,
            #"{"t":"0001-01-01T00:00:00Z","n":"1677-09-21T00:12:43.145224192Z","d":-1e-2,"b":-9.9999999999999999999999999999999999999e37}"#,
            #"{"t":"2014-08-31T00:29:15Z","d":1.25e2,"b":0}"#,
        ])
    }

    /// A value of the wrong JSON type for its column is rejected with what would make it fit, when the value says:
    /// a number written as a string for a decimal column, an epoch number for a timestamp column — the same
    /// message from both engines; any other mismatch has none.
    @Test func aMismatchSaysWhatWouldFitWhenTheValueTells() throws {
        let spec = try Spec(json: #"{"fields": {"p": {"column": "decimal(6,2)", "required": false}, "t": {"column": "timestamp(ms)", "required": false}}}"#)
        let checked = try ArrowSchema(mapper: spec.mapper).checking(spec.mapper)
        let input = """
            {"p": "12.50"}
            {"p": " 1,234.5 "}
            {"p": "twelve"}
            {"p": true}
            {"t": 1409444955}
            {"t": [1]}

            """
        let stream = MappingFeed(engine: StreamEngine(mapper: checked)), tree = MappingFeed(engine: TreeEngine(mapper: checked))
        let results = stream.feed(input) + stream.finish()
        #expect(results == tree.feed(input) + tree.finish())
        let rejected = results.compactMap { r -> String? in
            guard case .rejected(let x) = r else { return nil }
            return x.failure.fatalErrors.map(\.description).joined(separator: "; ")
        }
        #expect(rejected == [
            #"/p: expected decimal128(6, 2), found string "12.50"; a number written as a string: map it with "stringToNumber" first"#,
            #"/p: expected decimal128(6, 2), found string " 1,234.5 "; a number written as a string: map it with "stringToNumber" first"#,
            #"/p: expected decimal128(6, 2), found string "twelve""#,
            "/p: expected decimal128(6, 2), found boolean true",
            #"/t: expected timestamp[ms, UTC], found integer 1409444955; a number since the epoch: map it with {"numberToDate": "s"} (or "ms") first"#,
            "/t: expected timestamp[ms, UTC], found array",
        ])
    }

    /// The checks keep the stream engine's own sinks: a checked field streams as it does unchecked (the fused date
    /// conversion, the copied number) and its value is built only when the check on its text fails.
    @Test func checkedFieldsStreamAsTheyDoUnchecked() throws {
        let spec = try Spec(json: #"{"fields": {"id": {"type": "integer"}, "n": {"type": "number", "optional": true}, "t": {"via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]}, "d": {"type": "number", "column": "decimal(9,2)"}, "a": {"via": {"stringToDate": "iso8601"}, "column": "timestamp"}, "l": {"via": {"arrayOf": "integer"}}}}"#)
        let checked = try ArrowSchema(mapper: spec.mapper).checking(spec.mapper)
        let plain = try #require(CompiledPlan(spec.mapper).root as? ObjectSink)
        let plan = try #require(CompiledPlan(checked).root as? ObjectSink)
        #expect(plan.fieldSinks.count == 6)
        for (a, b) in zip(plain.fieldSinks, plan.fieldSinks) {
            #expect(b is ResultCheckSink || (b as? NotNullSink)?.inner is ResultCheckSink)
            #expect(type(of: ExplainPlanTests.unwrapped(a)) == type(of: ExplainPlanTests.unwrapped(b)))
        }
        #expect(type(of: ExplainPlanTests.unwrapped(plan.fieldSinks[2])) == DateNumberSink.self)
    }

    /// Generated typed specs and records: both engines' records, written as Arrow stream and file with small
    /// batches, read back as the NDJSON output's values.
    @Test(arguments: 0..<24) func arrowHoldsTheNDJSONOutput(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 17)
        let (spec, records, _) = TypedCase.generate(&rng)
        let compiled = try Spec(json: spec)
        let schema = try ArrowSchema(mapper: compiled.mapper)
        let checked = schema.checking(compiled.mapper)
        let input = records.joined(separator: "\n") + "\n"
        let stream = MappingFeed(engine: StreamEngine(mapper: checked))
        let tree = MappingFeed(engine: TreeEngine(mapper: checked))
        let results = stream.feed(input) + stream.finish()
        #expect(results == tree.feed(input) + tree.finish(), "spec \(spec)")
        let mapped = results.compactMap { r -> MappedRecord? in if case .mapped(let m) = r { return m } else { return nil } }
        for format in ArrowIPCFormat.allCases {
            var writer = ArrowRecordWriter(schema: schema, format: format)
            writer.batchRows = Int(rng.next() % 7) + 1
            var out: [UInt8] = []
            for m in mapped {
                try m.bytes.withUnsafeBytes { try writer.append($0) }
                if writer.isBatchFull { writer.writeBatch(into: &out) }
            }
            writer.finish(into: &out)
            let table = try ArrowReading.read(out)
            #expect(table.schema == ArrowReading.asWritten(schema))
            #expect(table.rows == (try mapped.map { ArrowReading.normalized(try $0.value(), schema) }), "spec \(spec) \(format)")
            #expect(table.batches == (mapped.isEmpty ? 0 : (mapped.count + writer.batchRows - 1) / writer.batchRows))
        }
    }

    /// A generated typed case: its spec, its schema, and the text of the records the stream engine maps (checked
    /// against the schema), in order.
    private static func mappedTypedCase(_ rng: inout SplitMix64) throws -> (String, ArrowSchema, [[UInt8]]) {
        let (spec, records, _) = TypedCase.generate(&rng)
        let compiled = try Spec(json: spec)
        let schema = try ArrowSchema(mapper: compiled.mapper)
        let feed = MappingFeed(engine: StreamEngine(mapper: schema.checking(compiled.mapper)))
        let lines = (feed.feed(records.joined(separator: "\n") + "\n") + feed.finish()).compactMap { r -> [UInt8]? in
            if case .mapped(let m) = r { return m.bytes } else { return nil }
        }
        return (spec, schema, lines)
    }

    /// The fuzz target's Arrow check (`ArrowFuzzing`) on generated inputs: typed cases with hostile records and
    /// values (huge and odd numbers, bad dates, escapes, invalid JSON), each format and batch size, the pipeline's
    /// batch sizes and reads — the engines agree, the writer takes every checked record, the output reads back to
    /// the NDJSON values, and three jobs write the bytes one job writes.
    @Test func theFuzzTargetsArrowCheckHolds() {
        var rng = SplitMix64(seed: 29)
        let pieces = ["18446744073709551616", "-0", "1e400", "1E-400", "0.1e1", "\"\\ud800\"", "\"2014-08-31T00:29:15.9999999999Z\"",
                      "[1,[2]]", "{\"a\":1}", "\"\\u0000\"", "9223372036854775808", "-9223372036854775809", "tru", "[", "\u{7F}",
                      "\"\u{E9}\"", "123456789012345678901234567890.5", "2014-08-31", "[null,1e2]", "{}"]
        for i in 0..<60 {
            var input = (0..<9).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let lines = (0..<(i % 7)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }
            input += Array(lines.joined(separator: "\n").utf8)
            let report = input.withUnsafeBytes { ArrowFuzzing.check($0) }
            #expect(report == nil, "case \(i): \(report ?? "")")
        }
    }

    /// A writer is a value: a copy taken in the middle of a batch goes on alone (its columns, held by a class for
    /// appends without copy-on-write checks per value, are copied when one of the two next changes them). Each
    /// writes what a writer that never shared would write.
    @Test(arguments: 0..<8) func aCopiedWriterGoesOnAlone(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 0x2545_F491 &+ 11)
        let (spec, schema, lines) = try Self.mappedTypedCase(&rng)
        let half = lines.count / 2
        let first = Array(lines[..<half]), rest = Array(lines[half...])
        func written(_ parts: [[UInt8]]...) throws -> [UInt8] {
            var writer = ArrowRecordWriter(schema: schema, format: .stream)
            var out: [UInt8] = []
            for part in parts { for line in part { try line.withUnsafeBytes { try writer.append($0) } } }
            writer.finish(into: &out)
            return out
        }
        var a = ArrowRecordWriter(schema: schema, format: .stream)
        for line in first { try line.withUnsafeBytes { try a.append($0) } }
        var b = a
        var outA: [UInt8] = [], outB: [UInt8] = []
        for line in rest { try line.withUnsafeBytes { try a.append($0) } }
        for line in rest.reversed() { try line.withUnsafeBytes { try b.append($0) } }
        b.finish(into: &outB)
        a.finish(into: &outA)
        #expect(outA == (try written(first, rest)), "spec \(spec)")
        #expect(outB == (try written(first, rest.reversed())), "spec \(spec)")
        // A copy taken after a batch was written also starts from the same (now empty) columns.
        var c = ArrowRecordWriter(schema: schema, format: .stream)
        var outC: [UInt8] = []
        for line in first { try line.withUnsafeBytes { try c.append($0) } }
        c.writeBatch(into: &outC)
        var d = c
        var outD = outC
        for line in rest { try line.withUnsafeBytes { try d.append($0) } }
        c.finish(into: &outC)
        d.finish(into: &outD)
        #expect(try ArrowReading.read(outC).rows.count == first.count)
        #expect(try ArrowReading.read(outD).rows.count == lines.count)
        // A writer that writes its batch while a copy still holds the same rows leaves the copy its rows.
        var f = ArrowRecordWriter(schema: schema, format: .stream)
        for line in first { try line.withUnsafeBytes { try f.append($0) } }
        let g = f
        var outF: [UInt8] = [], outG: [UInt8] = []
        f.writeBatch(into: &outF)
        f.finish(into: &outF)
        var h = g
        h.finish(into: &outG)
        #expect(outF == (try written(first)), "spec \(spec)")
        #expect(outG == (try written(first)), "spec \(spec)")
    }

    /// With `--jobs`, workers make the columns of their batches (`ArrowRowsPreparer`) and the writer copies them
    /// instead of reading the records' text: the same bytes, whatever the batch sizes, the records not mapped
    /// between (empty spans), a batch a record of which does not fit (read from its text: the same error), and
    /// rows a stop left unwritten.
    @Test(arguments: 0..<12) func columnsMadeOnWorkersWriteTheSameBytes(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 0x51_7CC1 &+ 3)
        var (spec, schema, lines) = try Self.mappedTypedCase(&rng)
        let broken = seed % 4 == 3 && !lines.isEmpty  // a record the schema does not describe, in the last batch
        if broken { lines.append(Array(#"{"no such column":1}"#.utf8)) }
        let batchRows = Int(rng.next() % 5) + 1
        func write(prepared: Bool) throws -> ([UInt8], WriteResult) {
            let path = try TestScratch.file([], suffix: ".arrow")
            let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            defer { close(fd) }
            var arrow = ArrowRecordWriter(schema: schema, format: seed % 2 == 0 ? .stream : .file)
            arrow.batchRows = batchRows
            var writer = RecordWriter(file: FileOutput(fd: fd, name: path), arrow: arrow)
            // One preparer for the run, as the pipeline holds it: its pool lends the builders of batches already
            // copied to the batches that come next.
            let preparer = prepared ? writer.mappedRecordsPreparer : nil
            var split = SplitMix64(seed: UInt64(seed))
            var i = 0
            var result = WriteResult.ok
            while i < lines.count && result == .ok {
                let n = min(Int(split.next() % 9) + 1, lines.count - i)
                if let preparer {
                    // The batch as a worker has it: the mapped records back to back, with empty spans between.
                    var bytes: [UInt8] = [], ends: [Int] = []
                    for line in lines[i..<(i + n)] {
                        if split.next() % 3 == 0 { ends.append(bytes.count) }
                        bytes += line
                        ends.append(bytes.count)
                    }
                    writer.willWrite(prepared: bytes.withUnsafeBytes { preparer.prepare($0, ends: ends) })
                }
                for line in lines[i..<(i + n)] { writer.writer.writeRaw(line); writer.writer.writeRaw(0x0A) }
                i += n
                if split.next() % 2 == 0 { result = writer.flush() }
            }
            if let preparer, let last = lines.last {
                // Rows a stop left: never written.
                writer.willWrite(prepared: last.withUnsafeBytes { preparer.prepare($0, ends: [last.count]) })
            }
            if result == .ok { result = writer.finish() }
            return (try TestScratch.read(path), result)
        }
        let (text, textResult) = try write(prepared: false)
        let (made, madeResult) = try write(prepared: true)
        #expect(made == text, "spec \(spec)")
        #expect(madeResult == textResult)
        #expect((textResult != .ok) == broken)
        if !broken { #expect(try ArrowReading.read(made).rows.count == lines.count) }
    }

    /// The preparer's pool lends a builder again once the writer has copied its rows: the builder comes back empty
    /// (a column that had nulls, escaped strings or list items in one batch has none of them in the next), a batch
    /// with a record that does not fit gives its builder straight back, at most `limit` builders are kept, and a
    /// builder whose buffers grew past `byteLimit` is freed instead of kept.
    @Test func pooledColumnBuildersComeBackEmpty() throws {
        let schema = try Self.schema(#"{"fields": {"id": {"type": "integer"}, "text": {"type": "string", "optional": true}, "tags": {"via": {"arrayOf": "string"}, "optional": true}, "u.n": {"to": "u.n", "type": "integer", "optional": true}}}"#)
        let preparer = ArrowRowsPreparer(schema: schema)
        let pool = preparer.pool
        func rows(_ records: [String]) -> ArrowRows {
            var bytes: [UInt8] = [], ends: [Int] = []
            for r in records {
                bytes += Array(r.utf8)
                ends.append(bytes.count)
            }
            return bytes.withUnsafeBytes { preparer.prepare($0, ends: ends) } as! ArrowRows
        }
        func viaText(_ records: [String]) throws -> [UInt8] {
            var w = ArrowRecordWriter(schema: schema, format: .stream)
            for r in records { try Array(r.utf8).withUnsafeBytes { try w.append($0) } }
            var out: [UInt8] = []
            w.writeBatch(into: &out)
            w.finish(into: &out)
            return out
        }
        func viaRows(_ made: ArrowRows) throws -> [UInt8] {
            var w = ArrowRecordWriter(schema: schema, format: .stream)
            try w.append(made, 0..<made.count)
            var out: [UInt8] = []
            w.writeBatch(into: &out)
            w.finish(into: &out)
            return out
        }
        let first = [#"{"id":1,"text":null,"tags":["a\"b","c"],"u":{"n":null}}"#, #"{"id":2,"text":"x\u00e9\\y","tags":null,"u":null}"#,
                     #"{"id":3}"#]
        let second = [#"{"id":4,"text":"plain","tags":[],"u":{"n":7}}"#, #"{"id":5,"text":"z","tags":["d"],"u":{"n":8}}"#]
        var made = rows(first)
        let lent = try #require(made.columns)
        #expect(try viaRows(made) == (try viaText(first)))
        #expect(pool.idleCount == 0)
        made = rows(second)  // (the first batch's rows are dropped here: their builder goes back)
        #expect(made.columns !== lent)
        #expect(pool.idleCount == 1)
        // The builder of `first` (nulls, escapes, list items) lent again for other records: it starts empty.
        let third = [#"{"id":6,"text":"t","tags":["e","f","g"],"u":{"n":9}}"#]
        made = rows(third)
        #expect(made.columns === lent, "the builder kept is lent again")
        #expect(try viaRows(made) == (try viaText(third)))
        let fourth = [#"{"id":7}"#, #"{"id":8,"text":null,"tags":null,"u":{"n":null}}"#, #"{"id":9,"text":"w"}"#]
        made = rows(fourth)
        #expect(try viaRows(made) == (try viaText(fourth)))

        // A record that does not fit: no columns, and the builder is back in the pool at once.
        let before = pool.idleCount
        let broken = rows([#"{"id":"not an integer"}"#])
        #expect(broken.columns == nil)
        #expect(pool.idleCount == before, "the builder it took is back (not lent, not lost)")

        // At most `limit` kept; a builder holding more than `byteLimit` is not.
        let small = ColumnBuilderPool(schema: schema, limit: 2, byteLimit: 1 << 16)
        let builders = (0..<4).map { _ in small.take() }
        for b in builders { small.give(b) }
        #expect(small.idleCount == 2)
        let big = small.take()
        let long = #"{"id":1,"text":""# + String(repeating: "x", count: 1 << 17) + #""}"#
        try Array(long.utf8).withUnsafeBytes { try big.appendRecord($0) }
        small.give(big)
        #expect(small.idleCount == 1)
        #expect(small.take() !== big)
    }

    /// The command line's writer hands a batch's large buffers (64 KiB or more) to the file from the columns
    /// instead of copying them into its output buffer: the same bytes as the buffered way, stream and file format,
    /// batches with and without such buffers, one batch or several per flush.
    @Test func largeBuffersWrittenFromTheColumnsAreTheSameBytes() throws {
        let schema = try Self.schema(#"{"fields": {"id": {"type": "integer"}, "text": {"type": "string", "optional": true}, "u.n": {"to": "u.n", "type": "integer"}}}"#)
        var rng = SplitMix64(seed: 5)
        let records: [[UInt8]] = (0..<3000).map { i in
            let text = i % 7 == 3 ? "null" : "\"" + String(repeating: "é\\\"x", count: Int(rng.next() % 90)) + "\""
            return Array(#"{"id":\#(i),"text":\#(text),"u":{"n":\#(Int64(bitPattern: rng.next()))}}"#.utf8)
        }
        for format in ArrowIPCFormat.allCases {
            for batchRows in [40, 700, 5000] {
                var plain = ArrowRecordWriter(schema: schema, format: format)
                plain.batchRows = batchRows
                var expected: [UInt8] = []
                for r in records {
                    try r.withUnsafeBytes { try plain.append($0) }
                    if plain.isBatchFull { plain.writeBatch(into: &expected) }
                }
                plain.finish(into: &expected)

                let path = try TestScratch.file([], suffix: ".arrow")
                let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
                var arrow = ArrowRecordWriter(schema: schema, format: format)
                arrow.batchRows = batchRows
                var writer = RecordWriter(file: FileOutput(fd: fd, name: path), arrow: arrow)
                for (i, r) in records.enumerated() {
                    writer.writer.writeRaw(r)
                    writer.writer.writeRaw(0x0A)
                    if i % 1000 == 999 { #expect(writer.flush() == .ok) }
                }
                #expect(writer.finish() == .ok)
                close(fd)
                let got = try TestScratch.read(path)
                #expect(got == expected, "\(format), batches of \(batchRows)")
                #expect(try ArrowReading.read(got).rows.count == records.count)
            }
        }
    }

    /// With the defaults a batch ends once about 1 MiB of records has gathered, or at 65 536 rows for narrow
    /// records — through `RecordWriter`, as the command line writes, flushed every 64 KiB or so.
    @Test func defaultBatchesEndAtAMebibyteOrAtTheRowBound() throws {
        let schema = try Self.schema(#"{"fields": {"s": {"type": "string"}}}"#)
        for (count, width, batches) in [(3000, 1024, [1024, 1024, 952]), (70_000, 10, [65_536, 4464])] {
            // Records of exactly `width` bytes: {"s":"xx…"}.
            let record = Array(#"{"s":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: width - 8) + Array(#""}"#.utf8)
            #expect(record.count == width)
            let path = try TestScratch.file([], suffix: ".arrows")
            let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            var writer = RecordWriter(file: FileOutput(fd: fd, name: path), arrow: ArrowRecordWriter(schema: schema, format: .stream))
            for _ in 0..<count {
                writer.writer.writeRaw(record)
                writer.writer.writeRaw(0x0A)
                if writer.writer.bytes.count > RecordWriter.flushThreshold { #expect(writer.flush() == .ok) }
            }
            #expect(writer.finish() == .ok)
            close(fd)
            let table = try ArrowReading.read(try TestScratch.read(path))
            #expect(table.rows.count == count)
            #expect(table.batchRows == batches, "records of \(width) bytes")
        }
    }

    @Test func noRecordsIsTheSchemaAlone() throws {
        let schema = try Self.schema(#"{"fields": {"id": {"type": "integer"}}}"#)
        for format in ArrowIPCFormat.allCases {
            var writer = ArrowRecordWriter(schema: schema, format: format)
            var out: [UInt8] = []
            writer.finish(into: &out)
            let table = try ArrowReading.read(out)
            #expect(table.schema == schema && table.rows.isEmpty && table.batches == 0)
        }
    }

    @Test func aValueTheSchemaDoesNotDescribeIsAnError() throws {
        let schema = ArrowSchema(fields: [ArrowField("id", .int64), ArrowField("d", .decimal128(precision: 5, scale: 2))])
        var writer = ArrowRecordWriter(schema: schema, format: .stream)
        for (record, message) in [
            (#"{"id":"x"}"#, #""x" does not fit a column of type int64"#),
            (#"{"other":1}"#, #"the key "other" is not one of the columns (struct<id: int64, d: decimal128(5, 2)>)"#),
            (#"{"id":1,"id":2}"#, #"the key "id" comes twice in one object"#),
            (#"{"d":""# + String(repeating: "x", count: 100_000) + #""}"#,
             "\"" + String(repeating: "x", count: 63) + #"… is not a number, and the column is decimal128(5, 2)"#),
        ] {
            #expect(throws: ArrowWriteError(message: message)) { try Array(record.utf8).withUnsafeBytes { try writer.append($0) } }
            writer = ArrowRecordWriter(schema: schema, format: .stream)
        }
    }

    /// A column keeps no bitmap until its first null, and writes Arrow's bitmap either way: a set bit for each
    /// valid row, the bits past the last row clear, padded with zeros — for every row count around the bytes, the
    /// first null at every row, with the rows copied from another column (`--jobs`) or appended.
    @Test func theValidityBitmapIsArrowsWithOrWithoutNulls() throws {
        for rows in 0..<20 {
            for firstNull in [nil] + Array(0..<rows) {
                let valid = (0..<rows).map { row in firstNull.map { row < $0 || (row - $0) % 3 == 1 } ?? true }
                let column = ColumnBuilder(.int64)
                try appendRows(valid, to: column)
                let copied = ColumnBuilder(.int64)
                try copied.appendRows(from: column, 0..<min(rows, 5))
                try copied.appendRows(from: column, min(rows, 5)..<rows)
                for built in [column, copied] {
                    var body: [UInt8] = []
                    built.appendBody(to: &body)
                    var bitmap = [UInt8](repeating: 0, count: (rows + 63) / 64 * 8)
                    for (row, v) in valid.enumerated() where v { bitmap[row / 8] |= 1 << UInt8(row % 8) }
                    #expect(Array(body.prefix(bitmap.count)) == bitmap, "\(rows) rows, first null \(String(describing: firstNull))")
                    var nodes: [UInt8] = [], buffers: [UInt8] = [], bytes = 0
                    built.layout(nodes: &nodes, buffers: &buffers, bodyBytes: &bytes)
                    #expect(nodes == Self.littleEndian([Int64(rows), Int64(valid.filter { !$0 }.count)]))
                }
            }
        }
    }

    private func appendRows(_ valid: [Bool], to column: ColumnBuilder) throws {
        for (row, v) in valid.enumerated() {
            let text = Array((v ? "\(row)" : "null").utf8)
            _ = try text.withUnsafeBytes { try column.append(CompactJSONScanner(bytes: $0), at: 0) }
        }
    }

    private static func littleEndian(_ values: [Int64]) -> [UInt8] {
        values.flatMap { v in (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    }

    /// An int64 column reads an integer in one pass (`int64Prefix`) where it can, and exactly as the checked way
    /// (`int64` on the value's text) says: the same value, the same end, and nil for what int64 does not hold or
    /// what is not an integer (the checked way then decides).
    @Test func integersInOnePassAreTheCheckedOnes() throws {
        let texts = ["0", "-0", "7", "-7", "42", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                     "-9223372036854775809", "18446744073709551615", "18446744073709551616", "99999999999999999999",
                     "-99999999999999999999", "1000000000000000000", "9999999999999999999", "0000000000000000000001",
                     "1.5", "1e3", "1E3", "-", "", "12a", "\"12\""]
        // Digits read eight at a time: runs of every length up to 24, cut by a byte just outside '0'...'9' (or a
        // letter, a dot) at every place, with a sign or none.
        var cut: [String] = []
        for length in 1...24 {
            let digits = (0..<length).map { String("918273645"[String.Index(utf16Offset: $0 % 9, in: "918273645")]) }.joined()
            for at in 0..<length {
                for stop in ["/", ":", "?", "a", ".", " "] {
                    let text = String(digits.prefix(at)) + stop + String(digits.dropFirst(at + 1))
                    cut += [text, "-" + text]
                }
            }
            cut += [digits, "-" + digits]
        }
        for text in texts + cut {
            for after in ["", ",", "}", "]", " ", "\n", ".5", "e1", "x"] {
                let bytes = Array((text + after).utf8)
                let fast = bytes.withUnsafeBytes { ColumnBuilder.int64Prefix($0, at: 0) }
                let end = bytes.withUnsafeBytes { CompactJSONScanner(bytes: $0).skipValue(0) }
                let checked = bytes.withUnsafeBytes { ColumnBuilder.int64(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
                if let (v, e) = fast {
                    #expect(e == end && Int64(bitPattern: v) == checked, "\(text + after)")
                } else {
                    let digits = text.drop { $0 == "-" }
                    let plain = !digits.isEmpty && digits.count <= 19 && digits.allSatisfy(\.isNumber) && ["", ",", "}", "]", " ", "\n"].contains(after)
                    #expect(!plain || checked == nil, "\(text + after): an int64 the one pass left to the checked way")
                }
            }
        }
    }

    /// A key is compared with its column's name in words (`ColumnBuilder.equal`): every length up to 40, equal,
    /// and different at each byte.
    @Test func keysAndNamesComparedInWords() {
        for n in 0...40 {
            let name = (0..<n).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            let key = [0x22] + name + [0x22]  // (between quotes, as in a record)
            name.withUnsafeBytes { a in
                key.withUnsafeBytes { k in
                    let b = UnsafeRawBufferPointer(rebasing: k[1..<(n + 1)])
                    #expect(ColumnBuilder.equal(a, b), "length \(n)")
                    #expect(!ColumnBuilder.equal(a, UnsafeRawBufferPointer(rebasing: k[0..<n])) || n == 0, "length \(n), shifted")
                }
            }
            for i in 0..<n {
                var other = name
                other[i] ^= 0x20
                name.withUnsafeBytes { a in
                    other.withUnsafeBytes { b in #expect(!ColumnBuilder.equal(a, b), "length \(n), byte \(i)") }
                }
            }
        }
    }
}

/// `Mapper.writeRecords(inFile:to:format:)`: every format the command line writes, from the library.
@Suite("Writing files from the library")
struct WriteRecordsTests {
    static let spec = #"{"fields": {"id": {"type": "integer"}, "user.name": {"to": "user.name", "type": "string", "optional": true}}}"#
    static let input = "{\"id\":1,\"user\":{\"name\":\"a,b\"}}\n{\"id\":18446744073709551616}\n{\"id\":\"x\"}\n{\"id\":2}\n"

    static func write(_ format: RecordFormat, options: MappingOptions = .init(), mapper: Mapper? = nil) throws -> (bytes: [UInt8], counts: RecordCounts, rejected: [Int]) {
        let path = try TestScratch.file(Array(input.utf8), suffix: ".ndjson")
        let outPath = path + ".out"
        let fd = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        defer { close(fd) }
        var rejected: [Int] = []
        let counts = try (mapper ?? Spec(json: spec).mapper).writeRecords(inFile: path, to: FileOutput(fd: fd, name: outPath), format: format, options: options) {
            rejected.append($0.location.line)
        }
        let bytes = try TestScratch.read(outPath)
        return (bytes, counts, rejected)
    }

    @Test func everyFormat() throws {
        let ndjson = try Self.write(.ndjson)
        #expect(String(decoding: ndjson.bytes, as: UTF8.self) == "{\"id\":1,\"user\":{\"name\":\"a,b\"}}\n{\"id\":18446744073709551616}\n{\"id\":2}\n")
        #expect(ndjson.rejected == [3] && ndjson.counts == RecordCounts(recordsIn: 4, recordsOut: 3, recordsRejected: 1))
        let csv = try Self.write(.table(.csv))
        #expect(String(decoding: csv.bytes, as: UTF8.self) == "id,user.name\n1,\"a,b\"\n18446744073709551616,\n2,\n")
        for format in ArrowIPCFormat.allCases {
            for options in [MappingOptions(), MappingOptions(jobs: 2, engine: .tree)] {
                let arrow = try Self.write(.arrow(format), options: options)
                #expect(arrow.rejected == [2, 3] && arrow.counts == RecordCounts(recordsIn: 4, recordsOut: 2, recordsRejected: 2))
                let table = try ArrowReading.read(arrow.bytes)
                #expect(table.rows == [["id": 1, "user": ["name": "a,b"]], ["id": 2]])
                #expect(arrow.bytes.starts(with: Array("ARROW1".utf8)) == (format == .file))
            }
        }
    }

    @Test func fromADescriptor() throws {
        let (r, w) = try #require({ () -> (Int32, Int32)? in
            var fds: [Int32] = [0, 0]
            return pipe(&fds) == 0 ? (fds[0], fds[1]) : nil
        }())
        _ = Array(Self.input.utf8).withUnsafeBytes { Glibc.write(w, $0.baseAddress, $0.count) }
        close(w)
        defer { close(r) }
        let outPath = try TestScratch.file([], suffix: ".arrows")
        let fd = open(outPath, O_WRONLY | O_TRUNC | O_CLOEXEC)
        defer { close(fd) }
        let counts = try Spec(json: Self.spec).mapper.writeRecords(fromFileDescriptor: r, name: "pipe", to: FileOutput(fd: fd, name: outPath),
                                                                   format: .arrow(.stream))
        #expect(counts == RecordCounts(recordsIn: 4, recordsOut: 2, recordsRejected: 2))
        #expect(try ArrowReading.read(try TestScratch.read(outPath)).rows == [["id": 1, "user": ["name": "a,b"]], ["id": 2]])
    }

    @Test func formatsThatNeedColumnsRefuseBeforeReading() throws {
        #expect(throws: ArrowSchemaError.self) { try Self.write(.arrow(.stream), mapper: try Spec(json: #"{"fields": {"id": "id"}}"#).mapper) }
        #expect(throws: TableLayoutError.self) { try Self.write(.table(.tsv), mapper: .identity) }
    }

    @Test func aWriteThatFailsIsAnOutputError() throws {
        let path = try TestScratch.file(Array(Self.input.utf8), suffix: ".ndjson")
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(throws: OutputError(output: "full", result: .failed(ENOSPC))) {
            try Spec(json: Self.spec).mapper.writeRecords(inFile: path, to: FileOutput(fd: fd, name: "full"))
        }
    }
}

extension WriteRecordsTests {
    /// A `rejected` that throws stops the run: the error comes back, and what was written is a whole Arrow file.
    @Test func aStopLeavesAWholeFile() throws {
        struct Stop: Error {}
        let path = try TestScratch.file(Array(Self.input.utf8), suffix: ".ndjson")
        let outPath = path + ".arrow"
        let fd = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(fd) }
        #expect(throws: Stop.self) {
            try Spec(json: Self.spec).mapper.writeRecords(inFile: path, to: FileOutput(fd: fd, name: outPath), format: .arrow(.file)) { _ in throw Stop() }
        }
        #expect(try ArrowReading.read(try TestScratch.read(outPath)).rows == [["id": 1, "user": ["name": "a,b"]]])
    }
}

/// The string-run kernel the Arrow and table writers cross strings with: both its code paths find the first quote,
/// backslash or control byte from every start, in runs around its 32-byte steps, as a byte-by-byte search does.
@Suite("String stop kernel")
struct StringStopKernelTests {
    @Test func bothCodePathsStopWhereAByteSearchStops() {
        var rng = SplitMix64(seed: 0x5707)
        let plain: [UInt8] = Array("abcxyz019 ,:{}[]é".utf8) + [0x7F, 0xFF, 0x80, 0x20]
        let stops: [UInt8] = [0x22, 0x5C, 0x00, 0x09, 0x0A, 0x1F]
        for length in [0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 100, 130] {
            for _ in 0..<20 {
                var bytes = (0..<length).map { _ in plain[Int(rng.next() % UInt64(plain.count))] }
                for _ in 0..<Int(rng.next() % 3) where length > 0 {
                    bytes[Int(rng.next() % UInt64(length))] = stops[Int(rng.next() % UInt64(stops.count))]
                }
                bytes.withUnsafeBufferPointer { p in
                    let base = p.baseAddress ?? UnsafePointer(bitPattern: 1)!
                    for start in 0...length {
                        let expected = bytes[start...].firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } ?? length
                        #expect(cjsonscan_string_stop(base, start, length) == expected, "\(bytes) from \(start)")
                        #expect(cjsonscan_string_stop_portable(base, start, length) == expected, "\(bytes) from \(start)")
                    }
                }
            }
        }
    }
}
