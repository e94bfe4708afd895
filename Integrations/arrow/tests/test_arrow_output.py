"""`streammap --to arrow` read by real readers.

- Generated typed specs and records: pyarrow reads and fully validates the stream (stdout), the file (`-o x.arrow`),
  the tree engine's and `--jobs 2`'s output; they hold one table, its schema is the spec's, and its values are the
  NDJSON output's, typed, less the records rejected only because a number does not fit its int64/float64 column.
- DuckDB and Polars read the tweet benchmark's output (file and stream) and agree with pyarrow and the NDJSON output.
- The usage errors, empty and all-rejected outputs, several record batches.
- The reader blocks of docs/cli.md and README.md run as written.

    STREAMMAP_BINARY=path/to/streammap python -m pytest -q tests      (scripts/arrow-test.sh does it all)
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from conftest import REPO, TWEETS_SPEC, lines_of, read_file, read_rejects, read_stream, run

INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1

# MARK: generated specs and records

KINDS = ["integer", "number", "string", "boolean", "ints", "strings", "object", "array", "date"]
ARROW_TYPES = {
    "integer": pa.int64(), "number": pa.float64(), "string": pa.string(), "boolean": pa.bool_(),
    "ints": pa.list_(pa.int64()), "strings": pa.list_(pa.string()),
    "object": pa.string(), "array": pa.string(),  # compact JSON text
    "date": pa.int64(),  # stringToDate then dateToNumber ms
}
DEFAULTS = {  # defaults of the column's type (an integer default in a number column is fine)
    "integer": [7, INT64_MIN, INT64_MAX, 0],
    "number": [0.25, 2, -1.5e300, 5e-324],
    "string": ["d", "é \"q\" \\ 😀", ""],
    "boolean": [True, False],
}
STRING_PIECES = ["a", "xyz", " ", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\r", "\\b", "\\f", "\\u00e9", "\\u0000",
                 "\\u001f", "\\ud83d\\ude00", "\\uD83C\\uDDEF\\uD83C\\uDDF5", "\\u2028", "\\uffff", "é", "日本語",
                 "😀", "👍🏽", "e\u0301", "\u200b", "\u2028", ",", "{}", "[", "'", "%s", "\\\\u0041"]


class Num(str):
    """A number of the NDJSON output, kept as its text (json.loads's parse_int/parse_float)."""
    def is_int(self) -> bool:
        return re.fullmatch(r"-?\d+", self) is not None


def string_text(rng: random.Random) -> str:
    if rng.randrange(30) == 0:
        return '"' + "long " * rng.randrange(50, 400) + '"'
    return '"' + "".join(rng.choice(STRING_PIECES) for _ in range(rng.randrange(0, 6))) + '"'


def integer_text(rng: random.Random) -> str:
    return rng.choice(["0", "-0", "1", "-1", "42", str(INT64_MAX), str(INT64_MIN), str(2 ** 53 + 1),
                       str(rng.randint(INT64_MIN, INT64_MAX)), str(rng.randint(-1000, 1000))])


def number_text(rng: random.Random) -> str:
    roll = rng.randrange(4)
    if roll == 0:
        return rng.choice(["0.1", "-2.5e10", "3", "-0", "-0.0", "1E-5", "1e+22", "1e-300", "1e-400", "4.9e-324",
                           "2.2250738585072011e-308", "1.7976931348623157e308", "123456789.123456789",
                           "0.1000000000000000055511151231257827021181583404541015625", "9007199254740993",
                           "1.00000000000000011102230246251565404236316680908203125", str(2 ** 64 + 5)])
    if roll == 1:
        return repr(rng.uniform(-1e6, 1e6))
    if roll == 2:  # many digits: the nearest double is not the shortest text
        return f"{rng.choice(['', '-'])}{rng.randrange(1, 10)}.{rng.randrange(10 ** 25):025d}e{rng.randrange(-300, 300)}"
    return str(rng.randint(-10 ** 6, 10 ** 6))


def json_text(rng: random.Random, depth: int = 0) -> str:
    """Any JSON value, as text with odd spacing, numbers of every kind."""
    roll = rng.randrange(10 if depth < 3 else 6)
    if roll == 0:
        return rng.choice(["null", "true", "false"])
    if roll in (1, 2):
        return rng.choice([integer_text(rng), number_text(rng), str(2 ** 70), "1e400", "-1e400", "1.5E+3"])
    if roll in (3, 4, 5):
        return string_text(rng)
    if roll in (6, 7):
        return "[" + ", ".join(json_text(rng, depth + 1) for _ in range(rng.randrange(4))) + "]"
    keys = rng.sample(["k", "z", "é", "a b", "0", "\\u00e9x", "\\\"q"], rng.randrange(4))
    return "{" + ",".join(f'"{k}" :{json_text(rng, depth + 1)}' for k in keys) + " }"


def date_text(rng: random.Random) -> str:
    year = rng.choice([1900, 1969, 1970, 2014, 2038, 2100, rng.randrange(1000, 9999)])
    text = f"{year:04d}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
    if rng.randrange(2):  # whole milliseconds (finer fractions are OUT_OF_RANGE's)
        text += rng.choice([".5", ".25", ".999", ".100000", ".120000000", f".{rng.randrange(1000):03d}"])
    return '"' + text + rng.choice(["Z", "Z", "+02:00", "-05:30", "+00:00"]) + '"'


def right_value(kind: str, rng: random.Random) -> str:
    if kind == "integer":
        return integer_text(rng)
    if kind == "number":
        return number_text(rng)
    if kind == "string":
        return string_text(rng)
    if kind == "boolean":
        return rng.choice(["true", "false"])
    if kind == "ints":
        return "[" + ",".join(integer_text(rng) for _ in range(rng.randrange(5))) + "]"
    if kind == "strings":
        return "[ " + " , ".join(string_text(rng) for _ in range(rng.randrange(5))) + "]"
    if kind == "object":
        keys = rng.sample(["k", "z", "é", "n", "\\u00e9x"], rng.randrange(4))
        return "{" + ",".join(f'"{k}": {json_text(rng, 1)}' for k in keys) + "}"
    if kind == "array":
        return "[" + ",".join(json_text(rng, 1) for _ in range(rng.randrange(4))) + "]"
    return date_text(rng)


WRONG = {
    "integer": ['"7"', "1.5", "1e2", "true", "[1]", "{}"],
    "number": ['"1.5"', "false", "[]"],
    "string": ["5", "true", '["a"]', "{}", '"lone \\ud800 surrogate"'],
    "boolean": ["1", '"true"', "null"],
    "ints": ["[1.5]", '["a"]', "5", "[null]", "[1,[2]]"],
    "strings": ["[1]", '"a"', "[null]", "[true]"],
    "object": ["[1]", '"x"', "5"],
    "array": ['{"a":1}', '"x"', "5"],
    "date": ["5", '"yesterday"', '"2014-08-31T00:29:15.1234567891Z"', '"2014-02-30T00:00:00Z"'],
}
OUT_OF_RANGE = {  # valid JSON of the right type, beyond the column
    "integer": [str(2 ** 64 + 5), str(2 ** 63), str(INT64_MIN - 1), str(-2 ** 64 - 5), "1" + "0" * 40],
    "number": ["1e400", "-1e400", "1.7976931348623159e308", "2e308", "1" + "0" * 400],
    "ints": [f"[{2 ** 64 + 5}]", f"[1, {2 ** 63}, 2]", f"[{INT64_MIN - 1}]"],
    "date": ['"2014-08-31T00:29:15.2505Z"', '"1970-01-01T00:00:00.0001Z"'],  # fractions of a ms: not an integer
}


def value_text(kind: str, rng: random.Random) -> Optional[str]:
    """A source value's JSON text (None: absent)."""
    roll = rng.randrange(100)
    if roll < 7:
        return None
    if roll < 13:
        return "null"
    if roll < 19:
        return rng.choice(WRONG[kind])
    if roll < 24 and kind in OUT_OF_RANGE:
        return rng.choice(OUT_OF_RANGE[kind])
    return right_value(kind, rng)


INVALID_LINES = [b'{"f0": ', b'{"f0": tru}', b'{"f0": 1,}', b'{"f0": "\\x"}', b'{"f0": "\xff\xfe"}', b'nul',
                 b'{"f0": 1} {"f1": 2}', b'{"f0": 01}', b'{"f0": "raw\ttab"}', b"{'f0': 1}", b'[1, 2]', b'5']

Layout = List[Tuple[List[str], str, List[str]]]  # (source steps, kind, destination steps)


def generate(seed: int) -> Tuple[Dict[str, Any], Layout, List[bytes]]:
    """A typed spec of 3 to 8 fields, its layout, and the input lines."""
    rng = random.Random(seed)
    fields: Dict[str, Any] = {}
    layout: Layout = []
    for i in range(rng.randrange(3, 9)):
        kind = rng.choice(KINDS)
        literal = rng.randrange(12) == 0
        if literal:  # a key with a dot in it, on both sides
            source, destination = [f"l{i}.x"], [f"l{i}.y"]
        else:
            source = rng.choice([[f"f{i}"], [f"f{i}"], ["in", f"f{i}"]])
            name = rng.choice([f"f{i}", f"f{i}", f"f{i}", f"é{i}", f"名 {i}", f'q"{i}'])  # column names are UTF-8
            destination = rng.choice([[name], [name], ["g", name], ["g", name], ["g", "h", name], ["ü", name]])
        entry: Dict[str, Any] = {"to": ".".join(destination)}
        if literal:
            entry["literal"] = True
        if kind == "ints":
            entry["via"] = {"arrayOf": "integer"}
        elif kind == "strings":
            entry["via"] = {"arrayOf": "string"}
        elif kind == "date":
            entry["via"] = [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]
        else:
            entry["type"] = kind
        presence = rng.choice(["plain", "required", "optional", "omit", "null", "default"])
        if presence == "required":
            entry["required"] = True
        elif presence == "optional":
            entry["optional"] = True
        elif presence == "omit":
            entry["missing"], entry["null"] = "omit", "omit"
        elif presence == "null":
            entry["missing"], entry["null"] = "null", "null"
        elif presence == "default" and kind in DEFAULTS:
            entry["default"] = rng.choice(DEFAULTS[kind])
            if rng.randrange(3) == 0:
                entry["optional"] = True
        fields[".".join(source)] = entry
        layout.append((source, kind, destination))

    lines: List[bytes] = []
    for _ in range(rng.randrange(100, 180)):
        roll = rng.randrange(60)
        if roll == 0:
            lines.append(rng.choice(INVALID_LINES))
            continue
        if roll == 1:
            lines.append(b"")
            continue
        record: Dict[str, Any] = {}
        for source, kind, _ in layout:
            text = value_text(kind, rng)
            if text is not None:
                node = record
                for step in source[:-1]:
                    node = node.setdefault(step, {})
                node[source[-1]] = text
        if rng.randrange(4) == 0:  # keys the spec does not map
            record["zz"] = json_text(rng)
        if "in" in record and rng.randrange(30) == 0:
            record["in"] = rng.choice(["null", "[]", "5"])
        lines.append(dump(record, rng).encode("utf-8"))
    return {"streammap": 1, "fields": fields}, layout, lines


def dump(node: Union[str, Dict[str, Any]], rng: random.Random) -> str:
    if isinstance(node, str):
        return node
    items = list(node.items())
    rng.shuffle(items)
    comma, colon = rng.choice([(",", ":"), (", ", ": "), (" ,\t", " : ")])
    return "{" + comma.join(f'"{k}"{colon}{dump(v, rng)}' for k, v in items) + "}"


def column_tree(layout: Layout) -> Dict[str, Any]:
    """Destination steps as nested dicts (structs), in first-appearance order; the leaves are kinds."""
    tree: Dict[str, Any] = {}
    for _, kind, steps in layout:
        node = tree
        for step in steps[:-1]:
            node = node.setdefault(step, {})
        node[steps[-1]] = kind
    return tree


def arrow_type(node: Union[str, Dict[str, Any]]) -> pa.DataType:
    if isinstance(node, str):
        return ARROW_TYPES[node]
    return pa.struct([pa.field(name, arrow_type(child)) for name, child in node.items()])


def expected_schema(layout: Layout) -> pa.Schema:
    return pa.schema([pa.field(name, arrow_type(child)) for name, child in column_tree(layout).items()])


# MARK: comparing typed values with the NDJSON output

def float_bits(x: float) -> bytes:
    return struct.pack("<d", x)


def all_null(value: Any) -> bool:
    """No leaf value: None, or a struct (dict) whose members are all such."""
    return value is None or (isinstance(value, dict) and all(all_null(v) for v in value.values()))


def compare(got: Any, text: Any, plain: Any, node: Union[str, Dict[str, Any]], where: str) -> None:
    """pyarrow's value `got` against the NDJSON output's value, parsed with numbers as text (`text`) and plainly
    (`plain`, for JSON text columns); `node` is the column's kind or struct."""
    if isinstance(node, dict):
        if text is None:  # absent or null: a null struct, or one of nulls
            assert all_null(got), f"{where}: {got!r}, expected null"
            return
        assert isinstance(text, dict), f"{where}: NDJSON wrote {text!r} for a struct"
        assert set(text) <= set(node), f"{where}: NDJSON keys {sorted(text)} not all in {list(node)}"
        if got is None:
            assert all_null(text), f"{where}: null struct, NDJSON wrote {text!r}"
            return
        assert isinstance(got, dict) and list(got) == list(node), f"{where}: {got!r}"
        for name, child in node.items():
            compare(got[name], text.get(name), plain.get(name), child, f"{where}/{name}")
        return
    if text is None:
        assert got is None, f"{where}: {got!r}, NDJSON wrote null or nothing"
        return
    assert got is not None, f"{where}: null, NDJSON wrote {text!r}"
    if node in ("integer", "date"):
        assert isinstance(text, Num) and text.is_int(), f"{where}: NDJSON wrote {text!r} (not rejected in Arrow)"
        assert type(got) is int and got == int(text), f"{where}: {got!r}, NDJSON wrote {text}"
    elif node == "number":
        assert isinstance(text, Num), f"{where}: NDJSON wrote {text!r}"
        assert type(got) is float and float_bits(got) == float_bits(float(text)), \
            f"{where}: {got!r}, the nearest double to the NDJSON's {text} is {float(text)!r}"
    elif node == "string":
        assert type(got) is str and got == text, f"{where}: {got!r} != {text!r}"
    elif node == "boolean":
        assert type(got) is bool and got is text, f"{where}: {got!r} != {text!r}"
    elif node in ("ints", "strings"):
        assert isinstance(got, list) and isinstance(text, list) and len(got) == len(text), f"{where}: {got!r} != {text!r}"
        for i, (g, t) in enumerate(zip(got, text)):
            compare(g, t, None, "integer" if node == "ints" else "string", f"{where}/{i}")
    else:  # object, array: compact JSON text
        assert type(got) is str, f"{where}: {got!r}"
        assert json.loads(got) == plain, f"{where}: the JSON text {got!r} is not {plain!r}"
        assert "\n" not in got and not got.startswith(" "), f"{where}: {got!r} is not compact"


def out_of_range(text: Any, node: Union[str, Dict[str, Any]], where: str) -> List[str]:
    """The destination pointers of the values of an NDJSON row that its Arrow columns cannot hold: an integer beyond
    int64 or not an integer in an int64 column, a number beyond a double's range in a float64 one."""
    if text is None:
        return []
    if isinstance(node, dict):
        return [p for name, child in node.items() for p in out_of_range(text.get(name), child, f"{where}/{name}")]
    if node in ("integer", "date"):
        return [] if isinstance(text, Num) and text.is_int() and INT64_MIN <= int(text) <= INT64_MAX else [where]
    if node == "number":
        return [where] if math.isinf(float(text)) else []
    if node == "ints":
        return [p for i, t in enumerate(text) for p in out_of_range(t, "integer", f"{where}/{i}")]
    return []


def fatal(reject: dict) -> List[dict]:
    return [e for e in reject["errors"] if e["fatal"]]


# MARK: the differential test

@pytest.mark.parametrize("seed", range(30))
def test_arrow_holds_the_ndjson_output_typed(seed: int, tmp_path: Path, binary: str) -> None:
    spec, layout, lines = generate(seed)
    spec_path, data = tmp_path / "spec.json", tmp_path / "in.ndjson"
    spec_path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    data.write_bytes(b"\n".join(lines) + b"\n")
    offsets, at = {}, 0
    for n, line in enumerate(lines, 1):
        offsets[n] = at
        at += len(line) + 1
    tree = column_tree(layout)
    base = ["-s", spec_path, data, "-q", "--framing", "ndjson"]  # (auto would read a cut first line as concat)

    # NDJSON: the reference.
    nd = run(binary, base + ["--rejects", tmp_path / "r-ndjson"])
    nd_rejects = read_rejects(tmp_path / "r-ndjson")
    assert nd.returncode == (1 if nd_rejects else 0), nd.stderr.decode()
    nd_lines = lines_of(nd.stdout)
    texts = [json.loads(s, parse_int=Num, parse_float=Num) for s in nd_lines]
    plains = [json.loads(s) for s in nd_lines]
    mapped = [n for n, line in enumerate(lines, 1) if line.strip() and n not in nd_rejects]
    assert len(mapped) == len(texts), "NDJSON: records in != out + rejected"

    # What Arrow must reject on top: the records with a number their column cannot hold.
    extra = {n: out_of_range(t, tree, "") for n, t in zip(mapped, texts)}
    extra = {n: pointers for n, pointers in extra.items() if pointers}
    expected_rejects = set(nd_rejects) | set(extra)

    # Arrow: stream to stdout, file, the tree engine, two jobs with tiny batches.
    variants = {"stream": [], "tree": ["--engine", "tree"], "jobs": ["--jobs", "2", "--batch-bytes", "200"]}
    streams, rejects = {}, {}
    for name, flags in variants.items():
        r = run(binary, base + ["--to", "arrow", "--rejects", tmp_path / f"r-{name}"] + flags)
        rejects[name] = read_rejects(tmp_path / f"r-{name}")
        assert r.returncode == (1 if expected_rejects else 0), (name, r.returncode, r.stderr.decode())
        streams[name] = r.stdout
    r = run(binary, base + ["-o", tmp_path / "x.arrow", "--rejects", tmp_path / "r-file"])
    rejects["file"] = read_rejects(tmp_path / "r-file")
    assert r.returncode == (1 if expected_rejects else 0), ("file", r.returncode, r.stderr.decode())
    assert r.stdout == b""

    table = read_stream(streams["stream"])
    tables = {name: read_stream(data) for name, data in streams.items()}
    tables["file"] = read_file(tmp_path / "x.arrow")
    for name, other in tables.items():
        assert other.schema == table.schema, name
        assert other.equals(table), f"{name}: another table than the stream's"
    # Both engines and --jobs write the same bytes (docs/cli.md), and --jobs the same rejects.
    assert streams["tree"] == streams["stream"] and streams["jobs"] == streams["stream"]

    def rejects_bytes(name: str) -> bytes:
        path = tmp_path / f"r-{name}"
        return path.read_bytes() if path.exists() else b""
    assert rejects_bytes("jobs") == rejects_bytes("stream")

    # The schema is the spec's.
    assert table.schema == expected_schema(layout), f"{table.schema}\n!=\n{expected_schema(layout)}"
    assert all(field.nullable for field in table.schema)

    # The rejects: NDJSON's, and the records with an out-of-range number, with messages that say so.
    for name, got in rejects.items():
        assert set(got) == expected_rejects, \
            f"{name}: rejected lines {sorted(set(got) - expected_rejects)} too many, {sorted(expected_rejects - set(got))} missing"
        for n, reject in got.items():
            assert reject["offset"] == offsets[n] and reject["input"] == str(data), (name, reject)
            if n in nd_rejects:
                want = [(e["code"], e["source"], e["message"]) for e in fatal(nd_rejects[n])]
                have = [(e["code"], e["source"], e["message"]) for e in fatal(reject)]
                assert set(want) <= set(have), (name, n, want, have)
            else:
                errors = fatal(reject)
                assert errors and all("int64" in e["message"] or "float64" in e["message"] for e in errors), (name, reject)
                assert sorted(e["destination"] for e in errors) == sorted(extra[n]), (name, reject, extra[n])

    # The rows: NDJSON's, less the Arrow-only rejects, typed.
    kept = [(n, t, p) for n, t, p in zip(mapped, texts, plains) if n not in extra]
    assert table.num_rows == len(kept)
    for got, (n, text, plain) in zip(table.to_pylist(), kept):
        assert set(text) <= set(tree), f"line {n}: NDJSON keys {sorted(text)}"
        for name, child in tree.items():
            compare(got[name], text.get(name), plain.get(name), child, f"line {n}: /{name}")

    # Without --rejects, each rejected record is reported on standard error with its line, and the Arrow-only
    # ones as not fitting their column.
    r = run(binary, ["-s", spec_path, data, "--framing", "ndjson", "--to", "arrow"])
    assert r.returncode == (1 if expected_rejects else 0) and r.stdout == streams["stream"]
    reported: Dict[int, List[str]] = {}
    prefix = f"streammap: {data}:"
    for message in lines_of(r.stderr):
        if message.startswith(prefix):
            line = int(message[len(prefix):].split(":", 1)[0])
            reported.setdefault(line, []).append(message)
    assert set(reported) == expected_rejects
    for n in extra:
        assert sorted(reported[n]) == sorted(f"{prefix}{n}: {e['source']}: {e['message']}"
                                             for e in fatal(rejects["stream"][n])), reported[n]


def test_generated_cases_cover_what_they_should() -> None:
    """The generator makes every kind of field and value the differential test is about."""
    kinds, presences, nested, literal = set(), set(), False, False
    for seed in range(30):
        spec, layout, lines = generate(seed)
        for (source, kind, destination), entry in zip(layout, spec["fields"].values()):
            kinds.add(kind)
            presences.update(k for k in ("required", "optional", "missing", "default") if k in entry)
            nested |= len(destination) > 1
            literal |= "literal" in entry
    assert kinds == set(KINDS) and presences == {"required", "optional", "missing", "default"} and nested and literal


# MARK: DuckDB and Polars on the benchmark's output

@pytest.fixture(scope="module")
def tweets(tmp_path_factory: pytest.TempPathFactory, binary: str) -> Dict[str, Any]:
    d = tmp_path_factory.mktemp("tweets")
    corpus = d / "tweets.ndjson"
    subprocess.run([sys.executable, str(REPO / "Benchmarks" / "corpus.py"), str(corpus), "--size-mb", "2"],
                   check=True, capture_output=True)
    nd = run(binary, ["-s", TWEETS_SPEC, corpus, "-q", "--rejects", d / "r-ndjson"])
    arrow_file, stream = d / "tweets.arrow", d / "tweets.arrows"
    f = run(binary, ["-s", TWEETS_SPEC, corpus, "-q", "-o", arrow_file, "--rejects", d / "r-file"])
    s = run(binary, ["-s", TWEETS_SPEC, corpus, "-q", "--to", "arrow", "--rejects", d / "r-stream"])
    stream.write_bytes(s.stdout)
    nd_lines = lines_of(nd.stdout)
    return {"nd": nd, "file_run": f, "stream_run": s, "rows": [json.loads(line) for line in nd_lines],
            "texts": [json.loads(line, parse_int=Num, parse_float=Num) for line in nd_lines],
            "file": arrow_file, "stream": stream, "dir": d}


TWEET_COLUMNS = {"id": "integer", "idStr": "string", "createdAtMs": "date", "text": "string",
                 "user": {"id": "integer", "handle": "string", "followers": "integer", "verified": "boolean"},
                 "stats": {"retweets": "integer", "likes": "integer"}, "lang": "string", "replyTo": "integer"}
TWEET_LEAVES = ["id", "idStr", "createdAtMs", "text", "user.id", "user.handle", "user.followers", "user.verified",
                "stats.retweets", "stats.likes", "lang", "replyTo"]


def leaf(row: Dict[str, Any], path: str) -> Any:
    value: Any = row
    for step in path.split("."):
        value = value.get(step) if isinstance(value, dict) else None
    return value


def test_tweets_arrow_is_the_ndjson_output(tweets: Dict[str, Any]) -> None:
    rows = tweets["rows"]
    assert len(rows) > 300
    nd_rejects = read_rejects(tweets["dir"] / "r-ndjson")
    assert nd_rejects and tweets["nd"].returncode == 1  # the corpus has invalid lines
    extra = {i for i, t in enumerate(tweets["texts"]) if out_of_range(t, TWEET_COLUMNS, "")}
    for run_name, rejects_name in (("file_run", "r-file"), ("stream_run", "r-stream")):
        assert tweets[run_name].returncode == 1, tweets[run_name].stderr
        assert len(read_rejects(tweets["dir"] / rejects_name)) == len(nd_rejects) + len(extra)
    table = read_file(tweets["file"])
    assert table.equals(read_stream(tweets["stream"].read_bytes()))
    assert table.schema == pa.schema([pa.field(name, arrow_type(child)) for name, child in TWEET_COLUMNS.items()])
    kept = [(t, p) for i, (t, p) in enumerate(zip(tweets["texts"], rows)) if i not in extra]
    assert table.num_rows == len(kept)
    for i, (got, (text, plain)) in enumerate(zip(table.to_pylist(), kept)):
        for name, child in TWEET_COLUMNS.items():
            compare(got[name], text.get(name), plain.get(name), child, f"row {i}: /{name}")


def test_duckdb_and_polars_read_the_same_rows(tweets: Dict[str, Any]) -> None:
    rows = tweets["rows"]
    table = read_file(tweets["file"])
    assert table.num_rows == len(rows)  # no tweet has a number beyond its column
    ids = sum(r["id"] for r in rows)
    retweets = sum(leaf(r, "stats.retweets") or 0 for r in rows)
    nulls = {path: sum(1 for r in rows if leaf(r, path) is None) for path in TWEET_LEAVES}
    assert 0 < nulls["replyTo"] < len(rows)  # the omitted-when-null field

    # pyarrow itself: leaf null counts through the structs.
    flat = table.flatten()
    assert {path: flat.column(path).null_count for path in TWEET_LEAVES} == nulls

    # DuckDB over the pyarrow table, and over the stream's RecordBatchReader (scanned as it comes).
    null_sql = ", ".join(f"count(*) - count({path})" for path in TWEET_LEAVES)
    query = f"select count(*), sum(id), sum(stats.retweets), {null_sql} from "
    want = (len(rows), ids, retweets, *(nulls[p] for p in TWEET_LEAVES))
    t = table
    assert tuple(int(x) for x in duckdb.sql(query + "t").fetchall()[0]) == want
    with open(tweets["stream"], "rb") as source:
        r = ipc.open_stream(source)
        assert tuple(int(x) for x in duckdb.sql(query + "r").fetchall()[0]) == want
    with open(tweets["stream"], "rb") as source:
        relation = duckdb.from_arrow(ipc.open_stream(source))
        assert tuple(int(x) for x in relation.aggregate(query[len("select "):-len(" from ")]).fetchall()[0]) == want
    langs = dict(duckdb.sql("select lang, count(*) from t group by lang").fetchall())
    assert langs == {k: sum(1 for r in rows if r["lang"] == k) for k in {r["lang"] for r in rows}}
    types = dict(duckdb.sql("select column_name, column_type from (describe select * from t)").fetchall())
    assert types["id"] == "BIGINT" and types["createdAtMs"] == "BIGINT" and types["text"] == "VARCHAR"
    assert types["user"].startswith("STRUCT(") and "verified BOOLEAN" in types["user"]

    # Polars: the file and the stream.
    for frame in (pl.read_ipc(tweets["file"]), pl.read_ipc_stream(tweets["stream"])):
        assert frame.height == len(rows)
        assert frame.schema["id"] == pl.Int64 and frame.schema["user"] == pl.Struct(
            {"id": pl.Int64, "handle": pl.String, "followers": pl.Int64, "verified": pl.Boolean})
        assert sum(frame["id"].to_list()) == ids
        assert frame.select(pl.col("stats").struct.field("retweets").sum()).item() == retweets
        flat_frame = frame.with_columns(**{path: pl.col(path.split(".")[0]).struct.field(path.split(".")[1])
                                           for path in TWEET_LEAVES if "." in path})
        assert {path: flat_frame[path].null_count() for path in TWEET_LEAVES} == nulls
        assert frame["text"].to_list() == [r["text"] for r in rows]
        assert frame["createdAtMs"].to_list() == [r["createdAtMs"] for r in rows]


# MARK: batches

def test_many_records_make_several_batches_in_order(tmp_path: Path, binary: str) -> None:
    data = b"".join(b'{"id": %d, "name": "n%d"}\n' % (i, i) for i in range(100_000))
    args = ["--field", "id", "--field", "name", "--type", "id=integer", "--type", "name=string"]
    r = run(binary, args + ["--to", "arrow"], data)
    assert r.returncode == 0, r.stderr
    batches = list(ipc.open_stream(pa.BufferReader(r.stdout)))
    assert len(batches) >= 2 and all(0 < b.num_rows <= 65536 for b in batches), [b.num_rows for b in batches]
    table = read_stream(r.stdout)
    assert len(table.to_batches()) >= 2
    assert table["id"].to_pylist() == list(range(100_000))
    assert table["name"].to_pylist() == [f"n{i}" for i in range(100_000)]

    (tmp_path / "in.ndjson").write_bytes(data)
    r = run(binary, args + [tmp_path / "in.ndjson", "-o", tmp_path / "x.feather", "--jobs", "2"])
    assert r.returncode == 0, r.stderr
    with pa.memory_map(str(tmp_path / "x.feather")) as source:
        assert ipc.open_file(source).num_record_batches == len(batches)
    assert read_file(tmp_path / "x.feather").equals(table)


def test_batches_are_cut_by_size_too(tmp_path: Path, binary: str) -> None:
    """About 8 MiB of records make a batch, whatever their number; one job and two write the same bytes."""
    rows = [{"id": i, "s": chr(0x41 + i % 26) * (400_000 + i), "l": ["é" * 100] * 100} for i in range(30)]
    data = tmp_path / "big.ndjson"
    data.write_text("".join(json.dumps(r, ensure_ascii=i % 2 == 0) + "\n" for i, r in enumerate(rows)), encoding="utf-8")
    args = ["--field", "id", "--field", "s", "--field", "l", "--type", "id=integer", "--type", "s=string",
            "--type", "l=array", data, "--to", "arrow"]
    one, two = run(binary, args), run(binary, args + ["--jobs", "2"])
    assert one.returncode == 0 and two.returncode == 0, one.stderr
    assert one.stdout == two.stdout
    batches = list(ipc.open_stream(pa.BufferReader(one.stdout)))
    assert len(batches) >= 2, [b.num_rows for b in batches]
    table = read_stream(one.stdout)
    assert table["id"].to_pylist() == [r["id"] for r in rows]
    assert table["s"].to_pylist() == [r["s"] for r in rows]
    assert [json.loads(x) for x in table["l"].to_pylist()] == [r["l"] for r in rows]


def test_several_inputs_make_one_table(tmp_path: Path, binary: str) -> None:
    (tmp_path / "a.ndjson").write_bytes(b'{"id":1}\n{"id":"x"}\n{"id":3}\n')
    (tmp_path / "b.ndjson").write_bytes(b'{"id":%d}\n{"id":5}\n' % 2 ** 63)
    r = run(binary, ["--field", "id", "--type", "id=integer", "-q", "--rejects", tmp_path / "rejects",
                     tmp_path / "a.ndjson", tmp_path / "b.ndjson", "--to", "arrow"])
    assert r.returncode == 1
    assert read_stream(r.stdout).to_pylist() == [{"id": 1}, {"id": 3}, {"id": 5}]
    rejects = [json.loads(line) for line in lines_of((tmp_path / "rejects").read_bytes())]
    assert [(Path(x["input"]).name, x["line"]) for x in rejects] == [("a.ndjson", 2), ("b.ndjson", 1)]


@pytest.mark.parametrize("stop", [["--on-error", "fail"], ["--max-rejects", "1"]])
@pytest.mark.parametrize("target", ["stream", "file", "jobs"])
def test_a_stop_leaves_a_whole_output(stop: List[str], target: str, tmp_path: Path, binary: str) -> None:
    """A run stopped by a rejected record (here one whose integer does not fit) ends its stream or file: the records
    before the stop are a valid table."""
    data = tmp_path / "in.ndjson"
    data.write_bytes(b'{"id":1}\n{"id":2}\n{"id":%d}\n{"id":"x"}\n{"id":5}\n' % 2 ** 64)
    out = tmp_path / "x.arrow"
    to = {"stream": ["--to", "arrow"], "file": ["-o", out], "jobs": ["--to", "arrow", "--jobs", "2"]}[target]
    r = run(binary, ["--field", "id", "--type", "id=integer", data, "-q"] + stop + to)
    assert r.returncode == 4, r.stderr
    table = read_file(out) if target == "file" else read_stream(r.stdout)
    assert table.to_pylist() == [{"id": 1}, {"id": 2}] and table.schema == pa.schema([("id", pa.int64())])


# MARK: errors, empty outputs, the output format by name

@pytest.mark.parametrize("spec, names", [
    ({"fields": {"a": "b"}}, "b"),
    ({"fields": {"a": "b", "c.d": "e.f", "g": {"type": "integer"}, "h": {"to": "i"}}}, "b, e.f, i"),
])
def test_untyped_fields_are_a_usage_error(spec: Dict[str, Any], names: str, tmp_path: Path, binary: str) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    for args in (["--to", "arrow"], ["-o", tmp_path / "x.arrow"], ["--to", "arrow-file"]):
        r = run(binary, ["-s", tmp_path / "spec.json"] + args, b'{"a": 1}\n')
        assert r.returncode == 64 and r.stdout == b"", r.stderr
        assert re.search(rb"the type of (this output field|these output fields) is not known from the spec: "
                         + re.escape(names.encode()) + rb"; declare it", r.stderr), r.stderr
    assert not (tmp_path / "x.arrow").exists()


def test_command_line_fields_untyped_and_typed(binary: str) -> None:
    r = run(binary, ["--field", "id", "--field", "name", "--to", "arrow"], b'{"id":1}\n')
    assert r.returncode == 64 and b"not known from the spec: id, name;" in r.stderr
    r = run(binary, ["--field", "id", "--type", "id=integer", "--to", "arrow"], b'{"id":1}\n')
    assert r.returncode == 0 and read_stream(r.stdout).to_pylist() == [{"id": 1}]


def test_compression_is_refused(tmp_path: Path, binary: str) -> None:
    for args in (["--to", "arrow"], ["-o", tmp_path / "x.arrow"]):
        r = run(binary, ["--field", "id", "--type", "id=integer", "--compress", "gzip"] + args, b'{"id":1}\n')
        assert r.returncode == 64 and r.stdout == b"", r.stderr


def test_a_default_must_agree_with_the_column(tmp_path: Path, binary: str) -> None:
    (tmp_path / "spec.json").write_text('{"fields": {"a": {"type": "integer", "default": "x"}}}')
    r = run(binary, ["-s", tmp_path / "spec.json", "--to", "arrow"], b"{}\n")
    assert r.returncode == 64 and r.stdout == b"" and b"default" in r.stderr


@pytest.mark.parametrize("field, arrow, values", [
    ({"via": {"arrayOf": "integer"}, "default": []}, pa.list_(pa.int64()), [[], [3]]),
    ({"via": {"arrayOf": "integer"}, "default": [1, 2]}, pa.list_(pa.int64()), [[1, 2], [3]]),
    ({"via": {"arrayOf": "string"}, "missing": {"default": ["x"]}, "null": "null"}, pa.list_(pa.string()), [["x"], ["y"]]),
    ({"via": {"object": {"fields": {"b": {"type": "integer"}}}}, "default": {"b": 1}},
     pa.struct([("b", pa.int64())]), [{"b": 1}, {"b": 2}]),
])
def test_a_default_keeps_the_list_or_struct_column(field: Dict[str, Any], arrow: pa.DataType, values: List[Any],
                                                   tmp_path: Path, binary: str) -> None:
    """docs/cli.md: `"via": {"arrayOf": T}` is a list<T> column and an object spec a struct; a default of that shape
    does not make it JSON text."""
    (tmp_path / "spec.json").write_text(json.dumps({"fields": {"a": field}}))
    present = {"integer": b"[3]", "string": b'["y"]'}.get(str(field["via"].get("arrayOf")), b'{"b": 2}')
    r = run(binary, ["-s", tmp_path / "spec.json", "--to", "arrow"], b'{}\n{"a": %s}\n' % present)
    assert r.returncode == 0, r.stderr
    table = read_stream(r.stdout)
    assert table.schema == pa.schema([("a", arrow)]), f"{field}: the column is {table.schema.field('a').type}"
    assert table["a"].to_pylist() == values


SPEC = {"fields": {"id": {"type": "integer"}, "user.name": {"to": "user.name", "type": "string"},
                   "tags": {"via": {"arrayOf": "string"}, "optional": True}}}
SCHEMA = pa.schema([("id", pa.int64()), ("user", pa.struct([("name", pa.string())])), ("tags", pa.list_(pa.string()))])


@pytest.mark.parametrize("target", ["stream", "file"])
def test_no_records_is_an_empty_table_with_the_schema(target: str, tmp_path: Path, binary: str) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    (tmp_path / "empty.ndjson").write_bytes(b"")
    for source in ([tmp_path / "empty.ndjson"], []):
        out = tmp_path / "x.arrow"
        args = ["-s", tmp_path / "spec.json"] + source + (["--to", "arrow"] if target == "stream" else ["-o", out])
        r = run(binary, args, b"")
        assert r.returncode == 0, r.stderr
        table = read_stream(r.stdout) if target == "stream" else read_file(out)
        assert table.num_rows == 0 and table.schema == SCHEMA


@pytest.mark.parametrize("target", ["stream", "file"])
def test_all_rejected_is_an_empty_table_with_the_schema(target: str, tmp_path: Path, binary: str) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    data = b'{"id":"x"}\n{"id":%d}\n{"id":1,"user":{"name":5}}\nnot json\n{"id":-9223372036854775809}\n' % 2 ** 64
    out = tmp_path / "x.arrow"
    args = ["-s", tmp_path / "spec.json", "--rejects", tmp_path / "rejects"] + (["--to", "arrow"] if target == "stream" else ["-o", out])
    r = run(binary, args, data)
    assert r.returncode == 1, r.stderr
    table = read_stream(r.stdout) if target == "stream" else read_file(out)
    assert table.num_rows == 0 and table.schema == SCHEMA
    rejects = read_rejects(tmp_path / "rejects")
    assert sorted(rejects) == [1, 2, 3, 4, 5]
    for n in (2, 5):
        assert any("does not fit the int64 column" in e["message"] and e["source"] == "/id" for e in fatal(rejects[n]))


def test_the_output_format_follows_the_name(tmp_path: Path, binary: str) -> None:
    args = ["--field", "id", "--type", "id=integer"]
    for name, flags, is_file in [("a.arrow", [], True), ("a.feather", [], True), ("a.arrows", [], False),
                                 ("b.arrow", ["--to", "arrow-stream"], False), ("b.bin", ["--to", "arrow-file"], True),
                                 ("c.bin", ["--to", "arrow"], False)]:
        r = run(binary, args + flags + ["-o", tmp_path / name], b'{"id":1}\n{"id":2}\n')
        assert r.returncode == 0 and r.stdout == b"", (name, r.stderr)
        path = tmp_path / name
        table = read_file(path) if is_file else read_stream(path.read_bytes())
        assert table.to_pylist() == [{"id": 1}, {"id": 2}], name
    r = run(binary, args + ["--to", "arrow-file"], b'{"id":7}\n')
    assert r.returncode == 0 and r.stdout[:6] == b"ARROW1"
    assert ipc.open_file(pa.BufferReader(r.stdout)).read_all().to_pylist() == [{"id": 7}]


def test_messages_on_standard_error(binary: str) -> None:
    data = b'{"id":1,"x":1.5}\n{"id":18446744073709551621,"x":1}\n{"id":2,"x":-1e400}\n'
    r = run(binary, ["--field", "id", "--field", "x", "--type", "id=integer", "--type", "x=number", "--to", "arrow"], data)
    assert r.returncode == 1
    err = r.stderr.decode("utf-8")
    assert "streammap: <stdin>:2: /id: 18446744073709551621 does not fit the int64 column" in err, err
    assert re.search(r"streammap: <stdin>:3: /x: -1e400 .*float64 column", err), err
    assert read_stream(r.stdout).to_pylist() == [{"id": 1, "x": 1.5}]


# MARK: the docs' reader blocks

FENCED = re.compile(r"^```sh\n(.*?)^```$", re.M | re.S)


def doc_blocks() -> Dict[str, List[str]]:
    """docs/cli.md's sh blocks between its arrow-readers markers; README.md's sh blocks that write Arrow."""
    cli = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    start, end = cli.index("<!-- arrow-readers -->"), cli.index("<!-- /arrow-readers -->")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return {"docs/cli.md": FENCED.findall(cli[start:end]),
            "README.md": [b for b in FENCED.findall(readme) if "--to arrow" in b or ".arrow" in b]}


def test_the_docs_have_reader_blocks() -> None:
    blocks = doc_blocks()
    assert len(blocks["docs/cli.md"]) >= 3 and len(blocks["README.md"]) >= 1
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    after = readme[readme.index("Typed columns instead of text"):]
    assert FENCED.search(after).group(1) in blocks["README.md"]


@pytest.mark.parametrize("page", ["docs/cli.md", "README.md"])
def test_doc_blocks_run(page: str, tmp_path: Path, binary: str) -> None:
    """Each block runs in order (a later block may read what an earlier one wrote) with bash -euo pipefail in a
    folder with Benchmarks and Samples, `streammap` and the venv's python3 first on PATH; each prints something,
    or writes files that read back (the Parquet block)."""
    for folder in ("Benchmarks", "Samples"):
        (tmp_path / folder).symlink_to(REPO / folder)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(binary).resolve().parent), str(Path(sys.executable).parent),
                                   env.get("PATH", "")])
    for block in doc_blocks()[page]:
        before = {p: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
        r = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block], cwd=tmp_path, env=env, capture_output=True,
                           timeout=180)
        assert r.returncode == 0, f"{page}: exit {r.returncode}\n{block}\n{r.stderr.decode()}"
        written = [p for p in tmp_path.iterdir() if p not in before or p.stat().st_mtime_ns != before[p]]
        assert r.stdout.strip() or written, f"{page}: printed and wrote nothing\n{block}"
        for path in written:
            if path.suffix == ".parquet":
                arrow = read_file(tmp_path / "tweets.arrow")
                assert pq.read_table(path).cast(arrow.schema).equals(arrow), path
            elif path.suffix == ".arrow":
                assert read_file(path).num_rows > 0
