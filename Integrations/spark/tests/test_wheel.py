"""The ``streammap`` wheel (scripts/build-wheel.py) and ``streammap_spark.binary.packaged_binary``.

Always: where ``packaged_binary`` looks, and the build script's checks (a version that is not PEP 440, a file that is
not ELF, a library outside the manylinux set, the tag from the symbol versions). With ``STREAMMAP_WHEEL=WHEEL``: the
wheel itself — RECORD against every entry, the binary once, 0755 and byte for byte the one it was built from
(``$STREAMMAP_WHEEL_SOURCE``, else the portable build), the tag's glibc the binary's highest GLIBC_ symbol version
(read with objdump, not the script's readelf), METADATA and WHEEL, the package's files, a reproducible rebuild. With
``STREAMMAP_WHEEL_TEST=1`` (scripts/wheel-test.sh, from a virtual environment the wheel was installed into): the
package imported is the installed one, not Integrations/spark/src, and its binary is the wheel's.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, Iterator, List, Optional

import pytest

from conftest import REPO
import streammap_spark
from streammap_spark import binary as binary_module
from streammap_spark.binary import packaged_binary

BUILD_WHEEL = REPO / "scripts" / "build-wheel.py"
SOURCE_PACKAGE = REPO / "Integrations" / "spark" / "src" / "streammap_spark"
WHEEL = os.environ.get("STREAMMAP_WHEEL")
INSTALLED = os.environ.get("STREAMMAP_WHEEL_TEST") == "1"
WHEEL_NAME = re.compile(r"^streammap_spark-(?P<version>[^-]+)-py3-none-manylinux_2_(?P<glibc>[0-9]+)_(?P<arch>\w+)\.whl$")

needs_wheel = pytest.mark.skipif(not WHEEL, reason="STREAMMAP_WHEEL names no wheel (scripts/wheel-test.sh sets it)")
needs_install = pytest.mark.skipif(not INSTALLED, reason="not in a virtual environment the wheel was installed into "
                                                         "(STREAMMAP_WHEEL_TEST=1: scripts/wheel-test.sh)")


def load_build_wheel() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_wheel", BUILD_WHEEL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def executable(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho 0.0.0\n")
    path.chmod(mode)
    return path


# packaged_binary: where it looks.

@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dict[str, Path]:
    """The scripts folders of a made-up environment: its own, the user scheme's, and ``bin/`` beside the package."""
    scripts, user, target = tmp_path / "venv" / "bin", tmp_path / "user" / "bin", tmp_path / "target"
    user_scheme = binary_module._user_scheme()

    def get_path(name: str, scheme: Optional[str] = None, *args: Any, **kwargs: Any) -> str:
        assert name == "scripts"
        if scheme is None:
            return str(scripts)
        assert scheme == user_scheme
        return str(user)
    monkeypatch.setattr(binary_module.sysconfig, "get_path", get_path)
    monkeypatch.setattr(binary_module, "_package_root", lambda: str(target))
    return {"scripts": scripts, "user": user, "target": target / "bin"}


def test_packaged_binary_prefers_the_environments_scripts_folder(folders: Dict[str, Path]) -> None:
    for folder in ("target", "user", "scripts"):
        executable(folders[folder] / "streammap")
        assert packaged_binary() == str(folders[folder] / "streammap")


def test_packaged_binary_is_none_without_an_executable_streammap(folders: Dict[str, Path]) -> None:
    assert packaged_binary() is None
    executable(folders["scripts"] / "streammap", 0o644)         # not executable
    (folders["user"] / "streammap").mkdir(parents=True)         # a folder
    executable(folders["target"] / "streammap-0.2.0")           # another name
    assert packaged_binary() is None


def test_the_user_scheme_is_pips_user_scheme() -> None:
    scheme = binary_module._user_scheme()
    assert scheme in sysconfig.get_scheme_names()
    assert scheme.endswith("_user")


# scripts/build-wheel.py: its checks.

def test_the_tag_is_the_highest_glibc_version_compared_as_numbers() -> None:
    build_wheel = load_build_wheel()
    versions = ["GLIBC_2.2.5", "GLIBC_2.9", "GLIBC_2.17", "GLIBCXX_3.4.29", "CXXABI_1.3.11", "GCC_3.0"]
    assert build_wheel.manylinux_tag(versions, "x86_64") == "manylinux_2_17_x86_64"
    assert build_wheel.highest("GLIBCXX", versions) == (3, 4, 29)
    with pytest.raises(build_wheel.BuildError, match="no GLIBC_"):
        build_wheel.manylinux_tag(["GCC_3.0"], "x86_64")


def test_only_the_manylinux_libraries_are_allowed() -> None:
    build_wheel = load_build_wheel()
    allowed = ["libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libstdc++.so.6",
               "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"]
    assert build_wheel.disallowed(allowed) == []
    assert build_wheel.disallowed(["libc.so.6", "libyajl.so.2", "libz.so.1", "libswiftCore.so"]) == \
        ["libyajl.so.2", "libz.so.1", "libswiftCore.so"]


