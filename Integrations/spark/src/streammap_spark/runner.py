"""One streammap process per split (what a task of the mapping stage runs), and the checks on the driver.

A task is Spark SQL's ``TRANSFORM … USING`` (a script transformation: the JVM starts the command, feeds it the
task's rows on standard input and reads its standard output as rows — Python never sees the data). The command is
the small bash script ``task_script`` makes: it reads the split's descriptor (``chunk<TAB>START:END<TAB>path``)
from standard input and runs ``streammap map --byte-range START:END --rejects FILE --stats … path``, which reads
its chunk of the file itself and writes the mapped records straight to the task's standard output. Then the script
appends, marked by a first byte no NDJSON record can start with (``\\x01``), the chunk's rejects
(``\\x01R<chunk>\\t<rejects line>``) and one counts line (``\\x01C<chunk>\\t<byteRange line>\\t<stats line>``).

Exit status 0 and 1 (some records rejected) are success: the script exits 0. Anything else — 2, 3, 4, 64, a
signal — makes the script print ``streammap failed on …: exit status N`` (or ``killed by signal N (SIGNAME)``) and
the end of streammap's standard error, and exit with that status (128 + N for a signal), which Spark turns into a
failed task (``Subprocess exited with status N. Error: …``). Its temporary folder (rejects, standard error) is
removed however it ends; when Spark cancels the task (SIGTERM), streammap is killed first.
"""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

#: The first byte of the lines a task adds after the mapped records (no NDJSON record starts with it).
MARK = "\x01"
REJECT_TAG = MARK + "R"
COUNTS_TAG = MARK + "C"
#: How much of streammap's standard error a failure quotes (Spark keeps the last 2 KiB of a script's stderr).
STDERR_QUOTE_BYTES = 1500


class StreamMapError(RuntimeError):
    """streammap failed (exit status other than 0 and 1, or a signal): on the driver (a bad spec) or in a task,
    which fails the task and, after Spark's retries, the job."""

    def __init__(self, message: str, status: int, stderr: str) -> None:
        super().__init__(message)
        self.status = status
        self.stderr = stderr


@dataclass(frozen=True)
class MapJob:
    """What every task of a mapping stage shares: the binary's and the spec's file names in the task's working
    folder (Spark's ``SparkFiles`` folder, where ``SparkContext.addFile`` puts them), the mapping flags, how rejects
    are written, and (tests only) the chunk whose first attempt is killed with the folder that marks attempts."""

    binary: str
    spec: Optional[str]
    args: Tuple[str, ...]
    redact: bool = False
    rejects_record_bytes: Optional[int] = None
    fault_chunk: Optional[int] = None
    fault_folder: Optional[str] = None
    #: False: the mapped records are thrown away (``-o /dev/null``): a pass for the counts or the rejects alone.
    records: bool = True
    #: True: the records are written as Arrow IPC (``--to arrow-stream``; the typed stage), whose checks (an
    #: integer beyond int64, a number beyond a double) reject records the text does not — a pass for the counts
    #: or the rejects of a typed stage sets it too.
    arrow: bool = False

    def command(self) -> List[str]:
        """streammap's arguments before ``--byte-range`` (the script adds the range, the rejects file and the
        input)."""
        cmd = [self.binary, "map", "--framing", "ndjson", "--quiet", "--no-progress", "--stats"]
        if self.redact:
            cmd.append("--redact")
        if self.rejects_record_bytes is not None:
            cmd += ["--rejects-record-bytes", str(self.rejects_record_bytes)]
        if self.spec is not None:
            cmd += ["--spec", self.spec]
        if self.arrow:
            cmd += ["--to", "arrow-stream"]
        if not self.records:
            cmd += ["-o", "/dev/null"]
        return cmd + list(self.args)


def task_script(job: MapJob) -> str:
    """The bash script a task runs (see the module's docstring)."""
    fault_decide = fault = ""
    if job.fault_chunk is not None and job.fault_folder is not None:
        # The first attempt (mkdir succeeds once) kills streammap as a crashing executor would. The process stops
        # itself before it execs streammap, so SIGKILL always finds it alive: killing a streammap that may already
        # have finished a small split would race (and a finished one exits 0).
        fault_decide = (f'fault=0; [ "$chunk" = {job.fault_chunk} ] && mkdir {shlex.quote(job.fault_folder)}/chunk-$chunk '
                        '2>/dev/null && fault=1\n')
        fault = '[ $fault = 1 ] && kill -9 $pid\n'
    run = f'{shlex.join(job.command())} --rejects "$d/rejects" --byte-range "$range" -- "$path"'
    # With a fault planned, a group that execs streammap (so $pid stays streammap's, as without one).
    launch = f'{{ [ $fault = 1 ] && kill -STOP $BASHPID; exec {run}; }}' if fault else run
    binary = shlex.quote(job.binary)
    script = f"""IFS=$'\\t' read -r chunk range path || {{ echo "streammap_spark: no split on standard input" >&2; exit 70; }}
tmp=$TMPDIR; [ -n "$tmp" ] || tmp=/tmp
d=$(mktemp -d "$tmp/streammap-spark-XXXXXX") || exit 70
trap 'rm -rf "$d"' EXIT
[ -x {binary} ] || chmod u+x {binary} 2>/dev/null
{fault_decide}{launch} 2>"$d/stderr" &
pid=$!
trap 'kill -9 $pid 2>/dev/null; rm -rf "$d"; exit 143' TERM INT HUP
{fault}wait $pid; s=$?
if [ $s -gt 1 ]; then
  if [ $s -gt 128 ]; then how="killed by signal $((s - 128)) (SIG$(kill -l $((s - 128))))"; else how="exit status $s"; fi
  echo "streammap failed on $path bytes $range (split $chunk): $how" >&2
  tail -c {STDERR_QUOTE_BYTES} "$d/stderr" >&2
  exit $s
fi
tag=$(printf '\\001R'); tab=$(printf '\\t')
sed "s/^/$tag$chunk$tab/" "$d/rejects" || exit 70
{{ IFS= read -r byterange; IFS= read -r stats; }} < <(tail -n 2 "$d/stderr")
printf '\\001C%s\\t%s\\t%s\\n' "$chunk" "$byterange" "$stats"
"""
    # Spark SQL substitutes ${...} in a query's text (spark.sql.variable.substitute), string literals included: the
    # script has none of its own; a flag holding one cannot be passed.
    if "${" in script:
        raise ValueError("a mapping flag holding '${' cannot be passed to the tasks (Spark SQL would substitute it)")
    return script


