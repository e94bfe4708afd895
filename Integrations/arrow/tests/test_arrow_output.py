"""`streammap --to arrow` read by real readers. pyarrow reads every stream and file the tests write, validates them
in full, and the values equal the NDJSON output's, typed, for generated specs and records (both engines, --jobs,
stream and file); DuckDB and Polars read the tweet benchmark's output; the errors; the docs' reader blocks.

    STREAMMAP_BINARY=.build/debug/streammap python -m pytest -q Integrations/arrow/tests   (scripts/arrow-test.sh)
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

REPO = Path(__file__).resolve().parents[3]
BINARY = os.environ.get("STREAMMAP_BINARY", str(REPO / ".build" / "debug" / "streammap"))
TWEETS_SPEC = REPO / "Benchmarks" / "specs" / "tweets.spec.json"


def run(args: List[str], stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([BINARY] + args, input=stdin, capture_output=True, timeout=120)


def read_ipc(data: bytes) -> pa.Table:
    """A stream or a file, told by the file's magic; validated in full."""
    if data[:6] == b"ARROW1":
        table = ipc.open_file(pa.BufferReader(data)).read_all()
    else:
        table = ipc.open_stream(pa.BufferReader(data)).read_all()
    table.validate(full=True)
    return table


# MARK: generated specs and records

KINDS = ["integer", "number", "string", "boolean", "ints", "strings", "object", "date"]
ARROW_TYPES = {"integer": pa.int64(), "number": pa.float64(), "string": pa.string(), "boolean": pa.bool_(),
               "ints": pa.list_(pa.int64()), "strings": pa.list_(pa.string()), "object": pa.string(), "date": pa.int64()}
STRINGS = ['"a"', '"é \\"quoted\\" \\\\ \\u00e9 \\ud83d\\ude00"', '""', '"x,y\\n"', '"日本語"']


def value(kind: str, rng: random.Random) -> Optional[str]:
    """A field's JSON text (None: absent): mostly right, sometimes null, a wrong type or out of range."""
    roll = rng.randrange(20)
    if roll == 0:
        return None
    if roll == 1:
        return "null"
    if roll == 2:
        return '"wrong"'
    if roll == 3:
        return str(2 ** 64 + 5)
    if roll == 4:
        return "1e400"
    if kind == "integer":
        return rng.choice(["0", "-1", str(2 ** 63 - 1), str(-2 ** 63), "42"])
    if kind == "number":
        return rng.choice(["0.1", "-2.5e10", "3", "1e-300", "123456789.123456789"])
    if kind == "string":
        return rng.choice(STRINGS)
    if kind == "boolean":
        return rng.choice(["true", "false"])
    if kind == "ints":
        return rng.choice(["[]", "[1, 2, -3]", "[null, 5]", "[1.5]", f"[{2 ** 64}]"])
    if kind == "strings":
        return rng.choice(["[]", '["a", "b"]', "[null]", "[1]"])
    if kind == "object":
        return rng.choice(['{"k": [1, {"z": null}]}', "{}", '{"a": "\\u00e9"}'])
    return rng.choice(['"2014-08-31T00:29:15Z"', '"2014-08-31T00:29:15.25+02:00"', '"not a date"'])


