# specs/tweets-computed.spec.json written in jq (run: jq -nRc -f tweets-computed.jq CORPUS.ndjson), with the rules
# of tweets.jq: raw lines, a rejected record reported on stderr as "L<line>;" and not written. Required values:
# absent or null rejects, arithmetic needs numbers, concatenation strings. ascii_downcase is the lower-case of
# the corpus's screen names (ASCII); streammap's lower() is Unicode's full case mapping.
def reject: error("reject");
def integer: if type == "number" and . == floor then . else reject end;
def number: if type == "number" then . else reject end;
def string: if type == "string" then . else reject end;
def map_tweet:
  if type != "object" then reject else . end
  | (.user | if type == "object" then . else reject end) as $user
  | {
      id: (.id | integer),
      engagement: ((.retweet_count | number) + (.favorite_count | if . == null then 0 else number end)),
      reach: (($user.followers_count | number) * ((.retweet_count | number) + 1)),
      byline: ("@" + ($user.screen_name | string) + " (" + (.lang | if . == null then "und" else string end) + ")"),
      handle: ($user.screen_name | string | ascii_downcase)
    };

foreach inputs as $line (0; . + 1;
  . as $n | $line | try (fromjson | map_tweet) catch ("L\($n);" | stderr | empty))
