"""Fixtures: the portable binary and one real ``local[2,2]`` Spark session (2 threads, a task may fail once)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[3]
TWEETS_SPEC = REPO / "Benchmarks" / "specs" / "tweets.spec.json"


@pytest.fixture(scope="session")
def binary() -> str:
    """The portable streammap: ``$STREAMMAP_BINARY`` or ``.build/portable/release/streammap``
    (``scripts/build-portable.sh``); with ``STREAMMAP_WHEEL_TEST=1`` (``scripts/wheel-test.sh``), the one the
    ``streammap`` wheel installed into this environment (``streammap_spark.binary.packaged_binary``)."""
    if os.environ.get("STREAMMAP_WHEEL_TEST") == "1":
        from streammap_spark.binary import packaged_binary
        packaged = packaged_binary()
        if packaged is None:
            pytest.fail("STREAMMAP_WHEEL_TEST=1, but no streammap installed by the wheel in this environment")
        return packaged
    path = os.environ.get("STREAMMAP_BINARY") or str(REPO / ".build" / "portable" / "release" / "streammap")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path}: no portable streammap binary (run scripts/build-portable.sh)")
    return path


@pytest.fixture(scope="session")
def spark() -> Iterator["object"]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2,2]").appName("streammap-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
