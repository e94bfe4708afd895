"""The typed stage (``map_files(..., columns=True)``) on a real local[2,2] session: its records against a serial
``streammap --to arrow`` run of the same binary (row for row, in order) and against the text stage's records
(the same values, typed), on the tweet corpus and on generated specs; its rejects and counts against the serial
run's; a spec that cannot be typed failing on the driver; a task killed mid-split retried to the same table."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import random
import subprocess
import tempfile
from pathlib import Path
from decimal import Decimal
from typing import Any, Dict, List, Tuple

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import ArrayType, DataType, DecimalType, DoubleType, StringType, StructType, TimestampType

from conftest import TWEETS_SPEC
from corpus import write_corpus
from streammap_spark import StreamMapError, map_files
from test_stage import REJECTS_RECORD_BYTES, failed_tasks_with_a_fault, spark_rejects

RECORDS = 40_000
SPLIT_BYTES = 1 << 20


def serial_arrow(binary: str, files: List[str], spec: str, *extra: str) -> Tuple[pa.Table, List[Dict[str, Any]],
                                                                                Dict[str, Any]]:
    """``streammap --to arrow FILE…``: its table (validated in full), its rejects, its --stats."""
    with tempfile.TemporaryDirectory() as folder:
        rejects = os.path.join(folder, "rejects.ndjson")
        done = subprocess.run([binary, "-q", "--no-progress", "--stats", "--to", "arrow", "--rejects", rejects,
                               "-s", spec, "--rejects-record-bytes", str(REJECTS_RECORD_BYTES), *extra, *files],
                              capture_output=True)
        assert done.returncode in (0, 1), done.stderr
        with open(rejects, "rb") as f:
            rows = [json.loads(line) for line in f]
    reader = ipc.open_stream(pa.BufferReader(done.stdout))
    table = pa.Table.from_batches(list(reader), schema=reader.schema)
    table.validate(full=True)
    return table, rows, json.loads(done.stderr.decode().strip().splitlines()[-1])


def read_parts(folder: Path) -> pa.Table:
    """A Parquet folder's part files, in order."""
    return pa.concat_tables([pq.read_table(p) for p in sorted(folder.glob("part-*"))])


def spark_rows(df: Any) -> List[Dict[str, Any]]:
    """A DataFrame's rows in order, as nested dicts and lists (structs as dicts, as pyarrow's ``to_pylist``)."""
    return [row.asDict(recursive=True) for row in df.collect()]


def instants(v: Any) -> Any:
    """``v`` with every datetime as microseconds since the epoch: pyarrow gives UTC-aware ones, PySpark naive ones
    in the Python process's zone (``timestamp()`` reads both right)."""
    if isinstance(v, dt.datetime):
        return round(v.timestamp() * 10 ** 6)
    if isinstance(v, dict):
        return {k: instants(x) for k, x in v.items()}
    if isinstance(v, list):
        return [instants(x) for x in v]
    return v


def same(actual: Any, expected: Any, t: DataType) -> bool:
    """Whether a typed value holds an NDJSON record's value (parsed with exact decimals): absent or null is null,
    numbers in a double column compare as the nearest double, in a decimal column exactly, a timestamp is the
    instant of the date text, and a string column holding an object or array holds its JSON text."""
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(t, TimestampType):
        return instants(actual) == instants(dt.datetime.fromisoformat(expected.replace("Z", "+00:00")))
    if isinstance(t, DecimalType):
        return not isinstance(expected, bool) and isinstance(actual, Decimal) and Decimal(expected) == actual
    if isinstance(t, StructType):
        return isinstance(expected, dict) and set(expected) <= {f.name for f in t.fields} and all(
            same(actual[f.name], expected.get(f.name), f.dataType) for f in t.fields)
    if isinstance(t, ArrayType):
        return (isinstance(expected, list) and len(actual) == len(expected)
                and all(same(a, e, t.elementType) for a, e in zip(actual, expected)))
    if isinstance(t, DoubleType):
        return not isinstance(expected, bool) and float(expected) == actual and \
            math.copysign(1, float(expected)) == math.copysign(1, actual)
    if isinstance(t, StringType) and not isinstance(expected, str):
        return json.loads(actual, parse_float=Decimal) == expected
    return type(actual) is type(expected) and actual == expected


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> List[str]:
    return [str(p) for p in write_corpus(tmp_path_factory.mktemp("typed-corpus"), RECORDS)]


