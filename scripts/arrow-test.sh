#!/usr/bin/env bash
# Arrow output (`streammap --to arrow`) read by real readers: pyarrow, DuckDB and Polars (Integrations/arrow).
# Installs what is missing: python3 and python3-venv with apt-get, then pyarrow, duckdb, polars and pytest in a
# virtual environment under the build folder (.build/arrow-venv). Builds the portable binary
# (scripts/build-portable.sh; already built when spark-test.sh ran before it), then runs pytest: generated specs
# and records through --to arrow (stream and file, both engines, --jobs) against the NDJSON output, typed; the
# tweet benchmark's output read by DuckDB and Polars; the errors; docs/cli.md's and README.md's reader blocks
# (about 1 minute after the build).
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
"$VENV/bin/python" -c 'import pyarrow, duckdb, polars, pytest' 2>/dev/null \
    || "$VENV/bin/pip" install -q 'pyarrow>=15' 'duckdb>=1.1' 'polars>=1.0' 'pytest>=7'

BIN=$(scripts/build-portable.sh | tail -1)
cd Integrations/arrow
PATH="$PWD/../../$VENV/bin:$PATH" STREAMMAP_BINARY="$BIN" \
    "../../$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@" tests
