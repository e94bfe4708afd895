"""`streammap --to arrow` on generated specs of every column kind, read by pyarrow and Polars.

A second differential next to test_arrow_output.py's: 21 kinds of field (integer, number, string, boolean; arrayOf
integer/number/string/boolean, nested lists, lists of objects; nested object specs; `object`/`array` as JSON text;
iso8601 to epoch ms and to canonical text; stringToNumber, numberToString, enum, toString, multiply on integers and
numbers), sources nested or not, destinations nested (structs) with non-ASCII names, required, optional, defaulted,
omitted or nulled; records with random values of every kind (any double, decimal texts of any length, int64's
edges, escapes and astral characters), wrong types, nulls, absent keys, integers beyond int64, numbers beyond a
double, invalid lines. For each, nine ways of writing Arrow (stdout, -o .arrows/.arrow/.feather, --to
arrow-stream on a .arrow name, --to arrow-file on a .arrows name, both engines, --jobs 2, --batch-bytes 200) give
the same stream bytes, the same file bytes, the same table and the same rejects; pyarrow validates in full;
Polars reads the file and the stream to the same rows; the rows are the NDJSON output's, typed, floats bit for bit;
the rejects are NDJSON's (the same reports) plus exactly the records with a number their column cannot hold.
Then: the nearest double through stringToNumber and multiply; spec shapes and their columns; shapes Arrow cannot
type; defaults that agree or disagree with their column.

    STREAMMAP_BINARY=path/to/streammap python -m pytest -q tests     ARROW_SEEDS=400 for more generated specs
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import re
import struct
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import polars as pl
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pytest

REPO = Path(__file__).resolve().parents[3]
BINARY = os.environ.get("STREAMMAP_BINARY", str(REPO / ".build" / "debug" / "streammap"))
BINARY = os.path.abspath(BINARY) if os.sep in BINARY else BINARY  # (the tests run it in their own folders)
SEEDS = int(os.environ.get("ARROW_SEEDS", "25"))
INT64 = (-2 ** 63, 2 ** 63 - 1)
STREAM_START = b"\xff\xff\xff\xff"  # the continuation marker of the stream format's first message
FILE_MAGIC = b"ARROW1"


def run(args: List[str], stdin: bytes = b"", cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    return subprocess.run([BINARY] + args, input=stdin, capture_output=True, timeout=300, cwd=cwd)


def read_stream(data: bytes) -> pa.Table:
    """An IPC stream, validated in full."""
    assert data[:4] == STREAM_START and data[:6] != FILE_MAGIC, data[:16]
    reader = ipc.open_stream(pa.BufferReader(data))
    table = pa.Table.from_batches(list(reader), schema=reader.schema)
    table.validate(full=True)
    return table


def read_file(data: bytes) -> pa.Table:
    """An IPC file (Feather v2), read batch by batch through its footer, validated in full."""
    assert data[:8] == FILE_MAGIC + b"\0\0" and data[-6:] == FILE_MAGIC, (data[:8], data[-6:])
    reader = ipc.open_file(pa.BufferReader(data))
    table = pa.Table.from_batches([reader.get_batch(i) for i in range(reader.num_record_batches)], schema=reader.schema)
    table.validate(full=True)
    assert reader.read_all().equals(table)
    return table


def read_ipc(data: bytes) -> pa.Table:
    return read_file(data) if data[:6] == FILE_MAGIC else read_stream(data)


# MARK: comparing values exactly

class IntText(str):
    """A JSON integer's text, as the NDJSON output wrote it."""


class FloatText(str):
    """A JSON number's text with a fraction or an exponent."""


def load(text: str) -> Any:
    """JSON with its numbers kept as their text, and objects as ("object", pairs) (their order matters)."""
    return json.loads(text, parse_int=IntText, parse_float=FloatText, parse_constant=lambda c: pytest.fail(c),
                      object_pairs_hook=lambda pairs: ("object", pairs))


def tag_json(v: Any) -> Any:
    if isinstance(v, tuple):
        return ("object", [(k, tag_json(x)) for k, x in v[1]])
    if isinstance(v, list):
        return [tag_json(x) for x in v]
    if isinstance(v, (IntText, FloatText)):
        return ("number", str(v))
    return v


