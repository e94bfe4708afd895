"""The Spark stage: one streammap process per split, run by Spark SQL's script transformation (``TRANSFORM …
USING``), so that the records go from streammap's standard output into the JVM and on to the writer without
passing through Python (see ``splits`` and ``runner``). PySpark's public API only: ``spark.sql`` for the transformation
over ``range`` (one partition per split), ``SparkContext.addFile`` for the binary and the spec, DataFrames for the
results, ``DataFrame.observe`` (the text stage) or an accumulator (the typed stage) to bring the tasks' counts back
with the write, and ``DataFrameWriter.text`` for NDJSON part files. Spark schedules, retries
and speculates the tasks; every task is a pure function of its split, so a retried or speculative attempt yields
the same records.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import tempfile
import uuid
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar, Union

from pyspark import RDD
from pyspark.accumulators import Accumulator
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (ArrayType, BooleanType, IntegerType, LongType, StringType, StructField,
                               StructType)

from .binary import packaged_binary
from .columns import ReportLines, arrow_schema, map_splits, spark_schema
from .runner import (COUNTS_TAG, MARK, REJECT_TAG, MapJob, StreamMapError, check_spec, descriptor, failure_from,
                     local_path, task_script)
from .splits import (Chunk, ChunkReport, InputFile, Split, check_reports, chunks_from_reports, default_split_bytes,
                     plan_splits)

#: Test-only switch (never set it in production): the partition index of the mapping stage whose first attempt
#: kills its streammap process, to show that Spark's retry gives the same output (local mode only: attempts are
#: told apart by a marker folder on the driver's machine).
FAULT_CONF = "spark.streammap.test.killFirstAttemptOfPartition"

#: Flags the stage sets itself (or that make no sense per partition): refused in ``args``.
RESERVED_FLAGS = ("-o", "--output", "--to", "--rejects", "--redact", "--rejects-record-bytes", "--stats", "-q", "--quiet",
                  "--progress", "--no-progress", "--framing", "-s", "--spec", "--print-spec", "--reverse-spec",
                  "--byte-range")

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
    """Records of one input: ``records_in == mapped + filtered + rejected`` (``filtered``: dropped by a
    ``--where``)."""

    records_in: int = 0
    mapped: int = 0
    rejected: int = 0
    filtered: int = 0

    def __add__(self, other: "FileCounts") -> "FileCounts":
        return FileCounts(self.records_in + other.records_in, self.mapped + other.mapped,
                          self.rejected + other.rejected, self.filtered + other.filtered)


@dataclass(frozen=True)
class Counts:
    """Counts per input (keyed by the name given) and in total."""

    per_file: Dict[str, FileCounts]
    total: FileCounts = field(default_factory=FileCounts)



#: A line of streammap's ``--rejects`` file (what a task passes on after ``\x01R<chunk>\t``).
REJECTS_LINE_SCHEMA = StructType([
    StructField("line", LongType()),
    StructField("offset", LongType()),
    StructField("errors", ArrayType(StructType([
        StructField("code", StringType()),
        StructField("fatal", BooleanType()),
        StructField("source", StringType()),
        StructField("destination", StringType()),
        StructField("message", StringType()),
    ]))),
    StructField("record", StringType()),
    StructField("recordBytes", LongType()),
    StructField("truncated", BooleanType()),
])

#: Where each chunk's rejects go in the file: its file's name, its line base and its first byte.
CHUNK_BASES_SCHEMA = StructType([
    StructField("chunk", IntegerType(), False),
    StructField("file", StringType(), False),
    StructField("line_base", LongType(), False),
    StructField("start", LongType(), False),
])

T = TypeVar("T")


class StreamMapResult:
    """The result of ``map_files``: nothing has run yet. A write (``write_parquet`` or ``save`` for typed columns,
    ``write_ndjson`` for text) runs the mapping stage once and brings the tasks' counts back with it (an observed
    metric of that job, or for typed columns the lines its tasks added to an accumulator: no second job);
    ``counts`` and ``chunks`` run a job of their own only when no complete write came first. ``records`` is a plain
    DataFrame (each action on it maps again: persist it to reuse it). ``rejects`` maps again only the splits that
    had rejects, with their records thrown away (``-o /dev/null``)."""

    def __init__(self, spark: SparkSession, files: Sequence[InputFile], splits: Sequence[Split], job: MapJob,
                 stage: DataFrame, schema: Optional[StructType] = None, reports: Optional[Accumulator] = None) -> None:
        self._spark = spark
        self.files: Tuple[InputFile, ...] = tuple(files)
        self.splits: Tuple[Split, ...] = tuple(splits)
        self._job = job
        self._stage = stage
        #: The records' Spark schema with ``columns=True`` (streammap's Arrow columns), None for text.
        self.schema: Optional[StructType] = schema
        self._observation: Optional[Observation] = None
        #: The typed stage's accumulator of counts lines (``columns.ReportLines``: every task that mapped its whole
        #: split adds its own, whatever the action), and the lines the last write's tasks added.
        self._accumulated = reports
        self._written_lines: Optional[List[str]] = None
        self._reports: Optional[List[ChunkReport]] = None
        self._chunks: Optional[List[Chunk]] = None
        self._counts: Optional[Counts] = None

    @property
    def chunks(self) -> List[Chunk]:
        """The chunk each split's task read, with its line base (from the tasks' reports)."""
        if self._chunks is None:
            self._chunks = chunks_from_reports(self.splits, self._tasks_reports())
        return self._chunks

    @property
    def counts(self) -> Counts:
        """Records in, mapped, rejected and filtered per file and in total."""
        if self._counts is None:
            per_index = {f.index: FileCounts() for f in self.files}
            for split, r in zip(self.splits, self._tasks_reports()):
                per_index[split.file.index] += FileCounts(r.records_in, r.mapped, r.rejected, r.filtered)
            total = FileCounts()
            for c in per_index.values():
                total += c
            self._counts = Counts({f.name: per_index[f.index] for f in self.files}, total)
        return self._counts

    @property
    def records(self) -> DataFrame:
        """The mapped records, in input order (the DataFrame's partitions follow the files and their splits in
        order): with ``columns=True`` the spec's output columns with their types (``schema``); else one string
        column, ``value``, each record's JSON text (like ``spark.read.text``)."""
        if self.schema is not None:
            return self._stage
        return self._stage.where(~F.col("value").startswith(MARK))

    @property
    def record_lines(self) -> "RDD[str]":
        """The mapped records, one JSON text each, in input order (file by file, as given), as an RDD of str (text
        results only: ``map_files`` without ``columns=True``)."""
        self._need_text("record_lines")
        return self.records.rdd.map(lambda row: row[0])

    @property
    def rejects(self) -> DataFrame:
        """The rejected records: ``file``, ``line`` (1-based), ``offset`` (of the record's first byte), ``errors``
        (``code``, ``fatal``, ``source`` and ``destination`` as JSON Pointers, ``message``), ``record`` (its text;
        null with ``redact``), ``record_bytes`` (its length, with ``redact``) and ``truncated``. Needs the counts
        (the line bases, and which splits had rejects); then a DataFrame that maps those splits again, keeping
        only their rejects, with the line bases joined on in the JVM."""
        chunks = self.chunks
        with_rejects = [i for i, r in enumerate(self._tasks_reports()) if r.rejected > 0]
        if not with_rejects:
            return self._spark.createDataFrame([], REJECTS_SCHEMA)
        rejects_job = dataclasses.replace(self._job, records=False)
        raw = _transform(self._spark, rejects_job, [(i, self.splits[i]) for i in with_rejects])
        bases = self._spark.createDataFrame(
            [(i, chunks[i].file.name, chunks[i].line_base, chunks[i].start) for i in with_rejects],
            CHUNK_BASES_SCHEMA)
        parsed = raw.where(F.col("value").startswith(REJECT_TAG)).select(
            F.regexp_extract("value", "^.R([0-9]+)\t", 1).cast("int").alias("chunk"),
            F.from_json(F.expr("substr(value, instr(value, '\\t') + 1)"), REJECTS_LINE_SCHEMA).alias("r"))
        return parsed.join(F.broadcast(bases), "chunk").select(
            F.col("file"), (F.col("line_base") + F.col("r.line")).alias("line"),
            (F.col("start") + F.col("r.offset")).alias("offset"),
            F.col("r.errors").alias("errors"), F.col("r.record").alias("record"),
            F.col("r.recordBytes").alias("record_bytes"),
            F.coalesce(F.col("r.truncated"), F.lit(False)).alias("truncated"))

    def write_parquet(self, path: str, mode: str = "errorifexists", compression: Optional[str] = None,
                      partition_by: Union[str, Sequence[str], None] = None) -> None:
        """Writes the typed records as Parquet under ``path`` (``columns=True``): ``records.write.parquet`` with
        the tasks' counts brought back by the same job. ``compression``: Spark's Parquet codecs (``snappy``, the
        default, ``zstd``, ``gzip``, ``none``…)."""
        options = {} if compression is None else {"compression": compression}
        self.save(path, "parquet", mode, partition_by, **options)

    def save(self, path: Optional[str] = None, format: str = "parquet", mode: str = "errorifexists",
             partition_by: Union[str, Sequence[str], None] = None, **options: str) -> None:
        """Writes the typed records (``columns=True``) with any of Spark's writers — ``DataFrameWriter.save`` with
        ``format``, ``mode``, ``partition_by`` and ``options`` (``"delta"`` and ``"iceberg"`` where their packages
        are on the session) — and brings the tasks' counts back with the same job."""
        self._need_columns("save")
        writer = self._stage.write.format(format).mode(mode)
        if partition_by is not None:
            writer = writer.partitionBy(*([partition_by] if isinstance(partition_by, str) else partition_by))
        writer = writer.options(**options)
        assert self._accumulated is not None
        before = len(self._accumulated.value)
        _run(lambda: writer.save(path) if path is not None else writer.save())
        self._written_lines = list(self._accumulated.value[before:])

    def write_ndjson(self, path: str, mode: str = "errorifexists", compression: Optional[str] = None) -> None:
        """Writes the mapped records as NDJSON part files under ``path`` with Spark's text writer (and its output
        committer): part files in input order, each line a record, the bytes a serial run writes. The tasks'
        counts come back with this job. Text results only (``map_files`` without ``columns=True``)."""
        self._need_text("write_ndjson")
        observation = Observation(f"streammap-{uuid.uuid4().hex}")
        observed = self._stage.observe(observation, F.collect_list(
            F.when(F.col("value").startswith(COUNTS_TAG), F.col("value"))).alias("counts"))
        writer = observed.where(~F.col("value").startswith(MARK)).write.mode(mode)
        if compression is not None:
            writer = writer.option("compression", compression)
        _run(lambda: writer.text(path))
        self._observation = observation

    def unpersist(self) -> None:
        """Nothing is kept between jobs (kept for the callers of earlier versions)."""

    def _write_report_lines(self) -> Optional[List[str]]:
        """The counts lines the last write's tasks gave (None before a write): from its observation (text) or what
        its tasks added to the accumulator (typed). Read once."""
        if self._observation is not None:
            lines = list(self._observation.get.get("counts") or [])
            self._observation = None
            return lines
        lines, self._written_lines = self._written_lines, None
        return lines

    def _need_text(self, what: str) -> None:
        if self.schema is not None:
            raise ValueError(f"{what}: the records are typed columns (map_files(..., columns=True)); write them "
                             "with write_parquet or save, or map without columns=True for the exact JSON text")

    def _need_columns(self, what: str) -> None:
        if self.schema is None:
            raise ValueError(f"{what}: the records are JSON text; map_files(..., columns=True) gives typed columns "
                             "(or use write_ndjson, or records.write)")

    def _tasks_reports(self) -> List[ChunkReport]:
        """The reports of every split's task: from ``write_ndjson``'s job when it ran them all, else from a job
        that maps again (its records thrown away)."""
        if self._reports is None:
            reports = _parse_reports(self._write_report_lines() or [])
            if sorted(reports) != list(range(len(self.splits))):  # no write yet, or it did not run every split
                job = dataclasses.replace(self._job, records=False)
                rows = _run(lambda: _transform(self._spark, job, list(enumerate(self.splits)))
                            .where(F.col("value").startswith(COUNTS_TAG)).collect())
                reports = _parse_reports([row[0] for row in rows])
            if sorted(reports) != list(range(len(self.splits))):
                raise StreamMapError(f"the stage reported {len(reports)} of {len(self.splits)} splits", 0, "")
            ordered = [reports[i] for i in range(len(self.splits))]
            try:
                check_reports(self.splits, ordered)
            except ValueError as error:
                raise StreamMapError(f"the stage's chunks do not add up: {error}", 0, "") from None
            self._reports = ordered
        return self._reports


