import Foundation
import Testing

/// `--to csv|tsv|ndjson`: a header, one row per mapped record, one column per output field; the same bytes from
/// both engines and with jobs.
@Suite("streammap --to csv and tsv")
struct TableCLITests {
    static let fields = ["--field", "id", "--field", "type=kind", "--field", "actor.login=actor.name", "--field", "payload.size=size",
                         "--field", "payload.commits=commits", "--type", "id=string"]

    @Test func eventsAsCSVFromBothEnginesAndJobs() throws {
        let events = CLI.example("events.ndjson")
        let csv = try CLI.run(Self.fields + ["--to", "csv", events])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdoutLines
        #expect(lines.first == "id,kind,actor.name,size,commits")
        #expect(lines[2] == "1652857721,CreateEvent,noahlu,,")
        #expect(lines[1].hasPrefix("1652857722,PushEvent,jathanism,1,\"[{\"\"url\"\":"))
        for extra in [["--engine", "tree"], ["--jobs", "2", "--batch-bytes", "64"], ["--engine", "tree", "--jobs", "2", "--batch-bytes", "64"]] {
            let other = try CLI.run(Self.fields + ["--to", "csv", events] + extra)
            #expect(other.stdout == csv.stdout, "\(extra)")
        }
        let tsv = try CLI.run(Self.fields + ["--to", "tsv", events])
        #expect(tsv.stdoutLines.first == "id\tkind\tactor.name\tsize\tcommits")
        #expect(tsv.stdoutLines[2] == "1652857721\tCreateEvent\tnoahlu\t\t")
        let ndjson = try CLI.run(Self.fields + ["--to", "ndjson", events])
        #expect(ndjson.stdout == (try CLI.run(Self.fields + [events])).stdout)
    }

    @Test func rejectedRecordsAreNotRowsAndAnEmptyRunIsItsHeader() throws {
        let r = try CLI.run(["--field", "id", "--field", "name", "--type", "id=integer", "--to", "csv", "-q"],
                            stdin: "{\"id\":1,\"name\":\"a, b\"}\n{\"id\":\"no\"}\n{\"id\":3,\"name\":\"\"}\n{\"id\":4}\n")
        #expect(r.stdout == "id,name\n1,\"a, b\"\n3,\"\"\n4,\n")
        #expect(r.status == 1)
        let empty = try CLI.run(["--field", "id", "--to", "csv"], stdin: "")
        #expect(empty.stdout == "id\n" && empty.status == 0)
    }

    @Test func aMappingWithoutKnownColumnsIsAUsageError() throws {
        let identity = try CLI.run(["--to", "csv"], stdin: "{\"id\":1}\n")
        #expect(identity.status == 64)
        #expect(identity.stderr.contains("--to csv: the output's columns are not known before the records are read: the mapping copies records as they are (identity)"))
        let keep = try CLI.run(["--field", "id", "--keep-unmapped", "--to", "tsv"], stdin: "{\"id\":1}\n")
        #expect(keep.status == 64)
        #expect(keep.stderr.contains("--to tsv: the output's columns are not known before the records are read: unmapped keys are passed through (\"unmapped\": \"keep\")"))
        #expect(identity.stdout == "" && keep.stdout == "")
    }

    @Test func theSpecsDelimiterJoinsNestedHeadersAndCSVCanBeCompressed() throws {
        let spec = try CLI.temporaryFile(#"{"delimiter": "/", "fields": {"a/b": "x/y", "c": {"to": "x/z", "required": false}}}"#)
        let dir = try CLI.temporaryDirectory()
        let out = dir.appendingPathComponent("t.csv.gz").path
        let r = try CLI.shell("printf '%s\\n' '{\"a\":{\"b\":1},\"c\":\"C\"}' '{\"a\":{\"b\":2}}' | streammap -s '\(spec)' --to csv -o '\(out)' && gzip -dc '\(out)'")
        #expect(r.stdout == "x/y,x/z\n1,C\n2,\n", "\(r.stderr)")
    }
}
