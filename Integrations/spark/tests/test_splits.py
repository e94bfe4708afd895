"""The chunk plan against a model of streammap's NDJSON counting: whatever the split size, the chunks' records,
translated to file lines and offsets, are the file's records (no Spark, no binary: the plan's arithmetic alone)."""

from __future__ import annotations

import io
import random
from typing import BinaryIO, Dict, List, Tuple

import pytest

from streammap_spark.splits import Chunk, InputFile, plan_chunks, plan_splits, scan_split

Record = Tuple[int, int, bytes]


def ndjson_records(data: bytes) -> List[Record]:
    """streammap's NDJSON rules (README "Input"): LF ends a line; spaces, tabs and CRs before a record are skipped;
    one CR before the LF (or at the end of input) is dropped; a BOM at the very start of the input is skipped but
    counted in offsets. Returns (line, offset, text) per record."""
    records: List[Record] = []
    position = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    line = 1
    while position <= len(data):
        end = data.find(b"\n", position)
        if end < 0:
            end = len(data)
        segment = data[position:end]
        skip = len(segment) - len(segment.lstrip(b" \t\r"))
        if skip < len(segment):
            text = segment[skip:]
            records.append((line, position + skip, text[:-1] if text.endswith(b"\r") else text))
        line += 1
        position = end + 1
    return records


def chunk_records(data: bytes, chunks: List[Chunk]) -> List[Record]:
    """What the stage reports: each chunk read as its own input, translated to the file's lines and offsets."""
    out: List[Record] = []
    for c in chunks:
        if c.is_empty:
            continue
        for line, offset, text in ndjson_records(data[c.start:c.end]):
            out.append((c.line_base + line, c.start + offset, text))
    return out


def plan(data: bytes, split_bytes: int) -> List[Chunk]:
    files: Dict[str, bytes] = {"f": data}

    def open_file(path: str) -> BinaryIO:
        return io.BytesIO(files[path])

    splits = plan_splits([InputFile(0, "f", "f", len(data))], split_bytes)
    return plan_chunks(splits, [scan_split(open_file, s, block_bytes=3) for s in splits])


PIECES = [b"\n", b"\r\n", b"\r", b" ", b"\t", b"{}", b'{"a":1}', b"x" * 20, b"\xef\xbb\xbf", b"\xff", b"[1,\n2]"]


@pytest.mark.parametrize("seed", range(300))
def test_chunks_hold_every_record_once_with_serial_lines_and_offsets(seed: int) -> None:
    rng = random.Random(seed)
    data = b"".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 60)))
    for split_bytes in (1, 2, 3, 7, 16, 1000):
        assert chunk_records(data, plan(data, split_bytes)) == ndjson_records(data), (data, split_bytes)


def test_a_line_longer_than_splits_is_read_by_one_chunk() -> None:
    data = b'{"a":1}\n' + b'{"long":"' + b"y" * 100 + b'"}\r\n{"b":2}'
    chunks = plan(data, 10)
    holding = [c for c in chunks if c.start < data.index(b"long") < c.end]
    assert len(holding) == 1 and holding[0].end == data.index(b'{"b"')  # through the LF after the long line
    assert sum(c.is_empty for c in chunks) >= 8  # the splits inside the long line read nothing
    assert chunk_records(data, chunks) == ndjson_records(data)


def test_every_chunk_after_the_first_starts_at_a_line_feed() -> None:
    data = b"\xef\xbb\xbf{}\n\xef\xbb\xbf{}\n{}\n"
    chunks = plan(data, 4)
    assert chunks[0].start == 0
    assert all(data[c.start:c.start + 1] == b"\n" for c in chunks[1:] if not c.is_empty)
    # The BOM on line 2 stays in its record (a serial run rejects it); the first one is skipped.
    assert chunk_records(data, chunks) == [(1, 3, b"{}"), (2, 6, b"\xef\xbb\xbf{}"), (3, 12, b"{}")]


def test_empty_file_gets_one_empty_chunk() -> None:
    chunks = plan(b"", 8)
    assert len(chunks) == 1 and chunks[0].is_empty
