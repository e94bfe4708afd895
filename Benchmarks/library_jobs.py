#!/usr/bin/env python3
"""The library's whole-file calls with `MappingOptions(jobs: N)` against `jobs: 1`, beside the command line's
`--jobs`: wall time, interleaved rounds, medians of per-round ratios.

    python3 Benchmarks/library_jobs.py [--corpus C.ndjson | --size-mb 200] [--jobs 2] [--rounds 7]
                                       [--streammap BIN] [--feed BIN]

Six runs a round, in rotating order, each after `machine.settle` (input in the page cache, every CPU awake): the
command line (`streammap --jobs 1` / `--jobs N`), `Mapper.mapRecords(inFile:options:)` (`streammap-feed SPEC FILE
--file JOBS`) and `Mapper.mappedRecords(inFile:options:)`, the async sequence (`--async JOBS`); every one writes the
mapped records to /dev/null, and all six must write the same bytes. A round is dropped (and retried) when the rest of
the machine used more than 5% of a CPU meanwhile. Builds the binaries it is not given (release, static stdlib).
Prints each way's median wall time and its speed-up from N jobs, and the library's time against the command line's
at the same number of jobs.
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
sys.dont_write_bytecode = True  # no __pycache__ under the repository
import machine  # noqa: E402
from jobs_speedup import digest, run  # noqa: E402


def build(cwd, product):
    flags = ["-c", "release", "--static-swift-stdlib", "--product", product]
    subprocess.run(["swift", "build"] + flags, cwd=cwd, check=True, stdout=sys.stderr)
    path = subprocess.run(["swift", "build"] + flags + ["--show-bin-path"], cwd=cwd, check=True, capture_output=True, text=True)
    return os.path.join(path.stdout.strip(), product)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus")
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--spec", default=os.path.join(HERE, "specs", "tweets.spec.json"))
    ap.add_argument("--streammap")
    ap.add_argument("--feed")
    a = ap.parse_args()
    cli = a.streammap or build(ROOT, "streammap")
    feed = a.feed or build(HERE, "streammap-feed")
    tmp = tempfile.TemporaryDirectory(prefix="streammap-library-jobs.")
    corpus = a.corpus
    if corpus is None:
        corpus = os.path.join(tmp.name, "corpus.ndjson")
        subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), corpus, "--size-mb", str(a.size_mb)], check=True,
                       stderr=subprocess.DEVNULL)
    size = os.path.getsize(corpus)
    n = str(a.jobs)
    ways = {
        "streammap --jobs 1": [cli, "--spec", a.spec, "-q", "--jobs", "1", corpus],
        "streammap --jobs " + n: [cli, "--spec", a.spec, "-q", "--jobs", n, corpus],
        "mapRecords jobs 1": [feed, a.spec, corpus, "--file", "1"],
        "mapRecords jobs " + n: [feed, a.spec, corpus, "--file", n],
        "mappedRecords jobs 1": [feed, a.spec, corpus, "--async", "1"],
        "mappedRecords jobs " + n: [feed, a.spec, corpus, "--async", n],
    }
    digests = {name: digest(cmd) for name, cmd in ways.items()}
    if len(set(digests.values())) != 1:
        sys.exit("library_jobs.py: the ways wrote different bytes: %s" % digests)
    kept, tries = [], 0
    names = list(ways)
    while len(kept) < a.rounds and tries < a.rounds * 30:
        tries += 1
        k = len(kept) % len(names)
        order = names[k:] + names[:k]
        r = {}
        for name in order:
            machine.settle([corpus])
            wall, _, foreign = run(ways[name])
            if foreign > 0.05 * wall:
                r = None
                break
            r[name] = wall
        if r is None:
            time.sleep(2)
            continue
        kept.append(r)
        print("round %d: " % len(kept) + ", ".join("%s %.3f s" % (name, r[name]) for name in names), flush=True)
    if not kept:
        sys.exit("library_jobs.py: the machine was never quiet enough")
    print("%d MB, %d rounds kept of %d (median wall seconds; all six wrote the same bytes)" % (size / 1e6, len(kept), tries))
    for way in ("streammap --jobs", "mapRecords jobs", "mappedRecords jobs"):
        one, many = way + " 1", way + " " + n
        speedup = statistics.median(r[one] / r[many] for r in kept)
        print("  %-22s 1: %.3f s  %s: %.3f s  speed-up %.2fx" % (
            way, statistics.median(r[one] for r in kept), n, statistics.median(r[many] for r in kept), speedup))
    for jobs in ("1", n):
        for way in ("mapRecords jobs", "mappedRecords jobs"):
            ratio = statistics.median(r[way + " " + jobs] / r["streammap --jobs " + jobs] for r in kept)
            print("  %s %s / streammap --jobs %s: %.2f" % (way, jobs, jobs, ratio))
    tmp.cleanup()


if __name__ == "__main__":
    main()
