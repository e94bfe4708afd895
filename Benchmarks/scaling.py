#!/usr/bin/env python3
"""How `--jobs` scales on every kind of input, against N independent processes and DuckDB, in one run.

    python3 Benchmarks/scaling.py --streammap BIN [--size-mb 400] [--files 0] [--jobs 1,2,4,...]
                                  [--rounds 3] [--baseline BIN] [--no-duckdb] [--duckdb-jobs 16] [--kinds ...]
                                  [--out FILE.md] [--seed-dir DIR]

Generates the benchmark corpus (corpus.py, --size-mb MB) in memory-backed temporary space (/dev/shm when it has
room for four copies, else the default temporary directory), splits it at line ends into --files parts (default:
one per core, at least 2), and makes every input kind from the same bytes:

    one file        the corpus as one NDJSON file
    many files      the parts
    many .gz        each part gzip -1 (Python's gzip module)
    many .zst       each part zstd -3 (the zstd tool, else the zstandard Python module; the rows are skipped
                    without either)
    one .gz         the corpus, gzip -1
    one .zst        the corpus as zstd frames of 8 MiB of text each, as pzstd writes them (pzstd where it is
                    installed, else 8 MiB pieces compressed one by one): one file of many frames
    one BGZF        the corpus as BGZF, as bgzip writes it (gzip members of 65 280 bytes of text that state their
                    own length; written here with Python's zlib at level 1)
    pipe            `cat FILE | streammap` (and `cat FILE | wc -l`, the pipe's own speed, beside it)

For each kind and each job count N (default 1, 2, 4, … up to the cores, and the cores), interleaved over --rounds
rounds (medians quoted), it times:

    streammap --jobs N -q -s Benchmarks/specs/tweets.spec.json INPUTS > /dev/null
    N independent one-job streammap processes over the same bytes split N ways (the file kinds made of parts:
      one file and many files use the parts, .gz and .zst their parts); what N cores give independent work
    DuckDB (the duckdb Python module, threads=N) doing the same projection — read_ndjson with the spec's columns,
      the date conversion, defaults and nesting, COPY … TO a JSON file — where the module is installed
    --baseline BIN --jobs N, when given (an earlier build, for before/after)

and checks, in the first round, that every `--jobs N` run wrote the same bytes as `--jobs 1` (md5 of the output).
It also measures the **serial stage's share**: the CPU time of streammap's main thread (the one that reads, frames
or replays for everyone) over the whole process's, from /proc/PID/task/*/stat, per input kind at each N.

Prints a Markdown table (also to --out): median seconds, MB/s of uncompressed text, speed-up over one job,
`--jobs N` / N processes, streammap / DuckDB, and the main thread's share. Runs unchanged on a bigger machine: it
needs Python 3 (3.8+), the binary, and optionally the duckdb module and the zstd tool (or the zstandard module) —
no network, no compiler.
"""
import argparse
import gzip
import hashlib
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import struct
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402
from jobs_speedup import split  # noqa: E402  (cuts a corpus at line ends into N parts)

SPEC = os.path.join(HERE, "specs", "tweets.spec.json")


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def job_counts(n):
    counts, k = [], 1
    while k < n:
        counts.append(k)
        k *= 2
    counts.append(n)
    return counts


def workspace(size_mb):
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize > 4 * size_mb * 1_000_000:
            return tempfile.mkdtemp(prefix="streammap-scaling-", dir=shm)
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="streammap-scaling-")


def timed(cmd):
    """Runs a shell command, its output to /dev/null; returns its wall seconds."""
    machine.wake_cpus(0.1)
    start = time.perf_counter()
    subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, executable="/bin/bash")
    return time.perf_counter() - start


def thread_share(argv, stdin_path=None):
    """Runs streammap (argv, no shell) and samples its threads' CPU times; returns (seconds, main share, threads)."""
    machine.wake_cpus(0.1)
    tick = os.sysconf("SC_CLK_TCK")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = {}
    while p.poll() is None:
        try:
            for tid in os.listdir(f"/proc/{p.pid}/task"):
                with open(f"/proc/{p.pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                last[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
        time.sleep(0.005)
    seconds = time.perf_counter() - start
    if stdin_path:
        stdin.close()
    total = sum(last.values())
    return seconds, (last.get(p.pid, 0.0) / total if total else None), len(last)


def bgzf_block(data):
    """One BGZF member (bgzip's format: a gzip member whose extra field's BC subfield holds its length - 1)."""
    c = zlib.compressobj(1, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    header = (b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff" + struct.pack("<H", 6) + b"BC"
              + struct.pack("<HH", 2, 12 + 6 + len(body) + 8 - 1))
    return header + body + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data))