def test_a_binary_needing_another_library_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    build_wheel = load_build_wheel()
    dynamic = (" 0x0000000000000001 (NEEDED)             Shared library: [libz.so.1]\n"
               " 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]\n")
    monkeypatch.setattr(build_wheel, "version_of", lambda binary: "1.0")
    monkeypatch.setattr(build_wheel, "readelf", lambda *args: dynamic if args == ("-d", sys.executable) else "")
    machine = build_wheel.elf_machine(os.path.realpath(sys.executable))
    monkeypatch.setattr(build_wheel.platform, "machine",
                        lambda: next(a for a, m in build_wheel.ELF_MACHINES.items() if m == machine))
    assert build_wheel.main(["build-wheel.py", sys.executable, str(tmp_path)]) == 1
    assert "needs libz.so.1: outside the manylinux set" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("printed, message", [("0.2.0 beta", "not a canonical PEP 440 version"),
                                              ("v0.2.0", "not a canonical PEP 440 version"),
                                              ("0.2.0", "not an ELF file")])
def test_a_bad_version_or_a_script_is_refused(tmp_path: Path, printed: str, message: str) -> None:
    fake = tmp_path / "streammap"
    fake.write_text(f"#!/bin/sh\necho '{printed}'\n")
    fake.chmod(0o755)
    done = subprocess.run([sys.executable, str(BUILD_WHEEL), str(fake), str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (1, "")
    assert message in done.stderr
    assert not (tmp_path / "out").exists()


# The wheel (STREAMMAP_WHEEL).

def wheel_source() -> str:
    """The binary the wheel was built from."""
    return os.environ.get("STREAMMAP_WHEEL_SOURCE") or str(REPO / ".build" / "portable" / "release" / "streammap")


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def glibc_versions(binary: str) -> List[str]:
    """The GLIBC_ versions of the binary's undefined dynamic symbols, as ``objdump -T`` lists them."""
    listed = subprocess.run(["objdump", "-T", binary], capture_output=True, text=True, check=True,
                            env={**os.environ, "LC_ALL": "C"}).stdout
    return [m for line in listed.splitlines() if "*UND*" in line for m in re.findall(r"\bGLIBC_[0-9.]+\b", line)]


@pytest.fixture(scope="module")
def wheel() -> Iterator[zipfile.ZipFile]:
    assert WHEEL is not None
    with zipfile.ZipFile(WHEEL) as z:
        yield z


@pytest.fixture(scope="module")
def version() -> str:
    return subprocess.run([wheel_source(), "--version"], capture_output=True, text=True, check=True).stdout.strip()


@needs_wheel
def test_the_name_holds_the_binarys_version_and_glibc(wheel: zipfile.ZipFile, version: str) -> None:
    match = WHEEL_NAME.match(os.path.basename(str(WHEEL)))
    assert match, os.path.basename(str(WHEEL))
    assert match["version"] == version
    assert match["arch"] == os.uname().machine
    glibc = max(tuple(int(p) for p in v[len("GLIBC_"):].split(".")) for v in glibc_versions(wheel_source()))
    assert glibc[0] == 2 and int(match["glibc"]) == glibc[1]


@needs_wheel
def test_record_lists_every_entry_with_its_hash_and_size(wheel: zipfile.ZipFile, version: str) -> None:
    record_name = f"streammap_spark-{version}.dist-info/RECORD"
    rows = list(csv.reader(io.StringIO(wheel.read(record_name).decode("utf-8"))))
    assert sorted(r[0] for r in rows) == sorted(wheel.namelist())
    assert len({r[0] for r in rows}) == len(rows)
    for name, digest, size in rows:
        if name == record_name:
            assert (digest, size) == ("", "")
            continue
        data = wheel.read(name)
        assert (digest, size) == (record_hash(data), str(len(data))), name
    assert wheel.namelist()[-1] == record_name


@needs_wheel
def test_the_binary_is_in_it_once_0755_and_byte_for_byte(wheel: zipfile.ZipFile, version: str) -> None:
    entry = f"streammap_spark-{version}.data/scripts/streammap"
    with open(wheel_source(), "rb") as f:
        source = f.read()
    big = [i.filename for i in wheel.infolist() if i.file_size > 1 << 20]
    assert big == [entry]
    info = wheel.getinfo(entry)
    assert info.create_system == 3 and info.external_attr >> 16 == stat.S_IFREG | 0o755
    assert info.compress_type == zipfile.ZIP_DEFLATED
    assert wheel.read(entry) == source
    if INSTALLED:  # pip installed those bytes
        installed = packaged_binary()
        assert installed is not None
        with open(installed, "rb") as f:
            assert f.read() == source
    others = [i for i in wheel.infolist() if i.filename != entry]
    assert all(i.external_attr >> 16 == stat.S_IFREG | 0o644 for i in others)


@needs_wheel
def test_isa_l_travels_as_data_beside_the_binary(wheel: zipfile.ZipFile, version: str) -> None:
    """Where the release tree holds ISA-L beside the binary (lib/streammap/), the wheel carries it and its
    copyright notice as data, which pip installs into the environment's lib/ and share/, where the binary looks."""
    tree = Path(wheel_source()).resolve().parent.parent
    library = tree / "lib" / "streammap" / "libisal.so.2"
    entry = f"streammap_spark-{version}.data/data/lib/streammap/libisal.so.2"
    notice = f"streammap_spark-{version}.data/data/share/doc/streammap/isa-l.copyright"
    if not library.is_file():
        assert entry not in wheel.namelist() and notice not in wheel.namelist()
        return
    assert wheel.read(entry) == library.read_bytes()
    assert b"Intel" in wheel.read(notice)
    if INSTALLED:  # pip put it where the binary looks: BINARY/../lib/streammap/
        installed = packaged_binary()
        assert installed is not None
        beside = Path(os.path.realpath(installed)).parent.parent / "lib" / "streammap" / "libisal.so.2"
        assert beside.read_bytes() == library.read_bytes()


@needs_wheel
def test_metadata_and_wheel_files(wheel: zipfile.ZipFile, version: str) -> None:
    info = f"streammap_spark-{version}.dist-info"
    metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode("utf-8"))
    assert metadata["Metadata-Version"] == "2.1"
    assert (metadata["Name"], metadata["Version"]) == ("streammap-spark", version)
    assert metadata["Summary"] and metadata["License"]
    assert metadata["Requires-Python"] == ">=3.9"
    assert metadata.get_all("Requires-Dist") == ["pyspark<5,>=4.0", "pyarrow>=11", "pandas<3,>=2.2"]
    assert metadata.get_all("Provides-Extra") is None
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload() == (REPO / "Integrations" / "spark" / "README.md").read_text(encoding="utf-8")
    fields = dict(line.split(": ", 1) for line in wheel.read(f"{info}/WHEEL").decode("ascii").splitlines())
    tag = os.path.basename(str(WHEEL))[len(f"streammap_spark-{version}-"):-len(".whl")]
    assert fields == {"Wheel-Version": "1.0", "Generator": fields["Generator"], "Root-Is-Purelib": "false",
                      "Tag": tag}
    assert wheel.read(f"{info}/top_level.txt") == b"streammap_spark\n"


@needs_wheel
def test_the_package_is_the_sources_py_files_and_py_typed(wheel: zipfile.ZipFile) -> None:
    expected = {f"streammap_spark/{p.relative_to(SOURCE_PACKAGE).as_posix()}": p
                for p in SOURCE_PACKAGE.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and (p.suffix == ".py" or p.name == "py.typed")}
    assert "streammap_spark/binary.py" in expected and "streammap_spark/py.typed" in expected
    packaged = {n for n in wheel.namelist() if n.startswith("streammap_spark/")}
    assert packaged == set(expected)
    for name, path in expected.items():
        assert wheel.read(name) == path.read_bytes(), name


@needs_wheel
def test_a_rebuild_gives_the_same_bytes(tmp_path: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    built = []
    for out in ("a", "b"):
        done = subprocess.run([sys.executable, str(BUILD_WHEEL), wheel_source(), str(tmp_path / out)],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        built.append(Path(done.stdout.strip().splitlines()[-1]))
    assert built[0].name == os.path.basename(str(WHEEL))
    assert built[0].read_bytes() == built[1].read_bytes()
    with zipfile.ZipFile(built[0]) as z:
        assert {i.date_time for i in z.infolist()} == {(2023, 11, 14, 22, 13, 20)}
        names = z.namelist()
    info = [n for n in names if ".dist-info/" in n]
    assert names == sorted(n for n in names if n not in info) + sorted(n for n in info if not n.endswith("RECORD")) \
        + [n for n in info if n.endswith("RECORD")]


# The installed wheel (STREAMMAP_WHEEL_TEST=1).

@needs_install
def test_the_package_is_the_installed_one_not_the_sources() -> None:
    package = Path(streammap_spark.__file__).resolve().parent
    site = {Path(sysconfig.get_path(k)).resolve() for k in ("purelib", "platlib")}
    assert package.parent in site, package
    assert package != SOURCE_PACKAGE.resolve() and (REPO / "Integrations").resolve() not in package.parents
    assert Path(sys.prefix).resolve() in package.parents


@needs_install
def test_the_binary_is_the_wheels_on_path_and_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    from streammap_spark import resolve_binary
    expected = os.path.join(sysconfig.get_path("scripts"), "streammap")
    assert packaged_binary() == expected
    monkeypatch.delenv("STREAMMAP_BINARY", raising=False)
    assert shutil.which("streammap") == expected
    assert resolve_binary(None) == os.path.abspath(expected)
    done = subprocess.run([expected, "--field", "a=b"], input=b'{"a":1}\n', capture_output=True)
    assert (done.returncode, done.stdout) == (0, b'{"b":1}\n'), done.stderr
