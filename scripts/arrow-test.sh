#!/usr/bin/env bash
# Arrow output (`streammap --to arrow`) read by real readers: pyarrow, Polars and DuckDB (Integrations/arrow).
# Installs what is missing: python3 and python3-venv with apt-get, then pyarrow, polars, duckdb and pytest in a
# virtual environment under the build folder (.build/arrow-venv). Builds the portable binary
# (scripts/build-portable.sh; nothing to do when spark-test.sh built it before), then runs pytest in
# Integrations/arrow: 30 generated typed specs and their records through --to arrow (stream, file, both engines,
# --jobs) against the NDJSON output, typed; the tweet benchmark's output read by DuckDB and Polars; the errors and
# empty outputs; docs/cli.md's and README.md's reader blocks. About 40 seconds on 2 cores after the build (the
# first run adds the pip install, about a minute).
#
#   scripts/arrow-test.sh              # everything
#   scripts/arrow-test.sh -k duckdb    # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
apt_install() {
    echo "arrow-test: installing $*" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
command -v python3 >/dev/null || apt_install python3

VENV=.build/arrow-venv
if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p .build
    python3 -m venv "$VENV" 2>/dev/null || { rm -rf "$VENV"; apt_install python3-venv; python3 -m venv "$VENV"; }
fi
"$VENV/bin/python" -c 'import pyarrow, polars, duckdb, pytest' 2>/dev/null \
    || "$VENV/bin/pip" install -q 'pyarrow>=15' polars duckdb 'pytest>=7'

BIN=$(scripts/build-portable.sh | tail -1)
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
VENV_BIN="$PWD/$VENV/bin"
cd Integrations/arrow
PATH="$VENV_BIN:$PATH" STREAMMAP_BINARY="$BIN" "$VENV_BIN/python" -m pytest -q -p no:cacheprovider "$@"
