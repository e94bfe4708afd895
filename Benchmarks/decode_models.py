#!/usr/bin/env python3
"""Tweets into Codable models (Benchmarks/DecodeTweets, built as `streammap-decode`): the library's ModelFeed with
the stream engine (the default) and with the tree engine, MappingFeed followed by MappedRecord.decode, and
Foundation's JSONDecoder on each raw line with the conversions written by hand — back to back in every round; the
median CPU time (user + system) of each and its ratio to JSONDecoder's, and whether the StreamMap ways agree
(same models, same checksum).

    python3 Benchmarks/decode_models.py [--corpus FILE | --size-mb 50] [--rounds 7]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import machine  # noqa: E402
from library_feed import build  # noqa: E402


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus")
    ap.add_argument("--size-mb", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    tool = build(BENCH, "streammap-decode")
    spec = os.path.join(BENCH, "specs", "tweets.spec.json")
    corpus = args.corpus
    if corpus is None:
        corpus = os.path.join(tempfile.mkdtemp(prefix="decode-"), "tweets.ndjson")
        subprocess.run([sys.executable, os.path.join(BENCH, "corpus.py"), corpus, "--size-mb", str(args.size_mb)],
                       check=True, stdout=sys.stderr)
    ways = {
        "ModelFeed (stream engine)": [tool, "modelfeed", spec, corpus],
        "ModelFeed (tree engine, one pass)": [tool, "modelfeed-tree", spec, corpus],
        "MappingFeed + MappedRecord.decode": [tool, "twopass", spec, corpus],
        "Foundation JSONDecoder + hand conversions": [tool, "foundation", corpus],
    }
    times = {name: [] for name in ways}
    outputs = {}
    for r in range(args.rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))
        for name in order:
            machine.warm([corpus])
            machine.wake_cpus()
            t, out = run(ways[name])
            times[name].append(t)
            outputs[name] = out
    base = statistics.median(times["Foundation JSONDecoder + hand conversions"])
    print("corpus: %s (%.1f MB), %d rounds, CPU seconds (user + system), median" %
          (corpus, os.path.getsize(corpus) / 1e6, args.rounds))
    print("| way | CPU s | × JSONDecoder's speed | output |")
    print("|---|---|---|---|")
    for name in ways:
        m = statistics.median(times[name])
        print("| %s | %.3f | %.2f× | %s |" % (name, m, base / m, outputs[name]))
    streammap = {outputs[n] for n in ways if "Foundation" not in n}
    print("StreamMap's three ways agree: %s" % ("yes" if len(streammap) == 1 else "NO: %s" % streammap))


if __name__ == "__main__":
    main()
