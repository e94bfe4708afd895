#!/usr/bin/env python3
# Builds the wheel that `pip install` gives streammap from, the way data tools ship a native binary on PyPI (Ruff,
# maturin's "bin" wheels): streammap_spark-VERSION-py3-none-manylinux_2_NN_ARCH.whl holding the Spark integration's package
# (streammap_spark/, from Integrations/spark/src) and the binary once, as streammap_spark-VERSION.data/scripts/streammap
# (mode 0755), which pip installs into the environment's bin/ (on PATH in a virtual environment; the package finds it
# there: streammap_spark.binary.packaged_binary). Where the release tree holds ISA-L's inflate beside the binary
# (BINARY/../../lib/streammap/libisal.so.2 and its copyright notice: scripts/install.sh), the wheel carries them as
# data, which pip installs into the environment's lib/streammap/ and share/doc/streammap/: the binary loads ISA-L
# from there. Installing it adds PySpark 4, pyarrow and pandas.
#
#   scripts/build-wheel.py BINARY OUTDIR    # → OUTDIR/streammap_spark-VERSION-py3-none-manylinux_2_NN_ARCH.whl (its path last)
#   scripts/build-wheel.py "$(scripts/build-portable.sh | tail -1)" .build/dist-wheel
#   scripts/dist.sh                         # builds it from the release tree's (stripped) binary, beside the tarball
#
# VERSION is what `BINARY --version` prints (a canonical PEP 440 version, or the build stops). ARCH is `uname -m`
# (the binary's ELF machine must match it). The manylinux tag is read off the binary, not guessed: NN is the highest
# GLIBC_2.NN symbol version it needs (readelf's version-needs section), so pip installs it exactly where glibc is at
# least that new (PEP 600). The build refuses a binary whose dynamic section needs a library outside the manylinux
# set (libc, libm, libpthread, libdl, librt, libstdc++, libgcc_s and the loader): build it with
# scripts/build-portable.sh. Needs Python 3.9+ (stdlib only) and binutils' readelf.
#
# Reproducible: the same inputs give the same bytes. Entries in sorted order (the .dist-info folder last, RECORD
# last of all, as PEP 427 recommends), deflated, every date SOURCE_DATE_EPOCH when set, else the last commit's
# (`git log -1 --format=%ct`), in UTC.
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "Integrations" / "spark" / "src" / "streammap_spark"
README = ROOT / "Integrations" / "spark" / "README.md"
#: The distribution's name ("streammap" on PyPI is another project's), and its form in file names.
NAME = "streammap-spark"
#: ISA-L's shared library, carried where the release tree has it.
ISAL = "libisal.so.2"
DIST = NAME.replace("-", "_")
SUMMARY = ("Map NDJSON records with a declarative spec: the streammap CLI (a portable Linux binary) "
           "and its Apache Spark stage (streammap_spark)")
REQUIRES_PYTHON = ">=3.9"
#: PySpark 4, and what its mapInArrow needs (the typed stage).
REQUIRES = ["pyspark<5,>=4.0", "pyarrow>=11", "pandas<3,>=2.2"]  # (PySpark 4 warns on pandas 3)

#: The libraries a manylinux wheel may need from the system (the part of PEP 600's / auditwheel's list a command-line
#: tool can use), by soname. The loader's name depends on the architecture: ld-linux-x86-64.so.2, ld-linux-aarch64.so.1…
ALLOWED_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libstdc++.so.6",
                     "libgcc_s.so.1"}
LOADER = re.compile(r"^ld-linux[-\w.]*\.so\.\d+$")

#: ELF e_machine of the architectures `uname -m` names.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183, "ppc64le": 21, "s390x": 22, "i686": 3, "armv7l": 40}

#: A canonical PEP 440 version (the normalized form, which is also what a wheel's file name must hold).
CANONICAL_VERSION = re.compile(
    r"^([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*((a|b|rc)(0|[1-9][0-9]*))?(\.post(0|[1-9][0-9]*))?"
    r"(\.dev(0|[1-9][0-9]*))?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$")

EXECUTABLE = 0o100755 << 16  # a regular file, rwxr-xr-x, in a zip entry's external_attr (Unix)
REGULAR = 0o100644 << 16


class BuildError(Exception):
    """A reason not to build the wheel (printed, exit status 1)."""


def version_of(binary: str) -> str:
    """What ``BINARY --version`` prints, checked to be a canonical PEP 440 version."""
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as error:
        raise BuildError(f"cannot run '{binary} --version': {error}") from None
    version = done.stdout.strip()
    if done.returncode != 0:
        raise BuildError(f"'{binary} --version' exited with status {done.returncode}: {done.stderr.strip()}")
    if not CANONICAL_VERSION.match(version):
        raise BuildError(f"'{binary} --version' printed '{version}': not a canonical PEP 440 version")
    return version


