"""The typed stage (``map_files(..., columns=True)``): one streammap per split writing Arrow IPC (``--to
arrow-stream``), its record batches handed to Spark by ``DataFrame.mapInArrow`` — no JSON parse in the JVM and no
per-row Python (the Python worker passes whole batches on; pyarrow reads them from the pipe without copying a value).

The columns and their types are streammap's own (the Arrow schema it writes for the spec), asked for on the driver
before any task runs: the map command on empty input writes the schema alone (``arrow_schema``), and a spec whose
columns cannot be typed fails there with streammap's message. Arrow types become Spark types as
``pyspark.sql.pandas.types.from_arrow_schema`` maps them: utf8 → string, int64 → long, float64 → double, bool →
boolean, decimal128(P, S) → decimal(P, S), timestamp (UTC) → timestamp, list → array, struct → struct. Every column
is nullable, as with Spark's own file readers. Spark's timestamps hold microseconds: seconds and milliseconds
columns are cast to them in the task (exactly), and a nanoseconds column is refused on the driver.

Each task adds the same counts line as the text stage's tasks (``\\x01C<chunk>\\t<byteRange line>\\t<stats line>``)
to a Spark accumulator (``ReportLines``) once streammap has mapped its whole split, so that a write brings the
counts back with its own job; the batches hold the records' columns and nothing else, and go to the writer as
they come (no column to filter out or drop: that cost the JVM a copy of every row).
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import tempfile
from typing import TYPE_CHECKING, Any, Generator, Iterator, List, Optional, Tuple

from pyspark.accumulators import AccumulatorParam

from .runner import COUNTS_TAG, STDERR_QUOTE_BYTES, MapJob, StreamMapError, describe_status

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql.types import StructType

class ReportLines(AccumulatorParam):
    """The counts lines of a typed stage's tasks, gathered on the driver (a Spark accumulator of a list): a task
    adds its split's line once streammap has mapped all of it, so a task that fails or is stopped early adds none,
    and Spark adds a task's lines only when the task succeeds."""

    def zero(self, value: List[str]) -> List[str]:
        return []

    def addInPlace(self, value1: List[str], value2: List[str]) -> List[str]:
        value1.extend(value2)
        return value1


def arrow_schema(stream: bytes) -> "pa.Schema":
    """The Arrow schema streammap writes for a spec and flags, from what the map command writes on empty input
    with ``--to arrow-stream`` (the schema with no batch: ``runner.check_spec(..., to="arrow-stream")``, which
    raises ``StreamMapError`` with streammap's message when a column has no type — exit status 64, naming every
    such field)."""
    import pyarrow as pa

    schema = pa.ipc.open_stream(stream).schema
    nanoseconds = [name for name, t in _leaves(schema) if pa.types.is_timestamp(t) and t.unit == "ns"]
    if nanoseconds:
        raise StreamMapError(
            f"{', '.join(nanoseconds)}: a timestamp(ns) column, and Spark's timestamps hold microseconds (its "
            "nanoseconds would be lost); declare \"column\": \"timestamp\" (microseconds) for Spark", 64, "")
    return schema


def _leaves(schema: "pa.Schema") -> Iterator[Tuple[str, "pa.DataType"]]:
    """Every column's and nested field's path (``a.b``, ``a[]``) and type."""
    import pyarrow as pa

    def walk(name: str, t: "pa.DataType") -> Iterator[Tuple[str, "pa.DataType"]]:
        yield name, t
        if pa.types.is_list(t):
            yield from walk(name + "[]", t.value_type)
        elif pa.types.is_struct(t):
            for f in t:
                yield from walk(f"{name}.{f.name}", f.type)
    for f in schema:
        yield from walk(f.name, f.type)


def for_spark(schema: "pa.Schema") -> "pa.Schema":
    """``schema`` as Spark takes it from ``mapInArrow``: timestamps in microseconds (streammap's ``timestamp(s)``
    and ``timestamp(ms)`` columns are cast, exactly; ``timestamp(ns)`` is refused on the driver by
    ``arrow_schema``); everything else as streammap writes it."""
    import pyarrow as pa

    def spark_type(t: "pa.DataType") -> "pa.DataType":
        if pa.types.is_timestamp(t):
            return pa.timestamp("us", tz=t.tz)
        if pa.types.is_list(t):
            return pa.list_(pa.field(t.value_field.name, spark_type(t.value_type), True))
        if pa.types.is_struct(t):
            return pa.struct([pa.field(f.name, spark_type(f.type), True) for f in t])
        return t
    return pa.schema([pa.field(f.name, spark_type(f.type), True) for f in schema])


def spark_schema(schema: "pa.Schema") -> "StructType":
    """The Spark schema of the records: ``schema``'s columns, in order, with Spark's types, all nullable."""
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StructField, StructType

    spark = from_arrow_schema(schema, prefer_timestamp_ntz=False)
    return StructType([StructField(f.name, _nullable(f.dataType), True) for f in spark.fields])


