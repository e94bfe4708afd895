#!/usr/bin/env python3
"""Deterministic NDJSON corpus for Benchmarks/compare.sh.

    python3 Benchmarks/corpus.py OUT.ndjson [--size-mb 100] [--seed 20140831] [--seed-dir DIR]
                                 [--events-share 0.10] [--invalid-share 0.01]

Records are derived from the seed files (the repository's Samples/seed/tweets.ndjson and gh_events.ndjson, or
--seed-dir, or STREAMMAP_SEED_DIR): tweet-like records (the ones specs/tweets.spec.json maps) and GitHub-event-like
records (which the tweet mapping rejects: a mixed firehose). Every value that matters for the mapping is
re-randomised with a fixed seed: ids above 2^53 (tweet ids are ~5e17..1.9e18), Twitter dates with the right
weekday, optional fields absent or null, floats (coordinates, scores, exponents), nested objects and arrays,
unicode text written raw or as \\u escapes (surrogate pairs included), quotes, backslashes and control characters.

About 1% of the lines are invalid JSON: truncated lines, bad literals (tru, nul, False, NaN, Infinity), a trailing
comma, a leading zero, a bad escape, a raw control character in a string, a stray invalid UTF-8 byte.

The same arguments give the same bytes (Python's random.Random with an integer seed is stable across versions).
A summary goes to standard error, and OUT.manifest.json lists the line numbers of the invalid lines (with what is
wrong with each) and of the GitHub-event records, so that compare.py can say which kind of line a tool got wrong.
Nothing is written under the repository unless OUT is there.
"""
import argparse
import datetime
import json
import os
import random
import sys

WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
LANGS = ["en", "ja", "es", "pt", "ar", "fr", "und", "zh", "ru", "tr"]
SNIPPETS = [
    "café crème", "naïve façade", "東京タワー", "Привет, мир", "مرحبا", "😀😂👍🏽", "🇯🇵 #日本",
    "tab\there", "line\nbreak", "quote \"inside\"", "back\\slash", "ctrl\u0001char", "a/b/c", "€100 – £80",
    "\u2028sep\u2029", "zero\u200bwidth", "ﬁ ligature", "e\u0301 combining", "𝕄𝕒𝕥𝕙", "http://t.co/xYz",
]
BAD_FRAGMENTS = [
    # (name, fragment replacing the sentinel member) -- each makes the whole line invalid JSON
    ("bad literal tru", '"favorited":tru'),
    ("bad literal nul", '"geo":nul'),
    ("bad literal False", '"retweeted":False'),
    ("bad literal NaN", '"possibly_sensitive_score":NaN'),
    ("bad literal Infinity", '"quality":Infinity'),
    ("trailing comma", '"filter_level":"low",'),
    ("leading zero", '"quoted_count":007'),
    ("bad escape", '"note":"bad \\x41 escape"'),
    ("raw control char", '"note":"raw\ttab"'),
    ("single quotes", "'note':'single'"),
]
SENTINEL = "__streammap_bench_bad__"


def find_seed_dir(explicit):
    if explicit:
        return explicit
    env = os.environ.get("STREAMMAP_SEED_DIR")
    if env:
        return env
    # The repository's own sample records (Samples/seed/README.md): never anything outside the clone.
    cand = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Samples", "seed")
    if os.path.exists(os.path.join(cand, "tweets.ndjson")):
        return cand
    return None


def load(path):
    with open(path, "rb") as f:
        return [json.loads(line) for line in f if line.strip()]


def twitter_date(rng):
    # 2008-01-01 .. 2024-12-31, always +0000 as Twitter writes it.
    t = datetime.datetime(2008, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=rng.randrange(0, 536_000_000))
    return "%s %s %02d %02d:%02d:%02d +0000 %d" % (WEEKDAYS[t.weekday()], MONTHS[t.month - 1], t.day, t.hour, t.minute, t.second, t.year)


def iso_date(rng):
    t = datetime.datetime(2011, 1, 1) + datetime.timedelta(seconds=rng.randrange(0, 400_000_000))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def big_id(rng):
    return rng.randrange(500_000_000_000_000_000, 1_900_000_000_000_000_000)


def mutate_text(rng, text):
    parts = [text]
    for _ in range(rng.randrange(0, 3)):
        parts.insert(rng.randrange(0, len(parts) + 1), rng.choice(SNIPPETS))
    return " ".join(parts)


def make_tweet(rng, seed, n):
    t = json.loads(json.dumps(seed))  # deep copy
    tid = big_id(rng)
    t["id"] = tid
    t["id_str"] = str(tid)
    t["created_at"] = twitter_date(rng)
    t["text"] = mutate_text(rng, t.get("text", ""))
    r = rng.random()
    if r < 0.15:
        rid = big_id(rng)
        t["in_reply_to_status_id"] = rid
        t["in_reply_to_status_id_str"] = str(rid)
    elif r < 0.95:
        t["in_reply_to_status_id"] = None
    else:
        t.pop("in_reply_to_status_id", None)
    u = t.setdefault("user", {})
    uid = rng.choice([rng.randrange(1, 4_000_000_000), rng.randrange(10**15, 2**62)])
    u["id"] = uid
    u["id_str"] = str(uid)
    u["screen_name"] = u.get("screen_name", "user") + str(n % 1000)
    u["followers_count"] = int(rng.paretovariate(1.2) * 50)
    v = rng.random()
    if v < 0.8:
        u["verified"] = rng.random() < 0.1
    elif v < 0.9:
        u["verified"] = None
    else:
        u.pop("verified", None)
    t["retweet_count"] = int(rng.paretovariate(1.5)) - 1
    f = rng.random()
    if f < 0.85:
        t["favorite_count"] = int(rng.paretovariate(1.3)) - 1
    elif f < 0.92:
        t["favorite_count"] = None
    else:
        t.pop("favorite_count", None)
    g = rng.random()
    if g < 0.85:
        t["lang"] = rng.choice(LANGS)
    elif g < 0.93:
        t["lang"] = None
    else:
        t.pop("lang", None)
    # Floats and nulls in unmapped places.
    if rng.random() < 0.3:
        lon, lat = rng.uniform(-180, 180), rng.uniform(-90, 90)
        t["coordinates"] = {"type": "Point", "coordinates": [lon, lat]}
        t["geo"] = {"type": "Point", "coordinates": [lat, lon]}
    t["possibly_sensitive_score"] = rng.choice([0.0, 1e-7, 0.5, 123.456e10, -2.5e-308, None])
    t["place"] = None if rng.random() < 0.8 else {"id": "%016x" % rng.getrandbits(64), "bbox": [[rng.uniform(-1, 1) for _ in range(2)] for _ in range(4)]}
    return t