def generate(seed: int) -> Tuple[Dict[str, Any], List[Tuple[str, str, List[str]]], List[str]]:
    """A typed spec, its fields (source, kind, destination steps) and records."""
    rng = random.Random(seed)
    fields: Dict[str, Any] = {}
    layout = []
    for i in range(rng.randrange(3, 9)):
        kind = rng.choice(KINDS)
        source = f"f{i}"
        destination = rng.choice([f"f{i}", f"f{i}", f"g.f{i}", f"g.h.f{i}"])
        entry: Dict[str, Any] = {"to": destination}
        if kind == "ints":
            entry["via"] = {"arrayOf": "integer"}
        elif kind == "strings":
            entry["via"] = {"arrayOf": "string"}
        elif kind == "date":
            entry["via"] = [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]
        else:
            entry["type"] = kind
        presence = rng.randrange(4)
        if presence == 0:
            entry["optional"] = True
        elif presence == 1:
            entry["missing"], entry["null"] = "omit", "omit"
        elif presence == 2 and kind in ("integer", "number", "string", "boolean"):
            entry["default"] = {"integer": 7, "number": 0.25, "string": "d", "boolean": True}[kind]
        fields[source] = entry
        layout.append((source, kind, destination.split(".")))
    records = []
    for n in range(rng.randrange(60, 150)):
        if rng.randrange(40) == 0:
            records.append('{"f0": ')  # not JSON
            continue
        members = []
        for source, kind, _ in layout:
            v = value(kind, rng)
            if v is not None:
                members.append(f'"{source}": {v}')
        records.append("{" + ", ".join(members) + "}")
    return {"fields": fields}, layout, records


def expected_type(layout: List[Tuple[str, str, List[str]]]) -> pa.Schema:
    """The schema the spec asks for: nested destinations as structs, in first-appearance order."""
    tree: Dict[str, Any] = {}
    for _, kind, steps in layout:
        node = tree
        for step in steps[:-1]:
            node = node.setdefault(step, {})
        node[steps[-1]] = ARROW_TYPES[kind]

    def build(node: Dict[str, Any]) -> List[pa.Field]:
        return [pa.field(k, pa.struct(build(v)) if isinstance(v, dict) else v) for k, v in node.items()]
    return pa.schema(build(tree))


def typed(v: Any, t: pa.DataType) -> Any:
    """An NDJSON value as pyarrow gives it back for a column of type `t` (JSON text kept as parsed JSON)."""
    if v is None:
        return None
    if pa.types.is_struct(t):
        return {f.name: typed(v.get(f.name), f.type) for f in t}
    if pa.types.is_list(t):
        return [typed(x, t.value_type) for x in v]
    if pa.types.is_floating(t):
        return float(v)
    return v


def rejected_lines(path: Path) -> Dict[int, List[str]]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").split("\n")[:-1]:
        r = json.loads(line)
        out[r["line"]] = [e["message"] for e in r["errors"] if e["fatal"]]
    return out


@pytest.mark.parametrize("seed", range(30))
def test_arrow_holds_the_ndjson_output_typed(seed: int, tmp_path: Path) -> None:
    spec, layout, records = generate(seed)
    spec_path, data = tmp_path / "spec.json", tmp_path / "in.ndjson"
    spec_path.write_text(json.dumps(spec))
    data.write_text("\n".join(records) + "\n", encoding="utf-8")
    nd = run(["-s", str(spec_path), str(data), "-q", "--rejects", str(tmp_path / "r1.ndjson")])
    assert nd.returncode in (0, 1), nd.stderr
    ndjson_rows = [json.loads(line, parse_float=str) for line in nd.stdout.decode().split("\n")[:-1]]
    nd_rejects = rejected_lines(tmp_path / "r1.ndjson")

    tables = []
    for name, extra in [("stream", []), ("file.arrow", []), ("tree", ["--engine", "tree"]),
                        ("jobs", ["--jobs", "2", "--batch-bytes", "200"])]:
        out = tmp_path / name
        rejects = tmp_path / f"r-{name}.ndjson"
        r = run(["-s", str(spec_path), str(data), "--to", "arrow" if name != "file.arrow" else "arrow-file",
                 "-o", str(out), "-q", "--rejects", str(rejects)] + extra)
        ar_rejects = rejected_lines(rejects)
        assert r.returncode == (1 if ar_rejects else 0), r.stderr
        tables.append(read_ipc(out.read_bytes()))
        # The same rejects as NDJSON, and those whose numbers a column cannot hold.
        assert set(nd_rejects) <= set(ar_rejects)
        for line in set(ar_rejects) - set(nd_rejects):
            assert any("int64" in m or "float64" in m for m in ar_rejects[line]), ar_rejects[line]
        if name == "file.arrow":
            assert (tmp_path / name).read_bytes()[:6] == b"ARROW1"
    assert all(t.equals(tables[0]) for t in tables[1:])
    table = tables[0]
    assert table.schema == expected_type(layout)

    # The Arrow rows are the NDJSON rows without the records rejected only for their numbers.
    arrow_only = set(rejected_lines(tmp_path / "r-stream.ndjson")) - set(nd_rejects)
    mapped_lines = [n for n in range(1, len(records) + 1) if n not in nd_rejects]
    assert len(mapped_lines) == len(ndjson_rows)
    kept = [row for n, row in zip(mapped_lines, ndjson_rows) if n not in arrow_only]
    assert table.num_rows == len(kept)
    got = table.to_pylist()
    object_columns = [steps for _, kind, steps in layout if kind == "object"]
    for arrow_row, json_row in zip(got, kept):
        for steps in object_columns:  # JSON text: compared as the JSON it holds
            a, j = arrow_row, json_row
            for step in steps[:-1]:
                a = (a or {}).get(step)
                j = (j or {}).get(step)
            if a is not None and a.get(steps[-1]) is not None:
                a[steps[-1]] = json.loads(a[steps[-1]], parse_float=str)
        # (A nested object the record does not write is a null struct; one it writes has None for absent members.)
        assert arrow_row == typed(json_row, pa.struct(list(table.schema))), (arrow_row, json_row)


