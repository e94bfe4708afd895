#!/usr/bin/env bash
# Measures peak memory (RSS) of the stream engine on (1) one 200 MB record that keeps three small fields, (2) the
# same record written whole (identity, unmapped: keep) and (3) growing NDJSON inputs, to show it is bounded by the
# output record, not the input. Data is generated here into a temporary directory and deleted afterwards.
# Usage: scripts/measure-memory.sh [release|debug]
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-release}
scripts/bootstrap.sh
# The release binary as README.md builds it: the Swift runtime linked in (--static-swift-stdlib).
static=(); [ "$config" = release ] && static=(--static-swift-stdlib)
swift build -c "$config" "${static[@]}" --product streammap >/dev/null
bin=.build/$config/streammap
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo '{"fields":{"id":"id","user.name":"name","created_at":"createdAt"}}' > "$tmp/three.json"
python3 - "$tmp" <<'PY'
import sys, json
# ~200 MB in one record: three small fields around a large payload of nested objects, arrays and strings.
item = json.dumps({"k": "v" * 200, "n": [1, 2.5, -3e10, True, None], "o": {"a": {"b": "é\u00e9\\n"}}})
count = 200 * 1024 * 1024 // (len(item) + 1)
payload = ",".join([item] * count)
with open(sys.argv[1] + "/big.ndjson", "w") as f:
    f.write('{"id":12345678901234567890,"payload":[' + payload + '],"user":{"name":"Ada"},"created_at":"2014-08-31T00:29:15Z"}\n')
# The same with one 40 MB string in it: a single token must be held whole (yajl lexes tokens whole).
with open(sys.argv[1] + "/bigtoken.ndjson", "w") as f:
    f.write('{"id":1,"payload":[' + payload + '],"user":{"name":"Ada","bio":"' + "x" * (40 * 1024 * 1024) + '"},"created_at":"2014-08-31T00:29:15Z"}\n')
PY
for file in big bigtoken; do
  size=$(stat -c %s "$tmp/$file.ndjson")
  for engine in stream tree; do
    out=$(/usr/bin/time -f "%M %e" "$bin" --engine $engine --spec "$tmp/three.json" "$tmp/$file.ndjson" 2>"$tmp/time" | head -c 200)
    read -r kb secs < <(tail -1 "$tmp/time")
    echo "$file: one record of $((size / 1048576)) MB, $engine engine: peak RSS $((kb / 1024)) MB, ${secs}s, output $out"
  done
done

# A record written (almost) whole is held once, as its output (a record is written whole or not at all): identity,
# unmapped: keep with a rename, and a rename of the big member (issue #31: at most 1.3x the record).
echo '{"mapper":"identity"}' > "$tmp/identity.json"
size=$(stat -c %s "$tmp/big.ndjson")
for flags in "--spec $tmp/identity.json" "--keep-unmapped --field id=ident --field user.name=name" "--keep-unmapped --field payload=items"; do
  for engine in stream tree; do
    /usr/bin/time -f "%M %e" -o "$tmp/time" "$bin" --engine $engine $flags "$tmp/big.ndjson" | wc -c > "$tmp/count"
    read -r kb secs < <(tail -1 "$tmp/time")
    echo "big, written whole ($(echo "$flags" | sed "s|$tmp/||")), $engine engine: peak RSS $((kb / 1024)) MB ($(python3 -c "print(f'{$kb * 1024 / $size:.2f}')")x the record), ${secs}s, output $(cat "$tmp/count") bytes"
  done
done

seed=Samples/seed/tweets.ndjson   # the repository's sample records (Samples/seed/README.md)
cp "$seed" "$tmp/unit.ndjson"
echo '{"fields":{"id":"id","user.screen_name":"user","text":"text","created_at":{"to":"createdAt","via":[{"stringToDate":"twitter"},{"dateToNumber":"ms"}]}}}' > "$tmp/tweet.json"
for mb in 100 400 1000; do
  unit=$(stat -c %s "$tmp/unit.ndjson")
  reps=$(( mb * 1048576 / unit ))
  /usr/bin/time -f "%M %e" bash -c "for i in \$(seq $reps); do cat '$tmp/unit.ndjson'; done | '$bin' --spec '$tmp/tweet.json' > /dev/null" 2>"$tmp/time"
  read -r kb secs < <(tail -1 "$tmp/time")
  echo "NDJSON ~${mb} MB of tweets (stream engine): peak RSS $((kb / 1024)) MB, ${secs}s"
done
