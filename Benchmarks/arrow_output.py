#!/usr/bin/env python3
"""NDJSON → Arrow for the tweet mapping (specs/tweets.spec.json): `streammap --to arrow` against pyarrow's JSON
reader with an explicit schema and DuckDB's read_ndjson fetched as Arrow — each doing the same mapping (renames,
nested struct, Twitter date → epoch ms, defaults) — with one thread and with all threads; and `--to arrow`
against the same mapping to NDJSON. Interleaved rounds, medians of per-round ratios.

    python3 Benchmarks/arrow_output.py [--corpus C.ndjson | --size-mb 100] [--rounds 5] [--streammap BIN]
                                       [--python PY]

`--python` is an interpreter with pyarrow and duckdb (scripts/arrow-test.sh makes one: .build/arrow-venv/bin/python).
The corpus is tweets only, all valid (`corpus.py --events-share 0 --invalid-share 0`): pyarrow's reader stops at the
first line that is not JSON, and neither peer rejects a record for a missing required field as streammap does, so
every record is one they all map. streammap's time is its process's wall time writing the IPC stream to /dev/null;
the peers' is measured inside their process from the start of the read to the table in memory (their interpreter's
start and imports not counted). Before the timings, the three tables are checked equal: the same rows, and the
same values column by column (pyarrow reads streammap's stream).

Beside them, with one thread, a floor: simdjson's DOM parser parsing every line of the corpus in full, the file
already in memory, nothing mapped or written (Peers/validate_simdjson.cpp, built with -march=native where
libsimdjson-dev is installed) — what validating every byte costs at the least on this core, against the time that
a given multiple of a peer's speed leaves.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import machine  # noqa: E402

PEER = r'''
import sys, time, json
import pyarrow as pa, pyarrow.json as pj, pyarrow.compute as pc, duckdb
way, path, threads, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def pyarrow_read():
    pa.set_cpu_count(threads); pa.set_io_thread_count(threads)
    schema = pa.schema([("id", pa.int64()), ("id_str", pa.string()), ("created_at", pa.string()), ("text", pa.string()),
        ("user", pa.struct([("id", pa.int64()), ("screen_name", pa.string()), ("followers_count", pa.int64()), ("verified", pa.bool_())])),
        ("retweet_count", pa.int64()), ("favorite_count", pa.int64()), ("lang", pa.string()), ("in_reply_to_status_id", pa.int64())])
    t = pj.read_json(path, read_options=pj.ReadOptions(use_threads=threads > 1, block_size=1 << 22),
                     parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
    created = pc.strptime(t["created_at"], format="%a %b %d %H:%M:%S %z %Y", unit="ms").cast(pa.int64())
    u = t["user"].combine_chunks()
    users = pa.StructArray.from_arrays(
        [u.field("id"), u.field("screen_name"), u.field("followers_count"), pc.fill_null(u.field("verified"), False)],
        names=["id", "handle", "followers", "verified"])
    stats = pa.StructArray.from_arrays(
        [t["retweet_count"].combine_chunks(), pc.fill_null(t["favorite_count"], 0).combine_chunks()], names=["retweets", "likes"])
    return pa.table({"id": t["id"], "idStr": t["id_str"], "createdAtMs": created, "text": t["text"], "user": users,
                     "stats": stats, "lang": pc.fill_null(t["lang"], "und"), "replyTo": t["in_reply_to_status_id"]})

def duckdb_read():
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    q = """select id, id_str as idStr, epoch_ms(strptime(created_at, '%a %b %d %H:%M:%S %z %Y')) as createdAtMs, text,
        {'id': "user".id, 'handle': "user".screen_name, 'followers': "user".followers_count,
         'verified': coalesce("user".verified, false)} as "user",
        {'retweets': retweet_count, 'likes': coalesce(favorite_count, 0)} as stats, coalesce(lang, 'und') as lang,
        in_reply_to_status_id as replyTo
      from read_ndjson(?, columns = {id: 'BIGINT', id_str: 'VARCHAR', created_at: 'VARCHAR', text: 'VARCHAR',
        "user": 'STRUCT(id BIGINT, screen_name VARCHAR, followers_count BIGINT, verified BOOLEAN)',
        retweet_count: 'BIGINT', favorite_count: 'BIGINT', lang: 'VARCHAR', in_reply_to_status_id: 'BIGINT'})"""
    r = con.execute(q, [path])
    for name in ("to_arrow_table", "fetch_arrow_table", "arrow"):  # DuckDB 2 / 1 spellings
        if hasattr(r, name):
            return getattr(r, name)()

start = time.perf_counter()
table = pyarrow_read() if way == "pyarrow" else duckdb_read()
seconds = time.perf_counter() - start
if out != "-":
    import pyarrow.feather as f
    f.write_feather(table, out, compression="uncompressed")
print(json.dumps({"seconds": seconds, "rows": table.num_rows}))
'''

CHECK = r'''
import sys, pyarrow as pa, pyarrow.ipc as ipc, pyarrow.feather as f
ours = ipc.open_stream(open(sys.argv[1], "rb")).read_all()
for other in sys.argv[2:]:
    t = f.read_table(other)
    assert t.num_rows == ours.num_rows, (other, t.num_rows, ours.num_rows)
    for name in ours.column_names:
        a, b = ours[name].combine_chunks(), t[name].combine_chunks()
        if name == "createdAtMs": b = b.cast(pa.int64())
        if pa.types.is_struct(a.type):
            for field in a.type:
                x, y = a.field(field.name), b.field(field.name).cast(field.type)
                assert x.equals(y), (other, name, field.name)
        else:
            assert a.equals(b.cast(a.type)), (other, name)
print("equal", ours.num_rows)
'''


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def validation_floor(workdir):
    """Builds Peers/validate_simdjson.cpp into `workdir`; None (and a line on stderr) without libsimdjson-dev."""
    if not os.path.exists("/usr/include/simdjson.h"):
        print("no /usr/include/simdjson.h (libsimdjson-dev): no validation floor", file=sys.stderr)
        return None
    binary = os.path.join(workdir, "validate-simdjson")
    built = subprocess.run(["c++", "-O3", "-march=native", "-std=c++17", "-o", binary,
                            os.path.join(HERE, "Peers", "validate_simdjson.cpp"), "-lsimdjson"])
    if built.returncode != 0:
        print("validate_simdjson.cpp did not build: no validation floor", file=sys.stderr)
        return None
    return binary


def floor_run(binary, corpus):
    import json
    return json.loads(subprocess.run([binary, corpus], check=True, capture_output=True, text=True).stdout)


def peer(python, way, corpus, threads, out="-"):
    r = subprocess.run([python, "-c", PEER, way, corpus, str(threads), out], check=True, capture_output=True, text=True)
    import json
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus")
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--streammap", default=os.path.join(ROOT, ".build", "release", "streammap"))
    ap.add_argument("--python", default=os.path.join(ROOT, ".build", "arrow-venv", "bin", "python"))
    ap.add_argument("--spec", default=os.path.join(HERE, "specs", "tweets.spec.json"))
    a = ap.parse_args()
    threads = os.cpu_count() or 1
    tmp = tempfile.TemporaryDirectory(prefix="streammap-arrow.")
    corpus = a.corpus
    if corpus is None:
        corpus = os.path.join(tmp.name, "tweets.ndjson")
        subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), corpus, "--size-mb", str(a.size_mb),
                        "--events-share", "0", "--invalid-share", "0"], check=True, stderr=subprocess.DEVNULL)
    size = os.path.getsize(corpus)
    stream = os.path.join(tmp.name, "ours.arrows")
    subprocess.run([a.streammap, "-s", a.spec, "--to", "arrow", "-o", stream, corpus], check=True)
    others = []
    for way in ("pyarrow", "duckdb"):
        out = os.path.join(tmp.name, way + ".feather")
        peer(a.python, way, corpus, threads, out)
        others.append(out)
    print(subprocess.run([a.python, "-c", CHECK, stream] + others, check=True, capture_output=True, text=True).stdout.strip(),
          "rows: the three tables hold the same values", file=sys.stderr)

    ways = {}
    floor = validation_floor(tmp.name)
    floor_name = None
    if floor:
        first = floor_run(floor, corpus)
        floor_name = f"simdjson DOM parse, file in memory (floor; {first['implementation']}), 1 thread(s)"
        ways[floor_name] = lambda: floor_run(floor, corpus)["seconds"]
    for t in sorted({1, threads}):
        ways[f"streammap --to arrow, {t} thread(s)"] = lambda t=t: timed(
            [a.streammap, "-s", a.spec, "-q", "--jobs", str(t), "--to", "arrow", "-o", "/dev/null", corpus])
        ways[f"streammap --to ndjson, {t} thread(s)"] = lambda t=t: timed(
            [a.streammap, "-s", a.spec, "-q", "--jobs", str(t), "-o", "/dev/null", corpus])
        ways[f"pyarrow.json.read_json + compute, {t} thread(s)"] = lambda t=t: peer(a.python, "pyarrow", corpus, t)["seconds"]
        ways[f"duckdb read_ndjson → Arrow, {t} thread(s)"] = lambda t=t: peer(a.python, "duckdb", corpus, t)["seconds"]
    names = list(ways)
    times = {n: [] for n in names}
    for r in range(a.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            machine.settle([corpus])
            times[n].append(ways[n]())
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)

    def ratio(x, y):
        return statistics.median(times[y][i] / times[x][i] for i in range(a.rounds))

    print(f"# NDJSON → Arrow, tweet mapping: {size / 1e6:.0f} MB, {a.rounds} interleaved rounds, {threads} CPUs\n")
    print("| way | median s | MB/s |")
    print("|---|---:|---:|")
    for n in names:
        m = statistics.median(times[n])
        print(f"| {n} | {m:.3f} | {size / 1e6 / m:.0f} |")
    print()
    for t in sorted({1, threads}):
        ours = f"streammap --to arrow, {t} thread(s)"
        print(f"- {t} thread(s): `--to arrow` is {ratio(ours, f'pyarrow.json.read_json + compute, {t} thread(s)'):.2f}× pyarrow's "
              f"speed, {ratio(ours, f'duckdb read_ndjson → Arrow, {t} thread(s)'):.2f}× DuckDB's, and "
              f"{ratio(ours, f'streammap --to ndjson, {t} thread(s)'):.2f}× the speed of the same mapping to NDJSON")
    if floor_name:
        duckdb = statistics.median(times["duckdb read_ndjson → Arrow, 1 thread(s)"])
        pyarrow = statistics.median(times["pyarrow.json.read_json + compute, 1 thread(s)"])
        least = statistics.median(times[floor_name])
        print(f"- the validation floor (one thread) takes {least / (duckdb / 3):.0%} of the time that 3× DuckDB's speed "
              f"leaves ({duckdb / 3:.3f} s) and {least / (pyarrow / 3):.0%} of what 3× pyarrow's leaves "
              f"({pyarrow / 3:.3f} s); `--to arrow` with one thread takes "
              f"{ratio(floor_name, 'streammap --to arrow, 1 thread(s)'):.2f}× the floor's time")


if __name__ == "__main__":
    main()
