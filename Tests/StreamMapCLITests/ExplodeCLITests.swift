import Foundation
import Testing
import StreamMap
import StreamMapTestSupport

/// `--explode PATH` and the spec's `"explode"`: one output record per element, the record contract (line and offset
/// of the input record on every error, counts, `--stats`, the line that says what gave no record), `--jobs` and
/// read-ahead files in order, tables, `--print-spec`, `explain`, `--reverse` refused.
@Suite("streammap --explode")
struct ExplodeCLITests {
    static let input = """
        {"order":1,"customer":"ada","items":[{"sku":"a","qty":2},{"sku":"b","qty":1}]}
        {"order":2,"customer":"bo","items":[]}
        {"order":3,"customer":"cy","items":"none"}
        {"order":4,"customer":"di"}
        {"order":5,"customer":"ed","items":[{"sku":"c","qty":"x"}]}
        {"order":6,"customer":"fa","items":[{"sku":"d","qty":4}]
        {"order":7,"customer":"gu","items":[{"sku":"e","qty":1},{"sku":"f","qty":9},{"sku":"g","qty":3}]}

        """

    static let spec = #"""
        {"fields": {"order": {"type": "integer"}, "customer": "customer",
                    "items": {"to": "item", "via": {"arrayOf": {"object": {"fields": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}}},
                              "missing": "omit"}},
         "explode": "item"}
        """#

    @Test func oneRecordPerElementWithTheRecordContract() throws {
        let spec = try CLI.temporaryFile(Self.spec)
        let rejects = try CLI.temporaryFile("", name: "rejects.ndjson")
        let r = try CLI.run(["-s", spec, "--stats", "--rejects", rejects], stdin: Self.input)
        #expect(r.stdout == """
            {"order":1,"customer":"ada","item":{"sku":"a","qty":2}}
            {"order":1,"customer":"ada","item":{"sku":"b","qty":1}}
            {"order":7,"customer":"gu","item":{"sku":"e","qty":1}}
            {"order":7,"customer":"gu","item":{"sku":"f","qty":9}}
            {"order":7,"customer":"gu","item":{"sku":"g","qty":3}}

