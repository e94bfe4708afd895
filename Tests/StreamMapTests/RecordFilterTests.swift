import Testing

@testable import StreamMap

/// `where` (RecordFilter): the grammar, its semantics on values, syntax errors with columns, hostile expressions,
/// and what both engines, the pipeline (one job and two) and the feed do with a record it drops.
@Suite("where: record filters")
struct RecordFilterTests {
    func keeps(_ expression: String, _ record: String, delimiter: String = ".", sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        let filter = try RecordFilter(expression, delimiter: delimiter)
        let value = try JSONParser.parse(record)
        let tree = filter.keeps(value)
        // Both engines decide the same.
        var w = JSONWriter()
        let stream = Array(record.utf8).withUnsafeBytes { bytes -> Bool in
            var engine = StreamEngine(mapper: .identity, filter: filter)
            return engine.map(record: bytes, into: &w) != .filtered
        }
        #expect(tree == stream, "tree and stream engines disagree on \(expression) over \(record)", sourceLocation: sourceLocation)
        return tree
    }

    @Test func comparisonsCompareNumbersByExactValue() throws {
        #expect(try keeps("id > 9007199254740992", #"{"id":9007199254740993}"#))
        #expect(try !keeps("id == 9007199254740992", #"{"id":9007199254740993}"#))
        #expect(try keeps("id == 1", #"{"id":1.0}"#))
        #expect(try keeps("id == 100", #"{"id":1e2}"#))
        #expect(try keeps("id == 0", #"{"id":-0}"#))
        #expect(try keeps("x < 0.1", #"{"x":0.09999999999999999999999}"#))
        #expect(try keeps("x >= -273.15", #"{"x":-273.15}"#))
        #expect(try !keeps("x > -273.15", #"{"x":-273.150}"#))
        #expect(try keeps("x < 1e400", #"{"x":12345678901234567890123}"#))
        #expect(try keeps("x > 1e-400", #"{"x":1e-401}"#) == false)
        #expect(try keeps("x < -1e5", #"{"x":-100001}"#))
        #expect(try keeps("x <= 2", #"{"x":2}"#))
        // An order holds only between values of the same kind.
        #expect(try !keeps("x < 5", #"{"x":"1"}"#))
        #expect(try !keeps("x > \"a\"", #"{"x":5}"#))
        #expect(try !keeps("x < 5", #"{"y":1}"#))
    }