def make_event(rng, seed, n):
    e = json.loads(json.dumps(seed))
    e["id"] = str(rng.randrange(1_000_000_000, 30_000_000_000))
    e["created_at"] = iso_date(rng)
    a = e.setdefault("actor", {})
    a["id"] = rng.randrange(1, 200_000_000)
    p = e.setdefault("payload", {})
    if "push_id" in p:
        p["push_id"] = rng.randrange(2**53, 2**63)
    for c in p.get("commits", []) or []:
        c["message"] = mutate_text(rng, c.get("message", ""))
        c["sha"] = "%040x" % rng.getrandbits(160)
    e["score"] = rng.choice([None, 0.1, 2.5e3, -1.0e-3])
    return e


def dump(rng, obj):
    # A quarter of the records escape every non-ASCII character (\uXXXX, surrogate pairs for astral ones).
    return json.dumps(obj, ensure_ascii=rng.random() < 0.25, separators=(",", ":"), allow_nan=False)


def corrupt(rng, obj):
    """An invalid line, and what is wrong with it."""
    k = rng.random()
    if k < 0.45:  # truncated: a prefix of a valid line (never valid: the closing brace is missing)
        line = dump(rng, obj)
        return line[: rng.randrange(1, len(line) - 1)], "truncated"
    if k < 0.50:  # a stray invalid UTF-8 byte inside a string
        obj = dict(obj)
        obj["note"] = "x" + SENTINEL
        line = dump(rng, obj).encode("utf-8").replace(SENTINEL.encode(), b"\xff\xfe")
        return line, "invalid UTF-8"
    name, frag = rng.choice(BAD_FRAGMENTS)
    obj = dict(obj)
    obj[SENTINEL] = 0
    line = dump(rng, obj).replace('"%s":0' % SENTINEL, frag)
    return line, name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=float, default=100.0, help="target size in MB (10^6 bytes)")
    ap.add_argument("--seed", type=int, default=20140831)
    ap.add_argument("--seed-dir")
    ap.add_argument("--events-share", type=float, default=0.10, help="share of GitHub-event-like records")
    ap.add_argument("--invalid-share", type=float, default=0.01, help="share of invalid JSON lines")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    seed_dir = find_seed_dir(args.seed_dir)
    if seed_dir:
        tweets = load(os.path.join(seed_dir, "tweets.ndjson"))
        events = load(os.path.join(seed_dir, "gh_events.ndjson"))
    else:
        print("corpus.py: seed files not found; using synthetic seeds", file=sys.stderr)
        tweets = [{"created_at": "", "id": 0, "id_str": "", "text": "hello", "truncated": False, "user": {"id": 1, "screen_name": "u", "followers_count": 0},
                   "retweet_count": 0, "entities": {"hashtags": [{"text": "x", "indices": [0, 1]}], "urls": []}, "favorited": False, "retweeted": False}]
        events = [{"type": "PushEvent", "created_at": "", "actor": {"login": "dev", "id": 1}, "repo": {"id": 2, "name": "dev/repo"},
                   "public": True, "payload": {"size": 1, "push_id": 1, "commits": [{"sha": "", "message": "fix"}]}, "id": ""}]

    target = int(args.size_mb * 1_000_000)
    written = 0
    counts = {"tweet": 0, "event": 0, "invalid": 0}
    kinds = {}
    manifest = {"invalid": {}, "events": []}
    n = 0
    with open(args.out, "wb") as out:
        while written < target:
            n += 1
            if rng.random() < args.events_share:
                obj = make_event(rng, rng.choice(events), n)
                kind = "event"
            else:
                obj = make_tweet(rng, rng.choice(tweets), n)
                kind = "tweet"
            if rng.random() < args.invalid_share:
                line, why = corrupt(rng, obj)
                kinds[why] = kinds.get(why, 0) + 1
                manifest["invalid"][n] = why
                kind = "invalid"
            else:
                line = dump(rng, obj)
            data = line if isinstance(line, bytes) else line.encode("utf-8")
            out.write(data + b"\n")
            written += len(data) + 1
            counts[kind] += 1
            if kind == "event":
                manifest["events"].append(n)
    with open(args.out + ".manifest.json", "w") as f:
        json.dump(manifest, f)
    print("corpus.py: %s: %d bytes, %d lines (%d tweets, %d events, %d invalid: %s)" % (
        args.out, written, n, counts["tweet"], counts["event"], counts["invalid"],
        ", ".join("%s %d" % kv for kv in sorted(kinds.items()))), file=sys.stderr)


if __name__ == "__main__":
    main()
