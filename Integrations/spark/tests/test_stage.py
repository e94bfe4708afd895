"""The Spark stage on a real local[2,2] session against a serial run of the same binary over the same files."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple, TypeVar

import pytest

from corpus import count_records, write_corpus
from conftest import TWEETS_SPEC
from streammap_spark import FAULT_CONF, StreamMapError, map_files

RECORDS = 200_000
T = TypeVar("T")
SPLIT_BYTES = 1 << 20
REJECTS_RECORD_BYTES = 4096


def serial(binary: str, files: List[str], spec: str, *extra: str) -> Tuple[bytes, List[Dict[str, Any]],
                                                                            Dict[str, Any]]:
    """``streammap FILE…`` over the files: its output, its rejects, its --stats."""
    with tempfile.TemporaryDirectory() as folder:
        rejects = os.path.join(folder, "rejects.ndjson")
        done = subprocess.run([binary, "-q", "--no-progress", "--stats", "--rejects", rejects, "-s", spec,
                               "--rejects-record-bytes", str(REJECTS_RECORD_BYTES), *extra, *files],
                              capture_output=True)
        assert done.returncode in (0, 1), done.stderr
        with open(rejects, "rb") as f:
            rows = [json.loads(line) for line in f]
    return done.stdout, rows, json.loads(done.stderr.decode().strip().splitlines()[-1])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> List[str]:
    return [str(p) for p in write_corpus(tmp_path_factory.mktemp("corpus"), RECORDS)]


@pytest.fixture(scope="module")
def expected(binary: str, corpus: List[str]) -> Tuple[bytes, List[Dict[str, Any]], Dict[str, Any]]:
    return serial(binary, corpus, str(TWEETS_SPEC))


def spark_rejects(result: Any) -> List[Dict[str, Any]]:
    """The stage's rejects as serial rejects lines, ordered by (file, offset)."""
    order = {f.name: f.index for f in result.files}
    rows = sorted(result.rejects.collect(), key=lambda r: (order[r["file"]], r["offset"]))
    out = []
    for r in rows:
        d: Dict[str, Any] = {"input": r["file"], "line": r["line"], "offset": r["offset"],
                             "errors": [e.asDict() for e in r["errors"]]}
        if r["record_bytes"] is not None:
            d["recordBytes"] = r["record_bytes"]
        if r["record"] is not None:
            d["record"] = r["record"]
        if r["truncated"]:
            d["truncated"] = True
        out.append(d)
    return out


def test_corpus_is_what_the_acceptance_asks(corpus: List[str], expected: Any) -> None:
    _, rejects, stats = expected
    sizes = [os.path.getsize(p) for p in corpus[:3]]
    assert stats["recordsIn"] == sum(count_records(Path(p)) for p in corpus) >= RECORDS
    assert sum(1 for p in corpus if count_records(Path(p))) >= 3
    assert stats["recordsRejected"] >= 0.01 * stats["recordsIn"]
    assert all(size > 3 * SPLIT_BYTES for size in sizes)
    assert any(r.get("truncated") for r in rejects)
    messages = " ".join(e["message"] for r in rejects for e in r["errors"])
    for kind in ("invalid UTF-8", "expected integer", "value is required", "lexical error", "premature EOF"):
        assert kind in messages, kind


