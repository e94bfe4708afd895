#!/usr/bin/env python3
"""Compressed input: `streammap FILE.gz` against `gzip -dc FILE.gz | streammap` and `gzip -dc FILE.gz | jq -c .`.

    python3 Benchmarks/compressed_input.py --streammap .build/release/streammap [--size-mb 100] [--rounds 5]
                                           [--spec Benchmarks/specs/tweets.spec.json]

Generates a corpus with corpus.py (--size-mb MB, its default seed, no invalid lines: jq stops at the first one) in a
temporary directory, compresses it with
`gzip -6` (and `zstd -3` when the zstd tool is there), and runs, interleaved over the rounds (the order rotating),
each command with its output to /dev/null:

    streammap FILE            the plain file (what decompression costs is measured against it)
    streammap FILE.gz         decompressing in the process, on the reading thread
    gzip -dc FILE.gz | streammap              decompressing in a second process (a second core)
    streammap --jobs 2 FILE.gz                decompressing on the reading thread, mapping on two workers
    streammap --jobs 2 FILE                   the speed-up --jobs gives plain text, for comparison
    streammap FILE.zst
    gzip -dc FILE.gz | jq -c .                when jq is installed (jq only reformats: no mapping)

The first round checks that `streammap FILE.gz`, the pipe, `--jobs 2` and the .zst file write the same bytes as the
plain file. Prints every round, the median wall times and the ratios of the medians. The machine is shared:
other work (another engineer's build) skews single rounds; medians of interleaved rounds are the figures to quote.
"""
import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd, output=subprocess.DEVNULL):
    start = time.perf_counter()
    p = subprocess.run(cmd, shell=True, stdout=output, stderr=subprocess.DEVNULL, executable="/bin/bash")
    elapsed = time.perf_counter() - start
    if p.returncode not in (0, 1):
        raise SystemExit("compressed_input.py: %s exited with %d" % (cmd, p.returncode))
    return elapsed


def digest(cmd):
    p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, executable="/bin/bash")
    return hashlib.sha256(p.stdout).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--spec", default=os.path.join(HERE, "specs", "tweets.spec.json"))
    args = ap.parse_args()
    bin_ = os.path.abspath(args.streammap)
    with tempfile.TemporaryDirectory(prefix="streammap-compressed.") as tmp:
        plain = os.path.join(tmp, "corpus.ndjson")
        # No invalid lines: jq stops at the first one.
        subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), plain, "--size-mb", str(args.size_mb),
                        "--invalid-share", "0"], check=True)
        subprocess.run("gzip -6 -k -c '%s' > '%s.gz'" % (plain, plain), shell=True, check=True)
        have_zstd = shutil.which("zstd") is not None
        if have_zstd:
            subprocess.run(["zstd", "-q", "-3", "-k", plain, "-o", plain + ".zst"], check=True)
        sm = "'%s' -q -s '%s'" % (bin_, args.spec)
        commands = {
            "streammap FILE": "%s '%s'" % (sm, plain),
            "streammap FILE.gz": "%s '%s.gz'" % (sm, plain),
            "gzip -dc | streammap": "gzip -dc '%s.gz' | %s" % (plain, sm),
            "streammap --jobs 2 FILE.gz": "%s --jobs 2 '%s.gz'" % (sm, plain),
            "streammap --jobs 2 FILE": "%s --jobs 2 '%s'" % (sm, plain),
        }
        if have_zstd:
            commands["streammap FILE.zst"] = "%s '%s.zst'" % (sm, plain)
        if shutil.which("jq"):
            commands["gzip -dc | jq -c ."] = "gzip -dc '%s.gz' | jq -c . " % plain
        sizes = {name: os.path.getsize(plain + ext) for name, ext in (("plain", ""), ("gz", ".gz"))}
        print("corpus: %d bytes, gzip %d bytes (%.1fx)" % (sizes["plain"], sizes["gz"], sizes["plain"] / sizes["gz"]))
        reference = digest(commands["streammap FILE"])
        for name in commands:
            if name.startswith("streammap") or name.startswith("gzip -dc | streammap"):
                if digest(commands[name]) != reference:
                    raise SystemExit("compressed_input.py: %s writes other bytes than streammap FILE" % name)
        times = {name: [] for name in commands}
        names = list(commands)
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                times[name].append(timed(commands[name]))
            print("round %d: %s" % (r + 1, "  ".join("%s %.2f s" % (n, times[n][-1]) for n in names)), flush=True)
        med = {n: statistics.median(t) for n, t in times.items()}
        print("\nmedian wall time over %d rounds:" % args.rounds)
        for n in names:
            print("  %-28s %7.2f s  %7.1f MB/s of text" % (n, med[n], sizes["plain"] / 1e6 / med[n]))
        print("\nratios (median / median):")
        gz = med["streammap FILE.gz"]
        print("  streammap FILE.gz vs streammap FILE:        %.2fx the time" % (gz / med["streammap FILE"]))
        print("  streammap FILE.gz vs gzip -dc | streammap:  %.2fx the time" % (gz / med["gzip -dc | streammap"]))
        print("  --jobs 2 speed-up, FILE.gz:                 %.2fx" % (gz / med["streammap --jobs 2 FILE.gz"]))
        print("  --jobs 2 speed-up, FILE (plain):            %.2fx" % (med["streammap FILE"] / med["streammap --jobs 2 FILE"]))
        if "streammap FILE.zst" in med:
            print("  streammap FILE.zst vs streammap FILE:       %.2fx the time" % (med["streammap FILE.zst"] / med["streammap FILE"]))
        if "gzip -dc | jq -c ." in med:
            print("  gzip -dc | jq -c . vs streammap FILE.gz:    %.2fx the time" % (med["gzip -dc | jq -c ."] / gz))


if __name__ == "__main__":
    main()
