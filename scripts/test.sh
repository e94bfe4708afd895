#!/usr/bin/env bash
# Runs the whole test suite: installs yajl when missing, then `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
swift test "$@"
