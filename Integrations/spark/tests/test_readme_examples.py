"""The PySpark example of the front page (README.md, "Running on Spark") and of docs/spark.md, run as written (only
the paths replaced) on the local[2,2] session: the mapped records must be a serial run's, the rejects must name
the files, lines and offsets a serial run names, and the counts must add up."""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import REPO, TWEETS_SPEC
from corpus import dump, fix_weekdays, tweet

PAGES = {"README.md": "## Running on Spark", "docs/spark.md": "# Running on Spark"}


def example(page: str) -> str:
    """The first python block of the page's Spark section."""
    text = (REPO / page).read_text(encoding="utf-8")
    section = text[text.index(PAGES[page]):]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.M | re.S)
    assert blocks, page
    return blocks[0]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> List[Path]:
    """Two files of tweets, a few of them rejected (a string id), with a blank line and CRLF endings."""
    rng = random.Random(21)
    folder = tmp_path_factory.mktemp("readme")
    paths = []
    for f in range(2):
        lines = []
        for n in range(1500):
            record = tweet(rng, n)
            if n % 97 == 5:
                record["id"] = "not a number"
            line = fix_weekdays(dump(record))
            lines.append(line + b"\r" if n % 11 == 0 else line)
            if n == 700:
                lines.append(b"")
        path = folder / f"tweets-{f + 1}.ndjson"
        path.write_bytes(b"\n".join(lines) + b"\n")
        paths.append(path)
    return paths


@pytest.mark.parametrize("page", list(PAGES))
def test_the_documented_example_maps_as_a_serial_run(spark: Any, binary: str, inputs: List[Path], tmp_path: Path,
                                                     page: str) -> None:
    code = example(page)
    replaced: Dict[str, str] = {
        "/data/tweets-1.ndjson": str(inputs[0]), "/data/tweets-2.ndjson": str(inputs[1]),
        "Benchmarks/specs/tweets.spec.json": str(TWEETS_SPEC), ".build/portable/release/streammap": binary,
        "/data/tweets-mapped": str(tmp_path / "mapped"), "/data/tweets-rejects": str(tmp_path / "rejects"),
    }
    for documented, real in replaced.items():
        assert code.count(f'"{documented}"') == 1, (page, documented)
        code = code.replace(f'"{documented}"', repr(real))
    namespace: Dict[str, Any] = {}
    exec(compile(code, page, "exec"), namespace)
    result = namespace["result"]

    serial = subprocess.run([binary, "--no-progress", "--spec", str(TWEETS_SPEC), "--rejects", str(tmp_path / "serial.rejects"),
                             *map(str, inputs)], capture_output=True)
    assert serial.returncode == 1  # some records rejected
    mapped = []
    for part in sorted((tmp_path / "mapped").glob("part-*")):
        mapped += part.read_text(encoding="utf-8").splitlines()
    assert mapped == serial.stdout.decode().splitlines()

    serial_rejects = [json.loads(line) for line in (tmp_path / "serial.rejects").read_text().splitlines()]
    written = []
    for part in sorted((tmp_path / "rejects").glob("part-*")):
        written += [json.loads(line) for line in part.read_text(encoding="utf-8").splitlines()]
    assert len(written) == len(serial_rejects) > 0
    assert sorted((Path(r["file"]).name, r["line"], r["offset"]) for r in written) == \
        sorted((Path(r["input"]).name, r["line"], r["offset"]) for r in serial_rejects)

    total = result.counts.total
    assert total.records_in == total.mapped + total.rejected == 3000
    assert total.rejected == len(serial_rejects)