def _parse_reports(lines: Sequence[str]) -> Dict[int, ChunkReport]:
    """The tasks' counts lines (``\x01C<chunk>\t<byteRange line>\t<stats line>``) by chunk; a chunk reported
    twice is an error (a split mapped twice into one output)."""
    reports: Dict[int, ChunkReport] = {}
    for value in lines:
        chunk, byte_range, stats = value[len(COUNTS_TAG):].split("\t")
        r = json.loads(byte_range)["byteRange"]
        s = json.loads(stats)
        if int(chunk) in reports:
            raise StreamMapError(f"split {chunk} was reported twice", 0, "")
        reports[int(chunk)] = ChunkReport(int(chunk), r["start"], r["end"], r["newlines"], s["recordsIn"],
                                          s["recordsOut"], s["recordsRejected"], s.get("recordsFiltered", 0))
    return reports


def _descriptors(splits: Sequence[Tuple[int, Split]]) -> str:
    """A query of one row per split (``(chunk id, split)``), its descriptor in column ``split``, each alone in a
    partition of its own, in the order given (``range(0, n, 1, n)`` puts id i alone in partition i; its descriptor
    is element i of a literal array)."""
    n = len(splits)
    descriptors = ", ".join(_sql_value(descriptor(i, s.start, s.end, s.file.path)) for i, s in splits)
    return (f"SELECT element_at(array({descriptors}), CAST(id AS INT) + 1) AS split "
            f"FROM range(0, {n}, 1, {n})")


