#!/usr/bin/env python3
"""The streammap stage on Spark against Spark's own ways of doing the tweet mapping (Benchmarks/specs/tweets.spec.json).

    .build/spark-venv/bin/python Benchmarks/spark_stage.py [--size-mb 60] [--rounds 3] [--split-mb 8 | 0]
        [--streammap .build/portable/release/streammap] [--out Benchmarks/results/spark.json]

(``scripts/spark-test.sh`` makes the venv and the portable binary.) One ``local[2]`` session, one corpus
(``Benchmarks/corpus.py``: tweets, GitHub events the mapping rejects, 1% invalid lines), in ``--split-mb`` partitions
for everyone (``spark.sql.files.maxPartitionBytes``, which the stage follows as Spark's reader does; 0: Spark's
default, 128 MB, so that both use Spark's rule: the input spread over the cores), and round after round,
interleaved, each writing its mapped records as text part files:

  (a) the streammap stage: ``streammap_spark.map_files`` + ``write_ndjson`` + ``counts`` (everything it does);
  (b) Spark's JSON reader with an explicit schema, ``select``/``withColumn`` doing the mapping, ``to_json``;
  (c) a Python UDF over ``spark.read.text``: ``json.loads`` per line, the mapping in Python, ``json.dumps``.

Reports records/s (records in / wall seconds, median over the rounds), the ratios to (b), and whether each output
equals the serial ``streammap`` run's (byte for byte; else how many of its lines are missing and how many others were written, with an example
of each). Writes a JSON
summary to ``--out`` and a Markdown table next to it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
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


def native(spark: Any, path: str, out: str) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType
    schema = StructType([
        StructField("id", LongType()), StructField("id_str", StringType()), StructField("created_at", StringType()),
        StructField("text", StringType()),
        StructField("user", StructType([StructField("id", LongType()), StructField("screen_name", StringType()),
                                        StructField("followers_count", LongType()),
                                        StructField("verified", BooleanType())])),
        StructField("retweet_count", LongType()), StructField("favorite_count", LongType()),
        StructField("lang", StringType()), StructField("in_reply_to_status_id", LongType()),
    ])
    df = spark.read.schema(schema).json(path)
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


def streammap_stage(spark: Any, path: str, out: str, binary: str) -> None:
    from streammap_spark import map_files
    result = map_files(spark, [path], str(SPEC), binary=binary)  # splits as spark.read.json's
    result.write_ndjson(out, mode="overwrite")
    _ = result.counts  # from the kept output: no second run
    result.unpersist()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--split-mb", type=float, default=8)
    ap.add_argument("--streammap", default=str(REPO / ".build" / "portable" / "release" / "streammap"))
    ap.add_argument("--out", default=str(HERE / "results" / "spark.json"))
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    work = Path(tempfile.mkdtemp(prefix="streammap-spark-bench-"))
    try:
        corpus = work / "tweets.ndjson"
        subprocess.run([sys.executable, str(HERE / "corpus.py"), str(corpus), "--size-mb", str(args.size_mb)],
                       check=True, stderr=subprocess.DEVNULL)
        serial = subprocess.run([args.streammap, "-q", "-s", str(SPEC), str(corpus)], capture_output=True)
        expected = serial.stdout
        records_in = sum(1 for line in corpus.read_bytes().split(b"\n") if line.strip(b" \t\r"))
        builder = (SparkSession.builder.master("local[2]").appName("streammap-spark-benchmark")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.driver.memory", "4g"))
        if args.split_mb > 0:
            builder = builder.config("spark.sql.files.maxPartitionBytes", str(int(args.split_mb * (1 << 20))))
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        tools: Dict[str, Callable[[str], None]] = {
            "streammap stage": lambda out: streammap_stage(spark, str(corpus), out, args.streammap),
            "spark.read.json + select": lambda out: native(spark, str(corpus), out),
            "Python UDF (json.loads)": lambda out: python_udf(spark, str(corpus), out),
        }
        for name, run in tools.items():  # warm-up: JIT, Python workers, the page cache
            run(str(work / "warmup"))
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
                print(f"round {r + 1}: {name}: {times[name][-1]:.2f} s", file=sys.stderr)
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    native_rate = records_in / statistics.median(times["spark.read.json + select"])
    summary = {
        "corpus": {"sizeMB": args.size_mb, "records": records_in, "splitMB": args.split_mb,
                   "generator": "Benchmarks/corpus.py"},
        "master": "local[2]", "rounds": args.rounds,
        "tools": {name: {"seconds": t, "medianSeconds": statistics.median(t),
                         "recordsPerSecond": round(records_in / statistics.median(t)),
                         "ratioToSparkJson": round(records_in / statistics.median(t) / native_rate, 2),
                         "output": outputs[name]} for name, t in times.items()},
    }
    Path(args.out).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    lines = [f"Spark, `local[2]`, {args.size_mb:g} MB tweet corpus ({records_in} records), {args.split_mb:g} MB "
             f"partitions, median of {args.rounds} interleaved rounds (`Benchmarks/spark_stage.py`).", "",
             "| tool | median s | records/s | × spark.read.json | output = serial streammap |", "|---|---|---|---|---|"]
    for name, t in summary["tools"].items():
        o = t["output"]
        same = "yes" if o["equal"] else (f"no: {o['missingLines']} of {o['expectedLines']} expected lines "
                                          f"missing, {o['extraLines']} others written")
        lines.append(f"| {name} | {t['medianSeconds']:.2f} | {t['recordsPerSecond']:,} | {t['ratioToSparkJson']:.2f} "
                     f"| {same} |")
    Path(args.out).with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
