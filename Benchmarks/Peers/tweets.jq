# specs/tweets.spec.json written in jq (run: jq -nRc -f tweets.jq CORPUS.ndjson).
# Reads raw lines so that an invalid line rejects only itself; a rejected record is reported on stderr as
# "L<line>;" (jq 1.6 prints it JSON-quoted, jq 1.7 raw) and not written.
def reject: error("reject");
def integer: if type == "number" and . == floor then . else reject end;
def string: if type == "string" then . else reject end;
def twitter_ms: string | strptime("%a %b %d %H:%M:%S %z %Y") | mktime * 1000;
def map_tweet:
  if type != "object" or (.user | type) != "object" then reject else . end
  | {
      id: (.id | integer),
      idStr: (.id_str | string),
      createdAtMs: (.created_at | twitter_ms),
      text: (.text | string),
      user: {
        id: (.user.id | integer),
        handle: (.user.screen_name | string),
        followers: (.user.followers_count | integer),
        verified: (.user.verified | if . == null then false elif type == "boolean" then . else reject end)
      },
      stats: {
        retweets: (.retweet_count | integer),
        likes: (.favorite_count | if . == null then 0 else integer end)
      },
      lang: (.lang | if . == null then "und" else string end)
    }
    + (if .in_reply_to_status_id == null then {} else {replyTo: (.in_reply_to_status_id | integer)} end);

foreach inputs as $line (0; . + 1;
  . as $n | $line | try (fromjson | map_tweet) catch ("L\($n);" | stderr | empty))