def _transform(spark: SparkSession, job: MapJob, splits: Sequence[Tuple[int, Split]]) -> DataFrame:
    """The script transformation over ``splits`` (``(chunk id, split)``): one partition and one task each, in the
    order given (``_descriptors``). The output's field delimiter is one that no line holds (\x02: raw in no JSON
    text), so that every line is one value, whole (the default, a tab, would cut the tagged lines)."""
    return spark.sql(f"SELECT TRANSFORM(split) USING {_sql_string(task_script(job))} AS (value STRING) "
                     f"ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\u0002' FROM ({_descriptors(splits)})")


def _typed(spark: SparkSession, job: MapJob, splits: Sequence[Tuple[int, Split]], schema: StructType,
           reports: Accumulator) -> DataFrame:
    """The typed stage over ``splits``: the same one-partition-per-split descriptors as ``_transform``, each
    mapped by ``columns.map_splits`` in a Python worker (``mapInArrow``: streammap's Arrow batches go to the JVM as
    they are), the counts lines added to ``reports``."""
    return spark.sql(_descriptors(splits)).mapInArrow(functools.partial(map_splits, job, reports), schema)


def _run(action: Callable[[], T]) -> T:
    """Runs a Spark action; a task that failed because streammap did raises ``StreamMapError`` (status and
    standard error), chained to Spark's exception."""
    try:
        return action()
    except StreamMapError:
        raise
    except Exception as error:  # noqa: BLE001 - Py4J and Spark exceptions alike
        failure = failure_from(str(error))
        if failure is None:
            raise
        raise failure from error


