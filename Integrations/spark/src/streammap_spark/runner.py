"""One streammap process over one chunk (what a task of the mapping stage runs).

The chunk's raw bytes go to the process's standard input — never through Hadoop's ``Text``, which decodes and
drops CRs — and its standard output streams back in blocks of whole lines. Rejected records come back through
``--rejects`` (a file in a temporary folder of the task's own, removed when the task ends, however it ends), with
their line and offset translated from the chunk's to the file's. ``--stats`` gives the counts, checked against
what came back. Exit status 0 and 1 (some records rejected) are success; anything else — 2, 3, 4, 64, a signal —
raises ``StreamMapError`` with streammap's standard error in its message, which fails the task.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .splits import Chunk, read_range

#: Output is handed on in blocks of whole lines of about this many bytes (one element of the stage each).
BLOCK_BYTES = 1 << 20
#: How much of streammap's standard error an exception quotes (its end).
STDERR_QUOTE_BYTES = 8192

# The elements a mapping task yields, tagged by their first member.
MAPPED = 0  # (MAPPED, chunk_id, text): mapped records, whole NDJSON lines without the last LF
REJECT = 1  # (REJECT, chunk_id, RejectRow)
COUNTS = 2  # (COUNTS, chunk_id, file_index, records_in, mapped, rejected)

#: A rejected record as the stage returns it: file, line, offset, errors (code, fatal, source, destination,
#: message), record text (None when redacted), record length in bytes (with --redact, else None), truncated.
RejectRow = Tuple[str, int, int, List[Tuple[str, bool, str, str, str]], Optional[str], Optional[int], bool]


class StreamMapError(RuntimeError):
    """streammap failed on a chunk (exit status other than 0 and 1, or a signal). Fails the Spark task."""

    def __init__(self, message: str, status: int, stderr: str) -> None:
        super().__init__(message)
        self.status = status
        self.stderr = stderr


@dataclass(frozen=True)
class MapJob:
    """What every task of a mapping stage shares: the binary, the spec's text (None: flags only), the mapping
    flags, and how rejects are written."""

    binary: str
    spec_text: Optional[str]
    args: Tuple[str, ...]
    redact: bool = False
    rejects_record_bytes: Optional[int] = None

    def command(self, folder: str) -> List[str]:
        """streammap's arguments for one chunk whose spec and rejects file live in ``folder``."""
        cmd = [self.binary, "map", "--framing", "ndjson", "--quiet", "--no-progress", "--stats",
               "--rejects", os.path.join(folder, "rejects.ndjson")]
        if self.redact:
            cmd.append("--redact")
        if self.rejects_record_bytes is not None:
            cmd += ["--rejects-record-bytes", str(self.rejects_record_bytes)]
        if self.spec_text is not None:
            cmd += ["--spec", os.path.join(folder, "spec.json")]
        return cmd + list(self.args) + ["-"]


