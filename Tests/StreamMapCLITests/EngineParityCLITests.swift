import Foundation
import Testing

/// `streammap --spec FILE` streams by default; `--engine tree` prints the same bytes, diagnostics and status.
@Suite("Engine parity (CLI)")
struct EngineParityCLITests {
    static let seeds = ReadmeExamplesTests.root.deletingLastPathComponent().appendingPathComponent("shared/data/seed")

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