def _nullable(t: Any) -> Any:
    """``t`` with every nested field and element nullable."""
    from pyspark.sql.types import ArrayType, StructField, StructType

    if isinstance(t, StructType):
        return StructType([StructField(f.name, _nullable(f.dataType), True) for f in t.fields])
    if isinstance(t, ArrayType):
        return ArrayType(_nullable(t.elementType), True)
    return t


def map_splits(job: MapJob, reports: Optional[Any], batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """A typed task (the function ``mapInArrow`` runs): for each descriptor (``chunk<TAB>START:END<TAB>path``) in
    its input, the split's records as batches; then its counts line goes to ``reports`` (a ``ReportLines``
    accumulator; None: dropped)."""
    # The batches pass through without a reference cycle, so Python's cycle collector would only walk the worker's
    # heap (pyarrow's and PySpark's modules) over and over: it is paused while the task streams, and what the worker
    # holds now is moved out of its reach (``gc.freeze``) — PySpark's daemon runs a full collection after every
    # task of a reused worker, which otherwise walks all of it each time.
    gc.freeze()
    collecting = gc.isenabled()
    gc.disable()
    try:
        for batch in batches:
            for value in batch.column(0).to_pylist():
                chunk, byte_range, path = value.split("\t", 2)
                report = yield from map_split(job, int(chunk), byte_range, path)
                if reports is not None:
                    reports.add([report])
    finally:
        if collecting:
            gc.enable()


def _files_folder() -> str:
    """Where ``SparkContext.addFile`` put the binary and the spec on this executor (the working folder outside
    Spark)."""
    try:
        from pyspark import SparkFiles
        return SparkFiles.getRootDirectory()
    except Exception:  # noqa: BLE001 - no SparkContext or SparkFiles here (a test without Spark)
        return os.getcwd()


def map_split(job: MapJob, chunk: int, byte_range: str, path: str,
              folder: Optional[str] = None) -> Generator["pa.RecordBatch", None, str]:
    """One split through ``streammap map --to arrow-stream --byte-range``: yields its batches as streammap wrote them
    (timestamps in Spark's microseconds) and returns its counts line. Exit status 0 and 1 (some records
    rejected) are success; anything else raises ``RuntimeError`` with the text a failed text task prints
    (``streammap failed on PATH bytes RANGE (split N): exit status S`` and the end of streammap's standard error),
    which fails the task — and, after Spark's retries, the job with ``StreamMapError`` on the driver. The temporary
    folder (rejects, standard error) is removed however it ends; a task closed early kills streammap."""
    import pyarrow as pa

    cwd = folder or _files_folder()
    binary = os.path.join(cwd, job.binary)
    if not os.access(binary, os.X_OK):
        os.chmod(binary, os.stat(binary).st_mode | 0o100)
    fault = (job.fault_chunk == chunk and job.fault_folder is not None
             and _first_attempt(job.fault_folder, chunk))
    d = tempfile.mkdtemp(prefix="streammap-spark-")
    proc: Optional[subprocess.Popen[bytes]] = None
    try:
        cmd = job.command() + ["--rejects", os.path.join(d, "rejects"), "--byte-range", byte_range, "--", path]
        with open(os.path.join(d, "stderr"), "wb") as err:
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        schema: Optional[pa.Schema] = None
        broken: Optional[BaseException] = None
        try:
            reader = pa.ipc.open_stream(proc.stdout)
            schema = for_spark(reader.schema)
            cast = schema != reader.schema
            for batch in reader:
                yield pa.RecordBatch.from_arrays([c.cast(t) for c, t in zip(batch.columns, schema.types)],
                                                 names=schema.names) if cast else batch
                if fault:  # tests: the first attempt dies after its first batch, as a crashing executor would
                    proc.kill()
                    break
        except (pa.ArrowInvalid, OSError) as error:  # the stream ended short: streammap failed (said below)
            broken = error
        proc.stdout.close()
        status = proc.wait()
        if fault:
            status = -signal.SIGKILL
        if status > 1 or status < 0 or broken is not None or schema is None:
            with open(os.path.join(d, "stderr"), "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - STDERR_QUOTE_BYTES))
                tail = f.read().decode("utf-8", errors="replace")
            how = describe_status(status) if status > 1 or status < 0 else f"a broken Arrow stream ({broken})"
            raise RuntimeError(f"streammap failed on {path} bytes {byte_range} (split {chunk}): {how}\n{tail}")
        with open(os.path.join(d, "stderr"), "rb") as f:
            lines = f.read().decode("utf-8", errors="replace").rstrip("\n").split("\n")
        return f"{COUNTS_TAG}{chunk}\t{lines[-2]}\t{lines[-1]}"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def _first_attempt(folder: str, chunk: int) -> bool:
    """Tests only: true once per chunk (the first attempt makes its marker folder)."""
    try:
        os.mkdir(os.path.join(folder, f"chunk-{chunk}"))
        return True
    except FileExistsError:
        return False

