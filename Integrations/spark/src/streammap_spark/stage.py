"""The Spark stages: a counting pass over splits, then one streammap process per chunk (see ``splits`` and
``runner``). PySpark's public API only: ``SparkContext.parallelize`` of the planned ranges (one partition each),
``mapPartitions``, ``SparkContext.addFile``/``SparkFiles.get`` for the binary, DataFrames for the results and
``DataFrameWriter.text`` for NDJSON part files. Spark schedules, retries and speculates the tasks; every task is a
pure function of its chunk, so a retried or speculative attempt yields the same records.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from pyspark import RDD, SparkFiles, StorageLevel, TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (ArrayType, BooleanType, IntegerType, LongType, StringType, StructField,
                               StructType)

from .runner import COUNTS, MAPPED, REJECT, MapJob, check_spec, map_chunk, open_local
from .splits import Chunk, InputFile, Split, SplitScan, plan_chunks, plan_splits, scan_split

#: Test-only switch (never set it in production): the partition index of the mapping stage whose first attempt
#: kills its streammap process, to show that Spark's retry gives the same output.
FAULT_CONF = "spark.streammap.test.killFirstAttemptOfPartition"

#: Flags the stage sets itself (or that make no sense per partition): refused in ``args``.
RESERVED_FLAGS = ("-o", "--output", "--rejects", "--redact", "--rejects-record-bytes", "--stats", "-q", "--quiet",
                  "--progress", "--no-progress", "--framing", "-s", "--spec", "--print-spec", "--reverse-spec")

REJECTS_SCHEMA = StructType([
    StructField("file", StringType(), False),
    StructField("line", LongType(), False),
    StructField("offset", LongType(), False),
    StructField("errors", ArrayType(StructType([
        StructField("code", StringType(), False),
        StructField("fatal", BooleanType(), False),
        StructField("source", StringType(), False),
        StructField("destination", StringType(), False),
        StructField("message", StringType(), False),
    ]), False), False),
    StructField("record", StringType(), True),
    StructField("record_bytes", LongType(), True),
    StructField("truncated", BooleanType(), False),
])


@dataclass(frozen=True)
class FileCounts:
    """Records of one input: ``records_in == mapped + rejected``."""

    records_in: int = 0
    mapped: int = 0
    rejected: int = 0

    def __add__(self, other: "FileCounts") -> "FileCounts":
        return FileCounts(self.records_in + other.records_in, self.mapped + other.mapped,
                          self.rejected + other.rejected)


@dataclass(frozen=True)
class Counts:
    """Counts per input (keyed by the name given) and in total."""

    per_file: Dict[str, FileCounts]
    total: FileCounts = field(default_factory=FileCounts)


#: The mapping stage's output, one row per element a task yields (``runner``'s tags): ``kind`` 0 with ``text`` (a
#: block of mapped records), 1 with ``reject``, 2 with the chunk's counts.
STAGE_SCHEMA = StructType([
    StructField("kind", IntegerType(), False),
    StructField("chunk", IntegerType(), False),
    StructField("text", StringType(), True),
    StructField("reject", REJECTS_SCHEMA, True),
    StructField("file_index", IntegerType(), True),
    StructField("records_in", LongType(), True),
    StructField("mapped", LongType(), True),
    StructField("rejected", LongType(), True),
])


def stage_row(t: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """A task's tagged element as a row of ``STAGE_SCHEMA``."""
    if t[0] == MAPPED:
        return (MAPPED, t[1], t[2], None, None, None, None, None)
    if t[0] == REJECT:
        return (REJECT, t[1], None, t[2], None, None, None, None)
    return (COUNTS, t[1], None, None) + tuple(t[2:])