# MARK: DuckDB and Polars on the benchmark's output

@pytest.fixture(scope="module")
def tweets(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    d = tmp_path_factory.mktemp("tweets")
    corpus = d / "tweets.ndjson"
    subprocess.run([sys.executable, str(REPO / "Benchmarks" / "corpus.py"), str(corpus), "--size-mb", "2"],
                   check=True, capture_output=True)
    nd = run(["-s", str(TWEETS_SPEC), str(corpus), "-q"])
    arrow_file, stream = d / "tweets.arrow", d / "tweets.arrows"
    assert run(["-s", str(TWEETS_SPEC), str(corpus), "-q", "-o", str(arrow_file)]).returncode == nd.returncode
    assert run(["-s", str(TWEETS_SPEC), str(corpus), "-q", "-o", str(stream)]).returncode == nd.returncode
    rows = [json.loads(line) for line in nd.stdout.decode().split("\n")[:-1]]
    return {"rows": rows, "file": arrow_file, "stream": stream}


def test_pyarrow_duckdb_and_polars_read_the_same_rows(tweets: Dict[str, Any]) -> None:
    rows = tweets["rows"]
    assert len(rows) > 100
    table = read_ipc(tweets["file"].read_bytes())
    assert table.equals(read_ipc(tweets["stream"].read_bytes()))
    assert table.num_rows == len(rows)
    assert table.schema.field("createdAtMs").type == pa.int64()
    assert table.schema.field("user").type == pa.struct([("id", pa.int64()), ("handle", pa.string()),
                                                          ("followers", pa.int64()), ("verified", pa.bool_())])
    ids = sum(r["id"] for r in rows)
    retweets = sum(r["stats"]["retweets"] for r in rows)
    replies = sum(1 for r in rows if "replyTo" in r)

    frame = pl.read_ipc(str(tweets["file"]))
    assert frame.height == len(rows)
    assert int(frame["id"].cast(pl.Int128).sum()) == ids
    assert frame["replyTo"].null_count() == len(rows) - replies
    assert frame["text"].to_list() == [r["text"] for r in rows]

    t = table  # DuckDB scans the pyarrow table, and the stream as it comes
    count, total = duckdb.sql("select count(*), sum(stats.retweets) from t").fetchall()[0]
    assert (count, total) == (len(rows), retweets)
    reader = ipc.open_stream(str(tweets["stream"]))
    count, total_ids = duckdb.sql("select count(*), sum(id::hugeint) from reader").fetchall()[0]
    assert (count, int(total_ids)) == (len(rows), ids)
    langs = dict(duckdb.sql("select lang, count(*) from t group by lang").fetchall())
    assert sum(langs.values()) == len(rows) and langs == {k: sum(1 for r in rows if r["lang"] == k) for k in langs}


def test_many_records_make_several_batches_in_order(tmp_path: Path) -> None:
    data = b"".join(b'{"id": %d, "name": "n%d"}\n' % (i, i) for i in range(100_000))
    r = run(["--field", "id", "--field", "name", "--type", "id=integer", "--type", "name=string", "--to", "arrow"], data)
    assert r.returncode == 0, r.stderr
    reader = ipc.open_stream(pa.BufferReader(r.stdout))
    batches = list(reader)
    assert len(batches) >= 2 and max(b.num_rows for b in batches) <= 65536
    table = pa.Table.from_batches(batches)
    assert table["id"].to_pylist() == list(range(100_000))
    assert table["name"][99_999].as_py() == "n99999"


# MARK: errors

def test_untyped_fields_are_a_usage_error() -> None:
    r = run(["--field", "id", "--field", "a.b=x.y", "--to", "arrow"], b'{"id":1}\n')
    assert r.returncode == 64 and r.stdout == b""
    assert b"not known from the spec: id, x.y" in r.stderr


def test_compression_is_refused() -> None:
    r = run(["--field", "id", "--type", "id=integer", "--to", "arrow", "--compress", "gzip"], b"")
    assert r.returncode == 64 and b"uncompressed" in r.stderr


@pytest.mark.parametrize("fmt", ["arrow-stream", "arrow-file"])
def test_no_records_and_all_rejected_are_valid_empty_tables(fmt: str) -> None:
    args = ["--field", "id", "--type", "id=integer", "--to", fmt]
    empty = run(args, b"")
    assert empty.returncode == 0
    t = read_ipc(empty.stdout)
    assert t.num_rows == 0 and t.schema == pa.schema([("id", pa.int64())])
    rejected = run(args + ["-q"], b'{"id":"x"}\n{"id":%d}\n' % (2 ** 64))
    assert rejected.returncode == 1
    t = read_ipc(rejected.stdout)
    assert t.num_rows == 0 and t.schema == pa.schema([("id", pa.int64())])


# MARK: the docs' reader blocks

def doc_blocks() -> Dict[str, List[str]]:
    """The reader blocks, by page, in order: docs/cli.md's between its arrow-readers markers, README.md's that
    write Arrow."""
    cli = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = cli[cli.index("<!-- arrow-readers -->"):cli.index("<!-- /arrow-readers -->")]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    fenced = r"^```sh\n(.*?)^```$"
    return {"docs/cli.md": re.findall(fenced, section, flags=re.M | re.S),
            "README.md": [b for b in re.findall(fenced, readme, flags=re.M | re.S) if "--to arrow" in b or ".arrow" in b]}


def test_the_docs_show_reader_blocks() -> None:
    blocks = doc_blocks()
    assert len(blocks["docs/cli.md"]) >= 3 and len(blocks["README.md"]) >= 1


@pytest.mark.parametrize("page", ["docs/cli.md", "README.md"])
def test_doc_blocks_run_in_order(page: str, tmp_path: Path) -> None:
    """Each block of a page runs, as a reader would run them one after the other, in one folder."""
    for folder in ("Benchmarks", "Samples"):
        (tmp_path / folder).symlink_to(REPO / folder)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(BINARY).parent), str(Path(sys.executable).parent), env.get("PATH", "")])
    for block in doc_blocks()[page]:
        r = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block], cwd=tmp_path, env=env, capture_output=True, timeout=120)
        assert r.returncode == 0, (page, block, r.stderr.decode())
        assert r.stdout.strip() or list(tmp_path.glob("*.parquet")), (page, block)