def elf_machine(binary: str) -> int:
    """The ELF file's e_machine (refusing anything but a 64-bit little-endian ELF executable)."""
    with open(binary, "rb") as f:
        header = f.read(20)
    if header[:4] != b"\x7fELF":
        raise BuildError(f"{binary}: not an ELF file")
    if header[4] != 2 or header[5] != 1:
        raise BuildError(f"{binary}: not a 64-bit little-endian ELF file")
    return int.from_bytes(header[18:20], "little")


def readelf(*args: str) -> str:
    try:
        done = subprocess.run(["readelf", "--wide", *args], capture_output=True, text=True, check=True,
                              env={**os.environ, "LC_ALL": "C"})
    except FileNotFoundError:
        raise BuildError("readelf is missing (binutils)") from None
    except subprocess.CalledProcessError as error:
        raise BuildError(f"readelf {' '.join(args)}: {error.stderr.strip()}") from None
    return done.stdout


def needed_libraries(dynamic: str) -> List[str]:
    """The DT_NEEDED sonames in ``readelf -d``'s output."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


def needed_versions(version_info: str) -> Dict[str, List[str]]:
    """The symbol versions the binary needs, by library, from ``readelf -V``'s version-needs section."""
    needs: Dict[str, List[str]] = {}
    section = version_info.split("Version needs section", 1)
    if len(section) < 2:
        return needs
    library = None
    for line in section[1].splitlines():
        if "Version definition section" in line or "Version symbols section" in line:
            break
        file = re.search(r"\bFile: (\S+)", line)
        if file:
            library = file.group(1)
            needs.setdefault(library, [])
            continue
        name = re.search(r"\bName: (\S+)", line)
        if name and library is not None:
            needs[library].append(name.group(1))
    return needs


def disallowed(libraries: Sequence[str]) -> List[str]:
    """The needed libraries outside the manylinux set."""
    return [lib for lib in libraries if lib not in ALLOWED_LIBRARIES and not LOADER.match(lib)]


def highest(prefix: str, versions: Sequence[str]) -> Optional[Tuple[int, ...]]:
    """The highest PREFIX_x.y[.z] among the symbol versions, as a tuple (None when there is none)."""
    found = [tuple(int(p) for p in v[len(prefix) + 1:].split(".")) for v in versions
             if re.fullmatch(re.escape(prefix) + r"_[0-9]+(\.[0-9]+)*", v)]
    return max(found) if found else None


def manylinux_tag(versions: Sequence[str], arch: str) -> str:
    """``manylinux_2_NN_ARCH`` for the highest GLIBC_2.NN among the needed symbol versions."""
    glibc = highest("GLIBC", versions)
    if glibc is None:
        raise BuildError("the binary needs no GLIBC_ symbol version: not a glibc-linked binary, no manylinux tag")
    if glibc[0] != 2 or len(glibc) < 2:
        raise BuildError(f"the binary needs GLIBC_{'.'.join(map(str, glibc))}: not a glibc 2.x version")
    return f"manylinux_2_{glibc[1]}_{arch}"


def dotted(version: Optional[Tuple[int, ...]]) -> str:
    return "none" if version is None else ".".join(map(str, version))


def source_date_epoch() -> int:
    """SOURCE_DATE_EPOCH, else the last commit's time, else now (not reproducible: said on standard error)."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    done = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    if done.returncode == 0 and done.stdout.strip().isdigit():
        return int(done.stdout.strip())
    print("build-wheel: no SOURCE_DATE_EPOCH and no git commit: dating the entries now", file=sys.stderr)
    return int(time.time())


def zip_date(epoch: int) -> Tuple[int, int, int, int, int, int]:
    """The epoch as a zip entry's date (UTC; a zip cannot hold a date before 1980 or an odd second)."""
    t = time.gmtime(max(epoch, 315532800))
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec - t.tm_sec % 2)


def package_files() -> List[Tuple[str, Path]]:
    """The package's files (its .py files and py.typed, in subpackages too; no __pycache__), as (entry, path)."""
    if not (PACKAGE / "__init__.py").is_file():
        raise BuildError(f"{PACKAGE}: no __init__.py")
    files = []
    for path in sorted(PACKAGE.rglob("*")):
        relative = path.relative_to(PACKAGE.parent)
        if "__pycache__" in relative.parts or not path.is_file():
            continue
        if path.suffix == ".py" or path.name == "py.typed":
            files.append((relative.as_posix(), path))
    return files


