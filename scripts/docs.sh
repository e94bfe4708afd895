#!/usr/bin/env bash
# The library's documentation: builds the DocC archive of the StreamMap module (Sources/StreamMap/StreamMap.docc,
# swift-docc-plugin) with warnings as errors, then fails if a public symbol has no doc comment
# (scripts/doc_coverage.py). The archive lands in .build/plugins/Swift-DocC/outputs/StreamMap.doccarchive. ~2 min.
#
#   scripts/docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift package generate-documentation --target StreamMap --warnings-as-errors
# The public symbol graph the plugin extracted for DocC (under the package's identity, the checkout's name).
graph=$(find "$(swift build --show-bin-path)/../extracted-symbols" -path '*/StreamMap/StreamMap.symbols.json' | head -1)
python3 scripts/doc_coverage.py "$graph"
