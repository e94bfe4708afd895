// specs/tweets.spec.json with Foundation's JSONSerialization: [String: Any] in, [String: Any] out.
// Type checks are the idiomatic `as? Int` / `as? String` / `as? Bool` casts (on Linux an NSNumber 1 also casts to
// Bool and 1.0 to Int: JSONSerialization cannot tell them apart). Output key order is the dictionary's.
import Foundation

@main
struct MapTweetsJSONSerialization {
    static func main() {
        guard CommandLine.arguments.count == 2 else {
            fputs("usage: map-tweets-jsonserialization FILE\n", stderr)
            exit(64)
        }
        let formatter = twitterDateFormatter()
        var out = Output()
        forEachLine(path: CommandLine.arguments[1]) { line, number in
            let data = Data(line)
            guard let object = try? JSONSerialization.jsonObject(with: data),
                  let mapped = map(object, formatter),
                  let bytes = try? JSONSerialization.data(withJSONObject: mapped)
            else {
                reportReject(number)
                return
            }
            out.writeLine(bytes)
        }
        out.flush()
    }

    static func map(_ object: Any, _ formatter: DateFormatter) -> [String: Any]? {
        guard let r = object as? [String: Any], let u = r["user"] as? [String: Any] else { return nil }
        guard let id = r["id"] as? Int, let idStr = r["id_str"] as? String,
              let createdAt = r["created_at"] as? String, let date = formatter.date(from: createdAt),
              let text = r["text"] as? String,
              let userId = u["id"] as? Int, let handle = u["screen_name"] as? String,
              let followers = u["followers_count"] as? Int,
              let retweets = r["retweet_count"] as? Int
        else { return nil }
        var verified = false
        if let v = u["verified"], !(v is NSNull) {
            guard let b = v as? Bool else { return nil }
            verified = b
        }
        var likes = 0
        if let v = r["favorite_count"], !(v is NSNull) {
            guard let i = v as? Int else { return nil }
            likes = i
        }
        var lang = "und"
        if let v = r["lang"], !(v is NSNull) {
            guard let s = v as? String else { return nil }
            lang = s
        }
        var out: [String: Any] = [
            "id": id, "idStr": idStr, "createdAtMs": epochMilliseconds(date), "text": text,
            "user": ["id": userId, "handle": handle, "followers": followers, "verified": verified] as [String: Any],
            "stats": ["retweets": retweets, "likes": likes],
            "lang": lang,
        ]
        if let v = r["in_reply_to_status_id"], !(v is NSNull) {
            guard let i = v as? Int else { return nil }
            out["replyTo"] = i
        }
        return out
    }
}
