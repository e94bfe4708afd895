"""The README's "Just `rdd.pipe`" blocks, run as written (only the paths replaced) on the local[2,2] session: the
shipped binary found with SparkFiles on the executor, and rdd.pipe with absolute paths. Their output must be a
serial run's, and a rejected record must fail the job with streammap's exit status."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import REPO, TWEETS_SPEC
from corpus import dump, fix_weekdays, tweet

README = REPO / "Integrations" / "spark" / "README.md"


def pipe_blocks() -> List[str]:
    """The python blocks of the README's "Just `rdd.pipe`" section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Just `rdd.pipe`"):]
    end = section.find("\n## ", 1)
    section = section if end < 0 else section[:end]
    return re.findall(r"^```python\n(.*?)^```$", section, flags=re.M | re.S)


def run_block(sc: Any, code: str, binary: str, data: Path) -> Any:
    """Runs one block with the documented paths replaced by the test's; returns its ``mapped`` RDD."""
    paths = {"/opt/streammap/streammap": binary, "/opt/streammap/tweets.spec.json": str(TWEETS_SPEC),
             "/data/tweets.ndjson": str(data)}
    for documented, real in paths.items():
        assert code.count(documented) == 1, documented
        code = code.replace(documented, real)
    namespace: Dict[str, Any] = {"sc": sc}
    exec(compile(code, str(README), "exec"), namespace)
    return namespace["mapped"]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 000 tweets, with blank lines and CRLF endings, every one mapped."""
    rng = random.Random(7)
    lines = []
    for n in range(2000):
        line = fix_weekdays(dump(tweet(rng, n)))
        lines.append(line + b"\r" if n % 7 == 0 else line)
        if n % 100 == 0:
            lines.append(b"")
    path = tmp_path_factory.mktemp("pipe") / "tweets.ndjson"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_the_readme_shows_the_two_blocks() -> None:
    blocks = pipe_blocks()
    assert len(blocks) == 2
    assert "SparkFiles.get(\"streammap\")" in blocks[0] and ".pipe(" in blocks[1]
    for flags in ("--framing ndjson", "--on-error fail", "--no-progress"):
        assert flags in " ".join(blocks[0].replace('", "', " ").split()) and flags in blocks[1]


@pytest.mark.parametrize("block", [0, 1], ids=["SparkFiles", "absolute-paths"])
def test_the_documented_pipe_maps_as_a_serial_run(spark: Any, binary: str, data: Path, block: int) -> None:
    serial = subprocess.run([binary, "--framing", "ndjson", "--no-progress", "--spec", str(TWEETS_SPEC), str(data)],
                            capture_output=True, check=True).stdout.decode().splitlines()
    mapped = run_block(spark.sparkContext, pipe_blocks()[block], binary, data)
    assert mapped.getNumPartitions() >= 2  # one streammap process per partition, several partitions
    assert len(serial) == 2000
    assert mapped.collect() == serial


@pytest.mark.parametrize("block", [0, 1], ids=["SparkFiles", "absolute-paths"])
def test_the_documented_pipe_fails_the_job_at_a_rejected_record(spark: Any, binary: str, tmp_path: Path,
                                                                block: int) -> None:
    rng = random.Random(8)
    bad = tweet(rng, 2)
    bad["id"] = "not a number"
    data = tmp_path / "tweets.ndjson"
    data.write_bytes(fix_weekdays(dump(tweet(rng, 1))) + b"\n" + fix_weekdays(dump(bad)) + b"\n")
    mapped = run_block(spark.sparkContext, pipe_blocks()[block], binary, data)
    with pytest.raises(Exception) as raised:
        mapped.collect()
    text = str(raised.value)
    assert ("streammap exited with status 4" if block == 0 else "exited with error code 4") in text, text[-2000:]