            """)
        #expect(r.status == 1)
        // Records in = mapped (each to any number of records) + rejected; records out counts elements.
        let stats = try JSONParser.parse(r.stderrLines.last!)
        #expect(stats["recordsIn"] == 7 && stats["recordsOut"] == 5 && stats["recordsRejected"] == 3)
        #expect(stats["recordsMapped"] == 4 && stats["recordsWithoutElements"] == 2)
        #expect(r.stderrLines.dropLast() == [
            "streammap: 3 of 7 records rejected, written to \(rejects)",
            "streammap: 2 records had no element to explode (an empty array, null or no value) and gave no output record: --explode-empty null writes them once, with null",
        ])
        // A rejected record is the input record, whole, with its line and byte offset.
        let lines = CLI.read(rejects).split(separator: "\n").map { try? JSONParser.parse(String($0)) }
        #expect(lines.map { $0?["line"] } == [3, 5, 6])
        #expect(lines.map { $0?["offset"] } == [118, 189, 249])
        func firstError(_ i: Int) -> JSONValue? { lines[i]?["errors"]?.arrayValue?.first }
        #expect(firstError(1)?["source"] == "/items/0/qty")
        #expect(firstError(0)?["message"] == #"expected array, found string "none""#)
    }

    @Test func theFlagsAndTheEmptyPolicy() throws {
        let r = try CLI.run(["--explode", "items", "--explode-empty", "null", "-q"], stdin: Self.input)
        #expect(r.stdoutLines == [
            #"{"order":1,"customer":"ada","items":{"sku":"a","qty":2}}"#,
            #"{"order":1,"customer":"ada","items":{"sku":"b","qty":1}}"#,
            #"{"order":2,"customer":"bo","items":null}"#,
            #"{"order":4,"customer":"di"}"#,
            #"{"order":5,"customer":"ed","items":{"sku":"c","qty":"x"}}"#,
            #"{"order":7,"customer":"gu","items":{"sku":"e","qty":1}}"#,
            #"{"order":7,"customer":"gu","items":{"sku":"f","qty":9}}"#,
            #"{"order":7,"customer":"gu","items":{"sku":"g","qty":3}}"#,
        ])
        #expect(r.stderr.isEmpty && r.status == 1)
        // Not an array: the record is rejected, at the output path.
        let bad = try CLI.run(["--explode", "items"], stdin: #"{"items":"none"}"# + "\n")
        #expect(bad.stderrLines == [#"streammap: <stdin>:1: explode /items: expected an array, found string "none""#])
        // A destination that no field writes, and a policy without a path: usage errors before anything is read.
        let typo = try CLI.run(["--field", "items", "--explode", "itmes"], stdin: "{}\n")
        #expect(typo.status == 2 && typo.stderr.contains(#"no field writes "itmes": explode names an array of the output (a destination) (did you mean "items"?)"#))
        let alone = try CLI.run(["--explode-empty", "null"], stdin: "{}\n")
        #expect(alone.status == 64 && alone.stderr.contains("--explode-empty needs --explode PATH"))
        // With a CSV table: a row per element.
        let csv = try CLI.run(["--field", "order", "--type", "order=integer", "--field", "items.0.sku=sku", "--field", "tags",
                               "--type", "tags=array", "--explode", "tags", "--to", "csv", "-q"],
                              stdin: #"{"order":1,"items":[{"sku":"a"}],"tags":["x","y"]}"# + "\n")
        #expect(csv.stdout == "order,sku,tags\n1,a,x\n1,a,y\n")
    }

    /// Jobs, both engines, and many files read ahead (plain and compressed): the same bytes and messages as one job.
    @Test func jobsAndFilesReadAheadWriteWhatOneJobWrites() throws {
        let dir = try CLI.temporaryDirectory()
        var text = ""
        for i in 0..<3000 {
            let items = (0..<(i % 4)).map { #"{"sku":"s\#($0)","qty":\#(i % 7 == 0 && $0 == 1 ? "\"x\"" : String($0))}"# }
            text += #"{"order":\#(i),"customer":"c\#(i % 13)","items":[\#(items.joined(separator: ","))]}"# + "\n"
        }
        var files: [String] = []
        for (n, compression) in [nil, Compression.gzip, nil, Compression.zstd].enumerated() {
            let bytes = Array(text.utf8)
            let path = dir.appendingPathComponent("part\(n).ndjson" + (compression == .gzip ? ".gz" : compression == .zstd ? ".zst" : "")).path
            try Data(compression.map { Compressing.compressed(bytes, $0, pieces: 2) } ?? bytes).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let spec = try CLI.temporaryFile(Self.spec)
        var runs: [String] = []
        for extra in [[], ["--engine", "tree"], ["--jobs", "2"], ["--jobs", "3", "--batch-bytes", "4096"]] {
            let r = try CLI.run(["-s", spec, "--stats"] + extra + files)
            let stats = r.stderrLines.last!
            runs.append(r.stdout + r.stderrLines.dropLast().joined(separator: "\n") + String(stats[..<stats.range(of: "\"seconds\"")!.lowerBound]))
        }
        // Each file: record i has i % 4 items (750 have none); 214 have a bad second item (i % 7 == 0, i % 4 >= 2),
        // which rejects them with their 535 items; so 4 × (4500 − 535) records out.
        #expect(runs[0].contains(#""recordsIn":12000,"recordsOut":15860,"recordsRejected":856,"recordsMapped":11144,"recordsWithoutElements":3000,"#))
        for run in runs.dropFirst() { #expect(run == runs[0]) }
    }

    @Test func printSpecExplainAndReverse() throws {
        let printed = try CLI.run(["--field", "id", "--field", "tags", "--explode", "tags", "--explode-empty", "null", "--print-spec"])
        #expect(printed.stdout.contains(#""explode":{"path":"tags","empty":"null"}"#))
        let spec = try CLI.temporaryFile(Self.spec)
        let explained = try CLI.run(["explain", spec])
        #expect(explained.stdout.contains("explode: item\n  each mapped record is written once per element of this array of its output"))
        let json = try JSONParser.parse(try CLI.run(["explain", "--json", spec]).stdout)
        #expect(json["explode"] == ["path": "item", "empty": "drop"])
        let reversed = try CLI.run(["-s", spec, "--reverse"], stdin: "{}\n")
        #expect(reversed.status == 2)
        #expect(reversed.stderr.contains("cannot reverse the mapping: explode is not reversible"))
    }
}
