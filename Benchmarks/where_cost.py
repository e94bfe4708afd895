#!/usr/bin/env python3
"""What a `--where` costs on top of the mapping it filters for (issue #31: "`where` keeps the fast path").

    python3 Benchmarks/where_cost.py --streammap .build/release/streammap [--size-mb 100] [--rounds 9]
                                     [--seed-dir DIR] [--keep DIR] [--out FILE]

The corpus is Benchmarks/corpus.py's tweet-like records (10% GitHub events the tweet mapping rejects, 1% invalid
lines), made at run time. Each pair runs the same mapping without and with a predicate that reads one more field
and keeps every record it maps, so the records written must be byte-identical, which is checked before timing:

    --field id                          vs  --field id --where 'exists(created_at)'      (tweets and events have it)
    --spec specs/tweets.spec.json       vs  the same with --where 'exists(retweeted)'    (the events, which the
                                                                                          mapping rejects, are dropped)
    --spec specs/tweets.spec.json       vs  the same with --where 'lang == "en"'   (drops most records: cheaper)

Times are CPU seconds (user + system, from wait4) of one job with its output to /dev/null, the two runs of a pair
back to back in every round (which goes first alternates), the machine settled before each (machine.py); a ratio
is the median over rounds of the pair's per-round ratio. The target (#31): a predicate that reads one more field
costs at most 1.1x the mapping alone.
"""
import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402

SPEC = os.path.join(HERE, "specs", "tweets.spec.json")


def pairs(corpus):
    return [
        ("--field id", ["--field", "id", corpus], ["--where", "exists(created_at)"], True),
        ("tweet spec", ["--spec", SPEC, corpus], ["--where", "exists(retweeted)"], True),
        ("tweet spec, a where that drops most", ["--spec", SPEC, corpus], ["--where", 'lang == "en"'], False),
    ]


def output_digest(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return hashlib.md5(r.stdout).hexdigest(), r.stdout.count(b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seed-dir")
    ap.add_argument("--keep", help="make the corpus in DIR and keep it (reused when it is there)")
    ap.add_argument("--out", help="also write the report (markdown) to FILE")
    a = ap.parse_args()

    work = a.keep or tempfile.mkdtemp(prefix="where-cost-")
    os.makedirs(work, exist_ok=True)
    corpus = os.path.join(work, f"tweets-{a.size_mb}mb.ndjson")
    if not os.path.exists(corpus):
        cmd = [sys.executable, os.path.join(HERE, "corpus.py"), corpus, "--size-mb", str(a.size_mb)]
        if a.seed_dir:
            cmd += ["--seed-dir", a.seed_dir]
        subprocess.run(cmd, check=True)

    rows = []
    for name, base, where, same in pairs(corpus):
        alone, filtered = [a.streammap] + base, [a.streammap] + where + base
        (d1, n1), (d2, n2) = output_digest(alone), output_digest(filtered)
        if same and d1 != d2:
            sys.exit(f"where_cost.py: {name}: the output with the where differs ({n1} vs {n2} records)")
        ratios, times = [], ([], [])
        for r in range(a.rounds):
            order = [(0, alone), (1, filtered)] if r % 2 == 0 else [(1, filtered), (0, alone)]
            got = [0.0, 0.0]
            for i, cmd in order:
                machine.settle([corpus])
                got[i] = machine.cpu_seconds(cmd)
            times[0].append(got[0])
            times[1].append(got[1])
            ratios.append(got[1] / got[0])
        rows.append((name, where[1], statistics.median(times[0]), statistics.median(times[1]),
                     statistics.median(ratios), min(ratios), max(ratios), n1, n2))

    lines = [
        f"`python3 Benchmarks/where_cost.py --size-mb {a.size_mb} --rounds {a.rounds}` "
        f"({os.path.getsize(corpus) / 1e6:.0f} MB, CPU seconds of one job, medians over rounds)",
        "",
        "| mapping | where | alone (s) | with the where (s) | ratio (median of rounds) | range | records written |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for name, expr, t0, t1, ratio, lo, hi, n1, n2 in rows:
        lines.append(f"| {name} | `{expr}` | {t0:.3f} | {t1:.3f} | **{ratio:.2f}×** | {lo:.2f}–{hi:.2f} | {n1} / {n2} |")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
