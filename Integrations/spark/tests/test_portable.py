"""The binary shipped to executors needs nothing installed: no yajl, zlib or zstd, no Swift library."""

from __future__ import annotations

import gzip
import os
import re
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


def test_needs_glibc_2_34_at_most(binary: str) -> None:
    """The wheel's manylinux tag and the machines it runs on (RHEL 9, Amazon Linux 2023) follow from this."""
    symbols = subprocess.run(["objdump", "-T", binary], capture_output=True, text=True, check=True).stdout
    versions = {tuple(int(p) for p in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", symbols)}
    assert max(versions) == (2, 34), sorted(versions)[-3:]
    assert re.search(r"\bBase\s+hypotf$", symbols, re.M)  # its own hypotf (scripts/portable/glibc-compat.c)


def test_the_compat_hypotf_is_glibcs(tmp_path: Path) -> None:
    """scripts/portable/glibc-compat.c's hypotf gives what this machine's libm gives, bit for bit: edge cases and a
    million random pairs over the whole float range."""
    cc = shutil.which("cc") or shutil.which("clang")
    assert cc, "no C compiler"
    source = tmp_path / "check.c"
    source.write_text(r'''
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
float compat_hypotf(float, float);
static float from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static int same(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0; }
int main(void) {
    float edges[] = {0.0f, -0.0f, 1.0f, -3.0f, 4.0f, 1e-45f, 1e-38f, 3.4e38f, -3.4e38f, INFINITY, -INFINITY, NAN};
    int n = sizeof edges / sizeof edges[0], bad = 0;
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++)
        if (!same(compat_hypotf(edges[i], edges[j]), hypotf(edges[i], edges[j]))) { bad++; printf("%a %a\n", edges[i], edges[j]); }
    uint64_t s = 88172645463325252ull;
    for (int k = 0; k < 1000000; k++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        float x = from_bits((uint32_t)s), y = from_bits((uint32_t)(s >> 32));
        if (!same(compat_hypotf(x, y), hypotf(x, y))) { if (bad++ < 5) printf("%a %a\n", x, y); }
    }
    printf("%d\n", bad);
    return bad != 0;
}
''')
    exe = tmp_path / "check"
    subprocess.run([cc, "-O2", "-fno-math-errno", "-c", str(REPO / "scripts" / "portable" / "glibc-compat.c"),
                    "-o", str(tmp_path / "compat.o")], check=True)  # as scripts/build-portable.sh builds it
    subprocess.run(["objcopy", "--redefine-sym", "hypotf=compat_hypotf", str(tmp_path / "compat.o")], check=True)
    subprocess.run([cc, "-O2", str(source), str(tmp_path / "compat.o"), "-lm", "-o", str(exe)], check=True)
    done = subprocess.run([str(exe)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "0", done.stdout
