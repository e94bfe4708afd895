// streammap-decode: tweets into Codable models, three ways, for Benchmarks/decode_models.py:
//
//     streammap-decode modelfeed SPEC FILE       # ModelFeed (stream engine): decoded where the engine wrote it
//     streammap-decode modelfeed-tree SPEC FILE  # ModelFeed (tree engine): one pass, the mapped tree decoded
//     streammap-decode twopass SPEC FILE         # MappingFeed, then MappedRecord.decode on each record
//     streammap-decode foundation FILE      # Foundation's JSONDecoder on each raw line, into a raw model, then the
//                                           # same conversions by hand (what people write without StreamMap)
//
// Each prints the number of models and a checksum of them on standard output, so the three can be compared.
import Foundation
import StreamMap

/// The tweet as Benchmarks/specs/tweets.spec.json maps it.
struct Tweet: Decodable {
    struct User: Decodable { var id: Int; var handle: String; var followers: Int; var verified: Bool }
    struct Stats: Decodable { var retweets: Int; var likes: Int }
    var id: Int
    var idStr: String
    var createdAtMs: Int
    var text: String
    var user: User
    var stats: Stats
    var lang: String
    var replyTo: Int?

    var checksum: Int {
        id &+ createdAtMs &+ text.utf8.count &+ user.id &+ user.followers &+ (user.verified ? 1 : 0) &+ stats.retweets
            &+ stats.likes &+ lang.utf8.count &+ (replyTo ?? 0) &+ idStr.utf8.count &+ user.handle.utf8.count
    }
}

/// The raw tweet's fields the mapping reads, for JSONDecoder.
struct RawTweet: Decodable {
    struct User: Decodable {
        var id: Int; var screen_name: String; var followers_count: Int; var verified: Bool?
    }
    var id: Int
    var id_str: String
    var created_at: String
    var text: String
    var user: User
    var retweet_count: Int
    var favorite_count: Int?
    var lang: String?
    var in_reply_to_status_id: Int?
}

@main
struct DecodeTweets {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count >= 3 else {
            FileHandle.standardError.write(Data("usage: streammap-decode modelfeed|modelfeed-tree|twopass SPEC FILE | foundation FILE\n".utf8))
            exit(2)
        }
        var models = 0
        var checksum = 0
        func add(_ t: Tweet) {
            models += 1
            checksum = checksum &+ t.checksum
        }
        switch args[1] {
        case "modelfeed", "modelfeed-tree", "twopass":
            let spec = try Spec(json: Array(try Data(contentsOf: URL(fileURLWithPath: args[2]))), file: args[2])
            let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: args[3]))
            if args[1].hasPrefix("modelfeed") {
                let feed = ModelFeed(mapper: spec.mapper, as: Tweet.self, framing: .ndjson,
                                     engine: args[1] == "modelfeed" ? .stream : .tree)
                func take(_ results: [DecodedResult<Tweet>]) { for case .decoded(let r) in results { add(r.model) } }
                while let chunk = try input.read(upToCount: 1 << 18), !chunk.isEmpty { take(feed.feed(chunk)) }
                take(feed.finish())
            } else {
                let feed = MappingFeed(mapper: spec.mapper, framing: .ndjson)
                func take(_ results: [RecordResult]) {
                    for case .mapped(let r) in results { if let t = try? r.decode(Tweet.self) { add(t) } }
                }
                while let chunk = try input.read(upToCount: 1 << 18), !chunk.isEmpty { take(feed.feed(chunk)) }
                take(feed.finish())
            }
        case "foundation":
            let decoder = JSONDecoder()
            let dates = DateFormatter()
            dates.locale = Locale(identifier: "en_US_POSIX")
            dates.dateFormat = "EEE MMM dd HH:mm:ss Z yyyy"
            let data = try Data(contentsOf: URL(fileURLWithPath: args[2]))
            for line in data.split(separator: 0x0A) {
                guard let raw = try? decoder.decode(RawTweet.self, from: line),
                      let date = dates.date(from: raw.created_at) else { continue }
                add(Tweet(id: raw.id, idStr: raw.id_str, createdAtMs: Int((date.timeIntervalSince1970 * 1000).rounded()),
                          text: raw.text,
                          user: .init(id: raw.user.id, handle: raw.user.screen_name, followers: raw.user.followers_count,
                                      verified: raw.user.verified ?? false),
                          stats: .init(retweets: raw.retweet_count, likes: raw.favorite_count ?? 0),
                          lang: raw.lang ?? "und", replyTo: raw.in_reply_to_status_id))
            }
        default:
            FileHandle.standardError.write(Data("unknown mode \(args[1])\n".utf8))
            exit(2)
        }
        print("\(models) models, checksum \(checksum)")
    }
}
