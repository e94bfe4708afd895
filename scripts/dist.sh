#!/usr/bin/env bash
# Builds the release tarball: streammap-VERSION-linux-ARCH.tar.gz (ARCH from `uname -m`, x86_64 here), holding
# one folder streammap-VERSION-linux-ARCH/ with the files scripts/install.sh installs (bin/, share/…) and
# README.md (and LICENSE when there is one). VERSION is what the built binary's `streammap --version` prints (one
# constant in Sources/streammap/StreamMapCommand.swift). The archive is reproducible: names sorted, owner root,
# every date the last commit's.
#
# Beside it, the wheel that `pip install` takes (scripts/build-wheel.py, from the same stripped bin/streammap):
# streammap_spark-VERSION-py3-none-manylinux_2_NN_ARCH.whl, the CLI plus the Spark integration's package. The script
# prints the wheel's path, then the tarball's, last (callers take the tarball with `| tail -1`). The wheel needs
# python3 (3.9+) and readelf.
#
#   scripts/dist.sh            # → .build/dist/streammap-VERSION-linux-x86_64.tar.gz (prints its path last)
#                              #   and .build/dist/streammap_spark-VERSION-py3-none-manylinux_2_NN_x86_64.whl (the line before)
#   OUT=/tmp scripts/dist.sh   # into another folder
#
# Installing from it: tar -xzf streammap-….tar.gz && cp -R streammap-…/bin streammap-…/share /usr/local/
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT="${OUT:-$ROOT/.build/dist}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/install.sh --stage "$work/tree"

version=$("$work/tree/bin/streammap" --version)
[[ "$version" =~ ^[0-9A-Za-z.+-]+$ ]] || { echo "dist: 'streammap --version' printed '$version'" >&2; exit 1; }
name="streammap-$version-linux-$(uname -m)"
mv "$work/tree" "$work/$name"
cp README.md "$work/$name/"
[ -f LICENSE ] && cp LICENSE "$work/$name/"

epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tarball="$OUT/$name.tar.gz"
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - "$name" | gzip -9n > "$tarball"

command -v python3 >/dev/null || { echo "dist: python3 (3.9+) is missing: it builds the wheel (scripts/build-wheel.py)" >&2; exit 1; }
wheel=$(SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$epoch}" python3 scripts/build-wheel.py "$work/$name/bin/streammap" "$OUT" | tail -1)
echo "$wheel"
echo "$tarball"
