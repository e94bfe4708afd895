"""The binary shipped to executors needs nothing installed: no yajl, zlib or zstd, no Swift library."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

from conftest import REPO


def test_ldd_lists_only_the_c_and_cpp_runtimes(binary: str) -> None:
    listed = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    names = {line.split()[0] for line in listed.splitlines() if line.strip()}
    allowed = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"}
    assert {n for n in names if not n.startswith("/") and "ld-linux" not in n} <= allowed, listed
    assert "yajl" not in listed and "swift" not in listed.lower()
    assert "libz.so" not in listed and "libzstd" not in listed


def test_runs_with_an_empty_library_path_outside_the_build_tree(binary: str, tmp_path: Path) -> None:
    copy = tmp_path / "streammap"
    shutil.copy(binary, copy)
    assert REPO not in copy.resolve().parents
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ""}
    done = subprocess.run([str(copy), "--field", "id", "--type", "id=integer"], input=b'{"id":1,"x":2}\n{"id":"a"}\n',
                          capture_output=True, cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (1, b'{"id":1}\n')
    assert b"<stdin>:2: /id: expected integer" in done.stderr


def test_reads_and_writes_gzip_and_zstd_with_nothing_installed(binary: str, tmp_path: Path) -> None:
    copy = tmp_path / "streammap"
    shutil.copy(binary, copy)
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ""}
    records = b'{"id":1,"x":2}\n{"id":2}\n'
    (tmp_path / "in.gz").write_bytes(gzip.compress(records[:15]) + gzip.compress(records[15:]))  # two members
    done = subprocess.run([str(copy), "--field", "id", "in.gz", "-o", "out.zst"], capture_output=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.zst").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    back = subprocess.run([str(copy), "out.zst", "--compress", "gzip"], capture_output=True, cwd=tmp_path, env=env)
    assert back.returncode == 0, back.stderr
    assert gzip.decompress(back.stdout) == b'{"id":1}\n{"id":2}\n'
