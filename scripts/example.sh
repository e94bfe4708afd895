#!/usr/bin/env bash
# Builds streammap and maps the bundled example (Hydrant's Person/children records).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
swift build --product streammap
echo "--- mapped (stdout); rejected records are reported on stderr:" >&2
.build/debug/streammap --spec Examples/person.spec.json Examples/people.ndjson || status=$?
echo "--- exit status ${status:-0} (1 = some records were rejected)" >&2
