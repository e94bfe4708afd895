import StreamMapTestSupport
import Testing
@testable import StreamMap

/// Computed fields (`"expr"`, `--set`): exact arithmetic checked against an independent reference, the string
/// functions, absent and null and the field policies, syntax errors, both engines (whole and in pieces) byte for
/// byte on generated expressions and records, and linear time.
@Suite("Computed fields")
struct ComputedFieldTests {
    /// Maps `record` with `spec` in the tree engine, the stream engine and the stream engine fed byte by byte; all
    /// three must agree. The output text, or `rejected: ` and the errors.
    static func run(_ spec: String, _ record: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let spec = try Spec(json: spec)
        let tree = TreeEngine(mapper: spec.mapper)
        var stream = StreamEngine(mapper: spec.mapper)
        var results: [String] = []
        for kind in 0..<3 {
            var w = JSONWriter()
            let outcome: RecordOutcome
            switch kind {
            case 0: outcome = Array(record.utf8).withUnsafeBytes { tree.map(record: $0, into: &w) }
            case 1: outcome = Array(record.utf8).withUnsafeBytes { stream.map(record: $0, into: &w) }
            default:
                stream.beginRecord()
                for byte in record.utf8 { [byte].withUnsafeBytes { stream.continueRecord($0) } }
                outcome = stream.endRecord(into: &w)
            }
            switch outcome {
            case .mapped(let warnings, _):
                results.append(String(decoding: w.bytes, as: UTF8.self) + warnings.map { " | \($0)" }.joined())
            case .rejected(let failure):
                var errors: [String] = []
                failure.forEachError { errors.append($0.description) }
                results.append("rejected: " + errors.joined(separator: "; "))
            case .filtered:
                results.append("filtered")
            }
        }
        #expect(results[1] == results[0], "stream vs tree for \(record)", sourceLocation: sourceLocation)
        #expect(results[2] == results[0], "stream in pieces vs tree for \(record)", sourceLocation: sourceLocation)
        return results[0]
    }

    /// The value of one expression with no paths (or over `record`), as JSON text.
    static func value(_ expression: String, _ record: String = "{}", sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let spec = JSONWriter.string(.object(JSONObject([("fields", .object(JSONObject([("v", .object(JSONObject([("expr", .string(expression))])))])))])))
        let out = try run(spec, record, sourceLocation: sourceLocation)
        guard out.hasPrefix("{\"v\":"), out.hasSuffix("}") else { return out }
        return String(out.dropFirst(5).dropLast())
    }

    // MARK: Arithmetic

    @Test(arguments: [
        ("1.1 + 2.2", "3.3"), ("0.1 * 3", "0.3"), ("2 - 5", "-3"), ("-(2 - 5)", "3"), ("1 + 2 * 3", "7"), ("(1 + 2) * 3", "9"),
        ("10 / 4", "2.5"), ("6 / 3", "2"), ("-7 / 2", "-3.5"), ("1 / 1024", "0.0009765625"),
        ("1 / 3", "0.3333333333333333333333333333333333"), ("2 / 3", "0.6666666666666666666666666666666667"),
        ("123456789012345678901234567890 * 987654321098765432109876543210",
         "121932631137021795226185032733622923332237463801111263526900"),
        ("99999999999999999999999999999999999999 + 1", "100000000000000000000000000000000000000"),
        ("123456789012345678901234567890123456789 / 3", "41152263004115226300411522630041152263"),
        ("1e400 * 2", "2e400"), ("1.50 * 2", "3"), ("8 - 2 - 1", "5"), ("16 / 4 / 2", "2"),
    ])
    func arithmeticIsExact(_ expression: String, _ expected: String) throws {
        #expect(try Self.value(expression) == expected, "\(expression)")
    }

    @Test func divisionByZeroAndHugeOperandsAreRecordErrors() throws {
        #expect(try Self.value("a / b", #"{"a":1,"b":0.0}"#) == "rejected: /b: division by zero")
        let long = String(repeating: "7", count: ValueExpression.mostDigitsMultiplied + 1)
        #expect(try Self.value("a * 2", #"{"a":\#(long)}"#) == "rejected: /a: \"*\" takes numbers of at most 1000 significant digits")
        // + and - are linear: any size.
        #expect(try Self.value("a + 1", #"{"a":\#(long)}"#) == String(repeating: "7", count: long.count - 1) + "8")
        #expect(try Self.value("a * 1", #"{"a":1e41}"#) == "1e41")  // integers with many trailing zeros stay short
    }

