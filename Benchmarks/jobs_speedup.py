#!/usr/bin/env python3
"""`streammap --jobs N` against `--jobs 1`: wall time, interleaved rounds, medians.

    python3 Benchmarks/jobs_speedup.py --streammap .build/release/streammap [--corpus C.ndjson | --size-mb 200]
                                       [--jobs 2] [--rounds 9] [--spec Benchmarks/specs/tweets.spec.json] [--ceiling]

Without --corpus, generates one with corpus.py (--size-mb MB, its default seed) in a temporary directory and deletes it
afterwards. Each round runs `--jobs 1` and `--jobs N` back to back (in alternating order), output to /dev/null,
each after `machine.settle` (input in the page cache, every CPU awake: see machine.py), and checks that both wrote the same bytes in the first round. On a shared machine other work skews single rounds:
a round is discarded (and retried after a pause) when the rest of the machine used more than 5% of a CPU during
either run, going by /proc/stat (Linux). Prints every kept round, then the median wall times and the median of the
per-round ratios (the figure to quote).

--ceiling adds a third run to each round: N independent `--jobs 1` processes at once, each on its Nth of the corpus
(cut at line ends). Nothing is shared between them but the machine, so `--jobs 1` / that is what N cores give at
the moment — on a virtual machine often well under N, and it varies with the host's load.
"""
import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ under the repository
import machine  # noqa: E402


def busy_seconds():
    """CPU time the whole machine has spent busy, from /proc/stat (None elsewhere)."""
    try:
        with open("/proc/stat") as f:
            v = list(map(int, f.readline().split()[1:]))
    except OSError:
        return None
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def run(cmd, out=subprocess.DEVNULL):
    """Wall seconds, own CPU seconds, CPU seconds the rest of the machine used meanwhile (0 if unknown)."""
    b0, t0 = busy_seconds(), time.monotonic()
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    t1, b1 = time.monotonic(), busy_seconds()
    own = usage.ru_utime + usage.ru_stime
    foreign = (b1 - b0 - own) if b0 is not None and b1 is not None else 0.0
    return t1 - t0, own, foreign


def split(corpus, n, directory):
    """The corpus cut into n files of about equal size at line ends."""
    size = os.path.getsize(corpus)
    paths = []
    with open(corpus, "rb") as f:
        for i in range(n):
            path = os.path.join(directory, "part%d.ndjson" % i)
            with open(path, "wb") as out:
                target = size * (i + 1) // n
                while f.tell() < target or i == n - 1:
                    line = f.readline()
                    if not line:
                        break
                    out.write(line)
            paths.append(path)
    return paths


def run_parallel(a, parts):
    """N `--jobs 1` processes at once, one per part: wall, CPU, foreign CPU."""
    b0, t0 = busy_seconds(), time.monotonic()
    procs = [subprocess.Popen([a.streammap, "--spec", a.spec, "--jobs", "1", p], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for p in parts]
    own = 0.0
    for p in procs:
        _, _, usage = os.wait4(p.pid, 0)
        own += usage.ru_utime + usage.ru_stime
    t1, b1 = time.monotonic(), busy_seconds()
    foreign = (b1 - b0 - own) if b0 is not None and b1 is not None else 0.0
    return t1 - t0, own, foreign


def digest(cmd):
    h = hashlib.sha256()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        h.update(chunk)
    p.wait()
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--corpus")
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--spec", default=os.path.join(HERE, "specs", "tweets.spec.json"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--ceiling", action="store_true")
    a = ap.parse_args()
    tmp = None
    corpus = a.corpus
    if corpus is None:
        tmp = tempfile.TemporaryDirectory(prefix="streammap-jobs.")
        corpus = os.path.join(tmp.name, "corpus.ndjson")
        subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), corpus, "--size-mb", str(a.size_mb)], check=True)
    size = os.path.getsize(corpus)
    one = [a.streammap, "--spec", a.spec, "--jobs", "1", corpus]
    many = [a.streammap, "--spec", a.spec, "--jobs", str(a.jobs), corpus]
    parts = None
    if a.ceiling:
        parts_dir = tempfile.TemporaryDirectory(prefix="streammap-jobs-parts.")
        parts = split(corpus, a.jobs, parts_dir.name)
    if digest(one) != digest(many):
        sys.exit("jobs_speedup.py: --jobs %d wrote different bytes from --jobs 1" % a.jobs)
    kept, tries = [], 0
    while len(kept) < a.rounds and tries < a.rounds * 30:
        tries += 1
        pair = [("1", one), (str(a.jobs), many)] + ([("procs", None)] if parts else [])
        k = len(kept) % len(pair)
        pair = pair[k:] + pair[:k]
        r = {}
        for name, cmd in pair:
            machine.settle(parts if cmd is None else [corpus])
            wall, own, foreign = run_parallel(a, parts) if cmd is None else run(cmd)
            if foreign > 0.05 * wall:
                r = None
                break
            r[name] = (wall, own)
        if r is None:
            time.sleep(2)
            continue
        kept.append(r)
        w1, wn = r["1"][0], r[str(a.jobs)][0]
        print("round %d: --jobs 1 %.3f s (cpu %.3f s), --jobs %d %.3f s (cpu %.3f s): %.2fx%s" % (
            len(kept), w1, r["1"][1], a.jobs, wn, r[str(a.jobs)][1], w1 / wn,
            "; %d processes %.3f s: %.2fx" % (a.jobs, r["procs"][0], w1 / r["procs"][0]) if parts else ""), flush=True)
    if not kept:
        sys.exit("jobs_speedup.py: the machine was never quiet enough")
    m1 = statistics.median(r["1"][0] for r in kept)
    mn = statistics.median(r[str(a.jobs)][0] for r in kept)
    ratio = statistics.median(r["1"][0] / r[str(a.jobs)][0] for r in kept)
    print("%d MB, %d rounds kept of %d: --jobs 1 median %.3f s (%.0f MB/s), --jobs %d median %.3f s (%.0f MB/s); "
          "median of per-round ratios %.2fx" % (size / 1e6, len(kept), tries, m1, size / 1e6 / m1, a.jobs, mn, size / 1e6 / mn, ratio))
    if parts:
        ceiling = statistics.median(r["1"][0] / r["procs"][0] for r in kept)
        print("ceiling: %d independent processes on %d parts, median of per-round ratios %.2fx; --jobs %d reaches %.0f%% of it"
              % (a.jobs, a.jobs, ceiling, a.jobs, 100 * ratio / ceiling))
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
