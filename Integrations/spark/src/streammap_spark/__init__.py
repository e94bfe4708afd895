"""streammap as a stage of Apache Spark: one streammap process per split, every record accounted for.

    from streammap_spark import map_files
    result = map_files(spark, ["a.ndjson", "b.ndjson"], "tweets.spec.json", binary="streammap")
    result.records        # DataFrame[value: string], mapped records in input order
    result.rejects        # DataFrame: file, line, offset, errors, record, …
    result.counts         # records in, mapped, rejected per file and in total
    result.write_ndjson("out/")

    typed = map_files(spark, ["a.ndjson"], "tweets.spec.json", columns=True)   # the spec's typed columns
    typed.schema          # StructType, asked of streammap on the driver
    typed.write_parquet("out.parquet")   # or typed.save(path, format=…), typed.records
"""

from .runner import StreamMapError
from .splits import Chunk, ChunkReport, InputFile
from .stage import FAULT_CONF, Counts, FileCounts, StreamMapResult, map_files, resolve_binary

__all__ = ["map_files", "StreamMapResult", "Counts", "FileCounts", "StreamMapError", "Chunk", "ChunkReport", "InputFile",
           "FAULT_CONF", "resolve_binary"]