def tag(v: Any) -> Any:
    """A value read from Arrow, with its type: True is not 1, -0.0 is not 0.0, floats compare bit for bit."""
    if v is None:
        return None
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, dict):
        return {k: tag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [tag(x) for x in v]
    raise AssertionError(f"unexpected value {v!r}")


def expected(v: Any, t: pa.DataType, steps: Tuple[str, ...], text_columns: Set[Tuple[str, ...]],
             misfits: List[Tuple[str, str]]) -> Any:
    """The tagged value a column of type `t` holds for the NDJSON output's value `v` (from load). A value the
    column cannot hold (an integer beyond int64 or with a fraction, a number beyond a double) goes to `misfits`:
    its record is rejected in Arrow mode only."""
    path = "/" + "/".join(steps)
    if v is None:
        return None
    if steps in text_columns:  # "type": "object"/"array": compact JSON text, compared as the JSON it holds
        return ("json", tag_json(v))
    if pa.types.is_struct(t):
        assert isinstance(v, tuple), (path, v)
        members = dict(v[1])
        assert set(members) <= {f.name for f in t}, (path, v)
        return {f.name: expected(members.get(f.name), f.type, steps + (f.name,), text_columns, misfits) for f in t}
    if pa.types.is_list(t):
        assert isinstance(v, list), (path, v)
        return [expected(x, t.value_type, steps + (str(i),), text_columns, misfits) for i, x in enumerate(v)]
    if pa.types.is_int64(t):
        assert isinstance(v, (IntText, FloatText)), (path, v)
        d = Decimal(v)
        if d != d.to_integral_value() or not INT64[0] <= int(d) <= INT64[1]:
            misfits.append((path, str(v)))
            return None
        return ("int", int(d))
    if pa.types.is_float64(t):
        assert isinstance(v, (IntText, FloatText)), (path, v)
        x = float(v)  # the nearest double to the text (inf when beyond the range)
        if math.isinf(x):
            misfits.append((path, str(v)))
            return None
        return ("float", x.hex())
    if pa.types.is_boolean(t):
        assert isinstance(v, bool), (path, v)
        return ("bool", v)
    if pa.types.is_string(t):
        assert isinstance(v, str) and not isinstance(v, (IntText, FloatText)), (path, v)
        return ("str", v)
    raise AssertionError(f"unexpected type {t}")


def arrow_row(row: Dict[str, Any], schema: pa.Schema, text_columns: Set[Tuple[str, ...]]) -> Dict[str, Any]:
    """A row read from Arrow, tagged; the JSON text columns parsed."""
    def walk(v: Any, t: pa.DataType, steps: Tuple[str, ...]) -> Any:
        if v is None:
            return None
        if steps in text_columns:
            assert isinstance(v, str)
            return ("json", tag_json(load(v)))
        if pa.types.is_struct(t):
            return {f.name: walk(v[f.name], f.type, steps + (f.name,)) for f in t}
        return tag(v)
    return {f.name: walk(row[f.name], f.type, (f.name,)) for f in schema}


# MARK: generated specs and records

CHARS = list("aZ09 ,:{}[]'/") + ['"', "\\", "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f", "é", "ß", "日",
                                  "本", "\u2028", "\u2029", "\ufeff", "\uffff", "\U0001F600", "\U0001D11E"]
SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f", "/": "\\/"}


def string_text(rng: random.Random, chars: Optional[List[str]] = None) -> str:
    """A JSON string with quotes, backslashes, control characters, non-ASCII and astral characters, each written raw,
    with a short escape or a \\u escape (a surrogate pair for the astral ones), in either hex case."""
    out = ['"']
    for _ in range(rng.randrange(0, 10)):
        c = rng.choice(chars or CHARS)
        style = rng.randrange(3)
        if c in SHORT_ESCAPES and (style == 0 or c in '"\\' or ord(c) < 0x20):
            out.append(SHORT_ESCAPES[c] if c != "/" or style == 0 else c)
        elif ord(c) < 0x20 or style == 1:
            units = [ord(c)] if ord(c) < 0x10000 else \
                [0xD800 + ((ord(c) - 0x10000) >> 10), 0xDC00 + ((ord(c) - 0x10000) & 0x3FF)]
            out.extend(("\\u%04x" if rng.randrange(2) else "\\u%04X") % u for u in units)
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


EDGE_INTEGERS = ["0", "-0", "1", "-1", str(INT64[1]), str(INT64[0]), str(INT64[1] + 1), str(INT64[0] - 1),
                 str(2 ** 64 + 5), str(-(2 ** 64)), "1" + "0" * 30, str(2 ** 53 + 1)]
EDGE_NUMBERS = ["0.0", "-0.0", "-0", "0e0", "1E5", "1e+2", "0.1", "0.30000000000000004", "9007199254740993",
                "123456789.123456789", "3.14159265358979323846264338327950288419716939937510",
                "1.7976931348623157e308", "1.7976931348623158e308", "-1.7976931348623157e308",
                "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9e-324", "5e-324",
                "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400", "-1e-400", "1e23", "8.5e-1",
                "1e400", "-1e400", "1.7976931348623159e308", "1" + "0" * 400, str(2 ** 64 + 5),
                "0.000000000000000000000000000001e30", "1" + "0" * 30 + ".5"]


def integer_text(rng: random.Random) -> str:
    roll = rng.randrange(8)
    if roll == 0:
        return rng.choice(EDGE_INTEGERS)
    if roll < 3:
        return str(rng.randrange(-1000, 1000))
    return str(rng.randrange(INT64[0], INT64[1] + 1) >> rng.randrange(0, 64))


def number_text(rng: random.Random) -> str:
    roll = rng.randrange(10)
    if roll == 0:
        return rng.choice(EDGE_NUMBERS)
    if roll < 3:  # any finite double, as Python writes it
        while True:
            x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            if math.isfinite(x):
                return repr(x)
    if roll < 6:  # decimal text of any length, an exponent sometimes
        text = rng.choice(["", "-"]) + str(rng.randrange(0, 10 ** rng.randrange(1, 25)))
        if rng.randrange(2):
            text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 25)))
        if rng.randrange(3) == 0:
            text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randrange(0, 330))
        return text
    if roll < 8:
        return repr(round(rng.uniform(-1e6, 1e6), rng.randrange(0, 6)))
    return integer_text(rng)


