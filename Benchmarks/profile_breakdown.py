#!/usr/bin/env python3
"""Where the instructions go: callgrind on a mapping, grouped by component, per input byte (issue #31, part 1).

    python3 Benchmarks/profile_breakdown.py --streammap .build/release/streammap [--size-mb 5] [--spec SPEC]...

Runs `valgrind --tool=callgrind` on streammap over SIZE MB of the benchmark corpus (corpus.py, the seed
compare.sh uses) for each spec (default: the tweet mapping, identity, and keep + two renames), and once on empty
input to take out start-up (the Swift runtime's conformance scan, the dynamic loader, argument parsing): each
function's cost on empty input is subtracted from its cost on the corpus. What remains is grouped by the
function's name into the components below and printed as instructions per input byte, as a Markdown table.

The binary is copied and stripped of its DWARF first (valgrind 3.19 cannot read the DWARF 5 forms Swift 6
writes); the symbol table stays, and that is all the grouping needs. Needs valgrind and callgrind_annotate.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True

# (component, pattern on the symbol): the first match wins; StreamMap's other Swift code is "engine".
COMPONENTS = [
    ("record projection (C: stage-1 masks, plan walk)", r"project_|string_masks_at|plan_find|skip_number_|skip_string_|skip_value_|next_key"),
    ("verbatim copies (C: canonical copy)", r"copy_string|copy_key|canonical_copy|scalar_end|check_keys|put_code_point|RenamedCopy"),
    ("strict scanner (UTF-8, escapes)", r"plain_prefix|StrictJSONScanner"),
    ("replay of the projection (events without yajl)", r"YajlParserBase.*replay|replay.*count.*yajl_status"),
    ("yajl (records not projected, and projections with escapes)", r"libyajl"),
    ("writer (JSONWriter, buffers, output assembly)", r"JSONWriter|ByteBuffer|JSONEscaping|writeLayout|writeSlot|RecordWriter|memmove|memcpy|memset"),
    ("input (read, NDJSON framing, pipeline)", r"NDJSONLines|PipelineCore|RecordFramer|RecordPipeline|InputDecoding|memchr|FileInput|readRecords"),
    ("runtime (reference counts, exclusivity, malloc)", r"swift_retain|swift_release|swift_beginAccess|swift_endAccess|AccessSet|swift_isUniquely|malloc|_int_free|_int_malloc|cfree|free\b|swift_bridgeObject"),
    ("engine (sinks, callbacks, key tables, conversions)", r"StreamMap|\$s9StreamMap"),
]
OTHER = "other (libc, Swift standard library)"


def callgrind(binary, args, out):
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, binary] + args,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    text = subprocess.run(["callgrind_annotate", "--threshold=100", out], capture_output=True, text=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)$", line)
        if m and "PROGRAM TOTALS" not in line:
            costs[m.group(2)] = costs.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return costs


def classify(symbol):
    for name, pattern in COMPONENTS:
        if re.search(pattern, symbol):
            return name
    return OTHER


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--size-mb", type=float, default=5)
    ap.add_argument("--spec", action="append", help="a spec file (repeatable); default: tweet, identity, keep")
    a = ap.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            sys.exit("profile_breakdown.py needs %s" % tool)
    work = tempfile.mkdtemp(prefix="streammap-profile-")
    try:
        binary = os.path.join(work, "streammap")
        shutil.copy(a.streammap, binary)
        subprocess.run(["strip", "--strip-debug", binary], check=True)
        corpus = os.path.join(work, "corpus.ndjson")
        subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), corpus, "--size-mb", str(a.size_mb)],
                       check=True, stdout=subprocess.DEVNULL)
        empty = os.path.join(work, "empty.ndjson")
        open(empty, "w").close()
        size = os.path.getsize(corpus)
        specs = a.spec
        if not specs:
            identity = os.path.join(work, "identity.spec.json")
            with open(identity, "w") as f:
                f.write('{"mapper":"identity"}\n')
            keep = os.path.join(work, "keep.spec.json")
            with open(keep, "w") as f:
                f.write('{"fields":{"id_str":"idStr","user":"author"},"unmapped":"keep"}\n')
            specs = [os.path.join(HERE, "specs", "tweets.spec.json"), identity, keep]
        columns = []
        for spec in specs:
            run = callgrind(binary, ["--spec", spec, "-q", corpus], os.path.join(work, "run.out"))
            start = callgrind(binary, ["--spec", spec, "-q", empty], os.path.join(work, "start.out"))
            groups = {}
            for symbol, cost in run.items():
                net = cost - start.get(symbol, 0)
                if net > 0:
                    groups[classify(symbol)] = groups.get(classify(symbol), 0) + net
            columns.append((os.path.basename(spec), groups, sum(run.values()), sum(start.values())))
        names = [n for n, _ in COMPONENTS] + [OTHER]
        print("Instructions per input byte (callgrind, %.1f MB of the benchmark corpus, start-up subtracted):" % (size / 1e6))
        print()
        print("| component | " + " | ".join(c[0] for c in columns) + " |")
        print("|---|" + "---:|" * len(columns))
        for n in names:
            print("| %s | %s |" % (n, " | ".join("%.2f" % (c[1].get(n, 0) / size) for c in columns)))
        print("| **all, start-up subtracted** | %s |" % " | ".join("**%.2f**" % ((c[2] - c[3]) / size) for c in columns))
        print("| start-up (empty input), M instructions | %s |" % " | ".join("%.1f" % (c[3] / 1e6) for c in columns))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