    /// Checks `x OP literal` for every operator and every pair of `texts` (JSON texts of a value) against `order`
    /// of their indexes (-1, 0, 1: the value before, at or after the literal); returns how many were checked.
    static func checkEveryComparison(_ texts: [String], order: (Int, Int) -> Int,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        var checked = 0
        for (l, literal) in texts.enumerated() {
            for op in ["==", "!=", "<", "<=", ">", ">="] {
                let filter = try RecordFilter("x \(op) \(literal)")
                for (v, value) in texts.enumerated() {
                    let o = order(v, l)
                    let expected = switch op {
                    case "==": o == 0
                    case "!=": o != 0
                    case "<": o < 0
                    case "<=": o <= 0
                    case ">": o > 0
                    default: o >= 0
                    }
                    let record = try JSONParser.parse(#"{"x":\#(value)}"#)
                    #expect(filter.keeps(record) == expected, "x \(op) \(literal) on \(value)", sourceLocation: sourceLocation)
                    checked += 1
                }
            }
        }
        return checked
    }

    /// Integers of at most 18 digits are compared as machine integers (`NumberText.smallInteger`), the others by
    /// their exact keys: the two must agree, at the 18/19-digit edge, with signs, `-0`, and literals and values
    /// written with a fraction or an exponent (which take the exact path on either side).
    @Test func integersComparedAsMachineIntegersAgreeWithExactValues() throws {
        let texts = ["0", "-0", "1", "-1", "5", "5.0", "5e0", "50e-1", "4", "6", "-5", "17", "999999999999999999",
                     "-999999999999999999", "1000000000000000000", "-1000000000000000000", "999999999999999998",
                     "123456789012345678", "123456789012345679", "1234567890123456789", "1e18", "9.99999999999999999e17"]
        // The exact reference: the value's and the literal's exact keys compared.
        let checked = try Self.checkEveryComparison(texts) { ExactDecimal.compare(ExactDecimal(texts[$0]), ExactDecimal(texts[$1])) }
        #expect(checked == 22 * 6 * 22)
        #expect(NumberText.smallInteger("123456789012345678") == 123_456_789_012_345_678)
        #expect(NumberText.smallInteger("-999999999999999999") == -999_999_999_999_999_999)
        #expect(NumberText.smallInteger("1234567890123456789") == nil)
        #expect(NumberText.smallInteger("5.0") == nil && NumberText.smallInteger("5e0") == nil)
        #expect(NumberText.smallInteger("-") == nil && NumberText.smallInteger("") == nil)
    }

    /// Strings compared with a string literal on their bytes where they are agree with code point order, at
    /// prefixes, across UTF-8's lengths (U+007F, U+0080, U+FFFF, U+10000: byte order is code point order, unlike
    /// UTF-16's), with escapes and the empty string.
    @Test func stringsComparedOnTheirBytesAgreeWithCodePointOrder() throws {
        let strings = ["", "a", "ab", "abc", "b", "A", "\u{7F}", "\u{80}", "é", "e\u{301}", "\u{FFFF}", "\u{10000}", "😀",
                       "quo\"te", "back\\slash", "tab\t", "\u{0}", String(repeating: "x", count: 40)]
        let texts = strings.map { text in
            var w = JSONWriter()
            w.writeString(text)
            return String(decoding: w.bytes, as: UTF8.self)
        }
        let checked = try Self.checkEveryComparison(texts) { value, literal in
            let a = strings[value].unicodeScalars.map(\.value), b = strings[literal].unicodeScalars.map(\.value)
            return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
        }
        #expect(checked == 18 * 6 * 18)
    }

    @Test func stringsCompareByCodePoints() throws {
        #expect(try keeps(#"type == "PushEvent""#, #"{"type":"PushEvent"}"#))
        #expect(try keeps(#"s > "z""#, #"{"s":"é"}"#))
        // U+FFFF < U+1F600 by code points (UTF-16 code units would order them the other way).
        #expect(try keeps(#"s < "😀""#, #"{"s":"\uffff"}"#))
        // No normalization: é (precomposed) and e + U+0301 are different strings.
        #expect(try !keeps(#"s == "é""#, #"{"s":"e\u0301"}"#))
        #expect(try keeps(#"s < "ab""#, #"{"s":"a"}"#))
        #expect(try keeps(#"s == "a\"b""#, #"{"s":"a\"b"}"#))
    }

    @Test func absentNullAndContainers() throws {
        #expect(try keeps("x != 1", #"{}"#))
        #expect(try !keeps("x == null", #"{}"#))
        #expect(try keeps("x == null", #"{"x":null}"#))
        #expect(try keeps("exists(x)", #"{"x":null}"#))
        #expect(try !keeps("exists(x)", #"{"y":1}"#))
        #expect(try keeps(#"x == {"a":[1,2.0],"b":null}"#, #"{"x":{"b":null,"a":[1.0,2]}}"#))
        #expect(try !keeps("x == [1,2]", #"{"x":[2,1]}"#))
        #expect(try keeps("x == []", #"{"x":[]}"#))
    }

    @Test func inExistsAndIs() throws {
        #expect(try keeps(#"type in ["PushEvent", "CreateEvent"]"#, #"{"type":"CreateEvent"}"#))
        #expect(try !keeps("type in []", #"{"type":"CreateEvent"}"#))
        #expect(try keeps("n in [1, 2]", #"{"n":2.0}"#))
        #expect(try keeps("n is integer", #"{"n":12345678901234567890}"#))
        #expect(try !keeps("n is integer", #"{"n":1.0}"#))
        #expect(try keeps("n is number", #"{"n":1}"#))
        #expect(try keeps("n is null", #"{"n":null}"#))
        #expect(try !keeps("n is null", #"{}"#))
        for (type, value) in [("string", #""s""#), ("boolean", "false"), ("array", "[]"), ("object", "{}")] {
            #expect(try keeps("v is \(type)", #"{"v":\#(value)}"#))
            #expect(try !keeps("v is \(type)", #"{"v":1.5}"#))
        }
    }

    @Test func operatorsAndPrecedence() throws {
        let record = #"{"a":1,"b":2,"c":3}"#
        #expect(try keeps("a == 1 || b == 0 && c == 0", record))  // && binds tighter than ||
        #expect(try !keeps("(a == 1 || b == 0) && c == 0", record))
        #expect(try !keeps("!a == 1", record))  // ! applies to the test
        #expect(try keeps("!!a == 1", record))
        #expect(try keeps("!(a == 2) && !(b == 1 || c == 1)", record))
        #expect(try keeps("a==1&&b==2&&c==3", record))
        #expect(try keeps("((((a == 1))))", record))
    }

    @Test func pathsAsInSpecs() throws {
        let record = #"{"user":{"name":"Ann","tags":["x","y"]},"items":[{"id":7}],"first name":1,"a.b":2,"in":3,"exists":4,"we`ird":5}"#
        #expect(try keeps(#"user.name == "Ann""#, record))
        #expect(try keeps(#"user.tags.1 == "y""#, record))
        #expect(try keeps("items.0.id == 7", record))
        #expect(try !keeps("items.1.id == 7", record))
        #expect(try keeps("`first name` == 1", record))
        #expect(try keeps("`we``ird` == 5", record))
        #expect(try keeps("in == 3 && exists == 4", record))
        #expect(try keeps("a.b == 2", record, delimiter: "->"))
        #expect(try keeps(#"user->name == "Ann""#, record, delimiter: "->"))
        // "0" walks into an array, and is a key of an object.
        #expect(try keeps("0 == 1", #"{"0":1}"#))
        #expect(try keeps("0.k == 1", #"[{"k":1}]"#))
        // The last of duplicate keys wins, also on the way down.
        #expect(try keeps("a == 2", #"{"a":1,"a":2}"#))
        #expect(try !keeps("a.b == 1", #"{"a":{"b":1},"a":{"c":1}}"#))
        #expect(try !keeps("a.b == 1", #"{"a":{"b":1},"a":5}"#))
        // A record that is not an object reaches no path.
        #expect(try !keeps("exists(a)", "5"))
        #expect(try keeps("!exists(a)", #"["a"]"#))
        // The same path twice is read once.
        #expect(try RecordFilter("a == 1 || a == 2 || exists(b) || a.c is null").paths.map(\.steps) == [["a"], ["b"], ["a", "c"]])
    }

    @Test(arguments: [
        ("", 1, "the expression is empty"),
        ("   ", 1, "the expression is empty"),
        ("type ==", 8, "expected a JSON value after ==, found the end of the expression"),
        ("type = 1", 6, "expected \"==\" (a single \"=\" is not an operator)"),
        ("type == PushEvent", 9, "not a JSON value after ==: "),
        ("a == 1 &", 8, "expected \"&&\""),
        ("a == 1 b == 2", 8, "expected \"&&\", \"||\" or \")\" after a test, found \"b == 2\""),
        ("(a == 1", 1, "this \"(\" is never closed"),
        ("a == 1)", 7, "\")\" closes no \"(\""),
        ("a == 1 && ", 11, "expected a test, \"!\" or \"(\" here, found the end of the expression"),
        ("== 1", 1, "expected a path here, found \"== 1\""),
        ("a in 1", 6, "expected a JSON array after \"in\", found \"1\""),
        ("a is text", 6, "unknown type \"text\" (one of null, boolean, integer, number, string, array, object)"),
        ("a < true", 3, "< compares numbers or strings, not boolean true"),
        ("a < [1]", 3, "< compares numbers or strings, not an array"),
        ("a", 2, "expected ==, !=, <, <=, >, >=, \"in\" or \"is\" after the path, found the end of the expression"),
        ("exists(a", 9, "expected \")\" after exists(PATH, found the end of the expression"),
        ("exists()", 8, "expected a path after \"exists(\", found \")\""),
        ("`a == 1", 1, "this backquoted path is never closed"),
        ("é == \"x", 6, "not a JSON value after ==: "),
        ("a == [[[[1]]]] && b == {\"x\":", 24, "not a JSON value after ==: "),
    ] as [(String, Int, String)])
    func syntaxErrorsSayWhereAndWhat(_ expression: String, _ column: Int, _ message: String) {
        do {
            _ = try RecordFilter(expression)
            Issue.record("\(expression) parsed")
        } catch {
            #expect(error.column == column, "\(expression)")
            #expect(error.message.hasPrefix(message), "\(expression): \(error.message)")
            let lines = error.caretLines()
            #expect(lines.count == 2)
            #expect(lines[1] == String(repeating: " ", count: column - 1) + "^", "\(expression)")
        }
    }

    @Test func caretLinesShowAWindowOfALongExpression() throws {
        let expression = String(repeating: "a == 1 && ", count: 1000) + "b = 2"
        let error = try #require(throws: RecordFilterSyntaxError.self) { try RecordFilter(expression) }
        #expect(error.column == 10_003)
        let lines = error.caretLines(width: 40)
        #expect(lines[0].unicodeScalars.count <= 42)
        #expect(lines[0].hasPrefix("…"))
        let caret = try #require(lines[1].firstIndex(of: "^"))
        let shownAtCaret = lines[0].unicodeScalars[lines[0].unicodeScalars.index(lines[0].unicodeScalars.startIndex, offsetBy: lines[1].distance(from: lines[1].startIndex, to: caret))]
        #expect(shownAtCaret == "=")
    }

    /// Hostile expressions: nesting a million deep neither overflows the stack (parsing, evaluating, freeing) nor
    /// takes more than linear time (scripts/scaling.py measures the growth).
    @Test func deepNestingNeedsNoStack() throws {
        let n = 1_000_000
        let parens = String(repeating: "(", count: n) + "a == 1" + String(repeating: ")", count: n)
        #expect(try keeps(parens, #"{"a":1}"#))
        let nots = String(repeating: "!", count: n) + "a == 1"
        #expect(try keeps(nots, #"{"a":1}"#))  // an even number
        let chain = Array(repeating: "a == 2", count: 100_000).joined(separator: " || ") + " || a == 1"
        #expect(try keeps(chain, #"{"a":1}"#))
        // Truth values held deeper than the 64 kept as bits: `a == 1 && (a == 2 || (a == 1 && (…)))`, whose value
        // is its innermost test's only when every held left operand is.
        for (innermost, kept) in [("a == 1", true), ("a == 2", false)] {
            var nested = innermost
            for depth in 1...200 { nested = depth % 2 == 1 ? "a == 1 && (\(nested))" : "a == 2 || (\(nested))" }
            #expect(try keeps(nested, #"{"a":1}"#) == kept)
            #expect(try keeps("a == 2 && (\(nested))", #"{"a":1}"#) == false)
            #expect(try keeps("a == 1 || (\(nested))", #"{"a":1}"#) == true)
        }
        let unclosed = String(repeating: "(!", count: n) + "a == 1"
        #expect(throws: RecordFilterSyntaxError.self) { try RecordFilter(unclosed) }
        // A literal nested deeper than 256 is refused (it would be freed by recursion).
        #expect(throws: RecordFilterSyntaxError.self) {
            try RecordFilter("a == " + String(repeating: "[", count: 300) + String(repeating: "]", count: 300))
        }
    }

    // MARK: Engines, pipeline, feed, spec

    static let spec = #"{"fields":{"id":{"to":"id","type":"integer"},"type":"kind"},"where":"type in [\"PushEvent\", \"ForkEvent\"]"}"#

    @Test func enginesDropWithoutMappingAndRejectInvalidJSONEither_Way() throws {
        let spec = try Spec(json: Self.spec)
        let filter = try #require(spec.filter)
        let records = [
            #"{"id":1,"type":"PushEvent"}"#,  // kept, mapped
            #"{"id":"x","type":"CreateEvent"}"#,  // dropped: its mapping error is not reported
            #"{"id":"x","type":"ForkEvent"}"#,  // kept, rejected
            #"{"type":"PushEvent","id":1"#,  // invalid JSON, would be kept
            #"{"type":"CreateEvent"} x"#,  // invalid JSON, would be dropped
        ]
        let expected: [String] = ["mapped", "filtered", "rejected", "syntax", "syntax"]
        for engineKind in ["tree", "stream", "stream in pieces"] {
            let tree = TreeEngine(mapper: spec.mapper, filter: filter)
            var stream = StreamEngine(mapper: spec.mapper, filter: filter)
            for (record, want) in zip(records, expected) {
                var w = JSONWriter()
                let outcome: RecordOutcome
                switch engineKind {
                case "tree": outcome = Array(record.utf8).withUnsafeBytes { tree.map(record: $0, into: &w) }
                case "stream": outcome = Array(record.utf8).withUnsafeBytes { stream.map(record: $0, into: &w) }
                default:
                    stream.beginRecord()
                    for byte in record.utf8 { [byte].withUnsafeBytes { stream.continueRecord($0) } }
                    outcome = stream.endRecord(into: &w)
                }
                let got: String
                switch outcome {
                case .mapped: got = "mapped"
                case .filtered: got = "filtered"
                case .rejected(.syntax): got = "syntax"
                case .rejected: got = "rejected"
                }
                #expect(got == want, "\(engineKind): \(record)")
                #expect(w.bytes.isEmpty == (got != "mapped"), "\(engineKind): \(record)")
            }
        }
    }

    /// The filter reads the projection of a whole record (only the members it reads, after one pass that validates
    /// every byte), as the mapping does, and when both read some members of each record, one projection holds what
    /// either reads (a member one reads whole is kept whole; a string is lifted out only when both take it so):
    /// the outcomes, outputs and error messages are the tree engine's, a record the projector does not vouch for is
    /// parsed whole, and the strings are read from the record.
    @Test(arguments: [
        // (fields, records kept by the filter, records projected, one projection for both); the filter reads `user`
        // whole, so an escaped key in it does not stop a projection
        (#"{"id":"id","user.name":"name"}"#, 4, 6, true),
        (#"{"user":"u","type":{"to":"t","type":"integer"}}"#, 4, 6, true),  // the mapping reads `user` whole
        (#"{"type":"t","id":{"to":"i","type":"string"}}"#, 4, 6, true),  // both read the string `type`
        (#"{"user":{"to":"u","via":{"object":{"fields":{"name":"n"}}}}}"#, 4, 6, true),  // the filter reads `user` whole
        (#"{"fields":{"type":"t"},"unmapped":"keep"}"#, 4, 6, false),  // the mapping reads everything: the filter alone
    ] as [(String, Int, Int, Bool)])
    func theFilterReadsTheRecordsProjection(fields: String, kept: Int, projected: Int, shared: Bool) throws {
        let fields = fields.hasPrefix(#"{"fields""#) ? String(fields.dropFirst().dropLast()) : #""fields":\#(fields)"#
        let spec = try Spec(json: #"{\#(fields),"where":"type == \"Push\\\"Event\" && (user.age >= 18 || user == \"x\")"}"#)
        let filter = try #require(spec.filter)
        let big = String(repeating: #"{"k":[1,2.5e3,"s\u00e9"],"n":null},"#, count: 50)
        let records = [
            #"{"id":1,"type":"Push\"Event","user":{"age":18,"name":"a","x":[\#(big)0]},"payload":[\#(big)1]}"#,  // kept
            #"{"id":2,"type":"Push\u0022Event","user":{"age":17.9,"name":"b"},"payload":[\#(big)1]}"#,  // dropped
            #"{"payload":[\#(big)1],"user":{"age":1e2},"type":"Push\"Event","id":3}"#,  // kept
            #"{"id":4,"type":"Push\"Event","user":{"age":18},"payload":[\#(big)1}"#,  // syntax error after the fields
            #"{"id":5,"type":"Other","payload":"\x"}"#,  // a bad escape in a member neither reads
            #"{"id":6,"type":"Push\"Event","user":{"a\u0067e":30}}"#,  // an escaped key: kept
            #"[{"type":"Push\"Event"}]"#,  // not an object
            #"{"type":"Push\"Event","user":{"age":20,"age":"x"},"id":7}"#,  // duplicate keys: the last one counts
            #"{"type":"Push\"Event","user":"x","id":8}"#,  // kept
        ]
        var stream = StreamEngine(mapper: spec.mapper, filter: filter)
        let tree = TreeEngine(mapper: spec.mapper, filter: filter)
        var keptByFilter = 0
        for record in records {
            var a = JSONWriter(), b = JSONWriter()
            let streamed = Array(record.utf8).withUnsafeBytes { stream.map(record: $0, into: &a) }
            let built = Array(record.utf8).withUnsafeBytes { tree.map(record: $0, into: &b) }
            #expect("\(streamed)" == "\(built)", "\(record.prefix(80))")
            #expect(a.bytes == b.bytes, "\(record.prefix(80))")
            switch streamed {
            case .filtered, .rejected(.syntax): break
            default: keptByFilter += 1
            }
        }
        #expect(keptByFilter == kept)
        #expect(stream.filterProjections == projected)
        #expect(stream.filterSharesProjection == shared)
    }

    final class Counter: RecordPipelineOutput {
        var mappedRecords = JSONWriter()
        var lines: [String] = []
        func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
            lines.append("\(location.line) mapped \(String(decoding: mappedRecords.bytes.dropLast(), as: UTF8.self))")
            mappedRecords.removeAll()
            return true
        }
        func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer, totalBytes: Int) -> Bool {
            lines.append("\(location.line) rejected")
            return true
        }
        func filtered(input: String, location: RecordLocation) -> Bool {
            lines.append("\(location.line) filtered")
            return true
        }
    }

    @Test func thePipelineHandsEveryRecordOnOnceWithOneJobOrTwo() throws {
        let spec = try Spec(json: Self.spec)
        var text = ""
        for i in 0..<20_000 {
            switch i % 5 {
            case 0: text += #"{"id":\#(i),"type":"PushEvent"}"# + "\n"
            case 1: text += #"{"id":"bad","type":"IssuesEvent"}"# + "\n"
            case 2: text += #"{"id":"bad","type":"ForkEvent"}"# + "\n"
            case 3: text += "{\"type\":\"PushEvent\"\n"
            default: text += #"{"type":"WatchEvent"}"# + "\n"
            }
        }
        let bytes = Array(text.utf8)
        var transcripts: [[String]] = []
        for jobs in [1, 2] {
            for engine in ["stream", "tree"] {
                let out = Counter()
                let mapper = spec.mapper, filter = spec.filter
                let make: @Sendable () -> any RecordEngine
                if engine == "stream" {
                    make = { StreamEngine(mapper: mapper, filter: filter) }
                } else {
                    make = { TreeEngine(mapper: mapper, filter: filter) }
                }
                var pipeline = RecordPipeline(engine: make(), settings: RecordPipelineSettings(framing: .ndjson, jobs: jobs),
                                              output: out, makeEngine: make)
                pipeline.beginInput("x")
                bytes.withUnsafeBytes { all in
                    var i = 0
                    while i < all.count {
                        let n = min(7_919, all.count - i)
                        pipeline.feed(UnsafeRawBufferPointer(rebasing: all[i..<i + n]))
                        i += n
                    }
                }
                pipeline.endInput()
                pipeline.finish()
                transcripts.append(out.lines)
            }
        }
        #expect(transcripts[0].count == 20_000)
        #expect(transcripts[0].filter { $0.hasSuffix("filtered") }.count == 8_000)
        #expect(transcripts[0].filter { $0.hasSuffix("rejected") }.count == 8_000)
        #expect(transcripts[0][0] == #"1 mapped {"id":0,"kind":"PushEvent"}"#)
        #expect(transcripts[0][1] == "2 filtered")
        for t in transcripts.dropFirst() { #expect(t == transcripts[0]) }
    }

    @Test func theFeedCountsFilteredRecordsAndGivesNoResultForThem() throws {
        let spec = try Spec(json: Self.spec)
        let feed = MappingFeed(mapper: spec.mapper, filter: spec.filter)
        var results = feed.feed(Array("{\"id\":1,\"type\":\"PushEvent\"}\n{\"id\":2,\"type\":\"Wat".utf8))
        results += feed.feed(Array("chEvent\"}\n{\"id\":\"x\",\"type\":\"ForkEvent\"}\n{\"id\":3,\"type\":\"Push".utf8))
        results += feed.finish()
        // Line 1 mapped, line 3 rejected (its id), line 4 rejected (cut off at the end); line 2 gives no result.
        #expect(results.map(\.location.line) == [1, 3, 4])
        #expect(feed.counts == RecordCounts(recordsIn: 4, recordsOut: 1, recordsRejected: 2, recordsFiltered: 1))
    }

    @Test func specWhereIsValidatedWithTheOtherKeys() throws {
        let withDelimiter = try Spec(json: #"{"fields":{"x":"x"},"delimiter":"->","where":"a->b == 1"}"#)
        #expect(withDelimiter.filter?.paths.map(\.steps) == [["a", "b"]])
        let whole = try Spec(json: #"{"mapper":{"arrayOf":"integer"},"where":"0 is integer"}"#)
        #expect(whole.filter?.paths.map(\.steps) == [["0"]])
        #expect(throws: SpecError(file: "spec", issues: [SpecIssue(pointer: "/where", message: "column 3: expected \"==\" (a single \"=\" is not an operator)")])) {
            try Spec(json: #"{"fields":{"x":"x"},"where":"a = 1"}"#)
        }
        #expect(throws: SpecError(file: "spec", issues: [
            SpecIssue(pointer: "/fields/x/via", message: "unknown mapper \"integr\" (did you mean \"integer\"?)"),
            SpecIssue(pointer: "/where", message: "expected a string (an expression such as \"type == \\\"PushEvent\\\"\"), found integer 1"),
        ])) {
            try Spec(json: #"{"fields":{"x":{"to":"x","via":"integr"}},"where":1}"#)
        }
    }
}

/// `where` with the functions and arithmetic of computed fields: a test may call a function, compute, or compare two
/// paths; its paths join the filter's (so both engines read them from the record's projection).
@Suite("where: computed tests")
struct RecordFilterComputedTests {
    let base = RecordFilterTests()

    @Test(arguments: [
        (#"contains(t, "Swift")"#, #"{"t":"Swift is fun"}"#, true),
        (#"contains(t, "Swift")"#, #"{"t":"Rust"}"#, false),
        (#"startsWith(lower(t), "sw") && endsWith(t, "fun")"#, #"{"t":"Swift is fun"}"#, true),
        ("length(tags) > 2", #"{"tags":[1,2,3]}"#, true),
        ("length(tags) > 2", #"{"tags":"ab"}"#, false),
        ("length(tags) > 2", #"{"tags":5}"#, false),  // an error in computing: the test does not hold
        ("a == `b`", #"{"a":1,"b":1.0}"#, true),
        ("a == `b`", #"{"a":1}"#, false),
        ("a != `b`", #"{}"#, true),
        ("a == lower(b)", #"{"a":"x","b":"X"}"#, true),
        ("price * qty > 100", #"{"price":"9.99","qty":20}"#, false),
        ("price * qty > 100", #"{"price":9.99,"qty":20}"#, true),
        ("a - 1 == 0 || b == `a`", #"{"a":1}"#, true),
        ("`n` == `nope`", #"{"n":1,"nope":1}"#, true),
        (#"a == (-b)"#, #"{"a":-2,"b":2}"#, true),
        (#"type == "PushEvent" && length(payload.commits) >= 1"#, #"{"type":"PushEvent","payload":{"commits":[{}]}}"#, true),
        (#"!(contains(t, "x")) && exists(t)"#, #"{"t":"abc"}"#, true),
        (#"matches(t, "^[A-Z][a-z]+ is")"#, #"{"t":"Swift is fun"}"#, true),
        (#"matches(t, "^[A-Z][a-z]+ is")"#, #"{"t":"swift is fun"}"#, false),
    ] as [(String, String, Bool)])
    func computedTests(_ expression: String, _ record: String, _ expected: Bool) throws {
        #expect(try base.keeps(expression, record) == expected, "\(expression) over \(record)")
    }

    @Test func theExpressionsPathsJoinTheFilters() throws {
        let filter = try RecordFilter(#"type == "x" && contains(title, type) || length(user.name) > 2"#)
        #expect(filter.paths.map(\.description) == ["type", "title", "user.name"])
    }

    @Test func syntaxErrorsOfComputedTests() {
        // A bare word on the right is not read as another field: a string written without quotes says so.
        #expect(throws: RecordFilterSyntaxError.self) { try RecordFilter("type == PushEvent") }
        do {
            _ = try RecordFilter("type == PushEvent")
        } catch {
            #expect(error.message.hasSuffix("(a string is written in quotes, another field in backquotes: `name`)"))
        }
        #expect(throws: RecordFilterSyntaxError(column: 11, message: #"comparisons do not chain: write "a < b && b < c""#, text: "a * 1 < b < c")) {
            try RecordFilter("a * 1 < b < c")
        }
        #expect(throws: RecordFilterSyntaxError(column: 1, message: "lower() takes 1 argument, found 2", text: #"lower(a, b) == "x""#)) {
            try RecordFilter(#"lower(a, b) == "x""#)
        }
    }
}
