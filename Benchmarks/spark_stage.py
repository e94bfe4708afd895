#!/usr/bin/env python3
"""The streammap stage on Spark against Spark's own ways of doing the tweet mapping (Benchmarks/specs/tweets.spec.json).

    .build/spark-venv/bin/python Benchmarks/spark_stage.py [--size-mb 60] [--rounds 3] [--warmup 5]
        [--split-mb 0,8] [--floors] [--streammap .build/portable/release/streammap]
        [--out Benchmarks/results/spark.json]

(``scripts/spark-test.sh`` makes the venv and the portable binary.) One ``local[2]`` session, one corpus
(``Benchmarks/corpus.py``: tweets, GitHub events the mapping rejects, 1% invalid lines); for each ``--split-mb``
(``spark.sql.files.maxPartitionBytes`` for everyone — the stage follows it as Spark's reader does; 0: Spark's
default, 128 MB, so that both use Spark's own rule, the input spread over the cores) a fresh session, warm-up
rounds, then round after round, interleaved, each tool writing its mapped records as text part files:

  (a) the streammap stage: ``streammap_spark.map_files`` + ``write_ndjson`` + ``counts`` (everything it does);
  (b) Spark's JSON reader with an explicit schema, ``select``/``withColumn`` doing the mapping, ``to_json``;
  (c) a Python UDF over ``spark.read.text``: ``json.loads`` per line, the mapping in Python, ``json.dumps``.

With ``--floors``, also (d): the same number of script-transformation tasks writing the serial output (cut at line
boundaries) with ``cat`` — the stage with a streammap that took no time, so the most the stage could gain.
(NDJSON → Parquet with typed columns: ``Benchmarks/spark_parquet.py``.) Reports records/s (records in / wall seconds, median over the rounds), the ratios to (b), streammap's own seconds
inside the stage's tasks (their --stats), and whether each output
equals the serial ``streammap`` run's (byte for byte; else how many of its lines are missing and how many others were written, with an example
of each). Writes a JSON
summary to ``--out`` and a Markdown table next to it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "Integrations" / "spark" / "src"))
SPEC = HERE / "specs" / "tweets.spec.json"

MONTHS = {m: i + 1 for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                          "Nov", "Dec"])}


def read_parts(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("part-*")))


def compare(got: bytes, want: bytes) -> Dict[str, Any]:
    if got == want:
        return {"equal": True}
    a, b = Counter(got.splitlines()), Counter(want.splitlines())
    missing, extra = b - a, a - b
    example_missing = next(iter(missing), b"")
    example_extra = next(iter(extra), b"")
    return {"equal": False, "lines": sum(a.values()), "expectedLines": sum(b.values()),
            "missingLines": sum(missing.values()), "extraLines": sum(extra.values()),
            "example": {"expectedNotWritten": example_missing[:300].decode("utf-8", "replace"),
                        "writtenNotExpected": example_extra[:300].decode("utf-8", "replace")}}


def native_schema() -> Any:
    """The input's schema for Spark's JSON reader: the fields the tweet mapping reads."""
    from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType
    return StructType([
        StructField("id", LongType()), StructField("id_str", StringType()), StructField("created_at", StringType()),
        StructField("text", StringType()),
        StructField("user", StructType([StructField("id", LongType()), StructField("screen_name", StringType()),
                                        StructField("followers_count", LongType()),
                                        StructField("verified", BooleanType())])),
        StructField("retweet_count", LongType()), StructField("favorite_count", LongType()),
        StructField("lang", StringType()), StructField("in_reply_to_status_id", LongType()),
    ])


def native(spark: Any, path: str, out: str) -> None:
    from pyspark.sql import functions as F
    df = spark.read.schema(native_schema()).json(path)
    # "Wed Aug 27 13:08:45 +0000 2008": Spark's parser takes no day-of-week, so it goes first.
    ms = F.unix_millis(F.try_to_timestamp(F.substring("created_at", 5, 100), F.lit("MMM dd HH:mm:ss Z yyyy")))
    mapped = (df.withColumn("createdAtMs", ms)
              .where(F.col("id").isNotNull() & F.col("id_str").isNotNull() & F.col("createdAtMs").isNotNull()
                     & F.col("text").isNotNull() & F.col("user.id").isNotNull()
                     & F.col("user.screen_name").isNotNull() & F.col("user.followers_count").isNotNull()
                     & F.col("retweet_count").isNotNull())
              .select(F.to_json(F.struct(
                  F.col("id"), F.col("id_str").alias("idStr"), F.col("createdAtMs"), F.col("text"),
                  F.struct(F.col("user.id").alias("id"), F.col("user.screen_name").alias("handle"),
                           F.col("user.followers_count").alias("followers"),
                           F.coalesce(F.col("user.verified"), F.lit(False)).alias("verified")).alias("user"),
                  F.struct(F.col("retweet_count").alias("retweets"),
                           F.coalesce(F.col("favorite_count"), F.lit(0)).alias("likes")).alias("stats"),
                  F.coalesce(F.col("lang"), F.lit("und")).alias("lang"),
                  F.col("in_reply_to_status_id").alias("replyTo"))).alias("value")))
    mapped.write.mode("overwrite").text(out)


def python_mapping(line: Optional[str]) -> Optional[str]:
    """The tweet mapping in plain Python (json.loads per line): None for a record the spec rejects."""
    if line is None or not line.strip():
        return None
    try:
        t = json.loads(line)
        u = t["user"]

        def integer(v: Any) -> int:
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError
            return v

        def string(v: Any) -> str:
            if not isinstance(v, str):
                raise TypeError
            return v
        d = datetime.datetime.strptime(t["created_at"][4:], "%b %d %H:%M:%S %z %Y")
        out: Dict[str, Any] = {
            "id": integer(t["id"]), "idStr": string(t["id_str"]),
            "createdAtMs": int(d.timestamp()) * 1000, "text": string(t["text"]),
            "user": {"id": integer(u["id"]), "handle": string(u["screen_name"]),
                     "followers": integer(u["followers_count"]),
                     "verified": u.get("verified") if isinstance(u.get("verified"), bool) else False},
            "stats": {"retweets": integer(t["retweet_count"]),
                      "likes": integer(t["favorite_count"]) if t.get("favorite_count") is not None else 0},
            "lang": string(t["lang"]) if t.get("lang") is not None else "und",
        }
        if t.get("in_reply_to_status_id") is not None:
            out["replyTo"] = integer(t["in_reply_to_status_id"])
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def python_udf(spark: Any, path: str, out: str) -> None:
    from pyspark.sql import functions as F
    mapping = F.udf(python_mapping, "string")
    (spark.read.text(path).select(mapping("value").alias("value")).where(F.col("value").isNotNull())
     .write.mode("overwrite").text(out))


def streammap_stage(spark: Any, path: str, out: str, binary: str, seconds: List[float]) -> None:
    from streammap_spark import map_files
    result = map_files(spark, [path], str(SPEC), binary=binary)  # splits as spark.read.json's
    result.write_ndjson(out, mode="overwrite")
    seconds.append(sum(_task_seconds(result)))
    _ = result.counts  # came back with the write: no second job


def _task_seconds(result: Any) -> List[float]:
    """streammap's own wall seconds in each task (its --stats line), read back from the last write's counts lines
    (its observation for the text stage, its tasks' accumulator lines for the typed stage), without using them up."""
    from streammap_spark.runner import COUNTS_TAG
    lines = result._observation.get.get("counts") if result._observation is not None else result._written_lines
    if lines is None:
        return []
    return [json.loads(line[len(COUNTS_TAG):].split("\t")[2])["seconds"] for line in lines]


def floor_script(parts: List[Path]) -> str:
    """A task that writes its share of the serial output (cut at line boundaries) and maps nothing: the stage's
    cost with a streammap that took no time."""
    cases = " ".join(f"{i}) exec cat {shlex.quote(str(p))};;" for i, p in enumerate(parts))
    return f"read -r i; case $i in {cases} esac"


def run_config(args: Any, split_mb: float, corpus: Path, expected: bytes, records_in: int,
               work: Path) -> Dict[str, Any]:
    from pyspark.sql import SparkSession
    from streammap_spark import map_files
    from streammap_spark.stage import _sql_string
    builder = (SparkSession.builder.master("local[2]").appName("streammap-spark-benchmark")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "4g"))
    if split_mb > 0:
        builder = builder.config("spark.sql.files.maxPartitionBytes", str(int(split_mb * (1 << 20))))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    tasks = len(map_files(spark, [str(corpus)], str(SPEC), binary=args.streammap).splits)
    # The serial output in as many pieces as tasks, cut at line boundaries, for the floor.
    lines = expected.split(b"\n")[:-1]
    parts = []
    for i in range(tasks):
        part = work / f"floor-{i}.ndjson"
        piece = lines[i * len(lines) // tasks:(i + 1) * len(lines) // tasks]
        part.write_bytes(b"".join(line + b"\n" for line in piece))
        parts.append(part)
    floor_sql = (f"SELECT TRANSFORM(id) USING {_sql_string(floor_script(parts))} AS (value STRING) ROW FORMAT "
                 f"DELIMITED FIELDS TERMINATED BY '\\u0002' FROM range(0, {tasks}, 1, {tasks})")
    streammap_seconds: List[float] = []
    tools: Dict[str, Callable[[str], None]] = {
        "streammap stage": lambda out: streammap_stage(spark, str(corpus), out, args.streammap, streammap_seconds),
        "spark.read.json + select": lambda out: native(spark, str(corpus), out),
        "Python UDF (json.loads)": lambda out: python_udf(spark, str(corpus), out),
    }
    if args.floors:
        tools["floor: the stage's tasks writing the mapped output, no mapping"] = \
            lambda out: spark.sql(floor_sql).write.mode("overwrite").text(out)
    for _ in range(args.warmup):  # JIT (Spark's code is still being compiled for a while), Python workers, caches
        for name, run in tools.items():
            run(str(work / "warmup"))
    streammap_seconds.clear()
    times: Dict[str, List[float]] = {name: [] for name in tools}
    outputs: Dict[str, Dict[str, Any]] = {}
    for r in range(args.rounds):
        for name, run in tools.items():
            out = work / f"out-{r}"
            shutil.rmtree(out, ignore_errors=True)
            start = time.perf_counter()
            run(str(out))
            times[name].append(time.perf_counter() - start)
            outputs[name] = compare(read_parts(out), expected)
            shutil.rmtree(out, ignore_errors=True)
            print(f"{split_mb:g} MB splits, round {r + 1}: {name}: {times[name][-1]:.2f} s", file=sys.stderr)
    spark.stop()
    native_rate = records_in / statistics.median(times["spark.read.json + select"])
    return {
        "splitMB": split_mb if split_mb > 0 else "Spark's default (maxPartitionBytes 128 MB: the input over the cores)",
        "tasks": tasks, "rounds": args.rounds, "warmupRounds": args.warmup,
        "streammapSecondsInTasks": {"perRun": streammap_seconds,
                                    "median": statistics.median(streammap_seconds) if streammap_seconds else None},
        "tools": {name: {"seconds": t, "medianSeconds": statistics.median(t),
                         "recordsPerSecond": round(records_in / statistics.median(t)),
                         "ratioToSparkJson": round(records_in / statistics.median(t) / native_rate, 2),
                         "output": outputs[name]} for name, t in times.items()},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=5, help="untimed rounds first (default 5: Spark's JSON reader is "
                    "JIT-compiled Java and keeps getting faster for a while)")
    ap.add_argument("--split-mb", default="0,8",
                    help="split sizes to run, one session each (0: Spark's default; default 0,8)")
    ap.add_argument("--floors", action="store_true",
                    help="also time the stage's tasks writing the serial output without mapping (the floor)")
    ap.add_argument("--streammap", default=str(REPO / ".build" / "portable" / "release" / "streammap"))
    ap.add_argument("--out", default=str(HERE / "results" / "spark.json"))
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    work = Path(tempfile.mkdtemp(prefix="streammap-spark-bench-"))
    try:
        corpus = work / "tweets.ndjson"
        subprocess.run([sys.executable, str(HERE / "corpus.py"), str(corpus), "--size-mb", str(args.size_mb)],
                       check=True, stderr=subprocess.DEVNULL)
        start = time.perf_counter()
        serial = subprocess.run([args.streammap, "-q", "-s", str(SPEC), str(corpus)], capture_output=True)
        serial_seconds = time.perf_counter() - start
        expected = serial.stdout
        records_in = sum(1 for line in corpus.read_bytes().split(b"\n") if line.strip(b" \t\r"))
        configs = [run_config(args, float(mb), corpus, expected, records_in, work)
                   for mb in args.split_mb.split(",")]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    summary = {
        "corpus": {"sizeMB": args.size_mb, "records": records_in, "generator": "Benchmarks/corpus.py"},
        "master": "local[2]", "serialStreammapSeconds": round(serial_seconds, 3), "configs": configs,
    }
    Path(args.out).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    lines = [f"Spark, `local[2]`, {args.size_mb:g} MB tweet corpus ({records_in} records), median of {args.rounds} "
             f"interleaved rounds after {args.warmup} warm-up rounds (`Benchmarks/spark_stage.py`); serial "
             f"`streammap` alone: {serial_seconds:.2f} s."]
    for c in configs:
        split = f"{c['splitMB']:g} MB splits" if isinstance(c["splitMB"], float) else "Spark's default splits"
        lines += ["", f"**{split}** ({c['tasks']} tasks; streammap's own time inside them, summed over the tasks: "
                  f"{c['streammapSecondsInTasks']['median'] or 0:.2f} s)", "",
                  "| tool | median s | records/s | × spark.read.json | output = serial streammap |",
                  "|---|---|---|---|---|"]
        for name, t in c["tools"].items():
            o = t["output"]
            same = "yes" if o["equal"] else (f"no: {o['missingLines']} of {o['expectedLines']} expected lines "
                                              f"missing, {o['extraLines']} others written")
            lines.append(f"| {name} | {t['medianSeconds']:.2f} | {t['recordsPerSecond']:,} | "
                         f"{t['ratioToSparkJson']:.2f} | {same} |")
    Path(args.out).with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