def descriptor(chunk: int, start: int, end: int, path: str) -> str:
    """A task's one input row: ``chunk<TAB>START:END<TAB>path``."""
    if any(c in path for c in "\t\n\r"):
        raise ValueError(f"{path!r}: a path with a tab or a line break cannot be handed to a task")
    return f"{chunk}\t{start}:{end}\t{path}"


FAILURE = re.compile(r"streammap failed on (?P<what>.*?): (?:exit status (?P<status>\d+)|killed by signal "
                     r"(?P<signal>\d+)[^\n]*)\n?(?P<stderr>.*)", re.S)


def failure_from(text: str) -> Optional[StreamMapError]:
    """The ``StreamMapError`` a failed task's message tells of (None when it is not one of streammap's)."""
    m = FAILURE.search(text)
    if m is None:
        return None
    status = int(m["status"]) if m["status"] is not None else -int(m["signal"])
    stderr = m["stderr"].split("\n\tat ", 1)[0].strip()
    return StreamMapError(f"streammap failed on {m['what']}: {describe_status(status)}\n{stderr}", status, stderr)


def run_split_locally(job: MapJob, chunk: int, start: int, end: int, path: str,
                      cwd: str) -> Tuple[int, bytes, str]:
    """Runs ``task_script`` as a task would, without Spark (tests): returns its exit status, standard output and
    standard error."""
    done = subprocess.run(["/bin/bash", "-c", task_script(job)], cwd=cwd, capture_output=True,
                          input=(descriptor(chunk, start, end, path) + "\n").encode("utf-8"))
    return done.returncode, done.stdout, done.stderr.decode("utf-8", errors="replace")


def describe_status(status: int) -> str:
    """``exit status 3`` or ``killed by signal 9 (SIGKILL)`` for a subprocess return code."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = "unknown signal"
        return f"killed by signal {-status} ({name})"
    return f"exit status {status}"


def local_path(path: str) -> str:
    """A path on a filesystem every executor mounts, from a local path or a ``file:`` URI."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return path


#: The mapping flags ``streammap check`` takes (with a value, and without); the others are run flags.
CHECK_FLAGS_WITH_VALUE = ("--field", "--key-style", "--require", "--type", "--default", "--where")
CHECK_SWITCHES = ("--keep-unmapped", "--drop-unmapped", "--reverse")


def mapping_flags(args: Sequence[str]) -> List[str]:
    """The flags of ``args`` that ``streammap check`` takes (``--field a``, ``--field=a``, ``--reverse``…)."""
    out: List[str] = []
    i = 0
    while i < len(args):
        name = args[i].split("=", 1)[0]
        if name in CHECK_FLAGS_WITH_VALUE:
            take = 1 if "=" in args[i] else 2
            out += list(args[i:i + take])
            i += take
            continue
        if name in CHECK_SWITCHES:
            out.append(args[i])
        i += 1
    return out


def check_spec(binary: str, spec_path: Optional[str], args: Sequence[str], to: Optional[str] = None) -> bytes:
    """Checks the spec and flags on the driver, before any task runs: ``streammap check`` with the mapping flags
    (every problem of the spec, each with its JSON Pointer), then the map command itself on empty input for the
    run flags (``--engine``, ``--on-error``…), with ``--to TO`` when given. Returns that command's standard output
    (for ``arrow-stream``, the schema alone: ``columns.arrow_schema``). Raises ``StreamMapError`` with streammap's
    message."""
    spec = [spec_path] if spec_path is not None else []
    output = ["--to", to] if to is not None else []
    checks = [[binary, "map", "--quiet", "--no-progress"] + output + [f"--spec={p}" for p in spec] + list(args)
              + ["-"]]
    if spec or mapping_flags(args):  # else nothing to check: records are copied
        checks.insert(0, [binary, "check"] + spec + mapping_flags(args))
    for cmd in checks:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode != 0:
            message = (done.stderr + done.stdout).decode("utf-8", errors="replace").strip()
            raise StreamMapError(f"streammap {cmd[1]} failed ({describe_status(done.returncode)}):\n{message}",
                                 done.returncode, message)
    return done.stdout