def _bgzf_piece(args):
    path, start, end = args
    out = []
    with open(path, "rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            data = f.read(min(65280, left))
            left -= len(data)
            out.append(bgzf_block(data))
    return b"".join(out)


def write_bgzf(src, dst, workers):
    """src as BGZF, compressed by `workers` processes (pieces of a multiple of 65 280 bytes, so the blocks are
    those one process would write), with bgzip's empty end-of-file member."""
    size = os.path.getsize(src)
    step = 65280 * 128
    pieces = [(src, a, min(size, a + step)) for a in range(0, size, step)]
    with multiprocessing.Pool(workers) as pool, open(dst, "wb") as out:
        for blob in pool.imap(_bgzf_piece, pieces):
            out.write(blob)
        out.write(bgzf_block(b""))


def write_gzip(src, dst):
    """src as one gzip member, level 1 (Python's gzip module)."""
    with open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=1) as g:
        shutil.copyfileobj(f, g, 1 << 20)


def zstd_tool():
    """How zstd files are made here: "cli" (the zstd tool), "module" (the zstandard Python module), or None."""
    if shutil.which("zstd"):
        return "cli"
    try:
        import zstandard  # noqa: F401
        return "module"
    except ImportError:
        return None


def zstd_piece(data):
    """One zstd frame (level 3) holding data, with its content size."""
    if zstd_tool() == "cli":
        return subprocess.run(["zstd", "-q", "-3", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout
    import zstandard
    return zstandard.ZstdCompressor(level=3).compress(data)


def write_zstd(src, dst):
    """src as one zstd frame (level 3), as `zstd FILE` writes it."""
    if zstd_tool() == "cli":
        subprocess.run(["zstd", "-q", "-3", "-f", src, "-o", dst], check=True)
        return
    import zstandard
    with open(src, "rb") as f, open(dst, "wb") as out:
        zstandard.ZstdCompressor(level=3).copy_stream(f, out, size=os.path.getsize(src))


def _zstd_piece_of(args):
    path, start, end = args
    with open(path, "rb") as f:
        f.seek(start)
        return zstd_piece(f.read(end - start))


def write_zstd_frames(src, dst, workers):
    """src as zstd frames of 8 MiB of text (pzstd's own file format where pzstd is installed)."""
    if shutil.which("pzstd"):
        subprocess.run(["pzstd", "-q", "-f", "-3", "-p", str(workers), src, "-o", dst], check=True)
        return
    size = os.path.getsize(src)
    pieces = [(src, a, min(size, a + (8 << 20))) for a in range(0, size, 8 << 20)]
    with multiprocessing.Pool(workers) as pool, open(dst, "wb") as out:
        for blob in pool.imap(_zstd_piece_of, pieces):
            out.write(blob)


def digest(cmd):
    h = hashlib.md5()
    p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, executable="/bin/bash")
    while True:
        b = p.stdout.read(1 << 20)
        if not b:
            break
        h.update(b)
    p.wait()
    return h.hexdigest()


def q(path):
    return "'" + path.replace("'", "'\\''") + "'"


DUCK_COLUMNS = ("{id:'BIGINT', id_str:'VARCHAR', created_at:'VARCHAR', text:'VARCHAR', "
                "user:'STRUCT(id BIGINT, screen_name VARCHAR, followers_count BIGINT, verified BOOLEAN)', "
                "retweet_count:'BIGINT', favorite_count:'BIGINT', lang:'VARCHAR', in_reply_to_status_id:'BIGINT'}")


def duckdb_command(files, threads, out):
    """A Python one-liner running the projection in DuckDB (a process of its own, so it is timed like the rest)."""
    listing = "[" + ",".join("'" + f + "'" for f in files) + "]"
    sql = (f"COPY (SELECT id, id_str AS idStr, epoch_ms(strptime(created_at, '%a %b %d %H:%M:%S %z %Y')) AS createdAtMs, "
           f"text, {{'id': \"user\".id, 'handle': \"user\".screen_name, 'followers': \"user\".followers_count, "
           f"'verified': coalesce(\"user\".verified, false)}} AS \"user\", "
           f"{{'retweets': retweet_count, 'likes': coalesce(favorite_count, 0)}} AS stats, coalesce(lang, 'und') AS lang, "
           f"in_reply_to_status_id AS replyTo "
           f"FROM read_ndjson({listing}, columns={DUCK_COLUMNS}, ignore_errors=true, maximum_object_size=67108864)) "
           f"TO '{out}' (FORMAT json)")
    program = f"import duckdb; c = duckdb.connect(); c.execute('SET threads={threads}'); c.execute({sql!r})"
    return f"{sys.executable} -c {q(program)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streammap", required=True)
    ap.add_argument("--baseline", help="an earlier streammap build, timed beside (before/after)")
    ap.add_argument("--size-mb", type=int, default=400)
    ap.add_argument("--files", type=int, default=0, help="parts (default: one per core, at least 2)")
    ap.add_argument("--jobs", help="comma-separated job counts (default 1, 2, 4, ... cores)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-duckdb", action="store_true")
    ap.add_argument("--duckdb-jobs", help="comma-separated job counts DuckDB is timed at (default: every N)")
    ap.add_argument("--kinds", help="comma-separated subset of: file,files,gz,zst,one-gz,one-zst,bgzf,pipe")
    ap.add_argument("--seed-dir")
    ap.add_argument("--out")
    args = ap.parse_args()

    n_cores = cores()
    jobs = [int(j) for j in args.jobs.split(",")] if args.jobs else job_counts(n_cores)
    parts_count = args.files or max(2, n_cores)
    duck_jobs = {int(j) for j in args.duckdb_jobs.split(",")} if args.duckdb_jobs else None
    bin_ = os.path.abspath(args.streammap)
    duck = False
    if not args.no_duckdb:
        try:
            import duckdb  # noqa: F401
            duck = True
        except ImportError:
            print("scaling: the duckdb module is not installed: DuckDB columns left out (pip install duckdb)", file=sys.stderr)
    has_zstd = zstd_tool() is not None

    work = workspace(args.size_mb)
    try:
        corpus = os.path.join(work, "corpus.ndjson")
        cmd = [sys.executable, os.path.join(HERE, "corpus.py"), corpus, "--size-mb", str(args.size_mb)]
        if args.seed_dir:
            cmd += ["--seed-dir", args.seed_dir]
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        parts = split(corpus, parts_count, work)
        gz_parts = [p + ".gz" for p in parts]
        zst_parts = [p + ".zst" for p in parts] if has_zstd else []
        with multiprocessing.Pool(n_cores) as pool:
            pool.starmap(write_gzip, [(p, p + ".gz") for p in parts])
            if has_zstd:
                pool.starmap(write_zstd, [(p, p + ".zst") for p in parts])
        one_gz = corpus + ".gz"
        write_gzip(corpus, one_gz)
        one_zst = os.path.join(work, "frames.ndjson.zst")
        if has_zstd:
            write_zstd_frames(corpus, one_zst, n_cores)
        one_bgzf = os.path.join(work, "corpus.bgzf.ndjson.gz")  # .gz: DuckDB reads it as gzip
        write_bgzf(corpus, one_bgzf, n_cores)
        text_mb = os.path.getsize(corpus) / 1e6

        # kind: (inputs for streammap, parts for N processes or None, duckdb files or None, pipe source or None)
        kinds = {
            "one file": ([corpus], parts, [corpus], None),
            "many files": (parts, parts, parts, None),
            "many .gz": (gz_parts, gz_parts, gz_parts, None),
            "many .zst": (zst_parts, zst_parts, zst_parts, None) if has_zstd else None,
            "one .gz": ([one_gz], None, [one_gz], None),
            "one .zst (many frames)": ([one_zst], None, None, None) if has_zstd else None,
            "one BGZF": ([one_bgzf], None, [one_bgzf], None),
            "pipe": ([], None, None, corpus),
        }
        short = {"file": "one file", "files": "many files", "gz": "many .gz", "zst": "many .zst", "one-gz": "one .gz",
                 "one-zst": "one .zst (many frames)", "bgzf": "one BGZF", "pipe": "pipe"}
        if args.kinds:
            keep = {short[k] for k in args.kinds.split(",")}
            kinds = {k: v for k, v in kinds.items() if k in keep}
        kinds = {k: v for k, v in kinds.items() if v is not None}

        machine.warm([corpus] + parts + gz_parts + zst_parts + [one_gz, one_bgzf] + ([one_zst] if has_zstd else []))

        def sm(binary, n, inputs, source):
            base = f"{q(binary)} --jobs {n} -q -s {q(SPEC)}"
            return f"cat {q(source)} | {base}" if source else f"{base} " + " ".join(q(i) for i in inputs)

        # Output identity: every --jobs N writes what --jobs 1 writes.
        mismatches = []
        for kind, (inputs, _, _, source) in kinds.items():
            ref = digest(sm(bin_, 1, inputs, source))
            for n in jobs[1:]:
                if digest(sm(bin_, n, inputs, source)) != ref:
                    mismatches.append(f"{kind} --jobs {n}")
        times = {}
        shares = {}

        def add(key, seconds):
            times.setdefault(key, []).append(seconds)

        for r in range(args.rounds):
            for kind, (inputs, split_parts, duck_files, source) in kinds.items():
                for n in jobs:
                    argv = [bin_, "--jobs", str(n), "-q", "-s", SPEC] + inputs
                    seconds, share, _ = thread_share(argv, stdin_path=source)
                    add((kind, "streammap", n), seconds)
                    if share is not None:
                        shares.setdefault((kind, n), []).append(share)
                    if args.baseline:
                        add((kind, "baseline", n), timed(sm(os.path.abspath(args.baseline), n, inputs, source)))
                    if split_parts and n > 1 and len(split_parts) >= n:
                        groups = [split_parts[i * len(split_parts) // n:(i + 1) * len(split_parts) // n] for i in range(n)]
                        procs = " & ".join(sm(bin_, 1, g, None) + " > /dev/null" for g in groups) + "; wait"
                        add((kind, "processes", n), timed(procs))
                    if duck and duck_files and (not duck_jobs or n in duck_jobs):
                        add((kind, "duckdb", n), timed(duckdb_command(duck_files, n, os.path.join(work, "duck.json"))))
                if source:
                    add((kind, "cat | wc -l", 0), timed(f"cat {q(source)} | wc -l"))
            print(f"scaling: round {r + 1} of {args.rounds} done", file=sys.stderr)

        med = {k: statistics.median(v) for k, v in times.items()}
        lines = [f"Corpus: {text_mb:.0f} MB of NDJSON ({len(parts)} parts), {n_cores} cores, medians of {args.rounds} rounds; "
                 f"outputs identical for every N: {'yes' if not mismatches else 'NO: ' + ', '.join(mismatches)}.", ""]
        header = "| input | N | --jobs N (s) | MB/s | × one job | ÷ N processes | × DuckDB | main thread's CPU share |"
        if args.baseline:
            header += " baseline (s) | × baseline |"
        lines += [header, "|" + "---|" * (header.count("|") - 1)]
        for kind in kinds:
            one = med.get((kind, "streammap", jobs[0]))
            for n in jobs:
                t = med[(kind, "streammap", n)]
                row = [kind, str(n), f"{t:.3f}", f"{text_mb / t:.0f}", f"{one / t:.2f}×" if one else "–"]
                p = med.get((kind, "processes", n))
                row.append(f"{p / t:.2f}" if p else "–")
                d = med.get((kind, "duckdb", n))
                row.append(f"{d / t:.1f}×" if d else "–")
                s = shares.get((kind, n))
                row.append(f"{100 * statistics.median(s):.1f}%" if s else "–")
                if args.baseline:
                    b = med.get((kind, "baseline", n))
                    row += [f"{b:.3f}", f"{b / t:.2f}×"] if b else ["–", "–"]
                lines.append("| " + " | ".join(row) + " |")
            if (kind, "cat | wc -l", 0) in med:
                w = med[(kind, "cat | wc -l", 0)]
                best = min(med[(kind, "streammap", n)] for n in jobs)
                lines.append(f"| {kind}: `cat FILE \\| wc -l` | – | {w:.3f} | {text_mb / w:.0f} | – | streammap's best at {w / best:.2f}× its speed | – | – |"
                             + (" – | – |" if args.baseline else ""))
        text = "\n".join(lines)
        print(text)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text + "\n")
        return 1 if mismatches else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
