"""Timestamp and decimal128 columns (a field's ``"column"``, ``--column``) against an oracle written apart from streammap.

Random instants (years 1 to 9999 and int64's nanosecond edges, fractions of 0 to 9 digits, any zone offset) and
random decimal texts (any digits, exponents, trailing zeros) are computed here with Python's integers and
``decimal.Decimal``; each is what pyarrow reads back from streammap's Arrow output, or its record is rejected with
its path — exactly when the value does not fit the column (finer than the unit, beyond int64's range, more digits
than the precision or the scale). Both engines and ``--jobs 2`` write the same bytes; DuckDB and Polars read the
same values with their own types.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa
import pyarrow.feather as feather
import pytest

from conftest import read_stream, run

UNITS = {"s": 1, "ms": 10 ** 3, "us": 10 ** 6, "ns": 10 ** 9}
INT64 = (-2 ** 63, 2 ** 63 - 1)
EPOCH_DAYS_1 = -719162  # 0001-01-01 as days since 1970-01-01


def iso(seconds: int, nanos: int, offset_minutes: int, digits: int) -> str:
    """The instant ``seconds + nanos/1e9`` as ISO 8601 text in a zone ``offset_minutes`` east of UTC."""
    local = seconds + offset_minutes * 60
    days, rest = divmod(local, 86400)
    day = dt.date(1970, 1, 1) + dt.timedelta(days=days)
    text = f"{day.year:04d}-{day.month:02d}-{day.day:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"
    if digits:
        text += "." + f"{nanos:09d}"[:digits]
    if offset_minutes == 0 and digits % 2 == 0:
        return text + "Z"
    sign = "+" if offset_minutes >= 0 else "-"
    return text + f"{sign}{abs(offset_minutes) // 60:02d}:{abs(offset_minutes) % 60:02d}"


def random_instant(rng: random.Random) -> Tuple[str, int]:
    """(ISO text, nanoseconds since the epoch)."""
    if rng.random() < 0.1:  # int64's nanosecond edges, and just past them
        ns = rng.choice([INT64[0], INT64[1], INT64[0] - 1, INT64[1] + 1, INT64[0] + 10 ** 9, INT64[1] - 10 ** 9])
    else:
        days = rng.randrange(EPOCH_DAYS_1 + 1, 2932896 - 1)  # 0001-01-02 to 9999-12-30
        ns = days * 86400 * 10 ** 9 + rng.randrange(86400 * 10 ** 9)
    digits = rng.choice([0, 0, 3, 6, 9, 1, 7])
    if digits < 9:
        ns -= ns % 10 ** (9 - digits)  # the text holds the fraction to that many digits
    seconds, nanos = divmod(ns, 10 ** 9)
    offset = rng.choice([0, 0, 60, -300, 330, 14 * 60 - 1])
    return iso(seconds, nanos, offset, digits), ns


def fits_unit(ns: int, unit: str) -> Optional[int]:
    per = UNITS[unit]
    if ns % (10 ** 9 // per):
        return None
    value = ns // (10 ** 9 // per)
    return value if INT64[0] <= value <= INT64[1] else None


def random_decimal(rng: random.Random) -> Tuple[str, Decimal]:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 42))).lstrip("0") or "0"
    point = rng.randrange(0, len(digits) + 1)
    text = digits[:point] or "0"
    if point < len(digits):
        text += "." + digits[point:]
    if rng.random() < 0.2:
        text += "0" * rng.randrange(1, 4) if "." in text else ""
    if rng.random() < 0.3:
        text += f"e{rng.choice(['', '+', '-'])}{rng.randrange(0, 40)}"
    if rng.random() < 0.4:
        text = "-" + text
    with localcontext() as ctx:
        ctx.prec = 200
        return text, Decimal(text)


def fits_decimal(d: Decimal, precision: int, scale: int) -> bool:
    with localcontext() as ctx:
        ctx.prec = 200
        scaled = d.scaleb(scale)
        return scaled == scaled.to_integral_value() and abs(scaled) < Decimal(10) ** precision


COLUMNS = [("t_s", "timestamp(s)"), ("t_ms", "timestamp(ms)"), ("t_us", "timestamp"), ("t_ns", "timestamp(ns)"),
           ("d_9_3", "decimal(9,3)"), ("d_38_0", "decimal(38,0)"), ("d_38_10", "decimal(38,10)"), ("d_5_5", "decimal(5, 5)")]


def spec() -> Dict[str, Any]:
    fields = {}
    for name, column in COLUMNS:
        kind = "string" if name.startswith("t") else "number"
        fields[name] = {"type": kind, "column": column, "required": False}
    return {"fields": fields}


@pytest.mark.parametrize("seed", range(6))
def test_timestamps_and_decimals_are_the_oracles_values_or_rejected(seed: int, tmp_path: Path, binary: str) -> None:
    rng = random.Random(seed)
    records: List[Dict[str, Any]] = []
    texts: List[str] = []
    for _ in range(400):
        name, column = rng.choice(COLUMNS)
        if name.startswith("t"):
            text, value = random_instant(rng)
            texts.append(json.dumps({name: text}))
        else:
            text, value = random_decimal(rng)
            texts.append(f'{{"{name}": {text}}}')
        records.append({"name": name, "column": column, "text": text, "value": value})
    (tmp_path / "in.ndjson").write_text("\n".join(texts) + "\n")
    (tmp_path / "spec.json").write_text(json.dumps(spec()))

    outputs = []
    for extra in (["--engine", "stream"], ["--engine", "tree"], ["--jobs", "2", "--batch-bytes", "300"]):
        p = run(binary, ["-s", tmp_path / "spec.json", tmp_path / "in.ndjson", "--to", "arrow", *extra])
        assert p.returncode in (0, 1), p.stderr.decode()
        outputs.append(p)
    first = outputs[0]
    assert outputs[1].stdout == first.stdout and outputs[1].stderr == first.stderr
    assert outputs[2].stderr == first.stderr
    table = read_stream(first.stdout)
    assert read_stream(outputs[2].stdout).equals(table)

    rejected_lines = [int(m.group(1)) for m in re.finditer(r"in\.ndjson:(\d+): ", first.stderr.decode())]
    expected_rows = []
    expected_rejects = []
    for line, r in enumerate(records, start=1):
        name, column = r["name"], r["column"]
        if name.startswith("t"):
            unit = column[len("timestamp("):-1] if "(" in column else "us"
            fits = fits_unit(r["value"], unit)
            raw = {n: None for n, _ in COLUMNS}
            raw[name] = fits
        else:
            precision, scale = (int(x) for x in column[len("decimal("):-1].split(","))
            fits = r["value"] if fits_decimal(r["value"], precision, scale) else None
            raw = {n: None for n, _ in COLUMNS}
            raw[name] = fits
        if fits is None:
            expected_rejects.append(line)
        else:
            expected_rows.append(raw)
    assert rejected_lines == expected_rejects
    assert table.num_rows == len(expected_rows)
    for name, _ in COLUMNS:
        col = table.column(name)
        values = col.cast(pa.int64()).to_pylist() if pa.types.is_timestamp(col.type) else col.to_pylist()
        assert values == [row[name] for row in expected_rows], name
    assert str(table.schema.field("t_us").type) == "timestamp[us, tz=UTC]"
    assert str(table.schema.field("d_5_5").type) == "decimal128(5, 5)"


def test_every_message_names_the_path_and_the_column(tmp_path: Path, binary: str) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(spec()))
    lines = [{"t_s": "2014-08-31T00:29:15.5Z"}, {"t_ns": "2262-04-12T00:00:00Z"}, {"d_9_3": 0.0001},
             {"d_9_3": 1234567}, {"t_us": "Sun Aug 31 00:29:15 +0000 2014"}]
    p = run(binary, ["-s", tmp_path / "spec.json", "--to", "arrow", "-o", tmp_path / "out.arrow"],
            stdin="".join(json.dumps(x) + "\n" for x in lines).encode())
    assert p.returncode == 1
    assert p.stderr.decode().splitlines() == [
        'streammap: <stdin>:1: /t_s: "2014-08-31T00:29:15.5Z" is finer than the timestamp[s, UTC] column\'s unit; declare "column": "timestamp(ms)" to keep it (it is never truncated)',
        'streammap: <stdin>:2: /t_ns: "2262-04-12T00:00:00Z" is beyond the range of the timestamp[ns, UTC] column (int64 nanoseconds since 1970)',
        "streammap: <stdin>:3: /d_9_3: 0.0001 has more than 3 digits after the point, and the column is decimal128(9, 3); a larger scale keeps them (it is never rounded)",
        "streammap: <stdin>:4: /d_9_3: 1234567 has more than 6 digits before the point, and the column is decimal128(9, 3)",
        'streammap: <stdin>:5: /t_us: "Sun Aug 31 00:29:15 +0000 2014" is not a date with a zone (ISO 8601, as stringToDate writes it: 2014-08-31T00:29:15Z), and the column is timestamp[us, UTC]; map it with stringToDate',
    ]
    assert feather.read_table(tmp_path / "out.arrow").num_rows == 0


def test_duckdb_and_polars_read_the_columns(tmp_path: Path, binary: str) -> None:
    import duckdb
    import polars as pl
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps({"fields": {
        "created_at": {"to": "at", "via": {"stringToDate": "twitter"}, "column": "timestamp"},
        "price": {"via": "stringToNumber", "column": "decimal(12,2)"},
        "qty": {"type": "integer", "column": "decimal(38,0)"},
    }}))
    records = [{"created_at": "Sun Aug 31 00:29:15 +0000 2014", "price": "1,234.50", "qty": 10 ** 30},
               {"created_at": "Mon Sep 01 12:00:00 +0200 2014", "price": "0.05", "qty": -3}]
    p = run(binary, ["-s", spec_file, "-o", tmp_path / "t.arrow"], stdin="".join(json.dumps(r) + "\n" for r in records).encode())
    assert p.returncode == 0, p.stderr.decode()
    t = feather.read_table(tmp_path / "t.arrow")
    utc = dt.timezone.utc
    assert t.to_pylist() == [
        {"at": dt.datetime(2014, 8, 31, 0, 29, 15, tzinfo=utc), "price": Decimal("1234.50"), "qty": Decimal(10 ** 30)},
        {"at": dt.datetime(2014, 9, 1, 10, 0, 0, tzinfo=utc), "price": Decimal("0.05"), "qty": Decimal(-3)},
    ]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    assert [str(x) for x in con.sql("select * from t").types] == ["TIMESTAMP WITH TIME ZONE", "DECIMAL(12,2)", "DECIMAL(38,0)"]
    assert con.sql('select epoch("at")::bigint, price * 2, qty + 1 from t').fetchall() == [
        (1409444955, Decimal("2469.00"), Decimal(10 ** 30 + 1)), (1409565600, Decimal("0.10"), Decimal(-2))]
    frame = pl.read_ipc(tmp_path / "t.arrow")
    assert frame.schema["at"] == pl.Datetime("us", "UTC") and frame.schema["price"] == pl.Decimal(12, 2)
    assert frame["price"].to_list() == [Decimal("1234.50"), Decimal("0.05")]


def test_the_column_flag_types_a_plain_field(binary: str) -> None:
    p = run(binary, ["--field", "at", "--column", "at=timestamp(ms)", "--field", "n", "--column", "n=decimal(4,1)", "--to", "arrow"],
            stdin=b'{"at": "2014-08-31T00:29:15.123+02:00", "n": 123.4}\n{"at": 5}\n')
    assert p.returncode == 1
    assert p.stderr.decode() == ("streammap: <stdin>:2: /at: expected timestamp[ms, UTC], found integer 5; a number since the epoch: "
                                 "map it with {\"numberToDate\": \"s\"} (or \"ms\") first\n")
    table = read_stream(p.stdout)
    assert str(table.schema) == "at: timestamp[ms, tz=UTC]\nn: decimal128(4, 1)"
    assert table.column("at").cast(pa.int64()).to_pylist() == [1409437755123]
    assert table.column("n").to_pylist() == [Decimal("123.4")]
