"""One split through the task script and the real binary, without Spark: tagged rejects and counts, the chunk
``--byte-range`` reads (held to the model of test_splits), and the failures that must fail a task (with
streammap's standard error in the message) and leave no temporary folder behind."""

from __future__ import annotations

import glob
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from streammap_spark.runner import (COUNTS_TAG, MARK, REJECT_TAG, MapJob, StreamMapError, check_spec, descriptor,
                                    failure_from, run_split_locally, task_script)
from test_splits import align, random_data


def leftovers() -> List[str]:
    return glob.glob(os.path.join(tempfile.gettempdir(), "streammap-spark-[!p]*"))


@pytest.fixture
def workdir(binary: str, tmp_path: Path) -> Path:
    """A task's working folder: the binary in it, as SparkFiles puts it."""
    folder = tmp_path / "task"
    folder.mkdir()
    shutil.copy(binary, folder / "streammap")
    return folder


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "in.ndjson"
    p.write_bytes(b'{"id":0}\n{"id":1}\r\n\n{"id":"x"}\n{"id":3}\n')
    return p


def parse(stdout: bytes) -> Tuple[List[str], List[Tuple[int, Dict[str, Any]]], List[Tuple[int, Dict[str, Any], Dict[str, Any]]]]:
    records, rejects, counts = [], [], []
    for line in stdout.decode("utf-8").split("\n")[:-1]:
        if line.startswith(REJECT_TAG):
            chunk, text = line[len(REJECT_TAG):].split("\t", 1)
            rejects.append((int(chunk), json.loads(text)))
        elif line.startswith(COUNTS_TAG):
            chunk, byte_range, stats = line[len(COUNTS_TAG):].split("\t")
            counts.append((int(chunk), json.loads(byte_range)["byteRange"], json.loads(stats)))
        else:
            assert not line.startswith(MARK)
            records.append(line)
    return records, rejects, counts


def test_a_split_maps_and_reports_its_chunk(data: Path, workdir: Path) -> None:
    before = leftovers()
    job = MapJob("./streammap", None, ("--type", "id=integer"))
    # Bytes 10-20: the chunk starts at the LF ending line 2 (byte 18) and runs through the LF ending line 4 (30):
    # the reject on its line 3 at its offset 2 is the file's line 1 + 3 at 18 + 2.
    status, stdout, stderr = run_split_locally(job, 7, 10, 20, str(data), str(workdir))
    assert (status, stderr) == (0, "")
    records, rejects, counts = parse(stdout)
    assert records == []
    [(chunk, reject)] = rejects
    assert chunk == 7 and (reject["line"], reject["offset"], reject["record"]) == (3, 2, '{"id":"x"}')
    assert reject["errors"] == [{"code": "type", "fatal": True, "source": "/id", "destination": "/id",
                                 "message": 'expected integer, found string "x"'}]
    [(chunk, byte_range, stats)] = counts
    assert (chunk, byte_range) == (7, {"start": 18, "end": 31, "newlines": 3})
    assert (stats["recordsIn"], stats["recordsOut"], stats["recordsRejected"]) == (1, 0, 1)
    status, stdout, _ = run_split_locally(job, 8, 20, len(data.read_bytes()), str(data), str(workdir))
    assert status == 0 and parse(stdout)[0] == ['{"id":3}']
    assert leftovers() == before


def test_byte_range_reads_the_chunks_of_the_model(workdir: Path, tmp_path: Path) -> None:
    """The binary's chunks (start, end, LFs) are the model's (test_splits.align) for random inputs."""
    rng = random.Random(16)
    for seed in range(25):
        data = random_data(1000 + seed)
        path = tmp_path / f"r{seed}.ndjson"
        path.write_bytes(data)
        split = rng.choice([1, 2, 5, 11])
        for start in range(0, max(len(data), 1), split):
            end = min(start + split, len(data))
            done = subprocess.run([str(workdir / "streammap"), "-q", "--stats", "--byte-range", f"{start}:{end}",
                                   str(path)], capture_output=True)
            assert done.returncode in (0, 1), done.stderr
            got = json.loads(done.stderr.decode().splitlines()[-2])["byteRange"]
            a, b = align(data, start, end)
            assert got == {"start": a, "end": b, "newlines": data[a:b].count(b"\n")}, (data, start, end)


