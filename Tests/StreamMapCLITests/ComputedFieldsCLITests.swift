import Foundation
import Testing

/// `--set DST=EXPR` and the spec's `"expr"`: records mapped, both engines and `--jobs` giving the same bytes with
/// `--where`, errors with paths, `--print-spec`, `--reverse` refused, syntax errors as usage errors with a caret.
@Suite("streammap --set")
struct ComputedFieldsCLITests {
    static let input = """
        {"id":1,"price":"2.50","qty":3,"first":"Ada","last":"Lovelace"}
        {"id":2,"price":2.50,"qty":3,"first":"Ada","last":"Lovelace","nick":null}
        {"id":3,"price":1,"first":"Bo","last":"L"}
        {"id":4,"price":0.1,"qty":3,"first":"Cy","last":"Ng"

        """

    @Test func computesAndReportsWithPaths() throws {
        let r = try CLI.run(["--field", "id", "--set", "total=price * qty", "--set", #"name=upper(first) + " " + last"#,
                             "--set", #"nick=coalesce(nick, lower(first))"#], stdin: Self.input)
        #expect(r.stdout == """
            {"id":2,"total":7.5,"name":"ADA Lovelace","nick":"ada"}
            {"id":3,"name":"BO L","nick":"bo"}

            """)
        #expect(r.stderrLines == [
            #"streammap: <stdin>:1: /price: expected number, found string "2.50""#,
            "streammap: <stdin>:4: invalid JSON: premature EOF",
        ])
        #expect(r.status == 1)
    }

    @Test func bothEnginesAndJobsWriteTheSameBytes() throws {
        var text = ""
        for i in 0..<20_000 {
            text += i % 89 == 0 ? "{\"id\":\(i),\n" : #"{"id":\#(i),"p":\#(i % 7).\#(i % 10),"q":\#(i % 5),"s":"  Name\#(i % 13) ","t":\#(i % 11 == 0 ? "null" : "\"x\"")}"# + "\n"
        }
        let file = try CLI.temporaryFile(text)
        var outputs: [String] = []
        for args in [["--engine", "tree"], ["--engine", "stream"], ["--jobs", "2"], ["--jobs", "2", "--engine", "tree"]] {
            let r = try CLI.run(args + [
                "--framing", "ndjson", "--where", "q != 0", "--stats", "--field", "id", "--set", "total=p * q / 3",
                "--set", "label=lower(trim(s)) + coalesce(t, \"-\")", "--set", "big=if p * q > 10 then \"big\" else \"small\"",
                "--set", "ratio=10 / (q - 1)", file,
            ])
            #expect(r.status == 1)
            let stats = r.stderrLines.last!
            let messages = r.stderrLines.dropLast().joined(separator: "\n")
            outputs.append(r.stdout + messages + String(stats[..<stats.range(of: "\"seconds\"")!.lowerBound]))
        }
        #expect(outputs[0].contains(#""recordsIn":20000,"#))
        #expect(outputs[0].contains(": division by zero\n"))  // (q - 1 is computed: no path of its own)
        for o in outputs.dropFirst() { #expect(o == outputs[0]) }
    }

    @Test func printSpecCheckExplainAndReverse() throws {
        let printed = try CLI.run(["--field", "id", "--set", "total=price * qty", "--print-spec"])
        #expect(printed.stdout == #"{"fields":{"id":{"to":"id","missing":"omit","null":"null"},"total":{"expr":"price * qty","missing":"omit","null":"null"}}}"# + "\n")
        let spec = try CLI.temporaryFile(#"{"fields":{"id":"id","total":{"expr":"price * qty","type":"number"}}}"#)
        let explained = try CLI.run(["explain", spec])
        #expect(explained.stdout.contains("= price * qty"))
        #expect(explained.stdout.contains("required: id\n"))
        let reversed = try CLI.run(["--spec", spec, "--reverse"], stdin: "{}\n")
        #expect(reversed.status == 2)
        #expect(reversed.stderr.contains(#"expr is not reversible: a computed value ("price * qty") has no inverse"#))
        let bad = try CLI.temporaryFile(#"{"fields":{"total":{"expr":"price *"},"t":{"expr":"a","from":"b"}}}"#)
        let checked = try CLI.run(["check", bad])
        #expect(checked.status == 2)
        #expect(checked.stderrLines.contains { $0.hasSuffix(#"/fields/total/expr: column 8: expected a value, a path or "(" here, found the end of the expression in "price *""#) })
        #expect(checked.stderrLines.contains { $0.hasSuffix(#"/fields/t/from: a computed field reads the paths its "expr" names: "from" cannot be given with "expr""#) })
    }

    /// `--type`, `--column` and `--field` on a computed field's key (its destination) amend that field, in a spec of
    /// either form (`--set` writes it in flags: `--field` cannot rename it there, the fields come first); they read
    /// nothing from the records, so no "none of the records has" line — while a mistyped input path beside them
    /// still gets one.
    @Test func flagsNamingAComputedFieldAmendIt() throws {
        let input = "{\"id\":1,\"p\":2.5}\n{\"id\":2,\"p\":4}\n"
        let object = try CLI.temporaryFile(#"{"fields":{"id":{"type":"integer"},"total":{"expr":"p * 2"}}}"#)
        let list = try CLI.temporaryFile(#"{"fields":[{"from":"id","to":"id","type":"integer"},{"to":"total","expr":"p * 2"}]}"#)
        for base in [["--spec", object], ["--spec", list], ["--field", "id", "--type", "id=integer", "--set", "total=p * 2"]] {
            let printed = try CLI.run(base + ["--type", "total=number", "--print-spec"])
            #expect(printed.status == 0)
            #expect(printed.stdout.contains(#""expr":"p * 2""#) && printed.stdout.contains(#""type":"number""#), "\(base)")
            let inFlags = base.contains("--set")
            let r = try CLI.run(base + (inFlags ? [] : ["--field", "total=sum"]) + ["--type", "total=number", "--column", "total=decimal(6,1)", "--field", "ids", "--to", "csv"], stdin: input)
            #expect(r.stdout == (inFlags ? "id,ids,total\n1,,5\n2,,8\n" : "id,sum,ids\n1,5,\n2,8,\n"), "\(base)")
            #expect(r.stderrLines == ["streammap: --field ids: none of the 2 records has ids (did you mean \"id\"?)"], "\(base)")
            #expect(r.status == 0)
        }
    }

    @Test func aSyntaxErrorIsAUsageErrorWithACaret() throws {
        let r = try CLI.run(["--set", "x=lowr(name)"], stdin: "{}\n")
        #expect(r.status == 64)
        #expect(r.stderr.contains(#"--set x=lowr(name): column 1: unknown function "lowr" (did you mean "lower"?)"#))
        #expect(r.stderr.contains("  lowr(name)\n  ^"))
        let missing = try CLI.run(["--set", "x"], stdin: "{}\n")
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--set x: expected DST=EXPR"))
    }
}