def test_stage_equals_serial_run(spark: Any, binary: str, corpus: List[str], expected: Any) -> None:
    output, rejects, stats = expected
    assert stats["recordsIn"] >= RECORDS  # the acceptance's corpus: at least 200 000 records, as a serial run counts
    before = glob.glob(os.path.join(tempfile.gettempdir(), "streammap-spark-[!p]*"))
    result = map_files(spark, corpus, str(TWEETS_SPEC), binary=binary, split_bytes=SPLIT_BYTES,
                       rejects_record_bytes=REJECTS_RECORD_BYTES)
    try:
        per_file = [c for c in result.chunks if c.file.index < 3]
        assert all(sum(1 for c in per_file if c.file.index == i) >= 4 for i in range(3))
        assert any(c.is_empty for c in result.chunks)  # a split inside the long record
        # Mapped records in input order: the serial output, byte for byte.
        lines = result.records.collect()
        assert ("\n".join(r["value"] for r in lines) + "\n").encode("utf-8") == output
        assert spark_rejects(result) == rejects
        counts = result.counts
        assert (counts.total.records_in, counts.total.mapped, counts.total.rejected) == \
            (stats["recordsIn"], stats["recordsOut"], stats["recordsRejected"])
        for name in corpus:
            _, file_rejects, file_stats = serial(binary, [name], str(TWEETS_SPEC))
            c = counts.per_file[name]
            assert c.records_in == c.mapped + c.rejected == count_records(Path(name))
            assert (c.records_in, c.mapped, c.rejected) == \
                (file_stats["recordsIn"], file_stats["recordsOut"], file_stats["recordsRejected"])
    finally:
        result.unpersist()
    assert glob.glob(os.path.join(tempfile.gettempdir(), "streammap-spark-[!p]*")) == before


def test_write_ndjson_writes_the_serial_bytes(spark: Any, binary: str, corpus: List[str], expected: Any,
                                               tmp_path: Path) -> None:
    result = map_files(spark, corpus, str(TWEETS_SPEC), binary=binary, split_bytes=SPLIT_BYTES)
    sc = spark.sparkContext
    sc.setJobGroup("write", "write_ndjson, then the counts")
    try:
        result.write_ndjson(str(tmp_path / "out"))
        jobs = len(sc.statusTracker().getJobIdsForGroup("write"))
        counts = result.counts
        assert len(sc.statusTracker().getJobIdsForGroup("write")) == jobs  # the counts came back with the write
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    parts = sorted((tmp_path / "out").glob("part-*"))
    assert len(parts) > 3
    assert b"".join(p.read_bytes() for p in parts) == expected[0]
    stats = expected[2]
    assert (counts.total.records_in, counts.total.mapped, counts.total.rejected) == \
        (stats["recordsIn"], stats["recordsOut"], stats["recordsRejected"])


def failed_tasks_with_a_fault(spark: Any, chunk: int, group: str, action: Callable[[], T]) -> Tuple[T, int]:
    """``action``'s result with the first attempt of split ``chunk``'s task killed (``FAULT_CONF``), and how many
    tasks failed in its jobs."""
    spark.conf.set(FAULT_CONF, str(chunk))
    sc = spark.sparkContext
    sc.setJobGroup(group, f"the first attempt of split {chunk} killed")
    try:
        result = action()
        tracker = sc.statusTracker()
        stages = [s for j in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(j).stageIds]
        return result, sum(tracker.getStageInfo(s).numFailedTasks for s in stages if tracker.getStageInfo(s))
    finally:
        spark.conf.unset(FAULT_CONF)
        sc.setLocalProperty("spark.jobGroup.id", None)


def test_a_failed_first_attempt_is_retried_to_the_same_output(spark: Any, binary: str, corpus: List[str],
                                                              expected: Any, tmp_path: Path) -> None:
    def run() -> Any:
        result = map_files(spark, corpus, str(TWEETS_SPEC), binary=binary, split_bytes=SPLIT_BYTES,
                           rejects_record_bytes=REJECTS_RECORD_BYTES)
        result.write_ndjson(str(tmp_path / "out"))
        return result
    result, failed = failed_tasks_with_a_fault(spark, 2, "fault", run)
    assert failed == 1  # the fault did happen, once, and Spark retried the task
    assert b"".join(p.read_bytes() for p in sorted((tmp_path / "out").glob("part-*"))) == expected[0]
    assert spark_rejects(result) == expected[1]
    assert result.counts.total.records_in == expected[2]["recordsIn"]
    result.unpersist()


