#!/usr/bin/env bash
# Builds the portable streammap: the release build with the Swift runtime *and yajl* linked in, so that the binary
# runs on a machine with nothing installed — `ldd` lists only libc, libm, libstdc++ and libgcc_s (and the loader).
# It is the binary the Spark integration ships to executors (Integrations/spark), and the one to copy to other
# machines.
#
#   scripts/build-portable.sh            # → .build/portable/release/streammap (prints its path last)
#
# How yajl gets in statically: CYajl's module map links "yajl" (`-lyajl`), and the linker takes a directory's
# libyajl.so before its libyajl.a. Debian's libyajl-dev ships the static library as libyajl_s.a, so the build
# puts a directory holding only `libyajl.a` (a link to libyajl_s.a) first on the library search path, through a
# pkg-config file of its own for yajl (the system's is left alone). It builds
# in its own scratch folder (.build/portable), so the normal debug and release builds keep linking yajl
# dynamically and are not rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

STATIC_YAJL=""
for dir in $(pkg-config --variable=libdir yajl 2>/dev/null) /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib /usr/local/lib; do
    if [ -f "$dir/libyajl_s.a" ]; then STATIC_YAJL="$dir/libyajl_s.a"; break; fi
    if [ -f "$dir/libyajl.a" ]; then STATIC_YAJL="$dir/libyajl.a"; break; fi
done
[ -n "$STATIC_YAJL" ] || { echo "build-portable: yajl's static library (libyajl_s.a) is missing (apt-get install libyajl-dev)" >&2; exit 2; }

SCRATCH=.build/portable
LIBDIR="$PWD/$SCRATCH/static-libs"
mkdir -p "$LIBDIR"
ln -sf "$STATIC_YAJL" "$LIBDIR/libyajl.a"

# yajl's pkg-config file, pointing the library search at that directory first (SwiftPM reads PKG_CONFIG_PATH).
cat > "$LIBDIR/yajl.pc" <<PC
Name: yajl
Description: yajl, linked statically (scripts/build-portable.sh)
Version: $(pkg-config --modversion yajl)
Cflags: $(pkg-config --cflags yajl)
Libs: -L$LIBDIR -lyajl
PC
PKG_CONFIG_PATH="$LIBDIR" swift build -c release --static-swift-stdlib --product streammap --scratch-path "$SCRATCH" >&2
BIN="$PWD/$SCRATCH/release/streammap"

# The point of the exercise: refuse a binary that still needs yajl or a Swift library.
if ldd "$BIN" | grep -E 'libyajl|libswift|libFoundation|libdispatch|libBlocksRuntime' >&2; then
    echo "build-portable: $BIN still links the libraries above dynamically" >&2
    exit 1
fi
echo "$BIN"
