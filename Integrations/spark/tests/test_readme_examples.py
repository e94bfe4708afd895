"""The PySpark examples of the front page (README.md, "Running on Spark") and of docs/spark.md — the typed path
first, then the text path — run as written (only the paths replaced) on the local[2,2] session: the Parquet rows
must be a serial ``--to arrow`` run's and the NDJSON a serial run's, the rejects must name the files, lines and
offsets a serial run names, and the counts must add up."""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pyarrow as pa
import pyarrow.ipc  # noqa: F401 (pa.ipc)
import pyarrow.parquet as pq
import pytest

from conftest import REPO, TWEETS_SPEC
from corpus import dump, fix_weekdays, tweet
from streammap_spark import map_files

PAGES = {"README.md": "## Running on Spark", "docs/spark.md": "# Running on Spark"}


def examples(page: str) -> List[str]:
    """The python blocks of the page's Spark section that call ``map_files`` (the typed path first, then text)."""
    text = (REPO / page).read_text(encoding="utf-8")
    section = text[text.index(PAGES[page]):]
    section = section[:section.find("\n## ", 1)] if page == "README.md" else section
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```$", section, flags=re.M | re.S) if "map_files(" in b]
    assert blocks, page
    return blocks


def test_each_page_leads_with_the_typed_path_and_shows_the_text_path() -> None:
    for page in PAGES:
        blocks = examples(page)
        assert "columns=True" in blocks[0] and "write_parquet" in blocks[0], page
        assert any("write_ndjson" in b and "columns=True" not in b for b in blocks), page


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


@pytest.mark.parametrize("page,index", [(p, i) for p in PAGES for i in range(2)])
def test_the_documented_example_maps_as_a_serial_run(spark: Any, binary: str, inputs: List[Path], tmp_path: Path,
                                                     page: str, index: int) -> None:
    blocks = examples(page)
    code = blocks[index] if index < len(blocks) else blocks[-1]
    typed = "columns=True" in code
    replaced: Dict[str, str] = {
        "/data/tweets-1.ndjson": str(inputs[0]), "/data/tweets-2.ndjson": str(inputs[1]),
        "Benchmarks/specs/tweets.spec.json": str(TWEETS_SPEC), ".build/portable/release/streammap": binary,
        "/data/tweets-mapped": str(tmp_path / "mapped"), "/data/tweets-rejects": str(tmp_path / "rejects"),
        "/data/tweets-parquet": str(tmp_path / "parquet"),
    }
    for documented, real in replaced.items():
        expected_count = 0 if documented == ("/data/tweets-mapped" if typed else "/data/tweets-parquet") else 1
        assert code.count(f'"{documented}"') == expected_count, (page, documented)
        code = code.replace(f'"{documented}"', repr(real))
    namespace: Dict[str, Any] = {"spark": spark, "map_files": map_files}  # (a later block goes on from the first)
    exec(compile(code, page, "exec"), namespace)
    result = next(v for v in namespace.values() if type(v).__name__ == "StreamMapResult")

    serial = subprocess.run([binary, "--no-progress", "--spec", str(TWEETS_SPEC), "--rejects", str(tmp_path / "serial.rejects"),
                             *(["--to", "arrow"] if typed else []), *map(str, inputs)], capture_output=True)
    assert serial.returncode == 1  # some records rejected
    if typed:
        reader = pa.ipc.open_stream(pa.BufferReader(serial.stdout))
        parts = sorted((tmp_path / "parquet").glob("part-*"))
        written = pa.concat_tables([pq.read_table(p) for p in parts])
        assert written.to_pylist() == pa.Table.from_batches(list(reader), schema=reader.schema).to_pylist()
        assert result.schema.simpleString().startswith("struct<id:bigint,idStr:string,createdAtMs:bigint,")
    else:
        mapped = []
        for part in sorted((tmp_path / "mapped").glob("part-*")):
            mapped += part.read_text(encoding="utf-8").splitlines()
        assert mapped == serial.stdout.decode().splitlines()

    serial_rejects = [json.loads(line) for line in (tmp_path / "serial.rejects").read_text().splitlines()]
    written_rejects = []
    for part in sorted((tmp_path / "rejects").glob("part-*")):
        written_rejects += [json.loads(line) for line in part.read_text(encoding="utf-8").splitlines()]
    assert len(written_rejects) == len(serial_rejects) > 0
    assert sorted((Path(r["file"]).name, r["line"], r["offset"]) for r in written_rejects) == \
        sorted((Path(r["input"]).name, r["line"], r["offset"]) for r in serial_rejects)

    total = result.counts.total
    assert total.records_in == total.mapped + total.rejected == 3000
    assert total.rejected == len(serial_rejects)