def date_text(rng: random.Random) -> str:
    roll = rng.randrange(30)
    if roll == 0:
        return rng.choice(['"not a date"', '"2014-02-30T00:00:00Z"', '"2014-08-31T00:29:15.1234567891Z"',
                           '"2014-08-31T25:00:00Z"', '""'])
    y, mo, d = rng.randrange(1, 10000), rng.randrange(1, 13), rng.randrange(1, 29)
    if roll == 1:
        return f'"{y:04d}-{mo:02d}-{d:02d}"'
    text = f"{y:04d}-{mo:02d}-{d:02d}{rng.choice('TTt ')}{rng.randrange(24):02d}:{rng.randrange(60):02d}:" \
           f"{rng.randrange(60):02d}"
    frac = rng.randrange(4)
    if frac == 1:  # a fraction finer than a millisecond: not an integer number of ms, rejected in Arrow mode
        text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 10)))
    elif frac == 2:
        text += "." + str(rng.randrange(1000)).rjust(3, "0") + "0" * rng.randrange(0, 7)
    zone = rng.randrange(3)
    text += "Z" if zone == 0 else f"{rng.choice('+-')}{rng.randrange(15):02d}:{rng.choice(['00', '30', '45'])}"
    return f'"{text}"'


def json_value(rng: random.Random, depth: int = 0) -> str:
    """Any JSON value, as text: nested objects and arrays, numbers of every kind, strings with escapes."""
    roll = rng.randrange(9 if depth < 3 else 6)
    if roll == 0:
        return rng.choice(["null", "true", "false"])
    if roll in (1, 2):
        return number_text(rng)
    if roll in (3, 4, 5):
        return string_text(rng)
    if roll in (6, 7):
        members = {string_text(rng, list("abcdé\"\\")) for _ in range(rng.randrange(0, 4))}
        return "{" + ",".join(f"{k}: {json_value(rng, depth + 1)}" for k in members) + "}"
    return "[" + ", ".join(json_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))) + "]"


def array_text(rng: random.Random, element) -> str:
    items = []
    for _ in range(rng.randrange(0, 6)):
        roll = rng.randrange(60)
        items.append("null" if roll == 0 else '"x"' if roll == 1 and element is not string_text
                     else "1" if roll == 1 else element(rng))
    return "[" + rng.choice([",", ", "]).join(items) + "]"


