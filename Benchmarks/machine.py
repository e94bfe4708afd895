"""Puts a shared machine in the same state before every timed run (compare.py, jobs_speedup.py), and times a run's
CPU (`cpu_seconds`: where_cost.py, gap_breakdown.py).

Two effects of this kind of VM would otherwise decide a run's time more than the tool does:

- its page cache hands file pages back to the host within seconds, so a run may read part of its input from the
  virtual disk (the same absolute time for every tool, and `--jobs N` reads on one thread): `warm` reads the
  inputs through first;
- a vCPU that has been idle runs slower for the next few hundred milliseconds: after 1.5 s of idling, a 100 MB
  `streammap --jobs 2` run took 0.25–0.33 s of CPU time, against 0.20–0.21 s when both vCPUs had just been
  busy. A one-thread tool runs on the vCPU the harness keeps awake and hardly notices (the yajl no-op and the
  stream engine: 0.174 and 0.205 s without, 0.172 and 0.200 s with); a tool that needs the second vCPU pays.
  `wake_cpus` keeps every CPU busy for a moment first, so that every tool starts with all of them awake.
"""
import os
import subprocess
import sys
import time


def warm(paths):
    """Reads the files through, so that the timed run finds them in the page cache."""
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.read(1 << 20):
                pass


def wake_cpus(seconds=0.2):
    """Keeps every CPU this process may run on busy for `seconds` (one forked spinner per CPU), then returns when
    all the spinners have exited."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    deadline = time.monotonic() + seconds
    spinners = []
    for _ in range(cpus):
        pid = os.fork()
        if pid == 0:
            while time.monotonic() < deadline:
                pass
            os._exit(0)
        spinners.append(pid)
    for pid in spinners:
        os.waitpid(pid, 0)


def settle(paths):
    """Before a timed run: the inputs in the page cache, every CPU awake."""
    warm(paths)
    wake_cpus()


def cpu_seconds(cmd):
    """The CPU time (user + system, from wait4) of running `cmd` with its output to /dev/null; exits when it fails
    (status 1, some records rejected, is not a failure)."""
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} failed: {status}")
    return usage.ru_utime + usage.ru_stime
