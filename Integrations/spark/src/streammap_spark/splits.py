"""Where each task's records are, and which line and byte offset a serial run gives them.

Spark cuts a file into splits at arbitrary byte offsets; streammap numbers records by the line their first byte
is on and by that byte's offset in the whole file. The tasks need no counting pass before they run:

1. ``plan_splits`` (on the driver, from the files' sizes alone): each file in ranges of ``split_bytes``.
2. A task maps its split with ``streammap --byte-range START:END FILE``, which reads the split's *chunk* by
   Hadoop's rule for line splits: from byte 0 for the first split, else from the first LF at or after START (the
   chunk's first line is the tail of the line before, which holds no record start), through the first LF at or
   after END (the line that crosses END is read whole, however many splits it spans; a split inside such a line
   gets only that LF). streammap ends a line at LF only (a CR is whitespace before a record, or dropped just before
   the LF), so LFs are all that counts. It reports the chunk it read (``start``, ``end``) and the LFs in it.
3. ``chunks_from_reports`` (on the driver, after the stage, prefix sums over those reports): a chunk's line base is
   the number of LFs before its first byte. A reject on the chunk's line ``n`` at the chunk's offset ``o`` is on
   the file's line ``line_base + n`` at offset ``start + o``.

Every chunk but the first starts with an LF, so a UTF-8 byte order mark at the start of a line in the middle of
the file is not at the start of streammap's input and is rejected as a serial run rejects it; only the first
chunk starts where the file does. The chunks of a file hold every record exactly once: blank lines, CRLF, a lone
CR and records longer than a split included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple


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
    """The byte range ``[start, end)`` of a file: one task of the mapping stage."""

    file: InputFile
    index: int
    start: int
    end: int


@dataclass(frozen=True)
class ChunkReport:
    """What a task says about the chunk it mapped (``streammap --byte-range`` with ``--stats``): the bytes
    ``[start, end)`` it read, the LFs in them, and its counts (``filtered``: records a ``--where`` dropped)."""

    chunk: int
    start: int
    end: int
    newlines: int
    records_in: int
    mapped: int
    rejected: int
    filtered: int = 0


@dataclass(frozen=True)
class Chunk:
    """The bytes ``[start, end)`` of a file that one streammap process read. ``line_base`` is the number of
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


def default_split_bytes(total_bytes: int, files: int, max_partition_bytes: int, open_cost_bytes: int,
                        parallelism: int) -> int:
    """Spark's own rule for file splits (``FilePartition.maxSplitBytes``): ``maxPartitionBytes``, but no more
    than the input (each file counted with ``openCostInBytes`` more) spread over ``parallelism`` tasks, and no
    less than ``openCostInBytes``."""
    per_task = (total_bytes + files * open_cost_bytes) // max(parallelism, 1)
    return max(1, min(max_partition_bytes, max(open_cost_bytes, per_task)))


def chunks_from_reports(splits: Sequence[Split], reports: Sequence[ChunkReport]) -> List[Chunk]:
    """The chunks the tasks read, with their line bases: within a file, a chunk's base is the previous chunk's
    base plus the LFs that chunk read, less the LF the two share (a chunk ends through the LF the next one starts
    at). ``reports[i]`` is split ``i``'s (``chunk == i``)."""
    if len(splits) != len(reports) or any(r.chunk != i for i, r in enumerate(reports)):
        raise ValueError("one report per split, in order")
    chunks: List[Chunk] = []
    base = 0
    for i, (split, report) in enumerate(zip(splits, reports)):
        if i == 0 or splits[i - 1].file.index != split.file.index:
            base = 0
        else:
            previous = reports[i - 1]
            base += previous.newlines - (1 if previous.end > report.start else 0)
        chunks.append(Chunk(split.file, split.index, report.start, report.end, base))
    return chunks


def check_reports(splits: Sequence[Split], reports: Sequence[ChunkReport]) -> None:
    """Raises ``ValueError`` unless the chunks of each file tile it: the first starts at byte 0, each one starts
    at the last byte of the one before (the LF they share) or, at the end of the file, where it ends; the last one
    ends at the file's end; and records in = mapped + filtered + rejected."""
    last: Dict[int, ChunkReport] = {}
    for split, r in zip(splits, reports):
        f = split.file
        previous = last.get(f.index)
        # After a chunk that ends through an LF before the end, the next one starts at that LF; at the end of the
        # file, it starts there too, or at that last LF.
        if previous is None:
            expected: Tuple[int, ...] = (0,)
        elif previous.end < f.size:
            expected = (previous.end - 1,)
        else:
            expected = (previous.end, previous.end - 1)
        if r.start not in expected or r.end < r.start or r.end > f.size:
            raise ValueError(f"{f.name}: split {split.index} read bytes {r.start}-{r.end}, which does not follow "
                             f"{'the file start' if previous is None else f'bytes {previous.start}-{previous.end}'}")
        if r.records_in != r.mapped + r.filtered + r.rejected:
            raise ValueError(f"{f.name}: split {split.index}: {r.records_in} records in but {r.mapped} mapped, "
                             f"{r.filtered} filtered and {r.rejected} rejected")
        last[f.index] = r
    for split in splits:
        r = last[split.file.index]
        if r.end != split.file.size:
            raise ValueError(f"{split.file.name}: the chunks end at byte {r.end}, not at {split.file.size}")