def describe_status(status: int) -> str:
    """``exit status 3`` or ``killed by signal 9 (SIGKILL)`` for a subprocess return code."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = "unknown signal"
        return f"killed by signal {-status} ({name})"
    return f"exit status {status}"


def map_chunk(job: MapJob, chunk_id: int, chunk: Chunk, open_file: Callable[[str], BinaryIO],
              kill_at_start: bool = False) -> Iterator[Tuple[Any, ...]]:
    """Maps ``chunk`` with one streammap process: yields its mapped records in blocks, then its rejects, then its
    counts (see the tags above). ``kill_at_start`` (tests only) kills the process with SIGKILL as soon as it has
    started, as a crashing executor would."""
    if chunk.is_empty:
        yield (COUNTS, chunk_id, chunk.file.index, 0, 0, 0)
        return
    folder = tempfile.mkdtemp(prefix="streammap-spark-")
    process: Optional[subprocess.Popen[bytes]] = None
    feeder: Optional[threading.Thread] = None
    try:
        if job.spec_text is not None:
            with open(os.path.join(folder, "spec.json"), "w", encoding="utf-8") as f:
                f.write(job.spec_text)
        with open(os.path.join(folder, "stderr.txt"), "wb") as stderr:
            process = subprocess.Popen(job.command(folder), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=stderr, cwd=folder)
        if kill_at_start:
            process.kill()
        feed_error: List[BaseException] = []
        feeder = threading.Thread(target=_feed, args=(process, chunk, open_file, feed_error), daemon=True)
        feeder.start()
        assert process.stdout is not None
        lines = 0
        pending = b""
        while True:
            data = process.stdout.read(BLOCK_BYTES)
            if not data:
                break
            data = pending + data
            cut = data.rfind(b"\n")
            if cut < 0:  # a line longer than the block: keep reading
                pending = data
                continue
            pending = data[cut + 1:]
            block = data[:cut]
            lines += block.count(b"\n") + 1
            yield (MAPPED, chunk_id, block.decode("utf-8"))
        feeder.join()
        status = process.wait()
        stderr_text = _read_text(os.path.join(folder, "stderr.txt"))
        if status not in (0, 1):
            raise StreamMapError(f"streammap failed on {chunk.describe()}: {describe_status(status)}\n"
                                 f"{_tail(stderr_text)}", status, stderr_text)
        if feed_error:
            raise feed_error[0]
        if pending:
            raise StreamMapError(f"streammap's output for {chunk.describe()} ended inside a line", status,
                                 stderr_text)
        stats = _stats(stderr_text, chunk)
        rejected = 0
        with open(os.path.join(folder, "rejects.ndjson"), "rb") as f:
            for line in f:
                rejected += 1
                yield (REJECT, chunk_id, reject_row(json.loads(line), chunk))
        if (stats["recordsOut"], stats["recordsRejected"]) != (lines, rejected) or \
                stats["recordsIn"] != lines + rejected:
            raise StreamMapError(f"streammap's counts for {chunk.describe()} do not add up: {stats} but "
                                 f"{lines} records written and {rejected} rejected", status, stderr_text)
        yield (COUNTS, chunk_id, chunk.file.index, stats["recordsIn"], lines, rejected)
    finally:
        if process is not None and process.poll() is None:
            process.kill()  # the task was cancelled or its consumer stopped early
            process.wait()
        if process is not None and process.stdout is not None:
            process.stdout.close()
        if feeder is not None:
            feeder.join()
        shutil.rmtree(folder, ignore_errors=True)


def reject_row(reject: Dict[str, Any], chunk: Chunk) -> RejectRow:
    """A line of streammap's rejects file, read from a chunk, as the file's reject: the file's name, and the line
    and offset in the file."""
    errors = [(e["code"], e["fatal"], e["source"], e["destination"], e["message"]) for e in reject["errors"]]
    return (chunk.file.name, chunk.line_base + reject["line"], chunk.start + reject["offset"], errors,
            reject.get("record"), reject.get("recordBytes"), bool(reject.get("truncated", False)))


def _feed(process: subprocess.Popen[bytes], chunk: Chunk, open_file: Callable[[str], BinaryIO],
          errors: List[BaseException]) -> None:
    """Writes the chunk's bytes to the process's standard input, then closes it. A process that stops reading
    (it failed, or was killed) ends the feeding quietly: its exit status tells."""
    assert process.stdin is not None
    try:
        for _, block in read_range(open_file, chunk.file, chunk.start, chunk.end, BLOCK_BYTES):
            process.stdin.write(block)
    except (BrokenPipeError, ValueError):
        pass  # stdin closed under us: the process is gone
    except BaseException as error:  # noqa: BLE001 - handed to the task's thread
        errors.append(error)
    finally:
        try:
            process.stdin.close()
        except (BrokenPipeError, OSError):
            pass


def _stats(stderr_text: str, chunk: Chunk) -> Dict[str, Any]:
    lines = stderr_text.strip().splitlines()
    try:
        stats = json.loads(lines[-1])
        _ = stats["recordsIn"], stats["recordsOut"], stats["recordsRejected"]
        return stats  # type: ignore[no-any-return]
    except (IndexError, ValueError, KeyError, TypeError):
        raise StreamMapError(f"streammap wrote no --stats line for {chunk.describe()}:\n{_tail(stderr_text)}",
                             0, stderr_text) from None


def _read_text(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def _tail(text: str) -> str:
    return text if len(text) <= STDERR_QUOTE_BYTES else "…" + text[-STDERR_QUOTE_BYTES:]


def open_local(path: str) -> BinaryIO:
    """Opens a file on a filesystem every executor mounts (a local path, or a ``file:`` URI)."""
    if path.startswith("file://"):
        path = path[len("file://"):]
    elif path.startswith("file:"):
        path = path[len("file:"):]
    return open(path, "rb")


#: The mapping flags ``streammap check`` takes (with a value, and without); the others are run flags.
CHECK_FLAGS_WITH_VALUE = ("--field", "--key-style", "--require", "--type", "--default")
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


def check_spec(binary: str, spec_path: Optional[str], args: Sequence[str]) -> None:
    """Checks the spec and flags on the driver, before any task runs: ``streammap check`` with the mapping flags
    (every problem of the spec, each with its JSON Pointer), then the map command itself on empty input for the
    run flags (``--engine``, ``--on-error``…). Raises ``StreamMapError`` with streammap's message."""
    spec = [spec_path] if spec_path is not None else []
    checks = [[binary, "map", "--quiet", "--no-progress"] + [f"--spec={p}" for p in spec] + list(args) + ["-"]]
    if spec or mapping_flags(args):  # else nothing to check: records are copied
        checks.insert(0, [binary, "check"] + spec + mapping_flags(args))
    for cmd in checks:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode != 0:
            message = (done.stderr + done.stdout).decode("utf-8", errors="replace").strip()
            raise StreamMapError(f"streammap {cmd[1]} failed ({describe_status(done.returncode)}):\n{message}",
                                 done.returncode, message)
