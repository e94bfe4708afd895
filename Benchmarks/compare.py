#!/usr/bin/env python3
"""Runs the side-by-side comparison; called by Benchmarks/compare.sh (which builds the tools and the corpus).

    python3 Benchmarks/compare.py --corpus C.ndjson --work DIR --streammap BIN --peers-bin DIR [--rounds 5]
                                  [--out Benchmarks/results] [--corpus-summary TEXT] [--command TEXT]

Every tool runs once untimed (its output kept for the checks), then once per round, interleaved: the order rotates
each round, so a slow moment of a shared machine hits different tools, and the tools a target compares run back to
back (PAIRED). A timed run writes its output to /dev/null (unless --timed-output file), is wrapped in /usr/bin/time
for its peak RSS, and follows `machine.settle`: the corpus read through so that the page cache holds it, and every
CPU kept busy for 0.2 s so that none starts the run idle (see machine.py). MB/s is the corpus size (10^6 bytes)
over the median wall time; a ratio between two tools is the median over rounds of their time ratio in the same
round (pairing runs of one round cancels a shared machine's drift). Each mapper's output is then checked against streammap's stream engine, record by record: same
records rejected, same values (both sides parsed with Python, ints exact), precision loss flagged. Writes
comparison.md, comparison.json and comparison.svg (chart.py) into --out.
"""
import argparse
import datetime
import decimal
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ under the repository
import chart  # noqa: E402
import jobs_speedup  # noqa: E402
import machine  # noqa: E402

TARGETS = {
    "stream_vs_ceiling": 0.85,
    "identity_vs_yajl_gen": 1.1,
    "tree_vs_codable": 1.0,
    "jobs2_vs_jobs1": 1.7,
    "rss_mib": 16,
}
# Issue #32 (computed values): the stream engine on the computed-fields mapping vs the yajl no-op parse.
TARGETS_32 = {
    "computed_vs_ceiling": 1.3,
}
# Issue #31 (per core): against the yajl no-op parse and the hand-written simdjson On-Demand peer.
TARGETS_31 = {
    "stream_vs_ceiling": 2.4,
    "stream_vs_simdjson": 1.0,
    "identity_vs_ceiling": 2.0,
    "keep_vs_ceiling": 1.5,
}
# The wide mapping of issue #31: every member kept, two renamed.
KEEP_SPEC = '{"fields":{"id_str":"idStr","user":"author"},"unmapped":"keep"}\n'
# Issue #20 (skipping unread values ahead of yajl): the same ratios, higher.
TARGETS_20 = {
    "stream_vs_ceiling": 1.5,
    "identity_vs_ceiling": 1.0,
    "jobs2_vs_jobs1": 1.8,
}


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip() or subprocess.run(
            cmd, capture_output=True, text=True, timeout=60).stderr.strip()
    except Exception as e:  # noqa: BLE001
        return "unavailable (%s)" % e


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# ---------------------------------------------------------------------------------------------------------------
# Tools


class Tool:
    def __init__(self, key, label, group, cmd, rejects, role):
        self.key = key          # short id, file names
        self.label = label      # table and chart
        self.group = group      # "mapping", "identity" or "computed"
        self.cmd = cmd
        self.rejects = rejects  # how rejected line numbers appear on stderr: "streammap", "lines" or "jq"
        self.role = role        # "ceiling", "reference", "mapper", "baseline"
        self.times = []
        self.rss_kib = []
        self.exit_codes = []
        self.check = None       # verdict text
        self.details = []       # findings (markdown lines)
        self.ok = None


# $0 = streammap, $1 = the spec, $2 and $3 = the halves; exits with the larger of the two exit statuses.
TWO_PROCESSES = ('"$0" --spec "$1" --engine stream --jobs 1 "$2" & first=$!; '
                 '"$0" --spec "$1" --engine stream --jobs 1 "$3"; second=$?; wait $first; first=$?; '
                 '[ $first -gt $second ] && exit $first; exit $second')


