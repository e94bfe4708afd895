"""One chunk through the real binary, without Spark: translated rejects, counts, and the failures that must fail a
task (with streammap's standard error in the exception) and leave no temporary folder behind."""

from __future__ import annotations

import glob
import os
import tempfile
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from streammap_spark.runner import COUNTS, MAPPED, REJECT, MapJob, StreamMapError, check_spec, map_chunk, open_local
from streammap_spark.splits import Chunk, InputFile


def leftovers() -> List[str]:
    return glob.glob(os.path.join(tempfile.gettempdir(), "streammap-spark-*"))


def run(job: MapJob, path: Path, start: int, end: int, line_base: int, **kw: Any) -> List[Tuple[Any, ...]]:
    f = InputFile(0, "in.ndjson", str(path), path.stat().st_size)
    return list(map_chunk(job, 7, Chunk(f, 1, start, end, line_base), open_local, **kw))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "in.ndjson"
    p.write_bytes(b'{"id":0}\n{"id":1}\r\n\n{"id":"x"}\n{"id":3}\n')
    return p


def test_a_chunk_maps_and_translates_lines_and_offsets(binary: str, data: Path) -> None:
    before = leftovers()
    job = MapJob(binary, None, ("--type", "id=integer"))
    # The chunk starts at the LF ending line 1 (offset 8): line_base 0, as one line lies before that byte.
    out = run(job, data, 8, len(data.read_bytes()), 0)
    assert out[0] == (MAPPED, 7, '{"id":1}\n{"id":3}')
    assert out[1][:2] == (REJECT, 7)
    file, line, offset, errors, record, record_bytes, truncated = out[1][2]
    assert (file, line, offset, record, record_bytes, truncated) == ("in.ndjson", 4, 20, '{"id":"x"}', None, False)
    assert errors == [("type", True, "/id", "/id", 'expected integer, found string "x"')]
    assert out[2] == (COUNTS, 7, 0, 3, 2, 1)
    assert leftovers() == before


@pytest.mark.parametrize("args, status, message", [
    (("--on-error", "fail"), 4, "stopped at the first rejected record"),
    (("--max-rejects", "0"), 4, "--max-rejects"),
])
def test_a_stopped_run_fails_the_task_with_its_message(binary: str, data: Path, args: Tuple[str, ...], status: int,
                                                       message: str) -> None:
    before = leftovers()
    job = MapJob(binary, None, ("--type", "id=integer") + args)
    with pytest.raises(StreamMapError) as raised:
        run(job, data, 0, len(data.read_bytes()), 0)
    assert raised.value.status == status
    assert f"exit status {status}" in str(raised.value) and message in str(raised.value)
    assert "in.ndjson bytes 0-" in str(raised.value)
    assert leftovers() == before


def test_an_invalid_spec_on_an_executor_fails_with_status_2(binary: str, data: Path) -> None:
    job = MapJob(binary, '{"fields":{"id":{"to":"id","type":"nonsense"}}}', ())
    with pytest.raises(StreamMapError) as raised:
        run(job, data, 0, 10, 0)
    assert raised.value.status == 2 and "nonsense" in str(raised.value)


def test_a_killed_process_fails_the_task(binary: str, data: Path) -> None:
    before = leftovers()
    with pytest.raises(StreamMapError) as raised:
        run(MapJob(binary, None, ()), data, 0, len(data.read_bytes()), 0, kill_at_start=True)
    assert raised.value.status == -9 and "killed by signal 9 (SIGKILL)" in str(raised.value)
    assert leftovers() == before


def test_an_abandoned_task_kills_its_process_and_cleans_up(binary: str, tmp_path: Path) -> None:
    big = tmp_path / "big.ndjson"
    big.write_bytes(b'{"id":1}\n' * 2_000_000)
    before = leftovers()
    f = InputFile(0, "big", str(big), big.stat().st_size)
    stream = map_chunk(MapJob(binary, None, ()), 0, Chunk(f, 0, 0, f.size, 0), open_local)
    assert next(stream)[0] == MAPPED
    stream.close()  # what Spark does when a task is cancelled or its consumer stops early
    assert leftovers() == before


def test_check_reports_a_bad_spec_with_its_message(binary: str, tmp_path: Path) -> None:
    spec = tmp_path / "bad.spec.json"
    spec.write_text('{"fields":{"id":{"to":"id","type":"nonsense"}}}')
    with pytest.raises(StreamMapError) as raised:
        check_spec(binary, str(spec), ())
    assert raised.value.status == 2 and "nonsense" in str(raised.value)
    check_spec(binary, None, ("--field", "id"))  # flags only: fine


def test_run_flags_are_checked_on_the_driver_too(binary: str) -> None:
    check_spec(binary, None, ("--type", "id=integer", "--on-error", "fail", "--engine", "tree"))
    with pytest.raises(StreamMapError) as raised:
        check_spec(binary, None, ("--engine", "bogus"))
    assert raised.value.status == 64 and "bogus" in str(raised.value)


def test_a_file_shorter_than_planned_fails_the_task(binary: str, data: Path) -> None:
    size = len(data.read_bytes())
    f = InputFile(0, "in.ndjson", str(data), size + 100)  # planned before the file was cut short
    with pytest.raises(IOError, match="was it changed"):
        list(map_chunk(MapJob(binary, None, ()), 0, Chunk(f, 0, 0, size + 100, 0), open_local))