# kind: (the spec's field without "to", the Arrow type, a JSON text column, a value's text, a default or None)
KINDS: Dict[str, Tuple[Dict[str, Any], pa.DataType, bool, Any, Any]] = {
    "integer": ({"type": "integer"}, pa.int64(), False, integer_text,
                lambda r: r.choice([0, -7, INT64[0], INT64[1]])),
    "number": ({"type": "number"}, pa.float64(), False, number_text,
               lambda r: r.choice([0.25, -1e300, 3, 2 ** 60 + 1, 0.1])),  # an integer default is fine here
    "string": ({"type": "string"}, pa.string(), False, string_text, lambda r: r.choice(["d", "", "é\"\\\n😀"])),
    "boolean": ({"type": "boolean"}, pa.bool_(), False, lambda r: r.choice(["true", "false"]),
                lambda r: r.choice([True, False])),
    "ints": ({"via": {"arrayOf": "integer"}}, pa.list_(pa.int64()), False,
             lambda r: array_text(r, integer_text), lambda r: r.choice([[], [1, -2]])),
    "floats": ({"via": {"arrayOf": "number"}}, pa.list_(pa.float64()), False,
               lambda r: array_text(r, number_text), None),
    "strings": ({"via": {"arrayOf": "string"}}, pa.list_(pa.string()), False,
                lambda r: array_text(r, string_text), lambda r: ["d"]),
    "bools": ({"via": {"arrayOf": "boolean"}}, pa.list_(pa.bool_()), False,
              lambda r: array_text(r, lambda q: q.choice(["true", "false"])), None),
    "matrix": ({"via": {"arrayOf": {"arrayOf": "integer"}}}, pa.list_(pa.list_(pa.int64())), False,
               lambda r: array_text(r, lambda q: array_text(q, integer_text)), None),
    "points": ({"via": {"arrayOf": {"object": {"fields": {
                    "x": {"type": "integer"}, "y": {"type": "string", "optional": True}}}}}},
               pa.list_(pa.struct([("x", pa.int64()), ("y", pa.string())])), False,
               lambda r: array_text(r, lambda q: "{" + ", ".join(
                   [f'"x": {integer_text(q)}'] + ([f'"y": {string_text(q)}'] if q.randrange(2) else [])) + "}"),
               None),
    "sub": ({"via": {"object": {"fields": {"p": {"type": "integer"},
                                           "q.r": {"to": "q", "type": "number", "optional": True}}}}},
            pa.struct([("p", pa.int64()), ("q", pa.float64())]), False,
            lambda r: "{" + ", ".join([f'"p": {integer_text(r)}'] + (
                [f'"q": {{"r": {number_text(r)}}}'] if r.randrange(3) else [])) + "}", lambda r: {"p": 1}),
    "object": ({"type": "object"}, pa.string(), True,
               lambda r: "{" + ", ".join(f'"k{i}": {json_value(r, 1)}' for i in range(r.randrange(0, 4))) + "}",
               None),
    "array": ({"type": "array"}, pa.string(), True,
              lambda r: "[" + ", ".join(json_value(r, 1) for _ in range(r.randrange(0, 4))) + "]", None),
    "date": ({"via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]}, pa.int64(), False, date_text,
             lambda r: r.choice([0, -62135596800000])),
    "datetext": ({"via": {"stringToDate": "iso8601"}}, pa.string(), False, date_text, None),
    "parsed": ({"via": "stringToNumber"}, pa.float64(), False,
               lambda r: '"' + number_text(r).replace("+", "") + '"' if r.randrange(5)
               else r.choice(['"1,234.5"', '"-0.5"', '" 1"', '"0x10"', '"1e400"', '"12,345,678.000001"']), None),
    "digits": ({"via": "numberToString"}, pa.string(), False, number_text, None),
    "enum": ({"via": {"enum": {"a": "A", "b": "B", "é": "É"}}}, pa.string(), False,
             lambda r: r.choice(['"a"', '"b"', '"\\u00e9"', '"c"']), lambda r: "none"),
    "text": ({"via": "toString"}, pa.string(), False, lambda r: json_value(r), None),
    "tripled": ({"via": ["integer", {"multiply": 3}]}, pa.int64(), False, integer_text, None),
    "scaled": ({"via": ["number", {"multiply": 2.5}]}, pa.float64(), False, number_text, None),
}
PRESENCE = ["required", "required", "optional", "omit", "null", "default", "notRequired"]
INVALID_LINES = [b'{"f0": ', b'{"f0": 1,}', b'{"f0": NaN}', b'{"f0": "\xff\xfe"}', b'{"f0": "\\ud800"}',
                 b'{"f0": tru}', b"[1, 2]", b"5", b'{"f0": 01}', b'{"f0": "a\tb"}', b"{'f0': 1}"]


def generate(seed: int) -> Tuple[Dict[str, Any], List[Tuple[str, str, Tuple[str, ...]]], List[bytes]]:
    """A typed spec, its fields (kind, source path, destination steps) and its input lines."""
    rng = random.Random(seed)
    fields: Dict[str, Any] = {}
    layout = []
    for i in range(rng.randrange(3, 9)):
        kind = rng.choice(list(KINDS))
        base, _, _, _, default = KINDS[kind]
        source = rng.choice([f"f{i}", f"f{i}", f"f{i}", f"s.f{i}"])
        name = f"f{i}" + rng.choice(["", "", "", " é✓"])  # (column names are UTF-8)
        destination = rng.choice([name, name, f"g.{name}", f"g.h.{name}", f"g.h.{name}", f"ké y.{name}"])
        entry: Dict[str, Any] = {"to": destination, **json.loads(json.dumps(base))}
        presence = rng.choice(PRESENCE)
        if presence == "optional":
            entry["optional"] = True
        elif presence == "omit":
            entry["missing"], entry["null"] = "omit", "omit"
        elif presence == "null":
            entry["missing"], entry["null"] = "null", "null"
        elif presence == "notRequired":
            entry["required"] = False
        elif presence == "default" and default is not None:
            entry["default"] = default(rng)
        fields[source] = entry
        layout.append((kind, source, tuple(destination.split("."))))
    lines = []
    for _ in range(rng.randrange(100, 200)):
        if rng.randrange(40) == 0:
            lines.append(rng.choice(INVALID_LINES + [b""]))
            continue
        top, nested = [], []
        for kind, source, _ in layout:
            roll = rng.randrange(80)
            if roll < 3:
                continue  # absent
            v = "null" if roll < 6 else '"wrong"' if roll == 6 else str(2 ** 64 + 5) if roll == 7 \
                else "1e400" if roll == 8 else "{}" if roll == 9 else KINDS[kind][3](rng)
            (nested if source.startswith("s.") else top).append(f'"{source.split(".")[-1]}": {v}')
        if nested or rng.randrange(10) == 0:
            top.append('"s": ' + rng.choice(["{" + ", ".join(nested) + "}"] * 8 + ["null", "[]"]))
        if rng.randrange(30) == 0:
            top.append('"unused": [1, {"x": "y"}]')
        rng.shuffle(top)
        lines.append(("{" + rng.choice([", ", ",", " ,\t"]).join(top) + "}").encode("utf-8"))
    return {"streammap": 1, "fields": fields}, layout, lines


def expected_schema(layout: List[Tuple[str, str, Tuple[str, ...]]]) -> pa.Schema:
    """The spec's output fields in order, nested destinations as structs (in first-appearance order)."""
    tree: Dict[str, Any] = {}
    for kind, _, steps in layout:
        node = tree
        for step in steps[:-1]:
            node = node.setdefault(step, {})
        node[steps[-1]] = KINDS[kind][1]

    def build(node: Dict[str, Any]) -> List[pa.Field]:
        return [pa.field(k, pa.struct(build(v)) if isinstance(v, dict) else v) for k, v in node.items()]
    return pa.schema(build(tree))


def rejects(path: Path) -> Dict[int, Dict[str, Any]]:
    """A --rejects file by line number."""
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").split("\n")[:-1]:
        r = json.loads(line)
        assert r["line"] not in out
        out[r["line"]] = r
    return out


def is_misfit(error: Dict[str, Any]) -> bool:
    """An error of Arrow mode only: a value that its int64 or float64 column cannot hold."""
    return error["code"] == "value" and bool(re.search(r"\b(int64|float64)\b", error["message"]))


STREAM_RUNS = {  # name: arguments (the output goes to -o NAME unless the name is "stdout")
    "stdout": ["--to", "arrow"],
    "out.arrows": [],
    "tree.arrow": ["--engine", "tree", "--to", "arrow-stream"],
    "jobs.bin": ["--jobs", "2", "--to", "arrow"],
}
FILE_RUNS = {
    "out.arrow": [],
    "out.feather": ["--engine", "tree", "--jobs", "2"],
    "forced.arrows": ["--to", "arrow-file"],
}
TINY_RUNS = {  # (--batch-bytes cuts the parallel work small; Arrow's batches stay whole): the same table
    "tiny.arrows": ["--jobs", "2", "--batch-bytes", "200"],
    "tiny.arrow": ["--jobs", "2", "--batch-bytes", "200", "--engine", "tree"],
}


@pytest.mark.parametrize("seed", range(SEEDS))
def test_every_column_kind_holds_the_ndjson_output_typed(seed: int, tmp_path: Path) -> None:
    spec, layout, lines = generate(seed)
    (tmp_path / "spec.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "in.ndjson").write_bytes(b"\n".join(lines) + b"\n")
    base = ["-s", "spec.json", "in.ndjson", "--framing", "ndjson"]

    nd = run(base + ["-q", "--rejects", "nd.rejects"], cwd=tmp_path)
    nd_rejects = rejects(tmp_path / "nd.rejects")
    assert nd.returncode == (1 if nd_rejects else 0), nd.stderr.decode()
    ndjson_rows = [load(line) for line in nd.stdout.decode("utf-8").split("\n")[:-1]]
    mapped_lines = [n for n, line in enumerate(lines, 1) if n not in nd_rejects and line.strip()]
    assert len(mapped_lines) == len(ndjson_rows)

    # Every way of writing Arrow: the same stream bytes, the same file bytes, the same table, the same rejects.
    outputs: Dict[str, bytes] = {}
    reject_files: Dict[str, bytes] = {}
    status: Dict[str, int] = {}
    stderr = ""
    for name, args in {**STREAM_RUNS, **FILE_RUNS, **TINY_RUNS}.items():
        if name == "stdout":  # the rejects reported on standard error
            r = run(base + args, cwd=tmp_path)
            outputs[name], stderr = r.stdout, r.stderr.decode("utf-8")
        else:
            r = run(base + args + ["-o", name, "-q", "--rejects", name + ".rejects"], cwd=tmp_path)
            assert r.stdout == b"", name
            outputs[name] = (tmp_path / name).read_bytes()
            path = tmp_path / (name + ".rejects")
            reject_files[name] = path.read_bytes() if path.exists() else b""
        status[name] = r.returncode
        assert r.returncode in (0, 1), (name, r.returncode, r.stderr.decode())
    ar_rejects = rejects(tmp_path / "out.arrows.rejects")
    assert status == {name: 1 if ar_rejects else 0 for name in status}, status
    for name in STREAM_RUNS:
        assert outputs[name] == outputs["stdout"], f"{name}: not the bytes of the stream on standard output"
    for name in FILE_RUNS:
        assert outputs[name] == outputs["out.arrow"], f"{name}: not the bytes of -o out.arrow"
    for name, data in reject_files.items():
        assert data == reject_files["out.arrows"], f"{name}: other rejects than -o out.arrows's"

    table = read_stream(outputs["stdout"])
    file_table = read_file(outputs["out.arrow"])
    assert file_table.equals(table) and file_table.schema == table.schema
    assert feather.read_table(pa.BufferReader(outputs["out.feather"])).equals(table)
    for name in TINY_RUNS:
        assert read_ipc(outputs[name]).equals(table), f"{name}: another table"
    schema = expected_schema(layout)
    assert table.schema == schema, (table.schema, schema)

    def field_of(path: str) -> str:  # the output field (destination) of a value's path
        return next("/" + "/".join(steps) for _, _, steps in layout
                    if (path + "/").startswith("/" + "/".join(steps) + "/"))

    # The rejects: NDJSON's, plus the records with a number that its column cannot hold.
    text_columns = {steps for kind, _, steps in layout if KINDS[kind][2]}
    want, misfit_lines = [], {}
    for n, row in zip(mapped_lines, ndjson_rows):
        misfits: List[Tuple[str, str]] = []
        want_row = expected(row, pa.struct(list(schema)), (), text_columns, misfits)
        if misfits:
            misfit_lines[n] = misfits
        else:
            want.append(want_row)
    assert set(ar_rejects) == set(nd_rejects) | set(misfit_lines), (
        "Arrow rejects other records than NDJSON's plus those with misfit numbers",
        sorted(set(ar_rejects) ^ (set(nd_rejects) | set(misfit_lines))), misfit_lines)
    for n, r in ar_rejects.items():
        fatal = [e for e in r["errors"] if e["fatal"]]
        if n in nd_rejects:  # the same report, with the misfit numbers' errors added
            assert (r["offset"], r["record"]) == (nd_rejects[n]["offset"], nd_rejects[n]["record"])
            assert [e for e in r["errors"] if not is_misfit(e)] == nd_rejects[n]["errors"], n
        else:
            assert fatal and all(is_misfit(e) for e in fatal), (n, fatal, misfit_lines[n])
        if n in misfit_lines:  # each misfit's field has an error, at a misfit value (the first in the field)
            paths = [e["destination"] for e in r["errors"] if is_misfit(e)]
            assert set(paths) <= {path for path, _ in misfit_lines[n]}, (n, paths, misfit_lines[n])
            assert {field_of(p) for p in paths} == {field_of(p) for p, _ in misfit_lines[n]}, (n, paths)
    reported = {int(m.group(1)) for m in re.finditer(r"^streammap: in\.ndjson:(\d+): ", stderr, re.M)}
    assert reported == set(ar_rejects), "standard error reports other records than --rejects"
    for n in set(ar_rejects) - set(nd_rejects):
        for e in ar_rejects[n]["errors"]:  # (warnings are not shown without --warnings)
            assert not e["fatal"] or f"streammap: in.ndjson:{n}: {e['source']}: {e['message']}\n" in stderr, (n, e)

    # The rows: the NDJSON output's, typed, without the records rejected only for their numbers.
    assert table.num_rows == len(want)
    for i, (got, row) in enumerate(zip(table.to_pylist(), want)):
        assert arrow_row(got, schema, text_columns) == row, (i, got, row)

    # Polars (its own IPC reader) reads the file and the stream: the same rows.
    for frame in (pl.read_ipc(io.BytesIO(outputs["out.arrow"])), pl.read_ipc_stream(io.BytesIO(outputs["stdout"]))):
        assert frame.height == table.num_rows and frame.columns == table.column_names
        assert [tag(r) for r in frame.to_dicts()] == [tag(r) for r in table.to_pylist()]


def test_the_generator_makes_every_kind() -> None:
    kinds, presences = set(), set()
    for seed in range(SEEDS):
        spec, layout, _ = generate(seed)
        kinds.update(kind for kind, _, _ in layout)
        presences.update(k for entry in spec["fields"].values() for k in ("optional", "missing", "default", "required")
                         if k in entry)
    assert kinds == set(KINDS) and presences == {"optional", "missing", "default", "required"}


# MARK: numbers: the nearest double

def test_floats_are_the_nearest_double_to_the_text(tmp_path: Path) -> None:
    rng = random.Random(7)
    texts = [t for t in EDGE_NUMBERS + [number_text(rng) for _ in range(400)] if math.isfinite(float(t))]
    (tmp_path / "in.ndjson").write_text("".join(f'{{"n": {t}, "s": "{t}", "m": {t}}}\n' for t in texts))
    spec = {"fields": {"n": {"type": "number"}, "s": {"via": "stringToNumber"},
                       "m": {"via": ["number", {"multiply": 0.5}]}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    r = run(["-s", "spec.json", "in.ndjson", "--to", "arrow"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    table = read_ipc(r.stdout)
    nd = run(["-s", "spec.json", "in.ndjson"], cwd=tmp_path)  # the exact decimal results, as text
    assert nd.returncode == 0, nd.stderr.decode()
    decimal = [json.loads(line, parse_float=str, parse_int=str) for line in nd.stdout.decode().splitlines()]
    assert table.num_rows == len(texts) == len(decimal)
    for column in ("n", "s", "m"):
        want = [row[column] for row in decimal]
        if column != "m":
            assert [Decimal(w) for w in want] == [Decimal(t) for t in texts]
        wrong = [(w, g, float(w)) for w, g in zip(want, table[column].to_pylist())
                 if g is None or g.hex() != float(w).hex()]
        assert not wrong, (column, wrong[:10])


# MARK: spec shapes and their columns

SHAPES = [  # (spec, record, schema, row, JSON text columns); the NDJSON output's values are checked too
    ({"fields": {"a.b": {"type": "integer", "literal": True}}}, {"a.b": 1, "a": {"b": 2}},
     [("a.b", pa.int64())], {"a.b": 1}, []),
    ({"fields": {"d": {"type": "integer", "to": "naïve name.ü ber"}}}, {"d": 5},
     [("naïve name", pa.struct([("ü ber", pa.int64())]))], {"naïve name": {"ü ber": 5}}, []),
    ({"fields": {"e": {"via": {"arrayOf": "integer"}, "to": ["p", "q"]}}}, {"e": [1, 2]},
     [("p", pa.int64()), ("q", pa.int64())], {"p": 1, "q": 2}, []),
    ({"fields": [{"from": ["c", "d"], "to": "m", "type": "array"}]}, {"c": "x", "d": 5}, [("m", pa.string())],
     {"m": '["x",5]'}, ["m"]),
    ({"mapper": {"object": {"fields": {"d": {"type": "integer"}}}}}, {"d": 5}, [("d", pa.int64())], {"d": 5}, []),
    ({"fields": {"c": {"via": {"enum": {"x": 1, "y": 2}}}}}, {"c": "x"}, [("c", pa.int64())], {"c": 1}, []),
    ({"fields": {"c": {"via": {"enum": {"x": 1, "y": 2.5}}}}}, {"c": "x"}, [("c", pa.float64())], {"c": 1.0}, []),
    ({"fields": {"d": {"via": {"numberToDate": "s"}}}}, {"d": 5}, [("d", pa.string())],
     {"d": "1970-01-01T00:00:05Z"}, []),
    ({"fields": {"d": {"via": [{"numberToDate": "s"}, {"dateToNumber": "ms"}]}}}, {"d": 5}, [("d", pa.int64())],
     {"d": 5000}, []),
    ({"fields": {"d": {"via": ["integer", {"add": 2}]}}}, {"d": 5}, [("d", pa.int64())], {"d": 7}, []),
    ({"fields": {"d": {"via": ["number", {"add": 0.5}]}}}, {"d": 5}, [("d", pa.float64())], {"d": 5.5}, []),
    ({"fields": {"c": {"via": {"type": ["string", "null"]}}}}, {"c": None}, [("c", pa.string())], {"c": None}, []),
    ({"fields": {"c": {"type": "day"}}, "types": {"day": {"stringToDate": "iso8601"}}}, {"c": "2014-08-31"},
     [("c", pa.string())], {"c": "2014-08-31T00:00:00Z"}, []),
    ({"fields": {"n": {"type": "string"}, "i": {"type": "integer"}}, "nullToEmpty": {"except": []}},
     {"n": None, "i": None}, [("n", pa.string()), ("i", pa.int64())], {"n": "", "i": 0}, []),
    ({"fields": {"u": {"via": "uuid"}, "w": {"via": "url"}}},
     {"u": "123E4567-E89B-12D3-A456-426614174000", "w": "https://example.com/a b"},
     [("u", pa.string()), ("w", pa.string())], None, []),
    ({"fields": {"x": {"via": {"arrayOf": {"arrayOf": {"object": {"fields": {
        "v": {"type": "boolean", "optional": True}}}}}}}}},
     {"x": [[{"v": True}], [], [{"v": False}, {"v": None}]]},
     [("x", pa.list_(pa.list_(pa.struct([("v", pa.bool_())]))))], None, []),
]


@pytest.mark.parametrize("spec, record, fields, row, text", SHAPES)
def test_spec_shapes_and_their_columns(spec: Dict[str, Any], record: Dict[str, Any], fields: List[Any],
                                       row: Optional[Dict[str, Any]], text: List[str], tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    r = run(["-s", "spec.json", "--to", "arrow"], data, cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    table = read_ipc(r.stdout)
    assert table.schema == pa.schema(fields)
    nd = run(["-s", "spec.json"], data, cwd=tmp_path)
    assert nd.returncode == 0, nd.stderr.decode()
    text_columns = {(name,) for name in text}
    misfits: List[Tuple[str, str]] = []
    want = expected(load(nd.stdout.decode("utf-8")), pa.struct(list(table.schema)), (), text_columns, misfits)
    assert not misfits
    assert [arrow_row(got, table.schema, text_columns) for got in table.to_pylist()] == [want]
    if row is not None:
        assert tag(table.to_pylist()) == tag([row])


@pytest.mark.parametrize("spec, message", [
    ({"fields": {"d": {"type": "integer"}}, "unmapped": "keep"}, "unmapped"),
    ({"fields": {"c": {"via": {"type": ["string", "integer"]}}}}, "one column cannot hold"),
    ({"fields": {"d": {"via": {"first": ["integer", "string"]}}}}, "another alternative"),
    ({"fields": {"z": {"type": "null"}}}, "not known from the spec: z"),
    ({"fields": {"e": {"type": "array", "to": ["p", "q"]}}}, "not known from the spec: p, q"),
    ({"fields": {"a": "b", "c": {"type": "integer"}, "d": {"to": "x.y"}}}, "not known from the spec: b, x.y;"),
], ids=["unmapped-keep", "union", "first", "null", "one-to-many-untyped", "plain-renames"])
def test_columns_that_arrow_cannot_type_are_usage_errors(spec: Dict[str, Any], message: str, tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    for out in (["--to", "arrow"], ["-o", "x.arrow"]):
        r = run(["-s", "spec.json"] + out, b'{"d": 1}\n', cwd=tmp_path)
        assert r.returncode == 64 and r.stdout == b"", r.stderr.decode()
        assert message in r.stderr.decode()
        assert not (tmp_path / "x.arrow").exists()


# MARK: defaults agree with their column

@pytest.mark.parametrize("field, arrow_type, value", [
    ({"type": "integer", "default": -3}, pa.int64(), -3),
    ({"type": "number", "default": 2}, pa.float64(), 2.0),
    ({"type": "string", "default": "é"}, pa.string(), "é"),
    ({"type": "boolean", "default": False}, pa.bool_(), False),
    ({"via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}], "default": 0}, pa.int64(), 0),
    ({"via": {"arrayOf": "integer"}, "default": []}, pa.list_(pa.int64()), []),
    ({"via": {"arrayOf": "string"}, "default": ["d"]}, pa.list_(pa.string()), ["d"]),
    ({"via": {"object": {"fields": {"p": {"type": "integer"}}}}, "default": {"p": 1}},
     pa.struct([("p", pa.int64())]), {"p": 1}),
], ids=["integer", "number-int", "string", "boolean", "date-ms", "ints-empty", "strings", "object-spec"])
def test_a_default_that_agrees_keeps_the_column_type(field: Dict[str, Any], arrow_type: pa.DataType, value: Any,
                                                     tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps({"fields": {"a": field}}))
    r = run(["-s", "spec.json", "--to", "arrow"], b'{}\n{"a": null}\n', cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    table = read_ipc(r.stdout)
    assert table.schema == pa.schema([("a", arrow_type)])
    assert tag(table["a"].to_pylist()) == tag([value, value])


@pytest.mark.parametrize("field", [
    {"type": "string", "default": 5},
    {"type": "boolean", "default": 0},
    {"type": "integer", "default": "7"},
    {"type": "integer", "default": 1.5},
    {"via": {"enum": {"x": "X"}}, "default": 1},
    {"via": {"arrayOf": "integer"}, "default": [1, "x"]},
    {"via": {"arrayOf": "integer"}, "default": "[]"},
], ids=["string-5", "boolean-0", "integer-text", "integer-1.5", "enum-1", "ints-mixed", "ints-text"])
def test_a_default_that_disagrees_is_a_usage_error(field: Dict[str, Any], tmp_path: Path) -> None:
    """docs/cli.md: "Defaults and an enum's values must agree with the column (an integer default in a number
    column is fine)" — a declared integer column stays int64, a list column a list."""
    (tmp_path / "spec.json").write_text(json.dumps({"fields": {"a": field}}))
    r = run(["-s", "spec.json", "--to", "arrow"], b'{}\n', cwd=tmp_path)
    assert r.returncode == 64 and r.stdout == b"", (r.returncode, r.stderr.decode(), read_ipc(r.stdout).schema
                                                     if r.returncode == 0 else None)
    assert b"default" in r.stderr


def test_an_integer_default_beyond_int64_is_a_usage_error(tmp_path: Path) -> None:
    """A default no record can change: refused before any input is read, not a rejection of every record that
    lacks the field."""
    (tmp_path / "spec.json").write_text(json.dumps({"fields": {"a": {"type": "integer", "default": 2 ** 64 + 5}}}))
    r = run(["-s", "spec.json", "--to", "arrow"], b'{"a": 1}\n{}\n', cwd=tmp_path)
    assert r.returncode == 64 and r.stdout == b"", (r.returncode, r.stderr.decode())
