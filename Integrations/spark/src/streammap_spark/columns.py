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

Each task also writes one row of its own after its records: nulls in every column but ``REPORT_COLUMN``, which
holds the same counts line as the text stage's tasks (``\\x01C<chunk>\\t<byteRange line>\\t<stats line>``), so
that a write brings the counts back as an observed metric of its own job.
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import tempfile
from typing import TYPE_CHECKING, Any, Iterator, Optional, Tuple

from .runner import COUNTS_TAG, STDERR_QUOTE_BYTES, MapJob, StreamMapError, describe_status

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql.types import StructType

#: The column a typed task's counts row fills (null on every record's row); dropped from ``records``.
REPORT_COLUMN = "_streammap_report"


def arrow_schema(stream: bytes) -> "pa.Schema":
    """The Arrow schema streammap writes for a spec and flags, from what the map command writes on empty input
    with ``--to arrow-stream`` (the schema with no batch: ``runner.check_spec(..., to="arrow-stream")``, which
    raises ``StreamMapError`` with streammap's message when a column has no type — exit status 64, naming every
    such field)."""
    import pyarrow as pa

    schema = pa.ipc.open_stream(stream).schema
    if REPORT_COLUMN in schema.names:
        raise StreamMapError(f"{REPORT_COLUMN}: a column name the typed stage keeps for its own counts", 64, "")
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
    """``t`` with every nested field and element nullable (a counts row is null everywhere)."""
    from pyspark.sql.types import ArrayType, StructField, StructType

    if isinstance(t, StructType):
        return StructType([StructField(f.name, _nullable(f.dataType), True) for f in t.fields])
    if isinstance(t, ArrayType):
        return ArrayType(_nullable(t.elementType), True)
    return t


def with_report(schema: "StructType") -> "StructType":
    """What the typed tasks yield: the records' columns and ``REPORT_COLUMN``."""
    from pyspark.sql.types import StringType, StructField, StructType

    return StructType(list(schema.fields) + [StructField(REPORT_COLUMN, StringType(), True)])


def map_splits(job: MapJob, batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """A typed task (the function ``mapInArrow`` runs): for each descriptor (``chunk<TAB>START:END<TAB>path``) in
    its input, the split's records as batches, then its counts row."""
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
                yield from map_split(job, int(chunk), byte_range, path)
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
              folder: Optional[str] = None) -> Iterator["pa.RecordBatch"]:
    """One split through ``streammap map --to arrow-stream --byte-range``: its batches as streammap wrote them
    (with a null ``REPORT_COLUMN``), then one row holding the counts line. Exit status 0 and 1 (some records
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
                arrays = [c.cast(t) for c, t in zip(batch.columns, schema.types)] if cast else batch.columns
                yield pa.RecordBatch.from_arrays(arrays + [pa.nulls(batch.num_rows, pa.string())],
                                                 names=schema.names + [REPORT_COLUMN])
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
        report = f"{COUNTS_TAG}{chunk}\t{lines[-2]}\t{lines[-1]}"
        yield pa.RecordBatch.from_arrays([pa.nulls(1, f.type) for f in schema] + [pa.array([report], pa.string())],
                                         names=schema.names + [REPORT_COLUMN])
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