@pytest.mark.parametrize("args, status, message", [
    (("--on-error", "fail"), 4, "stopped at the first rejected record"),
    (("--max-rejects", "0"), 4, "--max-rejects"),
])
def test_a_stopped_run_fails_the_task_with_its_message(data: Path, workdir: Path, args: Tuple[str, ...],
                                                       status: int, message: str) -> None:
    before = leftovers()
    job = MapJob("./streammap", None, ("--type", "id=integer") + args)
    got, _, stderr = run_split_locally(job, 0, 0, len(data.read_bytes()), str(data), str(workdir))
    assert got == status
    assert f"streammap failed on {data} bytes 0:{len(data.read_bytes())} (split 0): exit status {status}" in stderr
    assert message in stderr
    error = failure_from("Subprocess exited with status 4. Error: " + stderr)
    assert isinstance(error, StreamMapError) and error.status == status and message in str(error)
    assert leftovers() == before


def test_an_invalid_spec_on_an_executor_fails_with_status_2(data: Path, workdir: Path) -> None:
    (workdir / "spec.json").write_text('{"fields":{"id":{"to":"id","type":"nonsense"}}}')
    status, _, stderr = run_split_locally(MapJob("./streammap", "./spec.json", ()), 0, 0, 10, str(data),
                                          str(workdir))
    assert status == 2 and "nonsense" in stderr


def test_a_file_shorter_than_planned_fails_the_task(data: Path, workdir: Path) -> None:
    size = len(data.read_bytes())
    status, _, stderr = run_split_locally(MapJob("./streammap", None, ()), 0, 0, size + 100, str(data),
                                          str(workdir))
    assert status == 3 and "ends past the end of the file" in stderr


def test_a_killed_process_fails_the_task(data: Path, workdir: Path, tmp_path: Path) -> None:
    before = leftovers()
    job = MapJob("./streammap", None, (), fault_chunk=5, fault_folder=str(tmp_path))
    status, _, stderr = run_split_locally(job, 5, 0, len(data.read_bytes()), str(data), str(workdir))
    assert status == 128 + 9 and "killed by signal 9 (SIGKILL)" in stderr
    error = failure_from(stderr)
    assert error is not None and error.status == -9
    # The second attempt of that split (the marker is there now) runs normally.
    status, stdout, _ = run_split_locally(job, 5, 0, len(data.read_bytes()), str(data), str(workdir))
    assert status == 0 and len(parse(stdout)[0]) == 4
    assert leftovers() == before


def test_a_cancelled_task_kills_its_process_and_cleans_up(workdir: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.ndjson"
    big.write_bytes(b'{"id":1}\n' * 2_000_000)
    before = leftovers()
    task = subprocess.Popen(["/bin/bash", "-c", task_script(MapJob("./streammap", None, ()))], cwd=workdir,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert task.stdin is not None and task.stdout is not None
    task.stdin.write((descriptor(0, 0, big.stat().st_size, str(big)) + "\n").encode())
    task.stdin.close()
    assert task.stdout.read(9) == b'{"id":1}\n'  # streammap is running, its output not read on
    children = subprocess.run(["pgrep", "-P", str(task.pid)], capture_output=True, text=True).stdout.split()
    task.send_signal(signal.SIGTERM)  # what Spark does to a cancelled task's process (Process.destroy)
    assert task.wait(timeout=10) == 143
    task.stdout.close()
    time.sleep(0.1)
    for pid in children:
        assert not os.path.exists(f"/proc/{pid}") or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
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


def test_a_path_with_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError, match="tab or a line break"):
        descriptor(0, 0, 1, "a\nb")


def test_a_flag_holding_a_dollar_brace_is_refused() -> None:
    with pytest.raises(ValueError, match="substitute"):
        task_script(MapJob("./streammap", None, ("--default", 'x="${y}"')))