def cpu_has(flag):
    """Whether /proc/cpuinfo lists the CPU flag `flag` (False where there is no such file)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and flag in line.split() for line in f)
    except OSError:
        return False


def build_tools(a):
    spec = os.path.join(HERE, "specs", "tweets.spec.json")
    identity = os.path.join(a.work, "identity.spec.json")
    with open(identity, "w") as f:
        f.write('{"mapper":"identity"}\n')
    keep = os.path.join(a.work, "keep.spec.json")
    with open(keep, "w") as f:
        f.write(KEEP_SPEC)
    c = a.corpus
    pb = a.peers_bin
    peers = os.path.join(HERE, "Peers")
    t = [
        Tool("yajl-noop", "yajl, no-op callbacks (C, parse ceiling)", "mapping", [os.path.join(pb, "yajl_noop"), c], "lines", "ceiling"),
        Tool("streammap-stream", "streammap, stream engine", "mapping", [a.streammap, "--spec", spec, "--engine", "stream", c], "streammap", "reference"),
        Tool("streammap-tree", "streammap, tree engine", "mapping", [a.streammap, "--spec", spec, "--engine", "tree", c], "streammap", "mapper"),
        Tool("streammap-jobs2", "streammap, stream engine, --jobs 2", "mapping", [a.streammap, "--spec", spec, "--engine", "stream", "--jobs", "2", c], "streammap", "mapper"),
        # What the machine's two cores give at the moment: nothing shared but the machine, so `--jobs 2` cannot do
        # better (on a virtual machine often well under 2x). Its output (two processes' lines interleaved) is not
        # checked; each half is mapped by the same binary as the reference.
        Tool("streammap-2proc", "streammap, two processes at once, one per half (what 2 cores give)", "mapping",
             ["/bin/sh", "-c", TWO_PROCESSES, a.streammap, spec] + jobs_speedup.split(c, 2, a.work), "streammap", "cores"),
    ]
    py = sys.executable
    if subprocess.run([py, "-c", "import orjson"], capture_output=True).returncode == 0:
        t.append(Tool("orjson", "Python orjson", "mapping", [py, os.path.join(peers, "map_tweets.py"), "orjson", c], "lines", "mapper"))
    else:
        print("compare.py: orjson is not installed: skipped", file=sys.stderr)
    t.append(Tool("python-json", "Python json", "mapping", [py, os.path.join(peers, "map_tweets.py"), "json", c], "lines", "mapper"))
    t.append(Tool("codable", "Swift Codable (JSONDecoder/JSONEncoder)", "mapping", [os.path.join(pb, "map-tweets-codable"), c], "lines", "mapper"))
    t.append(Tool("jsonserialization", "Swift JSONSerialization", "mapping", [os.path.join(pb, "map-tweets-jsonserialization"), c], "lines", "mapper"))
    simdjson = os.path.join(pb, "map-tweets-simdjson")
    if os.access(simdjson, os.X_OK):
        t.append(Tool("simdjson", "simdjson On-Demand, by hand (C++)", "mapping", [simdjson, c], "lines", "mapper"))
        if cpu_has("avx2"):
            # libsimdjson picks its kernel at run time: its AVX-512 one (icelake) where the core has it. StreamMap's
            # kernels are AVX2; this row has the peer on its AVX2 kernel (haswell) too, like for like.
            t.append(Tool("simdjson-avx2", "simdjson On-Demand, by hand (C++), its AVX2 kernel", "mapping",
                          ["env", "SIMDJSON_FORCE_IMPLEMENTATION=haswell", simdjson, c], "lines", "mapper"))
    else:
        print("compare.py: no simdjson peer (libsimdjson-dev): skipped", file=sys.stderr)
    if shutil.which("jq"):
        t.append(Tool("jq", "jq " + sh(["jq", "--version"]).replace("jq-", ""), "mapping", ["jq", "-nRc", "-f", os.path.join(peers, "tweets.jq"), c], "jq", "mapper"))
    else:
        print("compare.py: jq is not installed: skipped", file=sys.stderr)
    # Computed fields (issue #32): specs/tweets-computed.spec.json, and the peers extended the same way.
    computed = os.path.join(HERE, "specs", "tweets-computed.spec.json")
    t += [
        Tool("computed-stream", "streammap computed fields, stream engine", "computed", [a.streammap, "--spec", computed, "--engine", "stream", c], "streammap", "reference"),
        Tool("computed-tree", "streammap computed fields, tree engine", "computed", [a.streammap, "--spec", computed, "--engine", "tree", c], "streammap", "mapper"),
    ]
    if os.access(simdjson, os.X_OK):
        t.append(Tool("computed-simdjson", "simdjson On-Demand computed fields, by hand (C++)", "computed", [simdjson, "--computed", c], "lines", "mapper"))
    if shutil.which("jq"):
        t.append(Tool("computed-jq", "jq computed fields", "computed", ["jq", "-nRc", "-f", os.path.join(peers, "tweets-computed.jq"), c], "jq", "mapper"))
    t += [
        Tool("yajl-gen", "yajl + yajl_gen re-emit (C, identity baseline)", "identity", [os.path.join(pb, "yajl_gen_identity"), c], "lines", "baseline"),
        Tool("identity-stream", "streammap identity, stream engine", "identity", [a.streammap, "--spec", identity, "--engine", "stream", c], "streammap", "mapper"),
        Tool("identity-tree", "streammap identity, tree engine", "identity", [a.streammap, "--spec", identity, "--engine", "tree", c], "streammap", "mapper"),
        Tool("keep-stream", "streammap unmapped: keep + two renames, stream engine", "identity", [a.streammap, "--spec", keep, "--engine", "stream", c], "streammap", "mapper"),
        Tool("keep-tree", "streammap unmapped: keep + two renames, tree engine", "identity", [a.streammap, "--spec", keep, "--engine", "tree", c], "streammap", "mapper"),
    ]
    return t


# The tools whose times are compared (a target's ratio) run back to back in every round, so that both runs of a
# pair see the same spell of a shared machine: seconds of other tools between them (a Python peer takes ~1 s)
# let the machine drift from one to the other. Each group is one block of the round; the blocks' order rotates
# from round to round, and a block runs backwards every other round (first-run effects go to each side alike).
PAIRED = [["yajl-noop", "streammap-stream", "streammap-jobs2", "streammap-2proc", "simdjson", "simdjson-avx2", "computed-stream", "computed-simdjson", "keep-stream"],
          ["yajl-gen", "identity-stream", "identity-tree", "keep-tree"], ["codable", "streammap-tree"]]


def run_groups(tools):
    by = {t.key: t for t in tools}
    groups, grouped = [], set()
    for keys in PAIRED:
        g = [by[k] for k in keys if k in by]
        if g:
            groups.append(g)
            grouped.update(t.key for t in g)
    return groups + [[t] for t in tools if t.key not in grouped]


def run_once(tool, work, timed_output, corpus):
    """One run of `tool`. The checked run (timed_output None) writes stdout and stderr to WORK/KEY.out and .err for
    the checks and is not timed; a timed run writes stdout to /dev/null (as hyperfine does by default: the time is
    the tool's, not the file system's) or, with timed_output "file", to WORK/KEY.timed.out, and stderr (the
    rejects report) to WORK/KEY.timed.err."""
    checked = timed_output is None
    out = os.path.join(work, tool.key + (".out" if checked else ".timed.out"))
    err = os.path.join(work, tool.key + (".err" if checked else ".timed.err"))
    rss = os.path.join(work, tool.key + ".rss")
    if not checked:
        machine.settle([corpus])
    with open(os.devnull if timed_output == "null" else out, "wb") as o, open(err, "wb") as e:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + tool.cmd, stdout=o, stderr=e)
        elapsed = time.perf_counter() - start
    tool.exit_codes.append(p.returncode)
    if checked:
        return
    with open(rss) as f:
        lines = [l for l in f.read().split("\n") if l.strip()]
    tool.times.append(elapsed)
    try:
        tool.rss_kib.append(int(lines[-1]))
    except (IndexError, ValueError):
        pass


# ---------------------------------------------------------------------------------------------------------------
# Checking outputs


def rejected_lines(tool, work, corpus):
    with open(os.path.join(work, tool.key + ".err"), "rb") as f:
        text = f.read().decode("utf-8", "replace")
    reasons = {}
    if tool.rejects == "streammap":
        pat = re.compile(r"^streammap: " + re.escape(corpus) + r":(\d+): (.*)$")
        for line in text.split("\n"):
            m = pat.match(line)
            if m:
                reasons.setdefault(int(m.group(1)), m.group(2))
    elif tool.rejects == "jq":
        for m in re.finditer(r"L(\d+);", text):
            reasons.setdefault(int(m.group(1)), "")
    else:
        for line in text.split("\n"):
            if line.strip().isdigit():
                reasons.setdefault(int(line.strip()), "")
    return reasons


def nonempty_line_numbers(corpus):
    nums = []
    with open(corpus, "rb") as f:
        for n, line in enumerate(f, 1):
            if line.strip(b"\r\n"):
                nums.append(n)
    return nums


def read_lines(path):
    with open(path, "rb") as f:
        return [l.rstrip(b"\n") for l in f]


def parse_exact(b):
    return json.loads(b, parse_float=decimal.Decimal)


def diff_paths(a, b, path="", out=None):
    """Leaf differences between two parsed values: (pointer, reference value, peer value)."""
    if out is None:
        out = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            if k not in a or k not in b:
                out.append((path + "/" + k, a.get(k, "<absent>"), b.get(k, "<absent>")))
            else:
                diff_paths(a[k], b[k], path + "/" + k, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff_paths(x, y, "%s/%d" % (path, i), out)
    elif type(a) is not type(b) or a != b:
        if not (isinstance(a, (int, decimal.Decimal)) and isinstance(b, (int, decimal.Decimal)) and not isinstance(a, bool)
                and not isinstance(b, bool) and a == b):
            out.append((path or "/", a, b))
    return out


def key_order(v):
    if isinstance(v, dict):
        return [(k, key_order(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [key_order(x) for x in v]
    return None


def is_precision_loss(ref, got):
    if isinstance(ref, int) and not isinstance(ref, bool) and isinstance(got, (int, decimal.Decimal)) and not isinstance(got, bool):
        return ref != got and float(ref) == float(got)
    return False


def load_manifest(corpus):
    try:
        with open(corpus + ".manifest.json") as f:
            m = json.load(f)
        return {int(k): v for k, v in m["invalid"].items()}, set(m["events"])
    except (OSError, ValueError, KeyError):
        return None, None


def line_kind(n, ref_rej, invalid, events):
    """What a line is, for grouping findings: the corpus manifest's kind, else the reference's reject reason."""
    if invalid is not None:
        if n in invalid:
            return "invalid JSON: " + invalid[n]
        if n in events:
            return "a GitHub event (not a tweet)"
        return "a valid tweet"
    reason = re.sub(r'"[^"]*"', '"…"', ref_rej.get(n, ""))
    return re.sub(r"\d+", "N", reason)[:100] or "(rejected)"


def check_against(tool, ref, work, corpus, all_lines, ref_name="streammap"):
    """Compares tool's output with the reference tool's, record by record (aligned by line number)."""
    ref_rej = rejected_lines(ref, work, corpus)
    rej = rejected_lines(tool, work, corpus)
    ref_out = read_lines(os.path.join(work, ref.key + ".out"))
    out = read_lines(os.path.join(work, tool.key + ".out"))
    ref_mapped = [n for n in all_lines if n not in ref_rej]
    mapped = [n for n in all_lines if n not in rej]
    findings = []
    if len(ref_mapped) != len(ref_out):
        findings.append("the reference wrote %d records but reported %d rejects of %d lines: cannot align" % (len(ref_out), len(ref_rej), len(all_lines)))
        return False, "cannot check", findings
    if len(mapped) != len(out):
        findings.append("wrote %d records but reported %d rejects of %d lines: cannot align its output" % (len(out), len(rej), len(all_lines)))
        return False, "**no**: output and rejects do not add up", findings
    ref_by_line = dict(zip(ref_mapped, ref_out))
    by_line = dict(zip(mapped, out))
    accepted = sorted(set(by_line) - set(ref_by_line))
    refused = sorted(set(ref_by_line) - set(by_line))
    both = sorted(set(by_line) & set(ref_by_line))
    identical = 0
    order_differs = 0
    precision = {}
    wrong = {}
    examples = {}
    for n in both:
        a, b = ref_by_line[n], by_line[n]
        if a == b:
            identical += 1
            continue
        try:
            va, vb = parse_exact(a), parse_exact(b)
        except ValueError:
            wrong.setdefault("/ (output is not JSON)", []).append(n)
            continue
        diffs = diff_paths(va, vb)
        if not diffs:
            if key_order(va) != key_order(vb):
                order_differs += 1
            continue
        for p, x, y in diffs:
            bucket = precision if is_precision_loss(x, y) else wrong
            bucket.setdefault(p, []).append(n)
            examples.setdefault(p, (n, x, y))
    ok = not accepted and not refused and not precision and not wrong
    if accepted:
        invalid, events = load_manifest(corpus)
        kinds = {}
        for n in accepted:
            kinds.setdefault(line_kind(n, ref_rej, invalid, events), []).append(n)
        for k, ns in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            findings.append("maps %d line(s) that %s rejects — %s (line %s)" % (len(ns), ref_name, k, ", ".join(map(str, ns[:4]))))
    if refused:
        invalid, events = load_manifest(corpus)
        kinds = {}
        for n in refused:
            kinds.setdefault(line_kind(n, ref_rej, invalid, events), []).append(n)
        for k, ns in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            findings.append("rejects %d line(s) that %s maps — %s (line %s)" % (len(ns), ref_name, k, ", ".join(map(str, ns[:4]))))
    for p, ns in sorted(precision.items(), key=lambda kv: -len(kv[1])):
        n, x, y = examples[p]
        findings.append("precision loss at `%s` in %d record(s) (ids above 2^53 rounded), e.g. line %d: %s → %s" % (p, len(ns), n, x, y))
    for p, ns in sorted(wrong.items(), key=lambda kv: -len(kv[1])):
        ex = examples.get(p)
        findings.append("different value at `%s` in %d record(s)%s" % (
            p, len(ns), (", e.g. line %d: %s %s, this tool %s" % (ex[0], ref_name, json.dumps(str(ex[1]))[:80], json.dumps(str(ex[2]))[:80])) if ex else ""))
    info = []
    if order_differs:
        info.append("key order differs in %d record(s) (values equal)" % order_differs)
    if identical == len(both) and not accepted and not refused:
        info.append("byte-identical output")
    elif identical:
        info.append("%d of %d mapped records byte-identical" % (identical, len(both)))
    if ok:
        verdict = "yes" + (" (" + "; ".join(info) + ")" if info else "")
    else:
        parts = []
        if accepted:
            parts.append("maps %d line(s) %s rejects" % (len(accepted), ref_name))
        if refused:
            parts.append("rejects %d line(s) %s maps" % (len(refused), ref_name))
        lost = {n for ns in precision.values() for n in ns}
        if lost:
            parts.append("%d record(s) lose precision (ids > 2^53)" % len(lost))
        other = {n for ns in wrong.values() for n in ns}
        if other:
            parts.append("%d record(s) with different values" % len(other))
        verdict = "**no**: " + "; ".join(parts) + " (of %d lines)" % len(all_lines)
    findings += info
    return ok, verdict, findings


def check_all(tools, work, corpus):
    all_lines = nonempty_line_numbers(corpus)
    by = {t.key: t for t in tools}
    ref = by["streammap-stream"]
    for t in tools:
        if any(c not in (0, 1) for c in t.exit_codes):
            t.ok, t.check = False, "**failed** (exit %s)" % sorted(set(t.exit_codes))
            with open(os.path.join(work, t.key + ".err"), "rb") as f:
                t.details.append("stderr: " + f.read()[-300:].decode("utf-8", "replace"))
    if ref.ok is False:
        return
    ref.ok, ref.check = True, "reference"
    ref_rej = rejected_lines(ref, work, corpus)
    ref.details.append("%d records mapped, %d rejected (%d lines)" % (len(all_lines) - len(ref_rej), len(ref_rej), len(all_lines)))
    invalid, events = load_manifest(corpus)
    if invalid is not None:
        expected = set(invalid) | events
        got = set(ref_rej)
        if got == expected:
            ref.details.append("rejects exactly the corpus's %d invalid lines and %d GitHub events" % (len(invalid), len(events)))
        else:
            ref.ok = False
            ref.check = "**unexpected rejects** (see below)"
            for n in sorted(got - expected)[:5]:
                ref.details.append("rejects line %d, a valid tweet: %s" % (n, ref_rej[n]))
            for n in sorted(expected - got)[:5]:
                ref.details.append("maps line %d, which is %s" % (n, line_kind(n, ref_rej, invalid, events)))
    id_ref = by.get("identity-stream")
    syntax = set(rejected_lines(id_ref, work, corpus)) if id_ref and id_ref.ok is not False else None
    for t in tools:
        if t.ok is False or t is ref:
            continue
        if t.role == "cores":
            t.check = "n/a (the two halves' outputs interleave; each is the reference binary's)"
            continue
        if t.role == "ceiling":
            mine = set(rejected_lines(t, work, corpus))
            if syntax is not None:
                t.ok = mine == syntax
                t.check = "n/a (parse only); rejects the same %d invalid lines" % len(mine) if t.ok else \
                    "**no**: rejects %d lines, streammap identity %d (differ: %s)" % (len(mine), len(syntax), sorted(mine ^ syntax)[:5])
            else:
                t.check = "n/a (parse only)"
            continue
        if t.group == "computed":
            cref = by["computed-stream"]
            if t is cref:
                cref.ok, cref.check = True, "reference of the computed fields"
                cref.details.append("%d records mapped, %d rejected" % (len(all_lines) - len(rejected_lines(cref, work, corpus)), len(rejected_lines(cref, work, corpus))))
                continue
            ok, verdict, findings = check_against(t, cref, work, corpus, all_lines, ref_name="streammap's computed fields")
            t.ok, t.check, t.details = ok, verdict + " vs streammap's computed fields", findings
            continue
        if t.group == "identity":
            if t.key == "identity-stream":
                base = by.get("yajl-gen")
                if base is None or base.ok is False:
                    t.ok, t.check = True, "not checked"
                    continue
                ok, verdict, findings = check_against(t, base, work, corpus, all_lines, ref_name="yajl_gen")
                t.ok, t.check, t.details = ok, verdict + " vs yajl_gen", findings
                base.ok, base.check = ok, "baseline"
            elif t.key == "identity-tree":
                ok, verdict, findings = check_against(t, id_ref, work, corpus, all_lines, ref_name="the stream engine")
                t.ok, t.check, t.details = ok, verdict + " vs the stream engine", findings
            elif t.key == "keep-stream":
                kept = rejected_lines(t, work, corpus)
                t.ok, t.check = True, "reference of keep + renames"
                t.details.append("%d records mapped, %d rejected (no id_str: the events and invalid lines)" % (len(all_lines) - len(kept), len(kept)))
            elif t.key == "keep-tree" and "keep-stream" in by:
                ok, verdict, findings = check_against(t, by["keep-stream"], work, corpus, all_lines, ref_name="the stream engine")
                t.ok, t.check, t.details = ok, verdict + " vs the stream engine (keep + renames)", findings
            continue
        ok, verdict, findings = check_against(t, ref, work, corpus, all_lines)
        t.ok, t.check, t.details = ok, verdict, findings
    # The engines must also agree on what they report for rejected records.
    tree = by.get("streammap-tree")
    if tree and tree.ok:
        with open(os.path.join(work, ref.key + ".err"), "rb") as f1, open(os.path.join(work, tree.key + ".err"), "rb") as f2:
            e1 = [l for l in f1.read().split(b"\n") if l.startswith(b"streammap: ")]
            e2 = [l for l in f2.read().split(b"\n") if l.startswith(b"streammap: ")]
        if e1 != e2:
            tree.ok = False
            tree.check = "**no**: reject messages differ from the stream engine's"
            diff = next((i for i, (x, y) in enumerate(zip(e1, e2)) if x != y), min(len(e1), len(e2)))
            tree.details.append("stderr differs from the stream engine's at message %d: %r vs %r" % (
                diff, e1[diff][:160] if diff < len(e1) else None, e2[diff][:160] if diff < len(e2) else None))
        else:
            tree.details.append("reject messages identical to the stream engine's (%d lines)" % len(e1))


# ---------------------------------------------------------------------------------------------------------------
# Report


def fmt(x, digits=2):
    return ("%." + str(digits) + "f") % x


def write_report(a, tools, size, out_dir):
    by = {t.key: t for t in tools}
    mb = size / 1e6
    for t in tools:
        t.median = statistics.median(t.times) if t.times else float("nan")
        t.mbps = mb / t.median if t.times else 0.0
        t.rss_mib = max(t.rss_kib) / 1024 if t.rss_kib else float("nan")
    def paired(t, base):
        """How many times faster `t` ran than `base`: the median over rounds of the two tools' time ratio in the
        same round. A shared machine drifts between fast and slow spells; pairing runs of one round cancels
        most of it, where a ratio of two medians can pair a fast spell of one tool with a slow one of the other."""
        if not base or not t.times or len(t.times) != len(base.times):
            return None
        return statistics.median(b / x for b, x in zip(base.times, t.times))

    def ratio(key, base):
        return paired(by[key], base) if key in by else None

    noop = by["yajl-noop"]
    gen = by.get("yajl-gen")

    ratios = {
        "stream_vs_ceiling": ratio("streammap-stream", by["yajl-noop"]),
        "tree_vs_ceiling": ratio("streammap-tree", by["yajl-noop"]),
        "identity_vs_yajl_gen": ratio("identity-stream", by.get("yajl-gen")),
        "tree_vs_codable": ratio("streammap-tree", by.get("codable")),
        "stream_vs_codable": ratio("streammap-stream", by.get("codable")),
        "jobs2_vs_jobs1": ratio("streammap-jobs2", by["streammap-stream"]),
        "two_processes_vs_jobs1": ratio("streammap-2proc", by["streammap-stream"]),
        "jobs2_vs_two_processes": ratio("streammap-jobs2", by.get("streammap-2proc")),
        "identity_vs_ceiling": ratio("identity-stream", by["yajl-noop"]),
        "keep_vs_ceiling": ratio("keep-stream", by["yajl-noop"]),
        "stream_vs_simdjson": ratio("streammap-stream", by.get("simdjson")),
        "stream_vs_simdjson_avx2": ratio("streammap-stream", by.get("simdjson-avx2")),
        "computed_vs_ceiling": ratio("computed-stream", by["yajl-noop"]),
        "computed_tree_vs_ceiling": ratio("computed-tree", by["yajl-noop"]),
        "computed_vs_simdjson": ratio("computed-stream", by.get("computed-simdjson")),
        "computed_vs_jq": ratio("computed-stream", by.get("computed-jq")),
        "computed_vs_mapping": ratio("computed-stream", by["streammap-stream"]),
    }
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L = []
    L.append("# StreamMap side by side")
    L.append("")
    L.append("Produced by `%s` on %s. **Absolute figures vary by machine and load; the ratios, measured in one "
             "run with the tools interleaved, are what compares.** MB = 10^6 bytes of input; MB/s = corpus size / "
             "median wall time of %d rounds; a ratio (×) = the median over rounds of the two tools' time ratio in the "
             "same round; peak RSS = the largest of the rounds (`/usr/bin/time -f %%M`). Before each timed run the "
             "corpus is read through (page cache) and every CPU is kept busy for 0.2 s, so that no tool starts on an "
             "idle vCPU ([`machine.py`](../machine.py)). %s" % (
                 a.command, now, a.rounds,
                 "Timed runs write their output to /dev/null (as hyperfine does by default); a first, untimed run of "
                 "each tool writes it to a file for the checks." if a.timed_output == "null" else
                 "Timed runs write their output to a file (`TIMED_OUTPUT=file`)."))
    L.append("")
    L.append("- Machine: %s, %d cores, %s; %s" % (cpu_model(), os.cpu_count() or 0, platform.platform(), sh(["swift", "--version"]).split("\n")[0]))
    L.append("- Corpus: %s" % (a.corpus_summary or "%d bytes" % size))
    L.append("- Mapping: [`specs/tweets.spec.json`](../specs/tweets.spec.json) (12 fields: renames, nested paths, Twitter date → epoch ms, "
             "type checks, defaults, a field omitted when null); every peer implements the same rules ([`Peers/`](../Peers)). "
             "GitHub-event records and invalid lines are rejected by every mapper and reported on stderr.")
    L.append("")
    L.append("## Tweet mapping")
    L.append("")
    def ceiling_table(group):
        """The table of a group whose tools are compared with the yajl no-op parse, fastest first."""
        L.append("| tool | MB/s | × yajl no-op ceiling | median s | peak RSS MiB | output correct? |")
        L.append("|---|---:|---:|---:|---:|---|")
        for t in sorted([t for t in tools if t.group == group], key=lambda t: -t.mbps):
            L.append("| %s | %s | %s | %s | %s | %s |" % (t.label, fmt(t.mbps, 1), fmt(paired(t, noop)), fmt(t.median, 3), fmt(t.rss_mib, 1), t.check or "not checked"))

    ceiling_table("mapping")
    L.append("")
    L.append("## Identity and wide mappings (`{\"mapper\":\"identity\"}`: every value re-emitted; `%s`: every member kept, two renamed)" % KEEP_SPEC.strip())
    L.append("")
    L.append("| tool | MB/s | × yajl_gen re-emit | × yajl no-op ceiling | median s | peak RSS MiB | output correct? |")
    L.append("|---|---:|---:|---:|---:|---:|---|")
    for t in sorted([t for t in tools if t.group == "identity"], key=lambda t: -t.mbps):
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (t.label, fmt(t.mbps, 1), fmt(paired(t, gen)) if gen else "–", fmt(paired(t, noop)),
                                                          fmt(t.median, 3), fmt(t.rss_mib, 1), t.check or "not checked"))
    L.append("")
    L.append("## Computed fields (issue #32: [`specs/tweets-computed.spec.json`](../specs/tweets-computed.spec.json))")
    L.append("")
    L.append("Two arithmetic fields (`retweet_count + coalesce(favorite_count, 0)`, `user.followers_count * (retweet_count + 1)`), "
             "a concatenation and a `lower`, beside the id; jq and simdjson implement the same rules "
             "([`Peers/tweets-computed.jq`](../Peers/tweets-computed.jq), `map-tweets-simdjson --computed`).")
    L.append("")
    ceiling_table("computed")

    def targets_table(title):
        L.extend(["", "## " + title, "", "| ratio | measured | target | met? |", "|---|---:|---:|---|"])

    def row(name, value, target, higher=True):
        if value is None:
            L.append("| %s | – | %s | not measured |" % (name, target))
            return
        met = value >= target if higher else value <= target
        L.append("| %s | %s | %s %s | %s |" % (name, fmt(value), "≥" if higher else "≤", target, "yes" if met else "**no**"))

    def reported(name, value):
        L.append("| %s | %s | reported | – |" % (name, "–" if value is None else fmt(value)))

    targets_table("Ratios against the targets (issue #5)")
    row("stream engine / yajl no-op ceiling", ratios["stream_vs_ceiling"], TARGETS["stream_vs_ceiling"])
    row("streammap identity (stream) / yajl_gen re-emit", ratios["identity_vs_yajl_gen"], TARGETS["identity_vs_yajl_gen"])
    row("tree engine / Swift Codable", ratios["tree_vs_codable"], TARGETS["tree_vs_codable"])
    row("streammap --jobs 2 / --jobs 1 (stream engine)", ratios["jobs2_vs_jobs1"], TARGETS["jobs2_vs_jobs1"])
    for key in ("streammap-stream", "streammap-tree", "identity-stream"):
        if key in by:
            row("peak RSS MiB, " + by[key].label + " (%.0f MB input)" % mb, by[key].rss_mib, TARGETS["rss_mib"], higher=False)
    targets_table("Ratios against the targets of issue #20 (skipping unread values ahead of yajl)")
    row("stream engine / yajl no-op ceiling", ratios["stream_vs_ceiling"], TARGETS_20["stream_vs_ceiling"])
    row("streammap identity (stream) / yajl no-op ceiling", ratios["identity_vs_ceiling"], TARGETS_20["identity_vs_ceiling"])
    row("streammap --jobs 2 / --jobs 1 (stream engine)", ratios["jobs2_vs_jobs1"], TARGETS_20["jobs2_vs_jobs1"])
    reported("two streammap processes at once, one on each half / --jobs 1 (what this machine's 2 cores give)",
             ratios["two_processes_vs_jobs1"])
    reported("streammap --jobs 2 / two processes on the halves", ratios["jobs2_vs_two_processes"])
    reported("stream engine / simdjson On-Demand by hand", ratios["stream_vs_simdjson"])
    targets_table("Ratios against the targets of issue #31 (per core)")
    row("stream engine / yajl no-op ceiling", ratios["stream_vs_ceiling"], TARGETS_31["stream_vs_ceiling"])
    row("stream engine / simdjson On-Demand by hand", ratios["stream_vs_simdjson"], TARGETS_31["stream_vs_simdjson"])
    reported("stream engine / simdjson On-Demand by hand on its AVX2 kernel (StreamMap's kernels are AVX2)",
             ratios["stream_vs_simdjson_avx2"])
    row("streammap identity (stream) / yajl no-op ceiling", ratios["identity_vs_ceiling"], TARGETS_31["identity_vs_ceiling"])
    row("unmapped: keep + two renames (stream) / yajl no-op ceiling", ratios["keep_vs_ceiling"], TARGETS_31["keep_vs_ceiling"])
    targets_table("Ratios against the targets of issue #32 (computed fields)")
    row("computed fields, stream engine / yajl no-op ceiling", ratios["computed_vs_ceiling"], TARGETS_32["computed_vs_ceiling"])
    reported("computed fields, tree engine / yajl no-op ceiling", ratios["computed_tree_vs_ceiling"])
    reported("computed fields, stream engine / simdjson On-Demand computed by hand", ratios["computed_vs_simdjson"])
    reported("computed fields, stream engine / jq", ratios["computed_vs_jq"])
    reported("computed fields / the tweet mapping (stream engine; its speed relative to the 12-field mapping)", ratios["computed_vs_mapping"])
    L.append("")
    L.append("## Output checks")
    L.append("")
    L.append("Each mapper's output is compared with streammap's stream engine record by record (aligned by line number, "
             "both sides parsed with Python's json, integers exact); the identity engine is compared with yajl_gen's output.")
    L.append("")
    for t in tools:
        if t.details:
            L.append("- **%s**: %s" % (t.label, "; ".join(t.details)))
    L.append("")
    L.append("## Runs")
    L.append("")
    L.append("| tool | wall s per round | exit codes |")
    L.append("|---|---|---|")
    for t in tools:
        L.append("| %s | %s | %s |" % (t.label, " ".join(fmt(x, 3) for x in t.times), " ".join(map(str, sorted(set(t.exit_codes))))))
    L.append("")
    L.append("Commands (CORPUS = the generated corpus, in a temporary directory):")
    L.append("")
    for t in tools:
        cmd = " ".join(shlex.quote(os.path.relpath(x, os.path.dirname(HERE)) if x.startswith(os.path.dirname(HERE)) else x) for x in t.cmd)
        cmd = cmd.replace(a.corpus, "CORPUS").replace(a.work + "/", "").replace(a.peers_bin + "/", "")
        L.append("- %s: `%s`" % (t.label, cmd))
    L.append("")
    L.append("![MB/s](comparison.svg)")
    L.append("")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "comparison.md"), "w") as f:
        f.write("\n".join(L))
    data = {
        "command": a.command, "date": now, "corpus_bytes": size, "corpus": a.corpus_summary, "rounds": a.rounds,
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count()},
        "ratios": ratios,
        "tools": [{"key": t.key, "label": t.label, "group": t.group, "role": t.role, "mb_per_s": t.mbps, "median_s": t.median,
                   "vs_base": paired(t, gen if t.group == "identity" else noop),
                   "times_s": t.times, "peak_rss_mib": t.rss_mib, "correct": t.ok, "check": t.check, "details": t.details} for t in tools],
    }
    with open(os.path.join(out_dir, "comparison.json"), "w") as f:
        json.dump(data, f, indent=1)
    chart.write_svg(data, os.path.join(out_dir, "comparison.svg"))
    return ratios


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--peers-bin", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--corpus-summary", default="")
    ap.add_argument("--command", default="Benchmarks/compare.sh")
    ap.add_argument("--timed-output", choices=["null", "file"], default="null",
                    help="where timed runs write stdout: /dev/null (default) or a file")
    a = ap.parse_args()
    a.corpus = os.path.abspath(a.corpus)
    a.work = os.path.abspath(a.work)
    a.peers_bin = os.path.abspath(a.peers_bin)
    size = os.path.getsize(a.corpus)
    tools = build_tools(a)
    groups = run_groups(tools)
    t0 = time.perf_counter()
    for t in tools:
        run_once(t, a.work, None, a.corpus)
    print("compare.py: checked run (outputs kept for the checks) done in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)
    for r in range(a.rounds):
        k = r % len(groups)
        order = [t for g in groups[k:] + groups[:k] for t in (g if r % 2 == 0 else list(reversed(g)))]
        t0 = time.perf_counter()
        for t in order:
            run_once(t, a.work, a.timed_output, a.corpus)
        print("compare.py: round %d/%d done in %.1f s" % (r + 1, a.rounds, time.perf_counter() - t0), file=sys.stderr)
    check_all(tools, a.work, a.corpus)
    ratios = write_report(a, tools, size, a.out)
    # A short summary on the terminal.
    for t in sorted(tools, key=lambda t: (t.group, -t.mbps)):
        print("%-50s %8.1f MB/s  %6.1f MiB  %s" % (t.label, t.mbps, t.rss_mib, (t.check or "").replace("**", "")))
    for k, v in ratios.items():
        print("%-22s %s" % (k, "–" if v is None else "%.2f" % v))


if __name__ == "__main__":
    main()