def map_files(spark: SparkSession, paths: Union[str, Sequence[str]], spec: Optional[str] = None, *,
              args: Sequence[str] = (), binary: Optional[str] = None, split_bytes: Optional[int] = None,
              redact: bool = False, rejects_record_bytes: Optional[int] = None,
              columns: bool = False) -> StreamMapResult:
    """Maps NDJSON files with streammap on Spark, every record accounted for.

    ``columns=True``: the records as the spec's output columns with their types (streammap's Arrow output, read
    by ``mapInArrow``: see ``columns``), their schema asked of streammap on the driver before any task runs — a
    spec whose columns cannot be typed raises ``StreamMapError`` with streammap's message. Otherwise one string
    column holding each record's JSON text, byte for byte what a serial run writes.

    ``paths``: input files, on a filesystem every executor sees under the same path (local, NFS, a mounted
    bucket…), or ``file:`` URIs; rejects and counts name them as given. ``spec``: a spec file on the driver
    (shipped to the executors with ``SparkContext.addFile``); ``args``: mapping flags as for the CLI (``--field``,
    ``--require``, ``--type``, ``--default``, ``--key-style``, ``--keep-unmapped``, ``--reverse``, ``--engine``,
    ``--on-error``, ``--max-rejects``…; not the ones the stage sets: see ``RESERVED_FLAGS``). ``binary``: the
    portable streammap (``scripts/build-portable.sh``), default ``$STREAMMAP_BINARY`` or ``streammap`` on ``PATH``;
    shipped with ``SparkContext.addFile``. ``split_bytes``: bytes per split (one task each); default Spark's own
    rule for files: ``spark.sql.files.maxPartitionBytes``, but no more than the input spread over the default
    parallelism (and no less than ``spark.sql.files.openCostInBytes``). ``redact``, ``rejects_record_bytes``: as
    ``--redact`` and ``--rejects-record-bytes``.

    Checks the spec on the driver first (``streammap check``: a bad spec raises ``StreamMapError`` before any
    task runs) and returns a ``StreamMapResult`` whose mapping stage runs one streammap process per split
    (``streammap --byte-range``). A task whose streammap exits 0 or 1 succeeds; any other status or a signal fails
    it with streammap's standard error in the exception (so ``--on-error fail`` and ``--max-rejects`` fail the job:
    ``StreamMapError`` on the driver).
    """
    names = [paths] if isinstance(paths, str) else list(paths)
    if not names:
        raise ValueError("map_files needs at least one input path")
    for a in args:
        if a.split("=", 1)[0] in RESERVED_FLAGS:
            raise ValueError(f"{a}: the Spark stage sets this itself (see map_files' parameters)")
    binary = resolve_binary(binary)
    checked = _check_once(binary, spec, tuple(args), "arrow-stream" if columns else None)
    schema = spark_schema(arrow_schema(checked)) if columns else None

    sc = spark.sparkContext
    files = [InputFile(i, name, _task_path(name), _size(name)) for i, name in enumerate(names)]
    if split_bytes is None:
        # Each with a default of its type: a missing key asked for without one costs a JVM exception (~40 ms).
        split_bytes = default_split_bytes(
            sum(f.size for f in files), len(files),
            _bytes_conf(spark.conf.get("spark.sql.files.maxPartitionBytes", "128m") or "128m"),
            _bytes_conf(spark.conf.get("spark.sql.files.openCostInBytes", "4m") or "4m"),
            int(spark.conf.get("spark.sql.leafNodeDefaultParallelism", str(sc.defaultParallelism))
                or sc.defaultParallelism))
    splits = plan_splits(files, split_bytes)

    fault_conf = spark.conf.get(FAULT_CONF, "") or None
    fault_folder = None
    if fault_conf is not None:
        fault_folder = tempfile.mkdtemp(prefix="streammap-spark-fault-")
        atexit.register(shutil.rmtree, fault_folder, True)
    shipped = _shipped(sc)
    _ship_package(sc, shipped)
    job = MapJob(binary="./" + _ship(sc, shipped, binary),
                 spec=None if spec is None else "./" + _ship_spec(sc, shipped, spec),
                 args=tuple(args), redact=redact, rejects_record_bytes=rejects_record_bytes,
                 fault_chunk=int(fault_conf) if fault_conf is not None else None, fault_folder=fault_folder,
                 arrow=columns)
    numbered = list(enumerate(splits))
    if schema is not None:
        reports = sc.accumulator([], ReportLines())
        return StreamMapResult(spark, files, splits, job, _typed(spark, job, numbered, schema, reports), schema,
                               reports)
    return StreamMapResult(spark, files, splits, job, _transform(spark, job, numbered))


