// A tour of the StreamMap library on GitHub events (Examples/events.ndjson): six things a Swift program does with
// it, each checked. Run from this folder: `swift run LibraryTour` (exit 0: every check held).

import Foundation
import StreamMap

let examples = URL(fileURLWithPath: #filePath)  // …/Examples/LibraryTour/Sources/LibraryTour/main.swift
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let eventsPath = examples.appendingPathComponent("events.ndjson").path
let specPath = examples.appendingPathComponent("events.spec.json").path

var failures = 0
@MainActor func check(_ ok: Bool, _ what: String) {
    print((ok ? "ok    " : "FAILED ") + what)
    if !ok { failures += 1 }
}

// The four events of Examples/events.ndjson (one with a date that is not one), then two lines that are not events:
// a broken line and an event without an id.
let input = try Data(contentsOf: URL(fileURLWithPath: eventsPath)) + Data("""
    {"type":"PushEvent","created_at":
    {"type":"ForkEvent","created_at":"2013-01-10T07:58:31Z","actor":{"login":"ann"},"repo":{"name":"a/b"}}

    """.utf8)

// 1. A mapper written in Swift: the same as Examples/events.spec.json. (`repo` maps the repository's name; the
// spec's is `.required`, the name as it is.)
func eventsMapper(repo: Mapper = .required) -> Mapper {
    Mapper.object {
        Field("id", .notNull(.string))  // as the spec's "type": required, then checked (`.string` alone lets absent by)
        Field("type", to: "kind", .policy(.enumTable([("PushEvent", "push"), ("CreateEvent", "create"), ("ForkEvent", "fork")]),
                                          invalid: .useDefault("other")))
        Field("actor.login")
        Field("actor.avatar_url", to: "actor.avatar", .policy(.url(schemes: ["https"]), missing: .omit, invalid: .omit))
        Field("repo.name", to: "repo", repo)
        Field("created_at", to: "createdAtMs", .thread(.stringToDate(.iso8601), .dateToNumber(.milliseconds)))
        Field("payload.size", to: "commits", .omitWhenAbsent(.integer))
        Field("public", .policy(.boolean, missing: .useDefault(true), null: .useDefault(true)))
    }
}
let events = eventsMapper()

// 2. The same from the spec file.
let spec = try Spec(json: Array(try Data(contentsOf: URL(fileURLWithPath: specPath))), file: specPath)

// 3. Fed in 777-byte chunks, as bytes arrive from a socket.
func feedInChunks(_ mapper: Mapper) -> [RecordResult] {
    let feed = MappingFeed(mapper: mapper)
    var results: [RecordResult] = []
    var start = input.startIndex
    while start < input.endIndex {
        let end = min(start + 777, input.endIndex)
        results += feed.feed(input[start..<end])
        start = end
    }
    return results + feed.finish()
}
let swiftResults = feedInChunks(events)
let specResults = feedInChunks(spec.mapper)
check(swiftResults.map(\.description) == specResults.map(\.description), "the Swift mapper maps as the spec file does")
check(swiftResults.count == 6, "6 records: 4 events and 2 bad lines (\(swiftResults.count))")

// 4. Rejects printed: where, and why.
for case .rejected(let reject) in swiftResults { print("      \(reject)") }
let rejected = swiftResults.compactMap { if case .rejected(let r) = $0 { return r } else { return nil } }
check(rejected.map(\.location.line) == [4, 5, 6], "the bad records are rejected with their line numbers")
check(rejected.last?.failure.fatalErrors.map(\.sourcePath.pointer) == ["/id"], "the event without an id is rejected at /id")

// 5. As an async sequence of bytes, and from a file on two threads: the same records in the same order.
let (bytes, continuation) = AsyncStream.makeStream(of: UInt8.self)
for byte in input { continuation.yield(byte) }
continuation.finish()
var asyncResults: [RecordResult] = []
for try await result in bytes.mappedRecords(mapper: events) { asyncResults.append(result) }
check(asyncResults == swiftResults, "an AsyncSequence of bytes gives the same records")
var fromFile: [RecordResult] = []
let counts = try events.mapRecords(inFile: eventsPath, options: MappingOptions(jobs: 2)) { fromFile.append($0) }
check(fromFile == Array(swiftResults.prefix(4)) && counts == RecordCounts(recordsIn: 4, recordsOut: 3, recordsRejected: 1),
      "a file mapped with 2 jobs: \(counts)")
var fileAsync: [RecordResult] = []
for try await result in events.mappedRecords(inFile: eventsPath) { fileAsync.append(result) }
check(fileAsync == fromFile, "a file as an async sequence of records (Linux too) gives the same records")

// 6. Decoded into Codable models in one pass (no JSON written and parsed again), with a typed closure that
// splits "owner/name" into its parts.
struct Event: Decodable, Equatable {
    struct Actor: Decodable, Equatable { var login: String; var avatar: URL? }
    struct Repo: Decodable, Equatable { var owner: String; var name: String }
    var id: String
    var kind: String
    var actor: Actor
    var repo: Repo
    var createdAtMs: Int
    var commits: Int?
    var `public`: Bool
}
struct Repo: Codable { var owner: String; var name: String }
let splitRepo = Mapper.transform(from: String.self, to: Repo.self) { full in
    let parts = full.split(separator: "/", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { throw MapError(.value, "expected owner/name, found \"\(full)\"") }
    return Repo(owner: parts[0], name: parts[1])
}
let eventsWithRepos = eventsMapper(repo: splitRepo)
let models = ModelFeed(mapper: eventsWithRepos, as: Event.self)
let decoded = models.feed(input) + models.finish()
let first = decoded.compactMap { if case .decoded(let r) = $0 { return r.model } else { return nil } }.first
print("      \(first.map { "\($0)" } ?? "no model")")
check(first?.repo == Event.Repo(owner: "jathanism", name: "trigger") && first?.kind == "push", "models decoded, the repo split")
check(models.counts == RecordCounts(recordsIn: 6, recordsOut: 3, recordsRejected: 3), "every record counted: \(models.counts)")

print(failures == 0 ? "the tour holds" : "\(failures) checks failed")
exit(failures == 0 ? 0 : 1)
