#!/usr/bin/env bash
# The library's documentation: builds the DocC archive of the StreamMap module (Sources/StreamMap/StreamMap.docc,
# swift-docc-plugin) with warnings as errors, then fails if a public symbol has no doc comment
# (scripts/doc_coverage.py). The archive lands in .build/plugins/Swift-DocC/outputs/StreamMap.doccarchive.
#
#   scripts/docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift package generate-documentation --target StreamMap --warnings-as-errors
swift package dump-symbol-graph --minimum-access-level public >/dev/null
python3 scripts/doc_coverage.py "$(swift build --show-bin-path)/../symbolgraph/StreamMap.symbols.json"