class StreamMapResult:
    """The result of ``map_files``. The mapping stage runs once, at the first of ``counts``, ``records``,
    ``rejects``, ``write_ndjson`` that needs it; its output is kept (``StorageLevel.MEMORY_AND_DISK``, as a
    DataFrame, so that what follows runs in the JVM alone) until ``unpersist``."""

    def __init__(self, files: Sequence[InputFile], chunks: Sequence[Chunk], stage: DataFrame) -> None:
        self.files: Tuple[InputFile, ...] = tuple(files)
        self.chunks: Tuple[Chunk, ...] = tuple(chunks)
        self._stage = stage
        self._counts: Optional[Counts] = None

    @property
    def counts(self) -> Counts:
        """Records in, mapped and rejected per file and in total (runs the stage the first time)."""
        if self._counts is None:
            rows = self._stage.where(F.col("kind") == COUNTS) \
                .select("file_index", "records_in", "mapped", "rejected").collect()
            per_index = {f.index: FileCounts() for f in self.files}
            for file_index, records_in, mapped, rejected in rows:
                per_index[file_index] += FileCounts(records_in, mapped, rejected)
            per_file = {f.name: per_index[f.index] for f in self.files}
            total = FileCounts()
            for c in per_index.values():
                total += c
            self._counts = Counts(per_file, total)
        return self._counts

    @property
    def records(self) -> DataFrame:
        """The mapped records as a DataFrame with one string column, ``value`` (like ``spark.read.text``), in input
        order (its partitions follow the files and their chunks in order)."""
        return self._blocks().select(F.explode(F.split("value", "\n")).alias("value"))

    @property
    def record_lines(self) -> "RDD[str]":
        """The mapped records, one JSON text each, in input order (file by file, as given)."""
        return self.records.rdd.map(lambda row: row[0])

    @property
    def rejects(self) -> DataFrame:
        """The rejected records: ``file``, ``line`` (1-based), ``offset`` (of the record's first byte), ``errors``
        (``code``, ``fatal``, ``source`` and ``destination`` as JSON Pointers, ``message``), ``record`` (its text;
        null with ``redact``), ``record_bytes`` (its length, with ``redact``) and ``truncated``."""
        return self._stage.where(F.col("kind") == REJECT).select("reject.*")

    def write_ndjson(self, path: str, mode: str = "errorifexists", compression: Optional[str] = None) -> None:
        """Writes the mapped records as NDJSON part files under ``path`` with Spark's text writer (and its output
        committer): part files in input order, each line a record, the bytes a serial run writes."""
        writer = self._blocks().write.mode(mode)
        if compression is not None:
            writer = writer.option("compression", compression)
        writer.text(path)

    def unpersist(self) -> None:
        """Lets Spark drop the kept output of the mapping stage."""
        self._stage.unpersist()

    def _blocks(self) -> DataFrame:
        """The mapped records in blocks of whole lines (``value``), as the tasks returned them."""
        return self._stage.where(F.col("kind") == MAPPED).select(F.col("text").alias("value"))


def map_files(spark: SparkSession, paths: Union[str, Sequence[str]], spec: Optional[str] = None, *,
              args: Sequence[str] = (), binary: Optional[str] = None, split_bytes: Optional[int] = None,
              redact: bool = False, rejects_record_bytes: Optional[int] = None,
              open_file: Callable[[str], BinaryIO] = open_local) -> StreamMapResult:
    """Maps NDJSON files with streammap on Spark, every record accounted for.

    ``paths``: input files, on a filesystem every executor sees under the same path (local, NFS, a mounted
    bucket…), or ``file:`` URIs; rejects and counts name them as given. ``spec``: a spec file on the driver (its
    text goes to the tasks); ``args``: mapping flags as for the CLI (``--field``, ``--require``, ``--type``,
    ``--default``, ``--key-style``, ``--keep-unmapped``, ``--reverse``, ``--engine``, ``--on-error``,
    ``--max-rejects``…; not the ones the stage sets: see ``RESERVED_FLAGS``). ``binary``: the portable streammap
    (``scripts/build-portable.sh``), default ``$STREAMMAP_BINARY`` or ``streammap`` on ``PATH``; shipped to the
    executors with ``SparkContext.addFile``. ``split_bytes``: bytes per split, default
    ``spark.sql.files.maxPartitionBytes``. ``redact``, ``rejects_record_bytes``: as ``--redact`` and
    ``--rejects-record-bytes``. ``open_file``: opens a path for reading bytes on an executor.

    Checks the spec on the driver first (``streammap check``: a bad spec raises ``StreamMapError`` before any
    task runs), runs the counting pass (one task per split), and returns a ``StreamMapResult`` whose mapping stage
    runs one streammap process per chunk. A task whose streammap exits 0 or 1 succeeds; any other status or a
    signal fails it with streammap's standard error in the exception (so ``--on-error fail`` and
    ``--max-rejects`` fail the job).
    """
    names = [paths] if isinstance(paths, str) else list(paths)
    if not names:
        raise ValueError("map_files needs at least one input path")
    for a in args:
        if a.split("=", 1)[0] in RESERVED_FLAGS:
            raise ValueError(f"{a}: the Spark stage sets this itself (see map_files' parameters)")
    binary = resolve_binary(binary)
    check_spec(binary, spec, args)
    spec_text = None
    if spec is not None:
        with open(spec, "r", encoding="utf-8") as f:
            spec_text = f.read()

    sc = spark.sparkContext
    if split_bytes is None:
        split_bytes = _bytes_conf(spark.conf.get("spark.sql.files.maxPartitionBytes", "128m") or "128m")
    _ship_package(sc)
    files = [InputFile(i, name, _task_path(name), _size(name)) for i, name in enumerate(names)]
    splits = plan_splits(files, split_bytes)
    scans: List[SplitScan] = sc.parallelize(splits, len(splits)) \
        .map(lambda s: scan_split(open_file, s)).collect()
    chunks = plan_chunks(splits, scans)

    shipped = _ship(sc, binary)
    job = MapJob(binary="", spec_text=spec_text, args=tuple(args), redact=redact,
                 rejects_record_bytes=rejects_record_bytes)
    fault_conf = spark.conf.get(FAULT_CONF, None)
    fault_partition = int(fault_conf) if fault_conf is not None else None

    def run(index: int, items: Iterable[Tuple[int, Chunk]]) -> Iterator[Tuple[Any, ...]]:
        local = _executable(SparkFiles.get(shipped))
        task_job = MapJob(local, job.spec_text, job.args, job.redact, job.rejects_record_bytes)
        context = TaskContext.get()
        kill = fault_partition == index and context is not None and context.attemptNumber() == 0
        for chunk_id, chunk in items:
            yield from map_chunk(task_job, chunk_id, chunk, open_file, kill_at_start=kill)

    tagged = sc.parallelize(list(enumerate(chunks)), max(len(chunks), 1)) \
        .mapPartitionsWithIndex(run, preservesPartitioning=True).map(stage_row)
    stage = spark.createDataFrame(tagged, STAGE_SCHEMA, verifySchema=False).persist(StorageLevel.MEMORY_AND_DISK)
    return StreamMapResult(files, chunks, stage)


