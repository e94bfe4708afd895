#!/usr/bin/env bash
# The wheel as a user gets it: `pip install streammap_spark-….whl` into a clean virtual environment, then the CLI
# and the Spark stage from what pip installed, nothing from the source tree. Builds the portable binary
# (scripts/build-portable.sh; nothing to do when spark-test.sh built it before), strips its DWARF as
# scripts/install.sh does for the release tree that scripts/dist.sh packs, builds the wheel with
# scripts/build-wheel.py into .build/dist-wheel, recreates .build/wheel-venv and installs the wheel (with its
# dependencies: PySpark 4, pyarrow, pandas) and pytest there. Then, with that environment's bin/ first on PATH and no
# STREAMMAP_BINARY: `streammap` is the wheel's file (byte for byte), prints the binary's version and maps a record;
# streammap_spark is imported from the environment's site-packages and its packaged_binary() finds the wheel's
# binary; and pytest runs Integrations/spark/tests/test_wheel.py (the wheel file itself: RECORD, the 0755 binary,
# the manylinux tag against the binary's GLIBC versions, a reproducible rebuild) and test_stage.py (the Spark stage
# on a local[2,2] session, with the installed package and binary) from a folder outside the repository, with
# --import-mode=importlib, so that Integrations/spark/src is never on sys.path. Installs what is missing: Java 17 and
# python3-venv with apt-get. About 2 minutes on 2 cores after the portable build: the pip install 30 s (PySpark from
# pip's cache, which scripts/spark-test.sh fills; a minute without it), the tests 1.5 min.
#
#   scripts/wheel-test.sh                                 # everything
#   scripts/wheel-test.sh -k record                       # extra arguments go to pytest
#   WHEEL_TEST_BINARY=path/to/streammap scripts/wheel-test.sh   # a portable binary built already: no build
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
started=$SECONDS

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
apt_install() {
    echo "wheel-test: installing $*" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
command -v java >/dev/null || apt_install openjdk-17-jre-headless
command -v python3 >/dev/null || apt_install python3

fail() { echo "wheel-test: FAILED: $*" >&2; exit 1; }
ok() { echo "wheel-test: ok: $*"; }

BIN="${WHEEL_TEST_BINARY:-$(scripts/build-portable.sh | tail -1)}"
case "$BIN" in /*) ;; *) BIN="$ROOT/$BIN" ;; esac
[ -x "$BIN" ] || fail "$BIN: no portable streammap binary"

# The wheel, from the binary as the release tree holds it (without its DWARF, with its symbols).
OUT="$ROOT/.build/dist-wheel"
rm -rf "$OUT"
mkdir -p "$OUT/stage"
SOURCE="$OUT/stage/streammap"
strip --strip-debug -o "$SOURCE" "$BIN"
chmod 0755 "$SOURCE"
# ISA-L beside it, as scripts/install.sh stages the release tree (BINARY/../lib/streammap/).
ISAL=$(readlink -f "$(ldconfig -p | awk '$1 == "libisal.so.2" {print $NF; exit}')")
[ -f "$ISAL" ] || fail "no libisal.so.2 here (scripts/bootstrap.sh installs libisal-dev)"
mkdir -p "$OUT/lib/streammap" "$OUT/share/doc/streammap"
strip --strip-debug -o "$OUT/lib/streammap/libisal.so.2" "$ISAL"
cp /usr/share/doc/libisal2/copyright "$OUT/share/doc/streammap/isa-l.copyright"
WHEEL=$(scripts/build-wheel.py "$SOURCE" "$OUT" | tail -1)
ok "$(basename "$WHEEL"): $(du -k "$WHEEL" | cut -f1) KiB (the binary: $(du -k "$SOURCE" | cut -f1) KiB)"

# A clean environment, and the wheel installed into it with its dependencies.
VENV="$ROOT/.build/wheel-venv"
rm -rf "$VENV"
python3 -m venv "$VENV" 2>/dev/null || { rm -rf "$VENV"; apt_install python3-venv; python3 -m venv "$VENV"; }
VBIN="$VENV/bin"
unset STREAMMAP_BINARY
export PATH="$VBIN:$PATH"
hash -r
python -m pip install -q --disable-pip-version-check "$WHEEL" 'pytest>=7'
ok "pip install $(basename "$WHEEL") pytest into a new environment ($((SECONDS - started)) s so far)"

# (a) The CLI, as a user of that environment runs it.
[ "$(command -v streammap)" = "$VBIN/streammap" ] || fail "streammap on PATH is $(command -v streammap), not $VBIN/streammap"
cmp -s "$VBIN/streammap" "$SOURCE" || fail "$VBIN/streammap is not the wheel's binary"
[ "$(stat -c %a "$VBIN/streammap")" = 755 ] || fail "$VBIN/streammap has mode $(stat -c %a "$VBIN/streammap")"
version=$("$BIN" --version)
[ "$(streammap --version)" = "$version" ] || fail "streammap --version printed '$(streammap --version)', not '$version'"
mapped=$(printf '{"a":1}\n' | streammap --field a=b)
[ "$mapped" = '{"b":1}' ] || fail "streammap --field a=b printed '$mapped'"
ok "streammap on PATH is the wheel's ($VBIN/streammap, 0755): --version $version, --field a=b maps {\"a\":1} to $mapped"
cmp -s "$VENV/lib/streammap/libisal.so.2" "$OUT/lib/streammap/libisal.so.2" || fail "the environment has no lib/streammap/libisal.so.2 of the wheel"
gz=$(printf '{"a":1}\n' | gzip -c | LD_DEBUG=files streammap --field a=b 2> "$OUT/ld.log")
[ "$gz" = '{"b":1}' ] || fail "a gzip input mapped to '$gz'"
grep -q "file=$(realpath "$VBIN")/../lib/streammap/libisal.so.2 " "$OUT/ld.log" || fail "streammap did not load the wheel's libisal.so.2"
ok "a gzip input is inflated by the wheel's ISA-L ($VENV/lib/streammap/libisal.so.2)"

# (b) The package finds it, imported from the environment's site-packages.
found=$(cd / && python -c '
import os, sysconfig, streammap_spark
from streammap_spark.binary import packaged_binary
print(os.path.realpath(packaged_binary() or "none"))
print(os.path.realpath(os.path.dirname(os.path.dirname(streammap_spark.__file__))))
print(os.path.realpath(sysconfig.get_path("platlib")))')
{ read -r packaged; read -r imported; read -r site; } <<< "$found"
[ "$packaged" = "$(realpath "$VBIN/streammap")" ] || fail "packaged_binary() is $packaged"
[ "$imported" = "$site" ] || fail "streammap_spark is imported from $imported, not $site"
ok "packaged_binary() is $packaged; streammap_spark comes from $imported"

# (c) The wheel's tests and the Spark stage, with the installed package, from a folder outside the repository.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tests="$ROOT/Integrations/spark/tests"
(cd "$work" && STREAMMAP_WHEEL_TEST=1 STREAMMAP_WHEEL="$WHEEL" STREAMMAP_WHEEL_SOURCE="$SOURCE" \
    PYTHONPATH="$tests" PYSPARK_PYTHON="$VBIN/python" \
    python -m pytest -q -p no:cacheprovider --import-mode=importlib \
        "$tests/test_wheel.py" "$tests/test_stage.py" "$tests/test_columns.py" \
        -k "not retried and not killed and not generated" "$@")
echo "wheel-test: passed in $((SECONDS - started)) s: $WHEEL"
