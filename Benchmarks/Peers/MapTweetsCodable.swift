// specs/tweets.spec.json with Codable: JSONDecoder into a model, JSONEncoder out of another.
// Required fields are non-optional properties; defaults are applied to optionals; the date uses a
// DateFormatter strategy (Twitter's format).
import Foundation

struct Tweet: Decodable {
    struct User: Decodable {
        var id: Int64
        var screenName: String
        var followersCount: Int64
        var verified: Bool?
        enum CodingKeys: String, CodingKey {
            case id, verified
            case screenName = "screen_name"
            case followersCount = "followers_count"
        }
    }
    var id: Int64
    var idStr: String
    var createdAt: Date
    var text: String
    var user: User
    var retweetCount: Int64
    var favoriteCount: Int64?
    var lang: String?
    var inReplyToStatusId: Int64?
    enum CodingKeys: String, CodingKey {
        case id, text, user, lang
        case idStr = "id_str"
        case createdAt = "created_at"
        case retweetCount = "retweet_count"
        case favoriteCount = "favorite_count"
        case inReplyToStatusId = "in_reply_to_status_id"
    }
}

struct MappedTweet: Encodable {
    struct User: Encodable {
        var id: Int64
        var handle: String
        var followers: Int64
        var verified: Bool
    }
    struct Stats: Encodable {
        var retweets: Int64
        var likes: Int64
    }
    var id: Int64
    var idStr: String
    var createdAtMs: Int64
    var text: String
    var user: User
    var stats: Stats
    var lang: String
    var replyTo: Int64?

    init(_ t: Tweet) {
        id = t.id
        idStr = t.idStr
        createdAtMs = epochMilliseconds(t.createdAt)
        text = t.text
        user = User(id: t.user.id, handle: t.user.screenName, followers: t.user.followersCount, verified: t.user.verified ?? false)
        stats = Stats(retweets: t.retweetCount, likes: t.favoriteCount ?? 0)
        lang = t.lang ?? "und"
        replyTo = t.inReplyToStatusId
    }
}

@main
struct MapTweetsCodable {
    static func main() {
        guard CommandLine.arguments.count == 2 else {
            fputs("usage: map-tweets-codable FILE\n", stderr)
            exit(64)
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .formatted(twitterDateFormatter())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        var out = Output()
        forEachLine(path: CommandLine.arguments[1]) { line, number in
            do {
                let tweet = try decoder.decode(Tweet.self, from: Data(line))
                out.writeLine(try encoder.encode(MappedTweet(tweet)))
            } catch {
                reportReject(number)
            }
        }
        out.flush()
    }
}