def resolve_binary(binary: Optional[str]) -> str:
    """The streammap binary to use: ``binary``, else ``$STREAMMAP_BINARY``, else ``streammap`` on ``PATH``."""
    candidate = binary or os.environ.get("STREAMMAP_BINARY") or shutil.which("streammap")
    if not candidate or not os.path.isfile(candidate):
        raise FileNotFoundError("no streammap binary: pass binary=, set STREAMMAP_BINARY or put it on PATH "
                                "(build it with scripts/build-portable.sh)")
    return os.path.abspath(candidate)


def _ship(sc: Any, binary: str) -> str:
    """Adds the binary to the files Spark copies to executors (once per context); returns its name there."""
    name = os.path.basename(binary)
    listed = [os.path.basename(u) for u in sc.listFiles]
    if name not in listed:
        sc.addFile(binary)
    return name


def _ship_package(sc: Any) -> None:
    """Makes this package importable on executors (``SparkContext.addPyFile`` of a zip of it, once per context),
    so that tasks need nothing but PySpark installed."""
    name = "streammap_spark.zip"
    if any(os.path.basename(u) == name for u in sc.listFiles):
        return
    package = os.path.dirname(os.path.abspath(__file__))
    folder = tempfile.mkdtemp(prefix="streammap-spark-package-")
    atexit.register(shutil.rmtree, folder, True)  # executors fetch it while the context lives
    archive = os.path.join(folder, name)
    with zipfile.ZipFile(archive, "w") as z:
        for entry in sorted(os.listdir(package)):
            if entry.endswith(".py") or entry == "py.typed":
                z.write(os.path.join(package, entry), f"streammap_spark/{entry}")
    sc.addPyFile(archive)


def _executable(path: str) -> str:
    mode = os.stat(path).st_mode
    if not mode & stat.S_IXUSR:
        os.chmod(path, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _task_path(name: str) -> str:
    """Where tasks open ``name``: a relative local path made absolute (executors run in other folders)."""
    return name if ":" in name.split("/", 1)[0] else os.path.abspath(name)


def _size(path: str) -> int:
    with open_local(path) as f:
        return f.seek(0, os.SEEK_END)


def _bytes_conf(value: str) -> int:
    units = {"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}
    text = value.strip().lower()
    digits = text.rstrip("bkmg")
    return int(digits) * units.get(text[len(digits):] or "b", 1)