def test_a_fault_on_every_attempt_fails_the_job_with_streammaps_status(spark: Any, binary: str,
                                                                       tmp_path: Path) -> None:
    data = tmp_path / "in.ndjson"
    data.write_bytes(b'{"id":1}\n{"id":"two"}\n')
    result = map_files(spark, [str(data)], None, args=["--type", "id=integer", "--on-error", "fail"],
                       binary=binary)
    with pytest.raises(Exception) as raised:
        result.counts
    text = str(raised.value)
    assert "exit status 4" in text and "stopped at the first rejected record" in text


def test_a_bad_spec_fails_on_the_driver_before_any_task(spark: Any, binary: str, corpus: List[str],
                                                        tmp_path: Path) -> None:
    spec = tmp_path / "bad.spec.json"
    spec.write_text('{"fields":{"id":{"to":"id","type":"nonsense"}}}')
    jobs = len(spark.sparkContext.statusTracker().getJobIdsForGroup())
    with pytest.raises(StreamMapError) as raised:
        map_files(spark, corpus, str(spec), binary=binary)
    assert raised.value.status == 2 and "nonsense" in str(raised.value)
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup()) == jobs


def test_redacted_rejects_carry_lengths_not_text(spark: Any, binary: str, tmp_path: Path) -> None:
    data = tmp_path / "in.ndjson"
    data.write_bytes(b'{"id":1}\n{"id":"secret"}\n')
    result = map_files(spark, [str(data)], None, args=["--type", "id=integer"], binary=binary, redact=True)
    [row] = result.rejects.collect()
    assert (row["line"], row["offset"], row["record"], row["record_bytes"]) == (2, 9, None, 15)


def test_where_keeps_the_serial_records_and_counts_the_filtered(spark: Any, binary: str, corpus: List[str]) -> None:
    where = ["--where", 'lang == "en" || user.id < 1000000000']
    output, rejects, stats = serial(binary, corpus, str(TWEETS_SPEC), *where)
    assert 0 < stats["recordsFiltered"] < stats["recordsIn"]
    result = map_files(spark, corpus, str(TWEETS_SPEC), args=where, binary=binary, split_bytes=SPLIT_BYTES,
                       rejects_record_bytes=REJECTS_RECORD_BYTES)
    try:
        lines = result.records.collect()
        assert ("\n".join(r["value"] for r in lines) + "\n").encode("utf-8") == output
        assert spark_rejects(result) == rejects
        total = result.counts.total
        assert (total.records_in, total.mapped, total.filtered, total.rejected) == \
            (stats["recordsIn"], stats["recordsOut"], stats["recordsFiltered"], stats["recordsRejected"])
        for c in result.counts.per_file.values():
            assert c.records_in == c.mapped + c.filtered + c.rejected
    finally:
        result.unpersist()
    with pytest.raises(StreamMapError, match="column"):
        map_files(spark, corpus, str(TWEETS_SPEC), args=["--where", "lang = 1"], binary=binary)


def test_reserved_flags_are_refused(spark: Any, binary: str, corpus: List[str]) -> None:
    with pytest.raises(ValueError, match="--rejects"):
        map_files(spark, corpus, None, args=["--rejects=x"], binary=binary)


def test_a_path_with_spaces_quotes_and_a_dollar_brace_is_mapped_and_named(spark: Any, binary: str,
                                                                         tmp_path: Path) -> None:
    folder = tmp_path / "a ${x} 'q' \"d\""
    folder.mkdir()
    data = folder / "in put.ndjson"
    data.write_bytes(b'{"id":1}\n{"id":"two"}\n{"id":3}\n')
    result = map_files(spark, [str(data)], None, args=["--type", "id=integer"], binary=binary, split_bytes=10)
    assert [r["value"] for r in result.records.collect()] == ['{"id":1}', '{"id":3}']
    [row] = result.rejects.collect()
    assert (row["file"], row["line"], row["offset"]) == (str(data), 2, 9)