@pytest.fixture(scope="module")
def tweets(spark: Any, binary: str, corpus: List[str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tweet mapping through the typed stage, written as Parquet (the counts come back with that job)."""
    result = map_files(spark, corpus, str(TWEETS_SPEC), binary=binary, split_bytes=SPLIT_BYTES, columns=True,
                       rejects_record_bytes=REJECTS_RECORD_BYTES)
    out = tmp_path_factory.mktemp("typed-parquet") / "tweets"
    result.write_parquet(str(out))
    return result, out


def test_the_schema_is_streammaps_and_known_before_any_task(spark: Any, binary: str, corpus: List[str]) -> None:
    table, _, _ = serial_arrow(binary, corpus[:1], str(TWEETS_SPEC))
    result = map_files(spark, corpus, str(TWEETS_SPEC), binary=binary, columns=True)
    assert result.schema is not None
    assert result.records.schema == result.schema
    assert [f.name for f in result.schema.fields] == table.schema.names
    assert result.schema.simpleString() == (
        "struct<id:bigint,idStr:string,createdAtMs:bigint,text:string,user:struct<id:bigint,handle:string,"
        "followers:bigint,verified:boolean>,stats:struct<retweets:bigint,likes:bigint>,lang:string,replyTo:bigint>")


def test_typed_records_are_the_serial_arrow_tables_rows_in_order(spark: Any, binary: str, corpus: List[str],
                                                                 tweets: Any) -> None:
    result, out = tweets
    table, rejects, stats = serial_arrow(binary, corpus, str(TWEETS_SPEC))
    assert len(result.splits) > 4  # several tasks, several files
    written = spark.read.schema(result.schema).parquet(str(out))
    parts = sorted(p.name for p in out.glob("part-*"))
    assert 4 < len(parts) <= len(result.splits)  # (a split with no records writes no part file)
    # Parquet's part files in order are the records in input order.
    ordered = pa.concat_tables([pq.read_table(out / p) for p in parts])
    assert ordered.to_pylist() == table.to_pylist()
    assert written.count() == table.num_rows == stats["recordsOut"]
    assert spark_rows(result.records) == table.to_pylist()
    total = result.counts.total
    assert (total.records_in, total.mapped, total.rejected) == (stats["recordsIn"], stats["recordsOut"],
                                                                stats["recordsRejected"])
    assert spark_rejects(result) == rejects


def test_typed_records_hold_the_text_stages_values(spark: Any, binary: str, corpus: List[str], tweets: Any) -> None:
    result, _ = tweets
    text = map_files(spark, corpus, str(TWEETS_SPEC), binary=binary, split_bytes=SPLIT_BYTES,
                     rejects_record_bytes=REJECTS_RECORD_BYTES)
    expected = [json.loads(line) for line in text.record_lines.collect()]
    typed = spark_rows(result.records)
    assert len(typed) == len(expected) > RECORDS // 2
    schema = result.schema
    for got, want in zip(typed, expected):
        assert same(got, want, schema), (got, want)
    assert spark_rejects(text) == spark_rejects(result)


# Generated specs: field kinds as the Arrow suite's (Integrations/arrow), values within int64 and a double (so that
# the text and the typed stage reject the same records), nested destinations, every kind of presence.
KINDS: Dict[str, Tuple[Dict[str, Any], Any]] = {
    "integer": ({"type": "integer"}, lambda r: str(r.choice([0, -1, 2 ** 63 - 1, -2 ** 63, r.randrange(-10 ** 9, 10 ** 9)]))),
    "number": ({"type": "number"}, lambda r: r.choice(["0.1", "-0.0", "1e300", "2.5e-300", "3", str(r.random())])),
    "string": ({"type": "string"}, lambda r: json.dumps(r.choice(["", "é\"\\\n😀", "x" * r.randrange(40), "\u0000"]))),
    "boolean": ({"type": "boolean"}, lambda r: r.choice(["true", "false"])),
    "ints": ({"via": {"arrayOf": "integer"}},
             lambda r: "[" + ",".join(str(r.randrange(-99, 99)) for _ in range(r.randrange(4))) + "]"),
    "sub": ({"via": {"object": {"fields": {"p": {"type": "integer"}, "q": {"type": "string", "optional": True}}}}},
            lambda r: '{"p": %d%s}' % (r.randrange(100), ', "q": "v"' if r.randrange(2) else "")),
    "object": ({"type": "object"}, lambda r: r.choice(['{}', '{"a": [1, {"b": null}]}', '{"k": "é"}'])),
    "timestamp": ({"via": {"stringToDate": "iso8601"}, "column": "timestamp(ms)"},
                  lambda r: '"%04d-%02d-%02dT%02d:%02d:%02d.%03d%s"' % (
                      r.randrange(2, 9999), r.randrange(1, 13), r.randrange(1, 29), r.randrange(24), r.randrange(60),
                      r.randrange(60), r.randrange(1000), r.choice(["Z", "+02:00", "-11:30"]))),
    "timestamps": ({"via": {"arrayOf": {"stringToDate": "iso8601"}}, "column": "timestamp"},
                   lambda r: "[" + ",".join('"2014-08-%02dT00:00:00.%06dZ"' % (r.randrange(1, 32), r.randrange(10 ** 6))
                                            for _ in range(r.randrange(3))) + "]"),
    "decimal": ({"type": "number", "column": "decimal(20,4)"},
                lambda r: r.choice(["0", "-0.0001", "9999999999999999.9999", str(r.randrange(-10 ** 12, 10 ** 12)) + ".5",
                                    "12e3", "-1.25E-2"])),
    "date": ({"via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]},
             lambda r: '"20%02d-0%d-1%dT0%d:30:00Z"' % (r.randrange(100), r.randrange(1, 10), r.randrange(10),
                                                         r.randrange(10))),
    "enum": ({"via": {"enum": {"a": "A", "b": "B"}}}, lambda r: r.choice(['"a"', '"b"', '"c"'])),
}
PRESENCE = ["required", "optional", "omit", "null", "notRequired"]


def generate(seed: int) -> Tuple[Dict[str, Any], bytes]:
    rng = random.Random(seed)
    fields: Dict[str, Any] = {}
    sources = []
    for i in range(rng.randrange(3, 8)):
        kind = rng.choice(list(KINDS))
        destination = rng.choice([f"f{i}", f"f{i}", f"g.f{i}", f"g.h.f{i} é"])
        entry: Dict[str, Any] = {"to": destination, **KINDS[kind][0]}
        presence = rng.choice(PRESENCE)
        if presence == "optional":
            entry["optional"] = True
        elif presence == "omit":
            entry["missing"], entry["null"] = "omit", "omit"
        elif presence == "null":
            entry["missing"], entry["null"] = "null", "null"
        elif presence == "notRequired":
            entry["required"] = False
        fields[f"f{i}"] = entry
        sources.append((f"f{i}", kind))
    lines = []
    for _ in range(rng.randrange(300, 600)):
        if rng.randrange(50) == 0:
            lines.append(rng.choice(['{"f0": ', '{"f0": 1,}', "[1]", '{"f0": tru}']))
            continue
        members = []
        for name, kind in sources:
            roll = rng.randrange(40)
            if roll == 0:
                continue
            value = "null" if roll == 1 else '"wrong"' if roll == 2 else KINDS[kind][1](rng)
            members.append(f'"{name}": {value}')
        rng.shuffle(members)
        lines.append("{" + ", ".join(members) + "}")
    return {"streammap": 1, "fields": fields}, ("\n".join(lines) + "\n").encode("utf-8")


@pytest.mark.parametrize("seed", range(6))
def test_generated_specs_typed_equal_serial_arrow_and_the_text_stage(spark: Any, binary: str, tmp_path: Path,
                                                                     seed: int) -> None:
    spec, data = generate(seed)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    files = []
    for i in range(2):  # two files, the second starting mid-way through the lines
        path = tmp_path / f"in{i}.ndjson"
        path.write_bytes(data if i == 0 else data[len(data) // 3:][data[len(data) // 3:].index(b"\n") + 1:])
        files.append(str(path))
    spec_path = str(tmp_path / "spec.json")
    table, rejects, stats = serial_arrow(binary, files, spec_path)
    typed = map_files(spark, files, spec_path, binary=binary, split_bytes=4096, columns=True,
                      rejects_record_bytes=REJECTS_RECORD_BYTES)
    assert len(typed.splits) > 4
    rows = spark_rows(typed.records)
    assert instants(rows) == instants(table.to_pylist())
    assert spark_rejects(typed) == rejects
    assert typed.counts.total.mapped == stats["recordsOut"] == len(rows)
    text = map_files(spark, files, spec_path, binary=binary, split_bytes=4096,
                     rejects_record_bytes=REJECTS_RECORD_BYTES)
    expected = [json.loads(line, parse_float=Decimal) for line in text.record_lines.collect()]
    assert len(expected) == len(rows)
    for got, want in zip(rows, expected):
        assert same(got, want, typed.schema), (spec, got, want)
    assert spark_rejects(text) == rejects


def test_a_number_its_column_cannot_hold_is_rejected_with_its_path(spark: Any, binary: str, tmp_path: Path) -> None:
    data = tmp_path / "in.ndjson"
    data.write_bytes(b'{"id": 1, "n": 0.5}\n{"id": 18446744073709551621, "n": 1}\n{"id": 3, "n": 1e400}\n')
    args = ["--field", "id", "--field", "n", "--type", "id=integer", "--type", "n=number"]
    typed = map_files(spark, [str(data)], None, args=args, binary=binary, columns=True)
    assert spark_rows(typed.records) == [{"id": 1, "n": 0.5}]
    rejects = typed.rejects.orderBy("line").collect()
    assert [(r["line"], [e["source"] for e in r["errors"]]) for r in rejects] == [(2, ["/id"]), (3, ["/n"])]
    assert typed.counts.total.rejected == 2
    # The text stage keeps both, exactly.
    text = map_files(spark, [str(data)], None, args=args, binary=binary)
    assert text.record_lines.collect() == ['{"id":1,"n":0.5}', '{"id":18446744073709551621,"n":1}',
                                           '{"id":3,"n":1e400}']


def test_timestamps_and_decimals_are_sparks_own_types(spark: Any, binary: str, tmp_path: Path) -> None:
    """``"column"``'s timestamps (every unit Spark holds: seconds and milliseconds are cast to its microseconds,
    exactly) and decimals, in lists too, to Spark and on to Parquet; nanoseconds are refused on the driver."""
    data = tmp_path / "in.ndjson"
    data.write_text(
        '{"at": "Sun Aug 31 00:29:15 +0000 2014", "price": "1,234.50", "big": 18446744073709551616, '
        '"ts": ["2014-08-31T02:29:15.123+02:00"]}\n'
        '{"at": "Mon Sep 01 12:00:00 +0200 2014", "price": "0.005", "big": 1, "ts": []}\n'
        '{"at": "Mon Sep 01 12:00:00 +0200 2014", "price": "0.05", "big": -1, "ts": null}\n')
    spec = tmp_path / "spec.json"
    fields = {
        "at": {"via": {"stringToDate": "twitter"}, "column": "timestamp"},
        "at_s": {"from": "at", "to": "at_s", "via": {"stringToDate": "twitter"}, "column": "timestamp(s)"},
        "price": {"via": "stringToNumber", "column": "decimal(12,2)"},
        "big": {"type": "integer", "column": "decimal(38,0)"},
        "ts": {"via": {"arrayOf": {"stringToDate": "iso8601"}}, "column": "timestamp(ms)", "null": "null"},
    }
    spec.write_text(json.dumps({"fields": fields}))
    typed = map_files(spark, [str(data)], str(spec), binary=binary, columns=True)
    assert typed.schema.simpleString() == \
        "struct<at:timestamp,at_s:timestamp,price:decimal(12,2),big:decimal(38,0),ts:array<timestamp>>"
    utc = dt.timezone.utc
    first, second = dt.datetime(2014, 8, 31, 0, 29, 15, tzinfo=utc), dt.datetime(2014, 9, 1, 10, 0, tzinfo=utc)
    assert instants(spark_rows(typed.records)) == instants([
        {"at": first, "at_s": first, "price": Decimal("1234.50"), "big": Decimal(2 ** 64),
         "ts": [dt.datetime(2014, 8, 31, 0, 29, 15, 123000, tzinfo=utc)]},
        {"at": second, "at_s": second, "price": Decimal("0.05"), "big": Decimal(-1), "ts": None},
    ])
    assert [(r["line"], [e["source"] for e in r["errors"]]) for r in typed.rejects.collect()] == [(2, ["/price"])]
    out = tmp_path / "parquet"
    typed.write_parquet(str(out))
    table = read_parts(out)
    # (Spark writes timestamps as Parquet INT96 unless spark.sql.parquet.outputTimestampType says otherwise.)
    assert [str(t) for t in table.schema.types][2:4] == ["decimal128(12, 2)", "decimal128(38, 0)"]
    assert table.column("at").cast(pa.timestamp("us")).cast(pa.int64()).to_pylist() == [1409444955000000, 1409565600000000]
    assert table.column("big").to_pylist() == [Decimal(2 ** 64), Decimal(-1)]
    fields["at"]["column"] = "timestamp(ns)"
    spec.write_text(json.dumps({"fields": fields}))
    with pytest.raises(StreamMapError) as raised:
        map_files(spark, [str(data)], str(spec), binary=binary, columns=True)
    assert raised.value.status == 64 and "at: a timestamp(ns) column" in str(raised.value), str(raised.value)


def test_the_docs_column_spec_maps(spark: Any, binary: str, tmp_path: Path) -> None:
    """docs/spark.md's ``"column"`` example, as written."""
    import re
    from conftest import REPO
    page = (REPO / "docs" / "spark.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"^```python\n(.*?)^```$", page, flags=re.M | re.S) if '"column"' in b)
    names: Dict[str, Any] = {}
    exec(block, names)  # noqa: S102 - the docs' own example
    (tmp_path / "spec.json").write_text(json.dumps(names["spec"]))
    (tmp_path / "in.ndjson").write_text('{"created_at": "Sun Aug 31 00:29:15 +0000 2014", "price": "1,234.5"}\n')
    typed = map_files(spark, [str(tmp_path / "in.ndjson")], str(tmp_path / "spec.json"), binary=binary, columns=True)
    assert typed.schema.simpleString() == "struct<createdAt:timestamp,price:decimal(18,2)>"
    assert instants(spark_rows(typed.records)) == instants(
        [{"createdAt": dt.datetime(2014, 8, 31, 0, 29, 15, tzinfo=dt.timezone.utc), "price": Decimal("1234.50")}])


def test_a_column_that_cannot_be_typed_fails_on_the_driver(spark: Any, binary: str, tmp_path: Path) -> None:
    data = tmp_path / "in.ndjson"
    data.write_bytes(b'{"a": 1}\n')
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("untyped", "a spec whose columns cannot be typed")
    try:
        with pytest.raises(StreamMapError) as raised:
            map_files(spark, [str(data)], None, args=["--field", "a=b", "--field", "c"], binary=binary,
                      columns=True)
        assert tracker.getJobIdsForGroup("untyped") == []  # no task ran
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    message = str(raised.value)
    assert raised.value.status == 64 and "fields is not known from the spec: b, c;" in message, message
    assert "--type" in message and "streammap infer" in message
    # The same flags with types map.
    typed = map_files(spark, [str(data)], None, args=["--field", "a=b", "--type", "a=integer"], binary=binary,
                      columns=True)
    assert spark_rows(typed.records) == [{"b": 1}]


def test_text_only_calls_and_the_stages_own_flags_are_refused(spark: Any, binary: str, tmp_path: Path) -> None:
    data = tmp_path / "in.ndjson"
    data.write_bytes(b'{"a": 1}\n')
    typed = map_files(spark, [str(data)], None, args=["--field", "a", "--type", "a=integer"], binary=binary,
                      columns=True)
    with pytest.raises(ValueError, match="typed columns"):
        typed.write_ndjson(str(tmp_path / "out"))
    with pytest.raises(ValueError, match="typed columns"):
        typed.record_lines
    text = map_files(spark, [str(data)], None, binary=binary)
    with pytest.raises(ValueError, match="JSON text"):
        text.write_parquet(str(tmp_path / "out"))
    with pytest.raises(ValueError, match="sets this itself"):
        map_files(spark, [str(data)], None, args=["--to", "csv"], binary=binary)


def test_a_task_killed_mid_split_is_retried_to_the_same_table(spark: Any, binary: str, corpus: List[str],
                                                             tweets: Any, tmp_path: Path) -> None:
    expected, out = tweets

    def run() -> Any:  # (the typed task is killed after its first batch went to Spark)
        result = map_files(spark, corpus, str(TWEETS_SPEC), binary=binary, split_bytes=SPLIT_BYTES, columns=True,
                           rejects_record_bytes=REJECTS_RECORD_BYTES)
        result.write_parquet(str(tmp_path / "out"))
        return result
    result, failed = failed_tasks_with_a_fault(spark, 3, "typed-fault", run)
    assert failed == 1  # the fault did happen, once, and Spark retried the task
    assert read_parts(tmp_path / "out").to_pylist() == read_parts(out).to_pylist()
    assert result.counts == expected.counts
    assert spark_rejects(result) == spark_rejects(expected)


def test_a_typed_task_yields_records_alone_reports_once_and_restores_the_collector(binary: str, tmp_path: Path) -> None:
    """A typed task (``map_splits``, what ``mapInArrow`` runs in the Python worker) yields the records' columns
    alone and adds its counts line to the accumulator once the split is mapped whole; it streams with Python's
    cycle collector paused and the worker's heap frozen out of its reach (PySpark's daemon collects in full after
    each task), and leaves the collector as it found it — when the split ends and when the task is closed early
    (which reports nothing)."""
    import gc

    from streammap_spark.columns import map_splits
    from streammap_spark.runner import MapJob

    path = write_corpus(tmp_path, 300)[0]
    job = MapJob(binary, str(TWEETS_SPEC), (), arrow=True)
    descriptors = pa.record_batch([pa.array([f"0\t0:{path.stat().st_size}\t{path}"])], names=["value"])
    expected, _, stats = serial_arrow(binary, [str(path)], str(TWEETS_SPEC))

    class Reports:  # what a ReportLines accumulator is to the task: something to add lines to
        lines: List[str] = []

        def add(self, more: List[str]) -> None:
            self.lines = self.lines + more

    try:
        gc.unfreeze()
        assert gc.isenabled()
        reports = Reports()
        stream = map_splits(job, reports, iter([descriptors]))
        batches = [next(stream)]
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        batches += list(stream)
        assert gc.isenabled()
        assert pa.Table.from_batches(batches).to_pylist() == expected.to_pylist()  # the records, nothing else
        assert len(reports.lines) == 1 and reports.lines[0].startswith("\x01C0\t")
        assert json.loads(reports.lines[0].split("\t")[2])["recordsOut"] == stats["recordsOut"] == expected.num_rows

        reports = Reports()
        stream = map_splits(job, reports, iter([descriptors]))
        next(stream)
        assert not gc.isenabled()
        stream.close()
        assert gc.isenabled()
        assert reports.lines == []  # a split not mapped whole reports nothing
    finally:
        gc.enable()
        gc.unfreeze()
