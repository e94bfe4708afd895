#!/usr/bin/env bash
# Builds and runs Examples/LibraryTour, a small package that uses the library as its guide says (docs/library.md):
# it exits 1 if any of its checks fails, so the front door cannot rot. ~2 minutes (it builds StreamMap again, in its
# own .build folder).
set -euo pipefail
cd "$(dirname "$0")/../Examples/LibraryTour"
swift run LibraryTour