    /// A reference independent of the implementation: decimals as digit arrays with a scale, schoolbook sums and
    /// products in base 10. Random exact decimals and big integers; `/` is checked by its defining property.
    /// The functions as mappers (`"via": "lower"`, `{"replace": [FROM, TO]}`…): the value mapped is the first
    /// argument; absent and null pass to the field's policies; another type is an error at the field's path.
    @Test func functionsAsMappers() throws {
        let spec = #"""
            {"fields": [
              {"from": "name", "to": "slug", "via": ["trim", "lower", {"replace": [" ", "-"]}, {"substring": [0, 8]}], "missing": "omit", "null": "null"},
              {"from": "name", "to": "n", "via": "length", "missing": "omit", "null": "omit"},
              {"from": "tags", "to": "tags", "via": {"join": ","}, "missing": "omit"},
              {"from": "code", "to": "code", "via": [{"replaceMatches": ["\\D", ""]}, "upper"], "missing": "omit"},
              {"from": "code", "to": "digits", "via": {"matches": "^\\d+$"}, "missing": "omit", "invalid": "omit"},
              {"from": "name", "to": "ada", "via": {"startsWith": " Ada"}, "missing": "omit", "null": "omit"}
            ]}
            """#
        #expect(try Self.run(spec, #"{"name":" Ada Lovelace ","tags":["x",1,true],"code":"a-12"}"#)
            == #"{"slug":"ada-love","n":14,"tags":"x,1,true","code":"12","digits":false,"ada":true}"#)
        #expect(try Self.run(spec, #"{"name":null,"code":"77"}"#) == #"{"slug":null,"code":"77","digits":true}"#)
        #expect(try Self.run(spec, #"{"name":5}"#) == #"rejected: /name: expected string, found integer 5; /name: expected string, array or object, found integer 5; /name: expected string, found integer 5"#)
        func issues(_ text: String) -> [String] {
            do throws(SpecError) {
                _ = try Spec(json: text)
                return []
            } catch {
                return error.issues.map { "\($0.pointer): \($0.message)" }
            }
        }
        #expect(issues(#"{"mapper":{"replace":"-"}}"#) == [#"/mapper/replace: expected an array of 2 strings or numbers (replace's arguments after the value), found string "-""#])
        #expect(issues(#"{"mapper":{"matches":"(?=x)"}}"#).first?.hasPrefix("/mapper/matches: matches: column") == true)
        #expect(issues(#"{"mapper":"uper"}"#) == [#"/mapper: unknown mapper "uper" (did you mean "upper"?)"#])
        #expect(throws: NotReversibleError.self) { try Spec(json: #"{"fields":{"a":{"via":"lower"}}}"#).reversed() }
    }

    /// `+`, `-` and `*` of integers of up to 18 digits take machine arithmetic where the result fits an Int: the
    /// same text as the exact decimal path (zero as "0", "-0" in too), and the decimal path past Int's range.
    @Test func integerFastPathWritesWhatTheDecimalPathWrites() {
        var rng = SplitMix64(seed: 0x1A7)
        func integer() -> String {
            switch rng.below(12) {
            case 0: return "0"
            case 1: return "-0"
            case 2: return rng.below(2) == 0 ? "999999999999999999" : "-999999999999999999"
            default:
                let n = 1 + rng.below(18)
                return (rng.below(2) == 0 ? "-" : "") + String(1 + rng.below(9)) + (1..<n).map { _ in String(rng.below(10)) }.joined()
            }
        }
        var fast = 0
        for _ in 0..<3000 {
            let x = integer(), y = integer()
            for op in [ValueExpression.Arithmetic.add, .subtract, .multiply] {
                let got = ValueExpression.arithmetic(op, .number(JSONNumber(unchecked: x)), .number(JSONNumber(unchecked: y)))
                let exact: String? = switch op {
                case .add: DecimalArithmetic.add(x, y)
                case .subtract: DecimalArithmetic.add(x, DecimalArithmetic.negate(y) ?? y)
                default: DecimalArithmetic.multiply(x, y)
                }
                guard case .success(.number(let n)) = got, let exact else {
                    Issue.record("\(x) \(op.rawValue) \(y): \(got)")
                    continue
                }
                #expect(n.text == DecimalArithmetic.plainInteger(exact), "\(x) \(op.rawValue) \(y)")
                if let i = Int(x), let j = Int(y), !(op == .multiply ? i.multipliedReportingOverflow(by: j).overflow : false) { fast += 1 }
            }
        }
        #expect(fast > 5000)
    }

    @Test func arithmeticAgreesWithAReferenceOnRandomNumbers() throws {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<300 {
            let a = DecimalReference.random(&rng), b = DecimalReference.random(&rng)
            let record = #"{"a":\#(a.text),"b":\#(b.text)}"#
            let spec = #"{"fields":{"s":{"expr":"a + b"},"d":{"expr":"a - b"},"p":{"expr":"a * b"},"q":{"expr":"a / b","invalid":"omit"}}}"#
            let out = try Self.run(spec, record)
            guard case .object(let o)? = try? JSONParser.parse(Array(out.split(separator: "|")[0].utf8)) else {
                Issue.record("not an object: \(out) for \(record)")
                continue
            }
            func number(_ key: String) -> DecimalReference? { o[key].flatMap { if case .number(let n) = $0 { DecimalReference(n.text) } else { nil } } }
            #expect(number("s") == a + b, "\(a.text) + \(b.text) = \(String(describing: o["s"]))")
            #expect(number("d") == a + b.negated, "\(a.text) - \(b.text) = \(String(describing: o["d"]))")
            #expect(number("p") == a * b, "\(a.text) * \(b.text) = \(String(describing: o["p"]))")
            if b.isZero {
                #expect(o["q"] == nil)
                continue
            }
            // q is a's quotient by b to p = max(34, digits of a) significant digits: |a - q·b| ≤ |b|·ulp(q)/2,
            // and q has at most p significant digits.
            let q = try #require(number("q"), "\(a.text) / \(b.text)")
            let p = max(ValueExpression.divisionDigits, a.significantDigits)
            #expect(q.significantDigits <= p, "\(a.text) / \(b.text) = \(q.text)")
            let error = (a + (q * b).negated).magnitude
            // Half a unit in the p-th significant digit of q: 5 × 10^(E - p), E the exponent of q's first digit.
            let e = (q.digits.count - 1) - q.scale - p
            let half = e >= 0 ? DecimalReference(digits: [5] + Array(repeating: 0, count: e), scale: 0, negative: false)
                : DecimalReference(digits: [5], scale: -e, negative: false)
            let halfUlp = half * b.magnitude
            #expect(!error.isGreater(than: halfUlp), "\(a.text) / \(b.text) = \(q.text)")
        }
    }

    // MARK: Strings

    @Test(arguments: [
        (#"lower("ÀB Ç")"#, #""àb ç""#), (#"upper("straße")"#, #""STRASSE""#), (#"trim("  a b \t")"#, #""a b""#),
        (#"trimStart("  a ")"#, #""a ""#), (#"trimEnd("  a ")"#, #""  a""#), (#"length("héllo")"#, "5"),
        (#"length("e\u0301")"#, "2"), (#"contains("abcabd", "abd")"#, "true"), (#"startsWith("abc", "ab")"#, "true"),
        (#"endsWith("abc", "bc")"#, "true"), (#"endsWith("abc", "abcd")"#, "false"),
        (#"replace("a.b.c", ".", "::")"#, #""a::b::c""#), (#"substring("héllo", 1, 3)"#, #""éll""#),
        (#"substring("abc", 5)"#, #""""#), (#"split("a,b,,c", ",")"#, #"["a","b","","c"]"#),
        (#"join(split("a,b", ","), "-")"#, #""a-b""#), (#"string(12.50) + "!""#, #""12.50!""#),
        (#"number("1e2") * 2"#, "200"), (#""a" + "b" + "c""#, #""abc""#), (#"length(split("x", "y"))"#, "1"),
    ])
    func stringFunctions(_ expression: String, _ expected: String) throws {
        #expect(try Self.value(expression) == expected, "\(expression)")
    }

    // MARK: Regular expressions

    @Test(arguments: [
        (#"matches("hello world", "^h.*d$")"#, "true"), (#"matches("abc", "^b")"#, "false"), (#"matches("abc", "b")"#, "true"),
        (#"matches("AbC", "^[a-z]+$")"#, "false"), (#"matches("x_9", "^\\w+$")"#, "true"), (#"matches("a b", "\\S\\s\\S")"#, "true"),
        (#"matches("a\nb", "a.b")"#, "false"), (#"matches("aaa", "^a{2,3}$")"#, "true"), (#"matches("aaaa", "^a{2,3}$")"#, "false"),
        (#"matches("a|b", "a\\|b")"#, "true"), (#"matches("", "")"#, "true"), (#"matches("é", "^.$")"#, "true"),
        (##"replaceMatches("a1b22c333", "[0-9]+", "#")"##, ##""a#b#c#""##), (#"replaceMatches("abc", "x*", "-")"#, #""-a-b-c-""#),
        (#"replaceMatches("aaa", "a*?", "-")"#, #""-a-a-a-""#), (#"replaceMatches("foo bar", "o|oo", "0")"#, #""f00 bar""#),
        (#"replaceMatches("héllo wörld", "[^a-z ]", "_")"#, #""h_llo w_rld""#), (#"replaceMatches("a.b", "\\.", "")"#, #""ab""#),
        (#"replaceMatches("x-y-z", "(?:-|_)y", "")"#, #""x-z""#), (#"replaceMatches("aab", "a+?", "1")"#, #""11b""#),
    ])
    func regularExpressions(_ expression: String, _ expected: String) throws {
        #expect(try Self.value(expression) == expected, "\(expression)")
    }

    @Test(arguments: [
        (#"matches(s, "(a")"#, #"in the pattern "(a", at 1: this "(" is never closed"#),
        (#"matches(s, "\\1")"#, #"in the pattern "\\1", at 1: back-references (\1) are not supported: they cannot match in linear time"#),
        (#"matches(s, "(?=a)")"#, #"in the pattern "(?=a)", at 1: "(?" groups (look-around, flags, names) are not supported: only (?:…)"#),
        (#"matches(s, "a**")"#, #"in the pattern "a**", at 3: a quantifier cannot follow another (write a group: (a*)*)"#),
        (#"matches(s, "a{2000}")"#, #"in the pattern "a{2000}", at 2: a count is at most 1000"#),
        (#"matches(s, "((a{100}){100}){100}")"#, #"in the pattern "((a{100}){100}){100}", at 1: the pattern is too large (over 20000 steps once its counts are spelled out)"#),
        (#"matches(s, t)"#, #"matches() takes its pattern as a string literal ("^[a-z]+$"), found "t)""#),
        // Counts of empty groups, nested: nothing to emit, but 1000^6 steps to spell out.
        (#"matches(s, "((((((){1000}){1000}){1000}){1000}){1000}){1000}")"#,
         #"in the pattern "((((((){1000}){1000}){1000}){1000}){1000}){1000}", at 1: the pattern is too large (over 20000 steps once its counts are spelled out)"#),
    ])
    func patternsOutsideTheSubsetAreSyntaxErrors(_ expression: String, _ message: String) {
        do {
            _ = try ValueExpression(expression)
            Issue.record("\(expression) parsed")
        } catch {
            #expect(error.message == message, "\(expression)")
        }
    }

    /// Patterns that take exponential time in a backtracking engine take linear time here.
    @Test func regularExpressionsAreLinearOnPathologicalPatterns() throws {
        let spec = try Spec(json: #"{"fields":{"a":{"expr":"matches(s, \"^(a*)*b$\")"},"b":{"expr":"matches(s, \"^(a|a)*c\")"},"c":{"expr":"replaceMatches(s, \"(a+)+x\", \"-\")"}}}"#)
        var stream = StreamEngine(mapper: spec.mapper)
        try LibraryScalingTests.expectLinear("pathological patterns", n: 2_000) { n in
            let record = Array(#"{"s":"\#(String(repeating: "a", count: n))"}"#.utf8)
            var w = JSONWriter()
            let outcome = record.withUnsafeBytes { stream.map(record: $0, into: &w) }
            #expect(outcome == .mapped(warnings: []))
            #expect(w.bytes.starts(with: Array(#"{"a":false,"b":false,"c":"a"#.utf8)))
        }
    }

    // MARK: Absent, null, policies, errors

    @Test func absentAndNullBecomeTheResultAndTheFieldsPoliciesDecide() throws {
        let spec = { (extra: String) in #"{"fields":{"x":{"expr":"a + b"\#(extra)}}}"# }
        #expect(try Self.run(spec(""), #"{"a":1,"b":2}"#) == #"{"x":3}"#)
        #expect(try Self.run(spec(""), #"{"a":1}"#) == "rejected: /b: value is required, found absent")
        #expect(try Self.run(spec(""), #"{"a":1,"b":null}"#) == "rejected: /b: value is required, found null")
        #expect(try Self.run(spec(#","missing":"omit""#), #"{"a":1}"#) == "{}")
        #expect(try Self.run(spec(#","null":"null""#), #"{"a":null,"b":1}"#) == #"{"x":null}"#)
        #expect(try Self.run(spec(""), #"{"a":1,"b":"2"}"#) == #"rejected: /b: expected number, found string "2""#)
        #expect(try Self.run(spec(#","invalid":"null""#), #"{"a":1,"b":"2"}"#) == #"{"x":null} | /b: warning: expected number, found string "2""#)
        // "default" stands in for absent and null, as for any field; a value that cannot be computed is invalid.
        #expect(try Self.run(spec(#","default":0"#), #"{"a":"1","b":1}"#) == "rejected: /b: expected string, found integer 1")
        #expect(try Self.run(spec(#","default":0"#), #"{}"#) == #"{"x":0}"#)
        #expect(try Self.run(spec(#","optional":true"#), #"{"a":true,"b":1}"#) == "{} | /a: warning: expected number or string, found boolean true")
        // The computed value goes through the field's own checks.
        #expect(try Self.run(#"{"fields":{"x":{"expr":"a * 1","type":"integer"}}}"#, #"{"a":1.5}"#) == "rejected: expected integer, found number 1.5")
        #expect(try Self.run(#"{"fields":{"x":{"expr":"a","via":"stringToNumber"}}}"#, #"{"a":"12"}"#) == #"{"x":12}"#)
    }

    @Test func coalesceIfAndLogicShortCircuit() throws {
        #expect(try Self.value("coalesce(a, b, 7)", #"{"b":null}"#) == "7")
        #expect(try Self.value("coalesce(a, b)", #"{"b":null}"#) == "rejected: /b: value is required, found null")
        #expect(try Self.value("coalesce(a, b)", #"{"a":0}"#) == "0")
        #expect(try Self.value(#"if n > 2 then "big" else "small""#, #"{"n":3}"#) == #""big""#)
        #expect(try Self.value(#"if n > 2 then "big" else "small""#, #"{}"#) == #""small""#)  // absent: not true
        #expect(try Self.value(#"if flag then 1 else 2"#, #"{"flag":null}"#) == "2")
        #expect(try Self.value(#"if flag then 1 else 2"#, #"{"flag":"yes"}"#) == #"rejected: /flag: expected boolean, found string "yes""#)
        #expect(try Self.value("false && 1 / 0 == 1") == "false")
        #expect(try Self.value("true || 1 / 0 == 1") == "true")
        #expect(try Self.value("!(a == 1) || a < 0", #"{"a":1.0}"#) == "false")
        #expect(try Self.value("a != 1", "{}") == "true")  // as `where` compares: absent equals nothing
        #expect(try Self.value(#"a < "b""#, #"{"a":"a"}"#) == "true")
        #expect(try Self.value(#"a < "b""#, #"{"a":1}"#) == "false")  // different kinds: no order
        #expect(try Self.value("o.x + items.1", #"{"o":{"x":1},"items":[10,20]}"#) == "21")
        #expect(try Self.value("`content-type` + `if`", #"{"content-type":"a","if":"b"}"#) == #""ab""#)
    }

    @Test(arguments: [
        ("", 1, "the expression is empty"),
        ("a +", 4, #"expected a value, a path or "(" here, found the end of the expression"#),
        ("a = 1", 3, #"expected "==" (a single "=" is not an operator)"#),
        ("a < b < c", 7, #"comparisons do not chain: write "a < b && b < c""#),
        ("lowr(a)", 1, #"unknown function "lowr" (did you mean "lower"?); the functions are coalesce, lower, upper, trim, trimStart, trimEnd, length, contains, startsWith, endsWith, replace, substring, split, join, string, number, matches, replaceMatches"#),
        ("lower(a, b)", 1, "lower() takes 1 argument, found 2"),
        ("(a + 1", 7, #"expected ")" to close the "(" at column 1, found the end of the expression"#),
        ("if a then 1", 12, #"expected "else" after the "then" branch of the "if" at column 1, found the end of the expression"#),
        (#""abc"#, 1, "this string is never closed"),
        ("2x", 1, #"not a number: "2x" (a key that starts with a digit is written in backquotes)"#),
        ("a b", 3, #"expected an operator, found "b""#),
    ] as [(String, Int, String)])
    func syntaxErrorsSayWhereAndWhat(_ text: String, _ column: Int, _ message: String) {
        #expect(throws: ExpressionSyntaxError(column: column, message: message, text: text)) { try ValueExpression(text) }
    }

    @Test func nestingIsLimitedAndLongChainsNeedNoStack() throws {
        let deep = String(repeating: "(", count: ValueExpression.maximumNesting + 1) + "1" + String(repeating: ")", count: ValueExpression.maximumNesting + 1)
        #expect(throws: ExpressionSyntaxError.self) { try ValueExpression(deep) }
        #expect(throws: ExpressionSyntaxError.self) { try ValueExpression(String(repeating: "-", count: 100) + "1") }
        let chain = (0..<20_000).map { _ in "a" }.joined(separator: " + ")
        #expect(try Self.value(chain, #"{"a":1}"#) == "20000")
        // A spec's error quotes a long expression by an excerpt around the mistake, not whole.
        let nested = String(repeating: "(", count: 100_000) + "a" + String(repeating: ")", count: 100_000)
        let message = (#expect(throws: SpecError.self) { try Spec(json: #"{"fields":{"x":{"expr":"\#(nested)"}}}"#) })?.description ?? ""
        #expect(message.contains(#"column 65: the expression nests more than 64 levels deep in …"(((("#), "\(message.prefix(300))")
        #expect(message.hasSuffix(#"((((("… (200001 characters)"#) && message.count < 400, "\(message.prefix(300))")
        #expect(RecordFilterSyntaxError(column: 4, message: "", text: "a +").quotedText() == #""a +""#)
        let long = String(repeating: "x", count: 90) + " é " + String(repeating: "y", count: 90)
        #expect(RecordFilterSyntaxError(column: 92, message: "", text: long).quotedText() == "…\"" + String(repeating: "x", count: 35) + " é " + String(repeating: "y", count: 34) + "\"… (183 characters)")
    }

    @Test func aSpecWithAComputedFieldIsCheckedAndNotReversible() throws {
        #expect(throws: SpecError.self) { try Spec(json: #"{"fields":{"x":{"expr":"a +","to":"y"}}}"#) }
        #expect(throws: SpecError.self) { try Spec(json: #"{"fields":{"x":{"expr":"a","from":"b"}}}"#) }
        #expect(throws: SpecError.self) { try Spec(json: #"{"fields":[{"expr":"a"}]}"#) }
        #expect(throws: SpecError.self) { try Spec(json: #"{"fields":{"x":{"expr":"a"}},"unmapped":"inPlace"}"#) }
        let spec = try Spec(json: #"{"fields":[{"expr":"a * 2","to":"b.c"},{"from":"id","to":"id"}]}"#)
        #expect(try Self.run(JSONWriter.string(spec.document), #"{"a":2,"id":1}"#) == #"{"b":{"c":4},"id":1}"#)
        #expect(throws: NotReversibleError.self) { try spec.reversed() }
        // The keys an expression reads count as read: not passed through.
        #expect(try Self.run(#"{"fields":{"t":{"expr":"a + 1"}},"unmapped":"keep"}"#, #"{"a":1,"z":2}"#) == #"{"t":2,"z":2}"#)
    }

    // MARK: Both engines on generated expressions

    @Test func generatedExpressionsMapTheSameInBothEngines() throws {
        var rng = SplitMix64(seed: 42)
        let values = [#"1"#, #"-2.5"#, #"1e3"#, #"0"#, #""abc""#, #""A b,c""#, #""""#, "true", "false", "null", #"[1,"x"]"#, #"{"k":1}"#]
        for round in 0..<150 {
            var expressions: [String] = []
            for _ in 0..<3 { expressions.append(ExpressionGen.expression(&rng, depth: 3)) }
            let fields = expressions.enumerated().map { i, e in
                let policy = ["", #","missing":"omit""#, #","null":"null","invalid":"null""#, #","optional":true"#][rng.below(4)]
                return "\"f\(i)\":{\"expr\":\(JSONWriter.string(.string(e)))\(policy)}"
            }
            let spec = "{\"fields\":{\(fields.joined(separator: ","))}}"
            guard (try? Spec(json: spec)) != nil else {
                Issue.record("generated spec does not compile: \(spec)")
                continue
            }
            for _ in 0..<4 {
                var members: [String] = []
                for key in ["a", "b", "s", "t", "o", "items"] where rng.below(5) > 0 {
                    let v = key == "o" ? #"{"x":\#(values[rng.below(values.count)])}"# : key == "items" ? "[\(values[rng.below(values.count)]),\(values[rng.below(values.count)])]" : values[rng.below(values.count)]
                    members.append("\"\(key)\":\(v)")
                }
                if rng.below(4) == 0, let first = members.first { members.append(first) }  // a duplicate key: the last wins
                members.shuffle(using: &rng)
                _ = try Self.run(spec, "{\(members.joined(separator: ","))}", sourceLocation: #_sourceLocation)
            }
            _ = round
        }
    }

    // MARK: Linear time

    @Test func stringFunctionsOnLongValuesAreLinear() throws {
        let spec = try Spec(json: #"{"fields":{"r":{"expr":"replace(s, \"ab\", \"xyz\")"},"c":{"expr":"contains(s, t)"},"n":{"expr":"length(split(s, \"b\"))"}}}"#)
        var stream = StreamEngine(mapper: spec.mapper)
        try LibraryScalingTests.expectLinear("replace/contains/split", n: 20_000) { n in
            // A needle that almost matches everywhere: quadratic for a naive search.
            let s = String(repeating: "a", count: n * 10) + "ab"
            let t = String(repeating: "a", count: n * 5) + "b"
            let record = Array(#"{"s":"\#(s)","t":"\#(t)"}"#.utf8)
            var w = JSONWriter()
            let outcome = record.withUnsafeBytes { stream.map(record: $0, into: &w) }
            #expect(outcome == .mapped(warnings: []))
        }
    }
}

/// Random expressions over the paths a, b, s, t, o.x, items.0, items.1 and a missing one.
enum ExpressionGen {
    static func expression(_ rng: inout SplitMix64, depth: Int) -> String {
        let leaves = ["a", "b", "s", "t", "o.x", "items.0", "items.1", "nope", "1", "2.5", "-3", "0", #""x""#, #""Ab c""#, "true", "null"]
        if depth == 0 || rng.below(3) == 0 { return leaves[rng.below(leaves.count)] }
        let x = { (r: inout SplitMix64) in expression(&r, depth: depth - 1) }
        switch rng.below(12) {
        case 0: return "\(x(&rng)) + \(x(&rng))"
        case 1: return "(\(x(&rng)) - \(x(&rng))) * \(x(&rng))"
        case 2: return "\(x(&rng)) / \(x(&rng))"
        case 3: return "(\(x(&rng)) \(["==", "!=", "<", ">="][rng.below(4)]) \(x(&rng)))"
        case 4: return "(\(x(&rng)) \(["&&", "||"][rng.below(2)]) !\(x(&rng)))"
        case 5: return "if \(x(&rng)) then \(x(&rng)) else \(x(&rng))"
        case 6: return "coalesce(\(x(&rng)), \(x(&rng)))"
        case 7: return "\(["lower", "upper", "trim", "length", "string", "number"][rng.below(6)])(\(x(&rng)))"
        case 8: return "\(["contains", "startsWith", "endsWith", "split", "join"][rng.below(5)])(\(x(&rng)), \(x(&rng)))"
        case 9: return rng.below(2) == 0 ? "replace(\(x(&rng)), \(x(&rng)), \(x(&rng)))"
            : rng.below(2) == 0 ? "matches(\(x(&rng)), \"^[a-z]+( |$)\")" : "replaceMatches(\(x(&rng)), \"[A-Z]|\\\\d+\", \(x(&rng)))"
        case 10: return "substring(\(x(&rng)), \(x(&rng)))"
        default: return "-\(x(&rng))"
        }
    }
}

extension SplitMix64 {
    /// A number in 0..<bound.
    fileprivate mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// An exact decimal for the reference: digits (most significant first) × 10^-scale, with a sign. Written for the
/// tests alone (schoolbook, base 10), independent of `DecimalArithmetic`.
struct DecimalReference: Equatable {
    var digits: [Int]
    var scale: Int
    var negative: Bool

    init(digits: [Int], scale: Int, negative: Bool) {
        var d = Array(digits.drop { $0 == 0 })
        var s = scale
        while s > 0, d.last == 0 { d.removeLast(); s -= 1 }
        while s < 0 { d.append(0); s += 1 }
        self.digits = d
        self.scale = d.isEmpty ? 0 : s
        self.negative = d.isEmpty ? false : negative
    }

    /// From a JSON number lexeme with an optional fraction and exponent.
    init?(_ text: String) {
        var t = Substring(text)
        let negative = t.hasPrefix("-")
        if negative { t = t.dropFirst() }
        var exponent = 0
        if let e = t.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let x = Int(t[t.index(after: e)...]) else { return nil }
            exponent = x
            t = t[..<e]
        }
        var fraction = 0
        if let dot = t.firstIndex(of: ".") {
            fraction = t.distance(from: dot, to: t.endIndex) - 1
            t.remove(at: dot)
        }
        guard !t.isEmpty, t.allSatisfy(\.isNumber) else { return nil }
        self.init(digits: t.map { Int(String($0))! }, scale: fraction - exponent, negative: negative)
    }

    var isZero: Bool { digits.isEmpty }
    var negated: DecimalReference { DecimalReference(digits: digits, scale: scale, negative: !negative) }
    var magnitude: DecimalReference { DecimalReference(digits: digits, scale: scale, negative: false) }
    var significantDigits: Int { digits.count - digits.reversed().prefix { $0 == 0 }.count }

    var text: String {
        if digits.isEmpty { return "0" }
        var d = digits.map(String.init).joined()
        if scale > 0 {
            if d.count <= scale { d = String(repeating: "0", count: scale - d.count + 1) + d }
            d.insert(".", at: d.index(d.endIndex, offsetBy: -scale))
        }
        return (negative ? "-" : "") + d
    }

    static func random(_ rng: inout SplitMix64) -> DecimalReference {
        let count = 1 + rng.below(rng.below(4) == 0 ? 60 : 12)
        let digits = (0..<count).map { _ in rng.below(10) }
        return DecimalReference(digits: digits, scale: rng.below(3) == 0 ? 0 : rng.below(count + 3), negative: rng.below(2) == 0)
    }

    /// The digits as an integer at `scale` (scale ≥ self.scale).
    private func aligned(to scale: Int) -> [Int] { digits + Array(repeating: 0, count: scale - self.scale) }

    private static func compareMagnitudes(_ a: [Int], _ b: [Int]) -> Int {
        let x = Array(a.drop { $0 == 0 }), y = Array(b.drop { $0 == 0 })
        if x.count != y.count { return x.count < y.count ? -1 : 1 }
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return 0
    }

    func isGreater(than other: DecimalReference) -> Bool {
        let s = max(scale, other.scale)
        if negative != other.negative { return other.negative }
        let c = Self.compareMagnitudes(aligned(to: s), other.aligned(to: s))
        return negative ? c < 0 : c > 0
    }

    static func + (a: DecimalReference, b: DecimalReference) -> DecimalReference {
        let s = max(a.scale, b.scale)
        var x = a.aligned(to: s), y = b.aligned(to: s)
        let n = max(x.count, y.count) + 1
        x = Array(repeating: 0, count: n - x.count) + x
        y = Array(repeating: 0, count: n - y.count) + y
        if a.negative == b.negative {
            var out = [Int](repeating: 0, count: n)
            var carry = 0
            for i in stride(from: n - 1, through: 0, by: -1) {
                let v = x[i] + y[i] + carry
                out[i] = v % 10
                carry = v / 10
            }
            return DecimalReference(digits: out, scale: s, negative: a.negative)
        }
        var (big, small, negative) = (x, y, a.negative)
        if compareMagnitudes(x, y) < 0 { (big, small, negative) = (y, x, b.negative) }
        var out = [Int](repeating: 0, count: n)
        var borrow = 0
        for i in stride(from: n - 1, through: 0, by: -1) {
            var v = big[i] - small[i] - borrow
            borrow = v < 0 ? 1 : 0
            if v < 0 { v += 10 }
            out[i] = v
        }
        return DecimalReference(digits: out, scale: s, negative: negative)
    }

    static func * (a: DecimalReference, b: DecimalReference) -> DecimalReference {
        if a.isZero || b.isZero { return DecimalReference(digits: [], scale: 0, negative: false) }
        var out = [Int](repeating: 0, count: a.digits.count + b.digits.count)
        for (i, p) in a.digits.reversed().enumerated() {
            for (j, q) in b.digits.reversed().enumerated() { out[i + j] += p * q }
        }
        var carry = 0
        for k in out.indices {
            let v = out[k] + carry
            out[k] = v % 10
            carry = v / 10
        }
        return DecimalReference(digits: out.reversed(), scale: a.scale + b.scale, negative: a.negative != b.negative)
    }
}
