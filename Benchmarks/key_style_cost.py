#!/usr/bin/env python3
"""What a key style costs on one huge record: `streammap --key-style camel` against `streammap` (copied as it is)
on the same single record (an array of small objects with snake_case keys, about 100 MB), run back to back in
every round, in both orders. Reports the CPU time (user + system) and peak memory of each and the ratio of the
medians; issue #15's target is a ratio within 2.

    python3 Benchmarks/key_style_cost.py --streammap .build/release/streammap [--mb 100] [--rounds 7]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402


def make_record(path, megabytes):
    item = '{"item_id":%d,"item_name":"n%d","nested_obj":{"inner_key":%d,"other_value":"v"}}'
    target = megabytes * 1_000_000
    with open(path, "w") as f:
        f.write('{"items_list":[')
        written, i = 0, 0
        while written < target:
            piece = ("," if i else "") + item % (i, i, i)
            f.write(piece)
            written += len(piece)
            i += 1
        f.write("]}\n")


def run(cmd, path):
    """CPU seconds and peak RSS (MiB) of one run; output to /dev/null."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(path, "rb") as f:
        p = subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[:300]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    tools = {"copy": [args.streammap], "camel": [args.streammap, "--key-style", "camel"]}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "record.json")
        make_record(path, args.mb)
        times = {name: [] for name in tools}
        for r in range(args.rounds):
            order = list(tools) if r % 2 == 0 else list(reversed(list(tools)))
            for name in order:
                machine.warm([path])
                machine.wake_cpus()
                cpu, _ = run(tools[name], path)
                times[name].append(cpu)
        # Peak RSS: ru_maxrss of children is the largest of any child so far, so measure each tool once, alone.
        peaks = {}
        for name in tools:
            peaks[name] = subprocess.run(["/usr/bin/time", "-f", "%M"] + tools[name] + [path], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True).stderr.strip().splitlines()[-1]
    copy, camel = statistics.median(times["copy"]), statistics.median(times["camel"])
    print("one %d MB record, %d rounds (median CPU seconds)" % (args.mb, args.rounds))
    print("  streammap (copy)           %.3f s   peak %6.0f MiB" % (copy, int(peaks["copy"]) / 1024))
    print("  streammap --key-style camel %.3f s   peak %6.0f MiB" % (camel, int(peaks["camel"]) / 1024))
    print("  ratio %.2f (target: within 2)" % (camel / copy))


if __name__ == "__main__":
    main()
