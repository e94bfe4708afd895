#!/usr/bin/env python3
"""The library against the command line: `MappingFeed` (Benchmarks/FeedTweets, built as `streammap-feed`) and
`streammap` map the tweet corpus with specs/tweets.spec.json, back to back in every round, in both orders; the
CPU time (user + system) of each, the ratio of the medians, and whether the outputs are byte-identical. Then a
single huge line (`{"big":[…],"id":1}`, generated into a pipe, never on disk) through the feed with a spec that
reads only `id`, at 100 MB and at --huge-mb (1 GB by default): peak RSS should not grow with the line.

    python3 Benchmarks/library_feed.py [--corpus FILE | --size-mb 50] [--rounds 9] [--huge-mb 1000]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import machine  # noqa: E402


def build(cwd, product):
    flags = ["-c", "release", "--static-swift-stdlib", "--product", product]
    subprocess.run(["swift", "build"] + flags, cwd=cwd, check=True, stdout=sys.stderr)
    path = subprocess.run(["swift", "build"] + flags + ["--show-bin-path"], cwd=cwd, check=True, capture_output=True, text=True)
    return os.path.join(path.stdout.strip(), product)


def cpu_seconds(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit("%s failed (%d)" % (" ".join(cmd), p.returncode))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def huge_line_rss(feed, spec, megabytes):
    """Peak RSS (MiB) of the feed mapping one line of about `megabytes` MB from a pipe."""
    time = subprocess.Popen(["/usr/bin/time", "-f", "%M", feed, spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    piece = b'{"k":"' + b"x" * 1000 + b'"},'
    time.stdin.write(b'{"big":[')
    for _ in range(megabytes * 1000 * 1000 // len(piece)):
        time.stdin.write(piece)
    time.stdin.write(b'{}],"id":1}\n')
    time.stdin.close()
    out = time.stdout.read()
    err = time.stderr.read().decode().strip().splitlines()
    time.wait()
    if out != b'{"id":1}\n':
        raise SystemExit("huge line: unexpected output %r" % out[:100])
    return int(err[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus")
    ap.add_argument("--size-mb", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--huge-mb", type=int, default=1000)
    args = ap.parse_args()
    cli = build(ROOT, "streammap")
    feed = build(BENCH, "streammap-feed")
    spec = os.path.join(BENCH, "specs", "tweets.spec.json")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus
        if not corpus:
            corpus = os.path.join(tmp, "corpus.ndjson")
            subprocess.run([sys.executable, os.path.join(BENCH, "corpus.py"), corpus, "--size-mb", str(args.size_mb)],
                           check=True, stderr=subprocess.DEVNULL)
        outputs = {}
        for name, cmd in (("cli", [cli, "-s", spec, "-q", corpus]), ("feed", [feed, spec, corpus])):
            outputs[name] = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        tools = {"streammap": [cli, "-s", spec, "-q", corpus], "MappingFeed": [feed, spec, corpus]}
        times = {name: [] for name in tools}
        for r in range(args.rounds):
            for name in (list(tools) if r % 2 == 0 else list(reversed(list(tools)))):
                machine.warm([corpus])
                machine.wake_cpus()
                times[name].append(cpu_seconds(tools[name]))
        pick = os.path.join(tmp, "pick.json")
        with open(pick, "w") as f:
            f.write('{"fields":{"id":"id"}}')
        rss = {mb: huge_line_rss(feed, pick, mb) for mb in (100, args.huge_mb)}
    size = os.path.getsize(corpus) if args.corpus else args.size_mb * 1_000_000
    cli_t, feed_t = statistics.median(times["streammap"]), statistics.median(times["MappingFeed"])
    print("tweet corpus, %d MB, %d rounds (median CPU seconds; outputs %s)" % (
        size // 1_000_000, args.rounds, "byte-identical" if outputs["cli"] == outputs["feed"] else "DIFFERENT"))
    print("  streammap     %.3f s  %5.0f MB/s" % (cli_t, size / cli_t / 1e6))
    print("  MappingFeed   %.3f s  %5.0f MB/s" % (feed_t, size / feed_t / 1e6))
    print("  MappingFeed / streammap time: %.2f (target: within 1.10)" % (feed_t / cli_t))
    for mb, mib in rss.items():
        print("  one %d MB line through MappingFeed (reads only id): peak RSS %.0f MiB" % (mb, mib))


if __name__ == "__main__":
    main()
