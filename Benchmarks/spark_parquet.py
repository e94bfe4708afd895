#!/usr/bin/env python3
"""NDJSON → Parquet on Spark with the tweet mapping (Benchmarks/specs/tweets.spec.json), three ways, in one session,
interleaved (the Parquet side of ``Benchmarks/spark_stage.py``, which times NDJSON text out):

  (a) the typed stage: ``streammap_spark.map_files(..., columns=True)`` + ``write_parquet`` (streammap writes Arrow,
      ``mapInArrow`` hands the batches to Spark; the counts come back with the write);
  (b) ``spark.read.json(path, schema=…)`` + ``select`` doing the same mapping, typed + ``write.parquet``;
  (c) the text stage (``map_files`` without ``columns``) + ``from_json(value, schema)`` + ``write.parquet``.

    .build/spark-venv/bin/python Benchmarks/spark_parquet.py [--size-mb 400] [--rounds 3] [--warmup 2]
        [--streammap .build/portable/release/streammap] [--out Benchmarks/results/spark-parquet.json]

Default splits for everyone (Spark's rule: ``maxPartitionBytes``, the input spread over the cores — the stage
follows it as Spark's reader does). Reports the median seconds, records/s and the ratio to (b); checks that the three
Parquet outputs hold the same rows in the same order and counts the records Spark's reader keeps with values
nulled where streammap rejects the record (a wrong type in an optional field: ``lang``, ``favorite_count``…). The
typed stage's time is split: streammap's own seconds in the tasks (their ``--stats``), the same stage written to
Spark's ``noop`` sink (streammap + the Arrow transfer into the JVM), and the rest (Parquet's encoding and writing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "Integrations" / "spark" / "src"))
sys.path.insert(0, str(HERE))
SPEC = HERE / "specs" / "tweets.spec.json"


def native_parquet(spark: Any, path: str, out: str) -> None:
    """(b): Spark's JSON reader with the input's schema, the mapping as column expressions, typed columns out (the
    same columns as the typed stage: streammap's spec)."""
    from pyspark.sql import functions as F
    from spark_stage import native_schema
    df = spark.read.schema(native_schema()).json(path)
    ms = F.unix_millis(F.try_to_timestamp(F.substring("created_at", 5, 100), F.lit("MMM dd HH:mm:ss Z yyyy")))
    (df.withColumn("createdAtMs", ms)
     .where(F.col("id").isNotNull() & F.col("id_str").isNotNull() & F.col("createdAtMs").isNotNull()
            & F.col("text").isNotNull() & F.col("user.id").isNotNull()
            & F.col("user.screen_name").isNotNull() & F.col("user.followers_count").isNotNull()
            & F.col("retweet_count").isNotNull())
     .select(F.col("id"), F.col("id_str").alias("idStr"), F.col("createdAtMs"), F.col("text"),
             F.struct(F.col("user.id").alias("id"), F.col("user.screen_name").alias("handle"),
                      F.col("user.followers_count").alias("followers"),
                      F.coalesce(F.col("user.verified"), F.lit(False)).alias("verified")).alias("user"),
             F.struct(F.col("retweet_count").alias("retweets"),
                      F.coalesce(F.col("favorite_count"), F.lit(0)).alias("likes")).alias("stats"),
             F.coalesce(F.col("lang"), F.lit("und")).alias("lang"),
             F.col("in_reply_to_status_id").alias("replyTo"))
     .write.mode("overwrite").parquet(out))


def typed_stage(spark: Any, path: str, out: str, binary: str, seconds: List[float]) -> Any:
    from spark_stage import _task_seconds
    from streammap_spark import map_files
    result = map_files(spark, [path], str(SPEC), binary=binary, columns=True)
    if out == "noop":
        result.save(format="noop", mode="overwrite")
    else:
        result.write_parquet(out, mode="overwrite")
    seconds.append(sum(_task_seconds(result)))
    _ = result.counts  # came back with the write: no second job
    return result


def text_stage_from_json(spark: Any, path: str, out: str, binary: str, schema: Any) -> None:
    from pyspark.sql import functions as F
    from streammap_spark import map_files
    result = map_files(spark, [path], str(SPEC), binary=binary)
    (result.records.select(F.from_json("value", schema).alias("r")).select("r.*")
     .write.mode("overwrite").parquet(out))


def read_rows(folder: Path) -> List[Dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq
    parts = sorted(folder.glob("part-*"))
    return pa.concat_tables([pq.read_table(p) for p in parts]).to_pylist() if parts else []


def compare(rows: Dict[str, List[Dict[str, Any]]]) -> Dict[str, Any]:
    """Each output against the typed stage's: equal, or how many rows differ (as multisets, by id) and how."""
    base = rows["typed stage (map_files columns=True)"]
    by_id = {r["id"]: r for r in base}
    out: Dict[str, Any] = {}
    for name, got in rows.items():
        if got == base:
            out[name] = {"equal": True, "rows": len(got)}
            continue
        ids = {r["id"]: r for r in got}
        extra = [r for i, r in ids.items() if i not in by_id]
        missing = [r for i, r in by_id.items() if i not in ids]
        changed = [(by_id[i], r) for i, r in ids.items() if i in by_id and by_id[i] != r]
        out[name] = {"equal": False, "rows": len(got), "rowsNotInTyped": len(extra),
                     "typedRowsMissing": len(missing), "rowsWithOtherValues": len(changed),
                     "example": {"notInTyped": extra[:1], "changed": changed[:1]}}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--streammap", default=str(REPO / ".build" / "portable" / "release" / "streammap"))
    ap.add_argument("--out", default=str(HERE / "results" / "spark-parquet.json"))
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from streammap_spark import map_files

    work = Path(tempfile.mkdtemp(prefix="streammap-spark-parquet-"))
    try:
        corpus = work / "tweets.ndjson"
        subprocess.run([sys.executable, str(HERE / "corpus.py"), str(corpus), "--size-mb", str(args.size_mb)],
                       check=True, stderr=subprocess.DEVNULL)
        records_in = sum(1 for line in corpus.read_bytes().split(b"\n") if line.strip(b" \t\r"))
        spark = (SparkSession.builder.master("local[2]").appName("streammap-spark-parquet")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.memory", "4g").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        probe = map_files(spark, [str(corpus)], str(SPEC), binary=args.streammap, columns=True)
        schema, tasks = probe.schema, len(probe.splits)
        stage_seconds: List[float] = []
        noop_seconds: List[float] = []
        tools: Dict[str, Callable[[str], Any]] = {
            "typed stage (map_files columns=True)":
                lambda out: typed_stage(spark, str(corpus), out, args.streammap, stage_seconds),
            "spark.read.json + select": lambda out: native_parquet(spark, str(corpus), out),
            "text stage + from_json": lambda out: text_stage_from_json(spark, str(corpus), out, args.streammap,
                                                                       schema),
            "typed stage to the noop sink (no Parquet)":
                lambda out: typed_stage(spark, str(corpus), "noop", args.streammap, noop_seconds),
        }
        for _ in range(args.warmup):
            for run in tools.values():
                run(str(work / "warmup"))
        stage_seconds.clear()
        noop_seconds.clear()
        times: Dict[str, List[float]] = {name: [] for name in tools}
        rows: Dict[str, List[Dict[str, Any]]] = {}
        for r in range(args.rounds):
            for name, run in tools.items():
                out = work / f"out-{r}-{len(rows)}"
                start = time.perf_counter()
                run(str(out))
                times[name].append(time.perf_counter() - start)
                if r == 0 and out.exists():
                    rows[name] = read_rows(out)
                shutil.rmtree(out, ignore_errors=True)
                print(f"round {r + 1}: {name}: {times[name][-1]:.2f} s", file=sys.stderr)
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = {name: statistics.median(t) for name, t in times.items()}
    base = med["spark.read.json + select"]
    typed = med["typed stage (map_files columns=True)"]
    noop = med["typed stage to the noop sink (no Parquet)"]
    streammap = statistics.median(stage_seconds)
    summary = {
        "corpus": {"sizeMB": args.size_mb, "records": records_in, "generator": "Benchmarks/corpus.py"},
        "master": "local[2]", "tasks": tasks, "rounds": args.rounds, "warmupRounds": args.warmup,
        "tools": {name: {"seconds": t, "medianSeconds": round(med[name], 3),
                         "recordsPerSecond": round(records_in / med[name]),
                         "ratioToSparkJson": round(base / med[name], 2)} for name, t in times.items()},
        "outputs": compare(rows),
        "typedStageSplit": {"streammapSecondsInTasks": round(streammap, 3),
                            "taskSecondsTotal": round(typed * 2, 3),
                            "arrowTransferSeconds": round(max(0.0, noop * 2 - streammap), 3),
                            "parquetSeconds": round(max(0.0, (typed - noop) * 2), 3)},
    }
    Path(args.out).write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    lines = [f"NDJSON → Parquet on Spark, `local[2]` (2 vCPU), {args.size_mb:g} MB tweet corpus ({records_in} records, "
             f"{tasks} tasks: Spark's default splits), median of {args.rounds} interleaved rounds after {args.warmup} "
             f"warm-up rounds (`Benchmarks/spark_parquet.py`).", "",
             "| way | median s | records/s | × spark.read.json + select | Parquet rows = typed stage's |",
             "|---|---|---|---|---|"]
    for name, t in summary["tools"].items():
        o = summary["outputs"].get(name)
        same = "–" if o is None else "yes" if o["equal"] else (
            f"no: {o['rowsNotInTyped']} rows the stage rejects, {o['typedRowsMissing']} missing, "
            f"{o['rowsWithOtherValues']} with other values")
        lines.append(f"| {name} | {t['medianSeconds']:.2f} | {t['recordsPerSecond']:,} | {t['ratioToSparkJson']:.2f} "
                     f"| {same} |")
    s = summary["typedStageSplit"]
    lines += ["", f"Typed stage, task seconds (2 cores × wall): {s['taskSecondsTotal']:.2f} s — streammap "
              f"{s['streammapSecondsInTasks']:.2f} s (its --stats, summed over the tasks), Arrow into the JVM "
              f"{s['arrowTransferSeconds']:.2f} s (the noop run less streammap), Parquet "
              f"{s['parquetSeconds']:.2f} s (the Parquet run less the noop run)."]
    Path(args.out).with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
