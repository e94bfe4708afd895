"""Where each partition's records are, and which line and byte offset a serial run gives them.

Spark cuts a file into splits at arbitrary byte offsets; streammap numbers records by the line their first byte
is on and by that byte's offset in the whole file. This module turns byte ranges into *chunks* — the exact bytes
one streammap process reads — and the numbers that translate the process's own line numbers and offsets
(counted from the chunk's first byte) into the file's:

1. ``plan_splits``: each file in ranges of ``split_bytes`` (the last one shorter).
2. ``scan_split`` (one Spark task per split): how many LF bytes the range holds and where the first one is.
   streammap ends a line at LF only (a CR is whitespace before a record, or dropped just before the LF), so LFs
   are all that counts.
3. ``plan_chunks`` (on the driver, prefix sums): split 0's chunk starts at byte 0; split k's starts at the first
   LF at or after its start — the chunk's first line is the tail of the line before it, which holds no record
   start (Hadoop's rule: a split that does not start the file begins after the first line break at or after its
   start). A chunk runs through the LF that the next chunk starts at (or to the end of the file), so it reads
   through the line that crosses its end, however many splits that line spans; a split inside such a line gets
   an empty chunk.

Every chunk but the first starts with an LF, so a UTF-8 byte order mark at the start of a line in the middle of
the file is not at the start of streammap's input and is rejected as a serial run rejects it; only the first
chunk starts where the file does. A record's line in the file is ``chunk.line_base`` + its line in the chunk, and
its offset ``chunk.start`` + its offset in the chunk. The chunks of a file hold every record exactly once:
blank lines, CRLF, a lone CR and records longer than a split included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, List, Optional, Sequence, Tuple

LF = 0x0A


@dataclass(frozen=True)
class InputFile:
    """One input file: ``name`` as the caller gave it (what rejects and counts show, as in a serial run's
    messages), ``path`` where tasks open it, ``size`` in bytes, ``index`` its position among the inputs."""

    index: int
    name: str
    path: str
    size: int


@dataclass(frozen=True)
class Split:
    """The byte range ``[start, end)`` of a file: one task of the counting pass."""

    file: InputFile
    index: int
    start: int
    end: int


@dataclass(frozen=True)
class SplitScan:
    """What the counting pass finds in one split: the number of LF bytes in its range, and the offset of the first
    one (None when the range has none)."""

    newlines: int
    first_newline: Optional[int]


@dataclass(frozen=True)
class Chunk:
    """The bytes ``[start, end)`` of a file that one streammap process reads. ``line_base`` is the number of
    lines before the chunk's first byte: a record on the chunk's line ``n`` is on the file's line
    ``line_base + n``, and a record at the chunk's offset ``o`` is at the file's offset ``start + o``."""

    file: InputFile
    split: int
    start: int
    end: int
    line_base: int

    @property
    def is_empty(self) -> bool:
        """True when the chunk cannot hold a record: no bytes, or only the LF it starts with."""
        return self.end - self.start <= (1 if self.start > 0 else 0)

    def describe(self) -> str:
        """``name bytes START-END (split K)``, for messages."""
        return f"{self.file.name} bytes {self.start}-{self.end} (split {self.split})"


def plan_splits(files: Sequence[InputFile], split_bytes: int) -> List[Split]:
    """Cuts every file into ranges of ``split_bytes`` bytes; an empty file gets one empty split."""
    if split_bytes < 1:
        raise ValueError(f"split_bytes must be at least 1, not {split_bytes}")
    splits: List[Split] = []
    for f in files:
        starts = range(0, f.size, split_bytes) if f.size > 0 else range(0, 1)
        for k, start in enumerate(starts):
            splits.append(Split(f, k, start, min(start + split_bytes, f.size)))
    return splits


def read_range(open_file: Callable[[str], BinaryIO], file: InputFile, start: int, end: int,
               block_bytes: int = 1 << 20) -> Iterator[Tuple[int, bytes]]:
    """The bytes ``[start, end)`` of ``file`` in blocks of at most ``block_bytes``, each with its offset. A file
    shorter than planned (changed while being mapped) raises ``IOError`` rather than losing records silently."""
    with open_file(file.path) as f:
        f.seek(start)
        position = start
        while position < end:
            block = f.read(min(block_bytes, end - position))
            if not block:
                raise IOError(f"{file.name}: ended at byte {position}, expected {file.size} bytes "
                              "(was it changed while being mapped?)")
            yield position, block
            position += len(block)


def scan_split(open_file: Callable[[str], BinaryIO], split: Split, block_bytes: int = 1 << 20) -> SplitScan:
    """Counts the LF bytes of ``split``'s range and finds the first one (a counting-pass task)."""
    newlines = 0
    first: Optional[int] = None
    for position, block in read_range(open_file, split.file, split.start, split.end, block_bytes):
        if first is None:
            at = block.find(b"\n")
            if at >= 0:
                first = position + at
        newlines += block.count(b"\n")
    return SplitScan(newlines, first)


def plan_chunks(splits: Sequence[Split], scans: Sequence[SplitScan]) -> List[Chunk]:
    """The chunks of ``splits`` (in order, grouped by file as ``plan_splits`` makes them) from their scans."""
    if len(splits) != len(scans):
        raise ValueError("one scan per split")
    chunks: List[Chunk] = []
    i = 0
    while i < len(splits):
        j = i
        while j < len(splits) and splits[j].file.index == splits[i].file.index:
            j += 1
        chunks.extend(_file_chunks(splits[i:j], scans[i:j]))
        i = j
    return chunks


def _file_chunks(splits: Sequence[Split], scans: Sequence[SplitScan]) -> List[Chunk]:
    size = splits[0].file.size
    # starts[k]: where split k's chunk begins — 0 for the first, else the first LF at or after the split's start
    # (found in a later split when the split has none), or the end of the file when there is none.
    starts = [size] * len(splits)
    next_newline = size
    for k in range(len(splits) - 1, -1, -1):
        if scans[k].first_newline is not None:
            next_newline = scans[k].first_newline
        starts[k] = next_newline
    starts[0] = 0
    chunks: List[Chunk] = []
    lines_before = 0  # LFs before split k's start — also before starts[k], as none lies between them
    for k, split in enumerate(splits):
        following = starts[k + 1] if k + 1 < len(splits) else size
        end = min(following + 1, size)  # through the LF the next chunk starts at
        chunks.append(Chunk(split.file, split.index, starts[k], max(end, starts[k]), lines_before))
        lines_before += scans[k].newlines
    return chunks
