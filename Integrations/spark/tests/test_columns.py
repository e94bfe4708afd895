"""The typed stage (``map_files(..., columns=True)``) on a real local[2,2] session: its records against a serial
``streammap --to arrow`` run of the same binary (row for row, in order) and against the text stage's records
(the same values, typed), on the tweet corpus and on generated specs; its rejects and counts against the serial
run's; a spec that cannot be typed failing on the driver; a task killed mid-split retried to the same table."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import ArrayType, DataType, DoubleType, StringType, StructType

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


def same(actual: Any, expected: Any, t: DataType) -> bool:
    """Whether a typed value holds an NDJSON record's value: absent or null is null, numbers in a double column
    compare as the nearest double, and a string column holding an object or array holds its JSON text."""
    if expected is None or actual is None:
        return expected is None and actual is None
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
        return json.loads(actual) == expected
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
    assert rows == table.to_pylist()
    assert spark_rejects(typed) == rejects
    assert typed.counts.total.mapped == stats["recordsOut"] == len(rows)
    text = map_files(spark, files, spec_path, binary=binary, split_bytes=4096,
                     rejects_record_bytes=REJECTS_RECORD_BYTES)
    expected = [json.loads(line) for line in text.record_lines.collect()]
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
