#!/usr/bin/env bash
# The Spark integration's tests (Integrations/spark) on a real local[2,2] Spark session. Installs what is missing:
# Java 17 (Debian's openjdk-17-jre-headless) and python3-venv with apt-get, PySpark 4 and pytest in a virtual
# environment under the build folder (.build/spark-venv), with pyarrow and pandas for the typed stage. Builds the
# portable binary (scripts/build-portable.sh), then runs pytest: the chunk plan, one chunk through the binary, the
# binary's dependencies, the README's pipe blocks, the PySpark example of README.md and docs/spark.md, the text
# stage against a serial run on a generated corpus of 200 000 records, and the typed stage (columns=True) against
# a serial --to arrow run and the text stage on a corpus and generated specs (about 4 minutes after the build).
#
#   scripts/spark-test.sh              # everything
#   scripts/spark-test.sh -k retried   # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
apt_install() {
    echo "spark-test: installing $*" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
command -v java >/dev/null || apt_install openjdk-17-jre-headless
command -v python3 >/dev/null || apt_install python3

VENV=.build/spark-venv
if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p .build
    python3 -m venv "$VENV" 2>/dev/null || { rm -rf "$VENV"; apt_install python3-venv; python3 -m venv "$VENV"; }
fi
# pyarrow and pandas: the typed stage's mapInArrow (PySpark 4 warns on pandas 3).
"$VENV/bin/python" -c 'import pyspark, pyarrow, pandas, pytest' 2>/dev/null \
    || "$VENV/bin/pip" install -q 'pyspark>=4.0,<5' 'pyarrow>=11' 'pandas>=2.2,<3' 'pytest>=7'
"$VENV/bin/pip" install -q --no-deps -e Integrations/spark

BIN=$(scripts/build-portable.sh | tail -1)
cd Integrations/spark
STREAMMAP_BINARY="$BIN" PYSPARK_PYTHON="$PWD/../../$VENV/bin/python" \
    "../../$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
