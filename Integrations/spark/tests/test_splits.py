"""The driver's arithmetic against a model of streammap's NDJSON counting and of ``--byte-range``'s rule: whatever
the split size, the chunks' records, translated to file lines and offsets with the line bases summed from the
tasks' reports, are the file's records (no Spark, no binary; test_runner holds the binary to the same model)."""

from __future__ import annotations

import random
from typing import List, Tuple

import pytest

from streammap_spark.splits import (Chunk, ChunkReport, InputFile, check_reports, chunks_from_reports,
                                    default_split_bytes, plan_splits)

Record = Tuple[int, int, bytes]


def ndjson_records(data: bytes) -> List[Record]:
    """streammap's NDJSON rules (docs/cli.md, "Input"): LF ends a line; spaces, tabs and CRs before a record are skipped;
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


def align(data: bytes, start: int, end: int) -> Tuple[int, int]:
    """``--byte-range START:END``'s chunk (the rule in Sources/StreamMap/Run/ByteRange.swift): from byte 0, or the first
    LF at or after START; through the first LF at or after END, or to the end."""
    size = len(data)
    first = 0 if start == 0 else (data.find(b"\n", start) if data.find(b"\n", start) >= 0 else size)
    last = size if end == size else (data.find(b"\n", end) + 1 if data.find(b"\n", end) >= 0 else size)
    return first, max(first, last)


def model_reports(data: bytes, split_bytes: int) -> Tuple[List[Chunk], List[ChunkReport]]:
    """What the tasks of a file's splits report, by the model."""
    splits = plan_splits([InputFile(0, "f", "f", len(data))], split_bytes)
    reports = []
    for i, s in enumerate(splits):
        a, b = align(data, s.start, s.end)
        records = ndjson_records(data[a:b]) if b > a else []
        reports.append(ChunkReport(i, a, b, data[a:b].count(b"\n"), len(records), len(records), 0))
    check_reports(splits, reports)
    return chunks_from_reports(splits, reports), reports


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
    return model_reports(data, split_bytes)[0]


PIECES = [b"\n", b"\r\n", b"\r", b" ", b"\t", b"{}", b'{"a":1}', b"x" * 20, b"\xef\xbb\xbf", b"\xff", b"[1,\n2]"]


def random_data(seed: int) -> bytes:
    rng = random.Random(seed)
    return b"".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 60)))


@pytest.mark.parametrize("seed", range(300))
def test_chunks_hold_every_record_once_with_serial_lines_and_offsets(seed: int) -> None:
    data = random_data(seed)
    for split_bytes in (1, 2, 3, 7, 16, 1000):
        chunks = plan(data, split_bytes)
        assert chunk_records(data, chunks) == ndjson_records(data), (data, split_bytes)
        for c in chunks:  # the line base is the LFs before the chunk
            assert c.line_base == data[:c.start].count(b"\n"), (data, split_bytes, c)


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


def test_reports_that_do_not_tile_the_file_are_refused() -> None:
    data = b'{"a":1}\n{"b":2}\n{"c":3}\n'
    splits = plan_splits([InputFile(0, "f", "f", len(data))], 10)
    _, reports = model_reports(data, 10)
    gap = list(reports)
    gap[1] = ChunkReport(1, reports[1].start + 1, reports[1].end, 1, 1, 1, 0)
    with pytest.raises(ValueError, match="does not follow"):
        check_reports(splits, gap)
    short = list(reports)
    short[-1] = ChunkReport(short[-1].chunk, short[-1].start, short[-1].end - 1, 1, 1, 1, 0)
    with pytest.raises(ValueError, match="not at"):
        check_reports(splits, short)
    lost = list(reports)
    lost[0] = ChunkReport(0, reports[0].start, reports[0].end, 1, 2, 1, 0)
    with pytest.raises(ValueError, match="records in"):
        check_reports(splits, lost)
    # A record a --where dropped is accounted for: in = mapped + filtered + rejected.
    filtered = list(reports)
    filtered[0] = ChunkReport(0, reports[0].start, reports[0].end, 1, 2, 1, 0, 1)
    check_reports(splits, filtered)
    filtered[0] = ChunkReport(0, reports[0].start, reports[0].end, 1, 3, 1, 0, 1)
    with pytest.raises(ValueError, match="1 filtered"):
        check_reports(splits, filtered)


def test_default_split_size_is_sparks_rule() -> None:
    mb = 1 << 20
    assert default_split_bytes(100 * mb, 1, 128 * mb, 4 * mb, 2) == 52 * mb  # the input over 2 cores
    assert default_split_bytes(100 * mb, 1, 8 * mb, 4 * mb, 2) == 8 * mb  # maxPartitionBytes caps it
    assert default_split_bytes(1000, 1, 128 * mb, 4 * mb, 2) == 4 * mb  # openCostInBytes floors it