#: What ``check_spec`` returned for the specs and flags it accepted, by binary (path, size, mtime), spec text, flags
#: and output format.
_CHECKED: Dict[Tuple[Any, ...], bytes] = {}


def _check_once(binary: str, spec: Optional[str], args: Tuple[str, ...], to: Optional[str] = None) -> bytes:
    """``check_spec``, skipped when the same binary already accepted the same spec text and flags (its output
    kept: the Arrow schema for ``to="arrow-stream"``)."""
    st = os.stat(binary)
    text = None
    if spec is not None:
        with open(spec, "rb") as f:
            text = f.read()
    key = (binary, st.st_size, st.st_mtime_ns, text, args, to)
    if key not in _CHECKED:
        _CHECKED[key] = check_spec(binary, spec, args, to)
    return _CHECKED[key]


def resolve_binary(binary: Optional[str]) -> str:
    """The streammap binary to use: ``binary``, else ``$STREAMMAP_BINARY``, else the one the wheel installed into
    this Python environment (``binary.packaged_binary``), else ``streammap`` on ``PATH``."""
    candidate = binary or os.environ.get("STREAMMAP_BINARY") or packaged_binary() or shutil.which("streammap")
    if not candidate or not os.path.isfile(candidate):
        raise FileNotFoundError("no streammap binary: pass binary=, set STREAMMAP_BINARY, pip install the wheel "
                                "(scripts/dist.sh) or put it on PATH (build it with scripts/build-portable.sh)")
    return os.path.abspath(candidate)


