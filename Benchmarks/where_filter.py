#!/usr/bin/env python3
"""`streammap --where` against jq and Miller keeping the PushEvents of a GitHub-events corpus (issue #19).

    python3 Benchmarks/where_filter.py --streammap .build/release/streammap [--size-mb 100] [--rounds 7]
                                       [--seed-dir DIR] [--keep DIR]

The corpus is made at run time from the seed events (Samples/seed/gh_events.ndjson, found as corpus.py finds
it): every record re-randomised by corpus.make_event (ids, dates, commit messages, push ids above 2^53), written
compactly, one per line — no invalid lines, so that every tool keeps the same records. The tools, each run with
its output to /dev/null after one untimed run whose output is checked:

    streammap --where 'type == "PushEvent"'                     (stream engine; copies the kept records)
    streammap --where 'type == "PushEvent"' --jobs 2
    streammap --where 'type == "PushEvent"' --engine tree
    jq -c 'select(.type=="PushEvent")'                           (if installed)
    mlr --ijsonl --ojsonl filter '$type == "PushEvent"'          (if installed)

Checks: streammap's engines and --jobs write the same bytes; every tool keeps the same number of records; jq's
and Miller's records are compared with streammap's as parsed JSON (jq 1.6 rounds push ids above 2^53, which is
counted and reported, not hidden). Times: rounds interleaved, the machine settled before each timed run
(machine.py); a ratio is the median over rounds of the two tools' time ratio in the same round. Noisy on a shared
2-core VM: compare ratios from one run only.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import machine  # noqa: E402

EXPRESSION = 'type == "PushEvent"'


def make_corpus(path, size_mb, seed_dir):
    seeds = corpus.load(os.path.join(corpus.find_seed_dir(seed_dir), "gh_events.ndjson"))
    rng = random.Random(20130110)
    target = size_mb * 1_000_000
    written = pushes = n = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            event = corpus.make_event(rng, rng.choice(seeds), n)
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
            pushes += event.get("type") == "PushEvent"
            n += 1
    return n, pushes


def run(cmd, corpus_path, out_path):
    with open(corpus_path, "rb") as f, open(out_path, "wb") as out:
        p = subprocess.run(cmd, stdin=f, stdout=out, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")[:500]))


def timed(cmd, corpus_path):
    machine.settle([corpus_path])
    with open(corpus_path, "rb") as f:
        start = time.perf_counter()
        p = subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit("%s failed (%d)" % (" ".join(cmd), p.returncode))
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seed-dir")
    ap.add_argument("--keep", help="keep the corpus and outputs in this folder")
    args = ap.parse_args()

    tmp = args.keep or tempfile.mkdtemp(prefix="streammap-where.")
    os.makedirs(tmp, exist_ok=True)
    try:
        corpus_path = os.path.join(tmp, "events.ndjson")
        records, pushes = make_corpus(corpus_path, args.size_mb, args.seed_dir)
        size = os.path.getsize(corpus_path)
        print("corpus: %d records, %d PushEvents, %.1f MB" % (records, pushes, size / 1e6))

        sm = os.path.abspath(args.streammap)
        tools = [
            ("streammap --where", [sm, "--where", EXPRESSION]),
            ("streammap --where --jobs 2", [sm, "--where", EXPRESSION, "--jobs", "2"]),
            ("streammap --where --engine tree", [sm, "--where", EXPRESSION, "--engine", "tree"]),
        ]
        if shutil.which("jq"):
            tools.append(("jq -c select", ["jq", "-c", 'select(.type=="PushEvent")']))
        else:
            print("jq: not installed, left out")
        if shutil.which("mlr"):
            tools.append(("mlr filter", ["mlr", "--ijsonl", "--ojsonl", "filter", '$type == "PushEvent"']))
        else:
            print("mlr: not installed, left out")

        # Untimed runs, checked.
        outputs = {}
        for name, cmd in tools:
            out = os.path.join(tmp, "out-%d.ndjson" % len(outputs))
            run(cmd, corpus_path, out)
            with open(out, "rb") as f:
                outputs[name] = f.read()
        reference = outputs["streammap --where"]
        ref_lines = reference.splitlines()
        print("streammap keeps %d records (expected %d): %s" % (len(ref_lines), pushes, "ok" if len(ref_lines) == pushes else "MISMATCH"))
        for name in ("streammap --where --jobs 2", "streammap --where --engine tree"):
            print("%s: %s" % (name, "same bytes" if outputs[name] == reference else "DIFFERENT BYTES"))
        for name in ("jq -c select", "mlr filter"):
            if name not in outputs:
                continue
            lines = outputs[name].splitlines()
            differ = sum(1 for a, b in zip(ref_lines, lines) if json.loads(a) != json.loads(b))
            print("%s: %d records, %d differ from streammap's as parsed JSON%s" % (
                name, len(lines), differ, " (ids above 2^53 rounded)" if differ else ""))

        # Timed rounds, interleaved.
        times = {name: [] for name, _ in tools}
        for _ in range(args.rounds):
            for name, cmd in tools:
                times[name].append(timed(cmd, corpus_path))
        base = times["streammap --where"]
        print("\n%-34s %9s %9s %18s" % ("tool", "median s", "MB/s", "x streammap time"))
        for name, _ in tools:
            t = times[name]
            ratio = statistics.median(x / b for x, b in zip(t, base))
            print("%-34s %9.3f %9.1f %18.2f" % (name, statistics.median(t), size / 1e6 / statistics.median(t), ratio))
        print("\n(rounds: %d; a ratio is the median of per-round ratios; shared noisy VM)" % args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
