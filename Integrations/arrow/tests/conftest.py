"""Fixtures and helpers: the streammap binary (``$STREAMMAP_BINARY``), running it, reading what it writes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Dict, List, Sequence, Union

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

REPO = Path(__file__).resolve().parents[3]
TWEETS_SPEC = REPO / "Benchmarks" / "specs" / "tweets.spec.json"


def binary_path() -> str:
    """``$STREAMMAP_BINARY`` (scripts/arrow-test.sh sets it to the portable build), else the debug build."""
    return os.environ.get("STREAMMAP_BINARY") or str(REPO / ".build" / "debug" / "streammap")


@pytest.fixture(scope="session")
def binary() -> str:
    path = binary_path()
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path}: no streammap binary (set STREAMMAP_BINARY, or run scripts/arrow-test.sh)")
    return path


def pytest_report_header(config: pytest.Config) -> List[str]:
    import duckdb
    import polars
    return [f"streammap: {binary_path()}",
            f"pyarrow {pa.__version__}, polars {polars.__version__}, duckdb {duckdb.__version__}"]


def run(binary: str, args: Sequence[Union[str, Path]], stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([binary, *map(str, args)], input=stdin, capture_output=True, timeout=timeout)


def lines_of(data: bytes) -> List[str]:
    """NDJSON's lines: split at "\\n" only (str.splitlines would split inside strings at U+2028, U+001C, ...)."""
    text = data.decode("utf-8")
    assert text == "" or text.endswith("\n"), "the last line has no newline"
    return text.split("\n")[:-1]


def read_stream(data: bytes) -> pa.Table:
    """An IPC stream, read whole and validated in full (offsets, UTF-8, nulls)."""
    assert data[:6] != b"ARROW1", "expected the IPC stream format, found the file format"
    table = ipc.open_stream(pa.BufferReader(data)).read_all()
    table.validate(full=True)
    return table


def read_file(path: Path) -> pa.Table:
    """An IPC file (Feather v2), read through its footer, memory-mapped, and validated in full."""
    data = path.read_bytes()
    assert data[:6] == b"ARROW1" and data[-6:] == b"ARROW1", f"{path}: not the IPC file format"
    with pa.memory_map(str(path)) as source:
        reader = ipc.open_file(source)
        table = pa.Table.from_batches([reader.get_batch(i) for i in range(reader.num_record_batches)], reader.schema)
    table.validate(full=True)
    return table


def read_rejects(path: Path) -> Dict[int, dict]:
    """The --rejects file by line number ({} when none was written)."""
    if not path.exists():
        return {}
    out: Dict[int, dict] = {}
    for text in lines_of(path.read_bytes()):
        reject = json.loads(text)
        assert reject["line"] not in out, f"line {reject['line']} rejected twice"
        out[reject["line"]] = reject
    return out
