import Foundation
import StreamMap
import StreamMapTestSupport
import Testing

/// `--to arrow`: the IPC stream or file by the flag and `-o`'s name, the same bytes from both engines and with
/// jobs, rejects for values a column cannot hold, and usage errors for a spec that does not type its fields.
@Suite("streammap --to arrow")
struct ArrowCLITests {
    static let spec = """
        {"fields": {"id": {"type": "integer"}, "user.name": {"to": "user.name", "type": "string", "optional": true},
                    "score": {"type": "number", "optional": true}, "tags": {"via": {"arrayOf": "string"}, "optional": true}}}
        """
    static let input = """
        {"id": 1, "user": {"name": "a\\"b"}, "score": 1.5, "tags": ["x"]}
        {"id": 18446744073709551616}
        {"id": 2, "score": 1e999}
        {"id": "three"}
        {"id": 4, "tags": []}

        """

    static func readFile(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test func streamAndFileHoldTheSameRowsFromBothEnginesAndJobs() throws {
        let dir = try TestScratch.directory()
        let spec = dir.appendingPathComponent("s.json").path, input = dir.appendingPathComponent("in.ndjson").path
        try Self.spec.write(toFile: spec, atomically: true, encoding: .utf8)
        try Self.input.write(toFile: input, atomically: true, encoding: .utf8)
        let ndjson = try CLI.run(["-s", spec, input, "-q"])
        var outputs: [[UInt8]] = []
        for (name, extra) in [("a.arrows", ["--to", "arrow"]), ("b.arrows", ["--to", "arrow", "--engine", "tree"]),
                              ("c.arrows", ["--to", "arrow", "--jobs", "2", "--batch-bytes", "16"]), ("d.x", ["--to", "arrow-stream"])] {
            let path = dir.appendingPathComponent(name).path
            let r = try CLI.run(["-s", spec, input, "-o", path] + extra)
            #expect(r.status == 1, "\(extra): \(r.stderr)")
            outputs.append(try Self.readFile(path))
        }
        #expect(Set(outputs).count == 1)
        let stream = try ArrowReading.read(outputs[0])
        #expect(Array(outputs[0].prefix(4)) == [0xFF, 0xFF, 0xFF, 0xFF])
        let schema = ArrowSchema(fields: [ArrowField("id", .int64), ArrowField("user", .structure([ArrowField("name", .utf8)])),
                                          ArrowField("score", .float64), ArrowField("tags", .list(.utf8))])
        #expect(stream.schema == schema)
        // The rows: the NDJSON output's records but the two whose numbers the columns cannot hold.
        #expect(ndjson.stdoutLines.count == 4 && stream.rows.count == 2)
        #expect(stream.rows == [
            ["id": 1, "user": ["name": "a\"b"], "score": .number(JSONNumber(unchecked: "1.5")), "tags": ["x"]],
            ["id": 4, "tags": []],
        ])
        // The file format by -o's name (and by the flag), the same rows.
        for (name, extra) in [("t.arrow", [] as [String]), ("t.feather", ["--to", "arrow"]), ("t.bin", ["--to", "arrow-file"])] {
            let path = dir.appendingPathComponent(name).path
            let r = try CLI.run(["-s", spec, input, "-o", path, "-q"] + extra)
            #expect(r.status == 1)
            let bytes = try Self.readFile(path)
            #expect(bytes.starts(with: Array("ARROW1".utf8)), "\(name)")
            #expect(try ArrowReading.read(bytes).rows == stream.rows)
        }
    }

    @Test func valuesTheColumnsCannotHoldAreRejectedWithTheirPaths() throws {
        let dir = try TestScratch.directory()
        let spec = dir.appendingPathComponent("s.json").path
        try Self.spec.write(toFile: spec, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("o.arrows").path, rejects = dir.appendingPathComponent("r.ndjson").path
        let r = try CLI.run(["-s", spec, "--to", "arrow", "-o", out], stdin: Self.input)
        #expect(r.status == 1)
        #expect(r.stderrLines == [
            "streammap: <stdin>:2: /id: 18446744073709551616 does not fit the int64 column (−2^63 to 2^63−1); map it with numberToString to keep its digits",
            "streammap: <stdin>:3: /score: 1e999 is beyond the range of the float64 column; map it with numberToString to keep its digits",
            "streammap: <stdin>:4: /id: expected integer, found string \"three\"",
        ])
        let withFile = try CLI.run(["-s", spec, "--to", "arrow", "-o", out, "--rejects", rejects, "--stats"], stdin: Self.input)
        #expect(withFile.status == 1)
        #expect(try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n").count == 3)
        #expect(withFile.stderr.contains("\"recordsOut\":2") && withFile.stderr.contains("\"recordsRejected\":3"))
    }

    @Test func aSpecThatDoesNotTypeItsFieldsIsAUsageError() throws {
        let r = try CLI.run(["--field", "id", "--field", "a.b=x.y", "--field", "n", "--type", "n=integer", "--to", "arrow"], stdin: "{\"id\":1}\n")
        #expect(r.status == 64)
        #expect(r.stderr.contains("the type of these output fields is not known from the spec: id, x.y"))
        #expect(r.stdout.isEmpty)
        let typed = try CLI.run(["--field", "id", "--type", "id=integer", "--to", "arrow", "--compress", "gzip"], stdin: "")
        #expect(typed.status == 64 && typed.stderr.contains("Arrow IPC is written uncompressed"))
        let named = try CLI.run(["--field", "id", "--type", "id=integer", "-o", "x.arrow.gz", "--to", "arrow"], stdin: "")
        #expect(named.status == 64 && named.stderr.contains("Arrow IPC is written uncompressed"))
        let keep = try CLI.run(["--to", "arrow"], stdin: "{\"id\":1}\n")
        #expect(keep.status == 64 && keep.stderr.contains("not an object of named fields"))
    }

    @Test func noRecordsIsAValidStreamOfTheSchema() throws {
        let dir = try TestScratch.directory()
        let out = dir.appendingPathComponent("e.arrow").path
        let r = try CLI.run(["--field", "id", "--type", "id=integer", "-o", out], stdin: "")
        #expect(r.status == 0, "\(r.stderr)")
        let table = try ArrowReading.read(try Self.readFile(out))
        #expect(table.schema == ArrowSchema(fields: [ArrowField("id", .int64)]) && table.rows.isEmpty)
    }
}
