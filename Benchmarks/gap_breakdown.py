#!/usr/bin/env python3
"""Where the difference between StreamMap and the hand-written simdjson On-Demand peer is on the comparison corpus
(issue #31), by kind of line: start-up, tweets (mapped), GitHub events (rejected: eight errors each) and invalid
lines (yajl's verdict).

    python3 Benchmarks/gap_breakdown.py --streammap .build/release/streammap
                                        [--peer Benchmarks/.build/peers/map-tweets-simdjson]
                                        [--size-mb 100] [--rounds 21] [--seed-dir DIR] [--keep DIR] [--out FILE]

Benchmarks/corpus.py (compare.sh's seed) makes five inputs at run time: the comparison corpus (10% events, 1%
invalid lines), tweets alone of the same size, and a twentieth of that of events alone and of invalid lines alone,
plus an empty file. Both tools run the tweet mapping (specs/tweets.spec.json; the peer implements the same rules)
on each input, back to back in every round (which goes first alternates), the machine settled before each run
(machine.py). Times are CPU seconds (user + system, from wait4), output to /dev/null, medians over rounds. A kind's
cost per line is (its input's time - the empty input's) / its lines; the comparison corpus's difference is then
split by its own counts of each kind (corpus.py's manifest), what those do not explain being the spread between
inputs timed apart.

The peer prints a line number for a bad line and stops at the first field that fails; StreamMap reports every
error with its path and yajl's exact message. The peer is built as compare.sh builds it when it is not there
(libsimdjson-dev).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402

SPEC = os.path.join(HERE, "specs", "tweets.spec.json")
PEER_SOURCE = os.path.join(HERE, "Peers", "map_tweets_simdjson.cpp")


def make(path, size_mb, events, invalid, seed_dir):
    if os.path.exists(path) and os.path.exists(path + ".manifest.json"):
        return
    cmd = [sys.executable, os.path.join(HERE, "corpus.py"), path, "--size-mb", str(size_mb),
           "--events-share", str(events), "--invalid-share", str(invalid)]
    if seed_dir:
        cmd += ["--seed-dir", seed_dir]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)


def kinds(path):
    """(tweets, events, invalid lines) of a corpus, from its manifest."""
    with open(path + ".manifest.json") as f:
        m = json.load(f)
    with open(path, "rb") as f:
        lines = sum(1 for _ in f)
    return lines - len(m["events"]) - len(m["invalid"]), len(m["events"]), len(m["invalid"])


def peer_binary(path):
    if os.access(path, os.X_OK):
        return path
    if not os.path.exists("/usr/include/simdjson.h"):
        sys.exit("gap_breakdown.py: no simdjson peer (install libsimdjson-dev, or run Benchmarks/compare.sh once)")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    subprocess.run(["c++", "-O3", "-march=native", "-std=c++17", "-o", path, PEER_SOURCE, "-lsimdjson"], check=True)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--peer", default=os.path.join(HERE, ".build", "peers", "map-tweets-simdjson"))
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--seed-dir")
    ap.add_argument("--keep", help="make the inputs in DIR and keep them (reused when they are there)")
    ap.add_argument("--out", help="also write the report (markdown) to FILE")
    a = ap.parse_args()
    peer = peer_binary(a.peer)

    work = a.keep or tempfile.mkdtemp(prefix="gap-breakdown-")
    os.makedirs(work, exist_ok=True)
    small = max(1, a.size_mb // 20)
    inputs = {
        "empty": os.path.join(work, "empty.ndjson"),
        "events": os.path.join(work, f"events-{small}mb.ndjson"),
        "invalid": os.path.join(work, f"invalid-{small}mb.ndjson"),
        "tweets": os.path.join(work, f"tweets-{a.size_mb}mb.ndjson"),
        "corpus": os.path.join(work, f"corpus-{a.size_mb}mb.ndjson"),
    }
    open(inputs["empty"], "wb").close()
    make(inputs["events"], small, 1.0, 0, a.seed_dir)
    make(inputs["invalid"], small, 0, 1.0, a.seed_dir)
    make(inputs["tweets"], a.size_mb, 0, 0, a.seed_dir)
    make(inputs["corpus"], a.size_mb, 0.10, 0.01, a.seed_dir)
    counts = {k: kinds(p) for k, p in inputs.items() if k != "empty"}

    times = {k: ([], []) for k in inputs}
    for r in range(a.rounds):
        for k, path in inputs.items():
            runs = [(0, [a.streammap, "-s", SPEC, path]), (1, [peer, path])]
            for i, cmd in (runs if r % 2 == 0 else runs[::-1]):
                machine.settle([path])
                times[k][i].append(machine.cpu_seconds(cmd))
    med = {k: (statistics.median(s), statistics.median(p)) for k, (s, p) in times.items()}

    def per_line(kind, index):
        lines = counts[kind][index]
        return [(med[kind][t] - med["empty"][t]) / lines for t in (0, 1)]

    tweet, event, bad = per_line("tweets", 0), per_line("events", 1), per_line("invalid", 2)
    n_tweets, n_events, n_invalid = counts["corpus"]
    parts = [
        ("start-up (the empty input)", None, [med["empty"][0], med["empty"][1]]),
        ("tweets, mapped", n_tweets, tweet),
        ("GitHub events, rejected", n_events, event),
        ("invalid lines, rejected", n_invalid, bad),
    ]
    gap = med["corpus"][0] - med["corpus"][1]
    lines = [
        f"`python3 Benchmarks/gap_breakdown.py --size-mb {a.size_mb} --rounds {a.rounds}`: CPU time of StreamMap and "
        "of the simdjson On-Demand peer, the tweet mapping, medians of interleaved rounds.",
        "",
        "| input | lines | StreamMap ms | peer ms | StreamMap / peer |",
        "|---|---:|---:|---:|---:|",
    ]
    for k, path in inputs.items():
        n = sum(counts[k]) if k in counts else 0
        lines.append(f"| {k} ({os.path.getsize(path) / 1e6:.0f} MB) | {n} | {med[k][0] * 1e3:.1f} | {med[k][1] * 1e3:.1f} "
                     f"| {med[k][0] / med[k][1]:.2f}× |")
    lines += [
        "",
        f"The comparison corpus's difference, {gap * 1e3:.1f} ms, by kind of line (per line: its input's time less the "
        "empty input's, over its lines; times the corpus's lines of that kind):",
        "",
        "| part | lines in the corpus | StreamMap µs a line | peer µs a line | difference in the corpus, ms | share |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    explained = 0.0
    for name, n, (s, p) in parts:
        d = (s - p) * (n or 1)
        explained += d
        each = " | " if n is None else f"{s * 1e6:.2f} | {p * 1e6:.2f}"
        lines.append(f"| {name} | {n or ''} | {each} | {d * 1e3:.1f} | {d / gap:.0%} |")
    lines.append(f"| not explained (inputs timed apart) | | | | {(gap - explained) * 1e3:.1f} | {(gap - explained) / gap:.0%} |")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
