"""A generated NDJSON corpus with every kind of line a serial run must count (made at test time, never committed).

Tweet-like records (what ``Benchmarks/specs/tweets.spec.json`` maps) with, mixed in: bad JSON, truncated lines,
invalid UTF-8, wrong types, a missing required field, an unparseable date, blank and whitespace-only lines, CRLF
endings, a CR before a record, a byte order mark at the start of the first file (skipped) and at the start of a
line in the middle (rejected), a record longer than several splits (mapped) and one longer than the rejects
limit (rejected, truncated), a last line without a newline, a last line ending in a lone CR, and an empty file.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import List

WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
TEXTS = ["hello", "café crème", "東京タワー", "😀😂👍🏽", "quote \"q\"", "back\\slash", "tab\there", "e\u0301"]


def tweet(rng: random.Random, n: int, text: str = "") -> dict:
    day = rng.randrange(1, 29)
    t = {
        "id": 10**18 + n * 7919,
        "id_str": str(10**18 + n * 7919),
        "created_at": "%s %s %02d %02d:%02d:%02d +0000 %d" % (
            "Mon", MONTHS[rng.randrange(12)], day, rng.randrange(24), rng.randrange(60), rng.randrange(60), 2015),
        "text": text or rng.choice(TEXTS),
        "user": {"id": rng.randrange(1, 1 << 40), "screen_name": "u%d" % rng.randrange(10**6),
                 "followers_count": rng.randrange(10**7)},
        "retweet_count": rng.randrange(1000),
        "lang": rng.choice(["en", "ja", None]),
    }
    if rng.random() < 0.5:
        t["user"]["verified"] = rng.random() < 0.5
    if rng.random() < 0.5:
        t["favorite_count"] = rng.randrange(100)
    if rng.random() < 0.3:
        t["in_reply_to_status_id"] = rng.choice([None, 10**17 + n])
    return t


def dump(obj: dict) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def fix_weekdays(line: bytes) -> bytes:
    """Twitter dates carry the weekday; the date parser checks it, so every generated date gets the right one."""
    import datetime
    s = line.decode("utf-8", errors="surrogateescape")
    at = s.find('"created_at":"')
    if at < 0:
        return line
    start = at + len('"created_at":"')
    value = s[start:start + 30]
    try:
        t = datetime.datetime.strptime(value[4:], "%b %d %H:%M:%S +0000 %Y")
    except ValueError:
        return line
    s = s[:start] + WEEKDAYS[t.weekday()] + s[start + 3:]
    return s.encode("utf-8", errors="surrogateescape")


def bad_line(rng: random.Random, n: int) -> bytes:
    """One line that streammap rejects (or, for blank lines, skips), chosen at random."""
    t = tweet(rng, n)
    kind = rng.randrange(10)
    if kind == 0:
        return dump(t).replace(b'"retweet_count":', b'"retweet_count":tru,"x":', 1)  # bad literal
    if kind == 1:
        line = dump(t)
        return line[: rng.randrange(1, len(line) - 1)]  # truncated
    if kind == 2:
        return dump(t).replace(b'"text":"', b'"text":"\xff\xfe', 1)  # invalid UTF-8
    if kind == 3:
        t["id"] = str(t["id"])  # wrong type
        return dump(t)
    if kind == 4:
        t["user"]["followers_count"] = "many"  # wrong nested type
        return dump(t)
    if kind == 5:
        del t["created_at"]  # required field missing
        return dump(t)
    if kind == 6:
        t["created_at"] = "yesterday"
        return dump(t)
    if kind == 7:
        return b""  # blank line
    if kind == 8:
        return b" \t \r"  # whitespace only
    return b"[1,2" + b"]" * rng.randrange(2) + b" {}"  # garbage after a value, or unclosed


def write_corpus(folder: Path, records: int, seed: int = 16) -> List[Path]:
    """Writes 3 files holding ``records`` records in all, as a serial run counts them (``count_records``: blank and
    whitespace-only lines come on top), plus an empty one; returns their paths in order."""
    rng = random.Random(seed)
    paths = [folder / f"part{i}.ndjson" for i in range(3)] + [folder / "empty.ndjson"]
    n = 0
    for i, path in enumerate(paths[:3]):
        per_file = records // 3 + (1 if i < records % 3 else 0)
        in_file = 0  # records written to this file
        with open(path, "wb") as out:
            if i == 0:
                out.write(b"\xef\xbb\xbf")  # a BOM at the start of the input: skipped by streammap
            for k in itertools.count():
                n += 1
                in_file += 1  # each special line below is a record
                if k == per_file // 2 and i == 1:
                    out.write(dump(tweet(rng, n, "long " * 600_000)) + b"\n")  # 3 MB: longer than 2 splits
                    continue
                if k == per_file // 3 and i == 2:
                    t = tweet(rng, n, "x" * 200_000)
                    t["id"] = "not a number"  # rejected, its text cut at --rejects-record-bytes
                    out.write(dump(t) + b"\n")
                    continue
                if k == per_file // 4:
                    out.write(b"\xef\xbb\xbf" + dump(tweet(rng, n)) + b"\n")  # a BOM mid-file: rejected
                    continue
                r = rng.random()
                if r < 0.03:
                    line = bad_line(rng, n)
                else:
                    line = dump(tweet(rng, n))
                line = fix_weekdays(line)
                if r > 0.97:
                    line += b"\r"  # CRLF
                elif 0.95 < r < 0.96:
                    line = b"\r  " + line  # a CR (and spaces) before the record
                if not line.strip(b" \t\r"):
                    in_file -= 1  # a blank line: counted as a line, not as a record
                last = in_file >= per_file
                if last and i == 1:
                    out.write(line + b"\r")  # a lone CR at the end of the input
                elif last and i == 2:
                    out.write(line)  # no newline at the end
                else:
                    out.write(line + b"\n")
                if last:
                    break
    paths[3].write_bytes(b"")
    return paths


def count_records(path: Path) -> int:
    """The records a serial NDJSON run reads in ``path``: lines holding anything but spaces, tabs and CRs (after a
    byte order mark at the very start)."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return sum(1 for line in data.split(b"\n") if line.strip(b" \t\r"))
