import Foundation
import Testing

/// `streammap --spec FILE` streams by default; `--engine tree` prints the same bytes, diagnostics and status.
@Suite("Engine parity (CLI)")
struct EngineParityCLITests {
    /// The repository's sample records (Samples/seed/README.md), never anything outside the clone.
    static let seeds = ReadmeExamplesTests.root.appendingPathComponent("Samples/seed")

    static let specs: [String] = [
        #"{"unmapped":"keep"}"#,
        #"{"mapper":{"keys":"camel","deep":true}}"#,
        #"""
        {"fields":{
         "id":"id", "id_str":{"to":"idStr","type":"string"},
         "created_at":{"to":"createdAt","via":[{"stringToDate":["twitter","iso8601"]},{"dateToNumber":"ms"}]},
         "user.screen_name":"user.name", "user.followers_count":{"to":"user.followers","type":"integer"},
         "actor.login":{"to":"user.name2","missing":"omit"},
         "entities.hashtags":{"to":"tags","via":{"arrayOf":{"object":{"fields":{"text":"tag","indices.0":"start"}}}}},
         "entities.urls.0.expanded_url":{"to":"firstUrl","via":"url","missing":"omit","null":"omit","invalid":"omit"},
         "retweeted_status.user.screen_name":{"to":"retweetOf","missing":"omit"},
         "lang":{"to":"lang","via":{"enum":{"en":"English","ja":"Japanese"}},"invalid":{"default":"other"}},
         "coordinates":{"to":"coords","null":"null","missing":"omit"},
         "place":{"to":"place","type":"object","null":"omit"},
         "payload":{"to":"payload","via":{"object":{"fields":{"size":"size"},"unmapped":{"keys":"camel"}}},"optional":true}
        },"unmapped":{"keys":"camel","values":{"keys":"camel","deep":true}}}
        """#,
    ]

    @Test(arguments: specs.indices, ["tweets.ndjson", "gh_events.ndjson"])
    func bothEnginesPrintTheSame(_ specIndex: Int, _ data: String) throws {
        let spec = try CLI.temporaryFile(Self.specs[specIndex])
        let input = Self.seeds.appendingPathComponent(data).path
        guard FileManager.default.fileExists(atPath: input) else {
            Issue.record("seed data missing at \(input)")
            return
        }
        let stream = try CLI.run(["--spec", spec, input])
        let tree = try CLI.run(["--spec", spec, "--engine", "tree", input])
        #expect(!stream.stdout.isEmpty || !stream.stderr.isEmpty)
        #expect(stream.stdout == tree.stdout)
        #expect(stream.stderr == tree.stderr)
        #expect(stream.status == tree.status)
    }
}

extension EngineParityCLITests {
    /// A record that ends in the chunk it began in is mapped straight from the read buffer; one that goes on into
    /// the next chunk is handed to the engine piece by piece — also when automatic framing replays the chunks it
    /// held while deciding. Records of every size, cut at every kind of place (a 256 KiB read from a file, pipe
    /// reads of at most 64 KiB from standard input), must map the same whichever way they came: from a file or a
    /// pipe, framed automatically or as NDJSON, with one job or two, by either engine, with or without a rejects
    /// file.
    @Test func recordsAcrossReadsMapTheSame() throws {
        var rng = SystemRandomNumberGenerator()
        var lines: [String] = []
        for i in 0..<1500 {
            // Mostly short records, some over a pipe read, a few over a file read (256 KiB).
            let count = i % 97 == 5 ? 30_000 : [0, 3, 40, 400, 2000, 8000].randomElement(using: &rng)!
            let padding = String(repeating: "é\\u00e9x", count: count)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: lines.append(#"{"id":\#(i),"text":"\#(padding)","user":{"name":"u\#(i)"#)  // cut short
            case 1: lines.append(#"{"id":"\#(i)","user":{"name":\#(i)},"pad":"\#(padding)"}"#)  // wrong types
            default: lines.append(#"{"pad":"\#(padding)","id":\#(i),"user":{"x":[1,{"name":0}],"name":"u\#(i)"},"text":"t"}"#)
            }
        }
        let data = lines.joined(separator: "\n") + "\n"
        let spec = try CLI.temporaryFile(#"{"fields":{"id":{"to":"id","type":"integer"},"user.name":{"to":"name","type":"string"},"text":{"to":"text","missing":"omit"}}}"#)
        let file = try CLI.temporaryFile(data, name: "records.ndjson")
        let rejects = try CLI.temporaryDirectory().appendingPathComponent("rejects.ndjson").path

        let reference = try CLI.run(["--spec", spec, "--framing", "ndjson", file])
        #expect(reference.stdoutLines.count > 1000 && reference.stderrLines.count > 100)
        for arguments in [["--engine", "tree"], [], ["--jobs", "2"], ["--jobs", "2", "--batch-bytes", "65536"]] {
            let fromFile = try CLI.run(["--spec", spec] + arguments + [file])
            #expect(fromFile.stdout == reference.stdout, "\(arguments)")
            #expect(fromFile.stderr == reference.stderr, "\(arguments)")
        }
        let fromPipe = try CLI.run(["--spec", spec], stdinData: Data(data.utf8))
        #expect(fromPipe.stdout == reference.stdout)
        #expect(fromPipe.stderr == reference.stderr.replacingOccurrences(of: "\(file):", with: "<stdin>:"))
        let withRejects = try CLI.run(["--spec", spec, "--rejects", rejects], stdinData: Data(data.utf8))
        let treeRejects = rejects + ".tree"
        _ = try CLI.run(["--spec", spec, "--engine", "tree", "--rejects", treeRejects, "--framing", "ndjson"], stdinData: Data(data.utf8))
        #expect(withRejects.stdout == reference.stdout)
        #expect(CLI.read(rejects) == CLI.read(treeRejects))
        let rejectedRecords = CLI.read(rejects).split(separator: "\n").count
        #expect(rejectedRecords > 100)
        #expect(withRejects.stderr.contains("\(rejectedRecords) of 1500 records rejected"))
    }
}