def metadata(version: str, license_name: str) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}", f"Summary: {SUMMARY}",
             f"License: {license_name}", f"Requires-Python: {REQUIRES_PYTHON}"]
    lines += [f"Requires-Dist: {r}" for r in REQUIRES]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + README.read_text(encoding="utf-8")


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def build(binary: str, outdir: str) -> Path:
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        raise BuildError(f"{binary}: not an executable file")
    version = version_of(binary)
    arch = platform.machine()
    machine = elf_machine(binary)
    if ELF_MACHINES.get(arch) != machine:
        raise BuildError(f"{binary}: ELF machine {machine}, but `uname -m` is {arch}")

    libraries = needed_libraries(readelf("-d", binary))
    refused = disallowed(libraries)
    if refused:
        raise BuildError(f"{binary} needs {', '.join(refused)}: outside the manylinux set (libc, libm, libpthread, "
                         "libdl, librt, libstdc++, libgcc_s, ld-linux); build it with scripts/build-portable.sh")
    needs = needed_versions(readelf("-V", binary))
    versions = [v for names in needs.values() for v in names]
    # ISA-L's inflate, where the release tree holds it beside the binary (scripts/install.sh): installed into the
    # environment's lib/streammap/, where the binary looks first (IsalInflate.swift). Its needs count for the tag.
    bundled = [(f"lib/streammap/{ISAL}", Path(binary).resolve().parent.parent / "lib" / "streammap" / ISAL),
               ("share/doc/streammap/isa-l.copyright", Path(binary).resolve().parent.parent / "share" / "doc" / "streammap" / "isa-l.copyright")]
    bundled = [(name, path) for name, path in bundled if path.is_file()]
    for name, path in bundled:
        if not name.endswith(ISAL):
            continue
        refused = disallowed(needed_libraries(readelf("-d", str(path))))
        if refused:
            raise BuildError(f"{path} needs {', '.join(refused)}: outside the manylinux set")
        versions += [v for names in needed_versions(readelf("-V", str(path))).values() for v in names]
    tag = manylinux_tag(versions, arch)
    print(f"build-wheel: {os.path.basename(binary)} {version} needs {', '.join(libraries)}; "
          f"GLIBC {dotted(highest('GLIBC', versions))}, GLIBCXX {dotted(highest('GLIBCXX', versions))}, "
          f"CXXABI {dotted(highest('CXXABI', versions))}, GCC {dotted(highest('GCC', versions))} → {tag}",
          file=sys.stderr)

    license_file = ROOT / "LICENSE"
    if license_file.is_file():
        license_name = next((line.strip() for line in license_file.read_text(encoding="utf-8").splitlines()
                             if line.strip()), "see LICENSE")
    else:
        license_name = "UNKNOWN"
        print("build-wheel: the repository has no LICENSE file: METADATA says 'License: UNKNOWN'", file=sys.stderr)

    dist_info = f"{DIST}-{version}.dist-info"
    wheel_tag = f"py3-none-{tag}"
    with open(binary, "rb") as f:
        binary_bytes = f.read()
    entries: List[Tuple[str, bytes, int]] = [(name, path.read_bytes(), REGULAR) for name, path in package_files()]
    entries.append((f"{DIST}-{version}.data/scripts/streammap", binary_bytes, EXECUTABLE))
    for name, path in bundled:
        entries.append((f"{DIST}-{version}.data/data/{name}", path.read_bytes(), REGULAR))
    entries.sort(key=lambda e: e[0])
    info: List[Tuple[str, bytes, int]] = [
        (f"{dist_info}/METADATA", metadata(version, license_name).encode("utf-8"), REGULAR),
        (f"{dist_info}/WHEEL", ("Wheel-Version: 1.0\nGenerator: streammap scripts/build-wheel.py\n"
                                f"Root-Is-Purelib: false\nTag: {wheel_tag}\n").encode("ascii"), REGULAR),
        (f"{dist_info}/top_level.txt", b"streammap_spark\n", REGULAR),
    ]
    if license_file.is_file():
        info.append((f"{dist_info}/LICENSE", license_file.read_bytes(), REGULAR))
    info.sort(key=lambda e: e[0])
    entries += info

    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data, _ in entries:
        writer.writerow([name, record_hash(data), len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode("utf-8"), REGULAR))

    date = zip_date(source_date_epoch())
    out = Path(outdir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{DIST}-{version}-{wheel_tag}.whl"
    handle, partial = tempfile.mkstemp(prefix=".build-wheel-", suffix=".whl", dir=out)
    try:
        with os.fdopen(handle, "wb") as f, zipfile.ZipFile(f, "w") as z:
            for name, data, mode in entries:
                entry = zipfile.ZipInfo(name, date_time=date)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.create_system = 3  # Unix: external_attr's high half is the file's mode
                entry.external_attr = mode
                z.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
        os.chmod(partial, 0o644)
        os.replace(partial, wheel)
    except BaseException:
        os.unlink(partial)
        raise
    return wheel


def main(argv: List[str]) -> int:
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print("usage: scripts/build-wheel.py BINARY OUTDIR", file=sys.stderr)
        return 64
    try:
        wheel = build(argv[1], argv[2])
    except BuildError as error:
        print(f"build-wheel: {error}", file=sys.stderr)
        return 1
    print(f"build-wheel: {wheel.name}: {wheel.stat().st_size} bytes", file=sys.stderr)
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
