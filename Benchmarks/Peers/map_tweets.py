#!/usr/bin/env python3
"""specs/tweets.spec.json written by hand in Python: what a user would write instead of StreamMap.

    python3 map_tweets.py json|orjson CORPUS.ndjson > out.ndjson 2> rejects

One output line per mapped record, in input order; a record that cannot be mapped is reported on stderr as its
line number and not written. The rules are the spec's: required fields (absent or null rejects), JSON type checks
(integer = a JSON integer, not a float or a bool), Twitter's created_at to epoch milliseconds, defaults for
user.verified (false), favorite_count (0) and lang ("und"), in_reply_to_status_id left out when absent or null.
"""
import sys
from datetime import datetime

impl = sys.argv[1]
if impl == "orjson":
    import orjson

    loads = orjson.loads

    def dumps(obj):
        return orjson.dumps(obj)

elif impl == "json":
    import json

    loads = json.loads
    _encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def dumps(obj):
        return _encode(obj).encode("utf-8")

else:
    sys.exit("usage: map_tweets.py json|orjson FILE")


class Reject(Exception):
    pass


def integer(v):
    if type(v) is not int:  # bool is a subclass of int: excluded by the exact type test
        raise Reject
    return v


def string(v):
    if type(v) is not str:
        raise Reject
    return v


def twitter_ms(v):
    # "Sun Aug 31 00:29:15 +0000 2014"
    dt = datetime.strptime(string(v), "%a %b %d %H:%M:%S %z %Y")
    return int(dt.timestamp()) * 1000


def map_tweet(r):
    if type(r) is not dict:
        raise Reject
    u = r.get("user")
    if type(u) is not dict:
        raise Reject
    verified = u.get("verified")
    if verified is None:
        verified = False
    elif type(verified) is not bool:
        raise Reject
    likes = r.get("favorite_count")
    likes = 0 if likes is None else integer(likes)
    lang = r.get("lang")
    lang = "und" if lang is None else string(lang)
    out = {
        "id": integer(r.get("id")),
        "idStr": string(r.get("id_str")),
        "createdAtMs": twitter_ms(r.get("created_at")),
        "text": string(r.get("text")),
        "user": {
            "id": integer(u.get("id")),
            "handle": string(u.get("screen_name")),
            "followers": integer(u.get("followers_count")),
            "verified": verified,
        },
        "stats": {"retweets": integer(r.get("retweet_count")), "likes": likes},
        "lang": lang,
    }
    reply = r.get("in_reply_to_status_id")
    if reply is not None:
        out["replyTo"] = integer(reply)
    return out


def main():
    out = sys.stdout.buffer
    err = sys.stderr
    batch = []
    with open(sys.argv[2], "rb") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip(b"\r\n")
            if not line:
                continue
            try:
                batch.append(dumps(map_tweet(loads(line))))
            except Exception:  # invalid JSON, a failed check, an unparseable date
                err.write("%d\n" % n)
                continue
            if len(batch) >= 512:
                batch.append(b"")
                out.write(b"\n".join(batch))
                batch = []
    if batch:
        batch.append(b"")
        out.write(b"\n".join(batch))


main()