def _shipped(sc: Any) -> Set[str]:
    """The names of the files this package shipped with ``sc`` (kept on the context: asking Spark is slow)."""
    shipped: Optional[Set[str]] = getattr(sc, "_streammap_shipped", None)
    if shipped is None:
        shipped = {os.path.basename(u) for u in sc.listFiles}
        setattr(sc, "_streammap_shipped", shipped)
    return shipped


def _ship(sc: Any, shipped: Set[str], path: str) -> str:
    """Adds a file to the ones Spark copies to executors (once per context); returns its name there."""
    name = os.path.basename(path)
    if name not in shipped:
        sc.addFile(path)
        shipped.add(name)
    return name


def _ship_spec(sc: Any, shipped: Set[str], spec: str) -> str:
    """Ships the spec's text under a name made of its hash (``streammap-spec-<sha256>.json``): a changed spec is
    a new file, and the same spec twice is shipped once."""
    with open(spec, "rb") as f:
        text = f.read()
    name = f"streammap-spec-{hashlib.sha256(text).hexdigest()[:32]}.json"
    if name not in shipped:
        folder = tempfile.mkdtemp(prefix="streammap-spark-package-")
        atexit.register(shutil.rmtree, folder, True)  # executors fetch it while the context lives
        with open(os.path.join(folder, name), "wb") as f:
            f.write(text)
        sc.addFile(os.path.join(folder, name))
        shipped.add(name)
    return name


def _ship_package(sc: Any, shipped: Set[str]) -> None:
    """Makes this package importable on executors (``SparkContext.addPyFile`` of a zip of it, once per context),
    for ``record_lines`` and the users' own Python tasks."""
    name = "streammap_spark.zip"
    if name in shipped:
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
    shipped.add(name)


def _sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _sql_value(text: str) -> str:
    """``text`` as a Spark SQL string expression that survives the variable substitution Spark SQL applies to a
    query's text (``spark.sql.variable.substitute``: ``${…}`` is replaced, inside literals too): a path holding
    ``${`` is cut between ``$`` and ``{`` into a ``concat`` of literals."""
    if "${" not in text:
        return _sql_string(text)
    pieces = text.split("${")
    return "concat(" + ", ".join(_sql_string(("{" if i else "") + p + ("$" if i < len(pieces) - 1 else ""))
                                 for i, p in enumerate(pieces)) + ")"


def _task_path(name: str) -> str:
    """Where tasks open ``name``: a ``file:`` URI as a path, a relative path made absolute (executors run in other
    folders)."""
    path = local_path(name)
    if ":" in path.split("/", 1)[0]:
        raise ValueError(f"{name}: only local paths and file: URIs (a filesystem every executor mounts)")
    return os.path.abspath(path)


def _size(path: str) -> int:
    return os.stat(local_path(path)).st_size


def _bytes_conf(value: str) -> int:
    units = {"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}
    text = value.strip().lower()
    digits = text.rstrip("bkmg")
    return int(digits) * units.get(text[len(digits):] or "b", 1)
