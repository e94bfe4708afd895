#!/usr/bin/env bash
# Builds the portable streammap: the release build with the Swift runtime, yajl, zlib, zstd, xz and bzip2 linked in
# (ISA-L's inflate is loaded at run time where the machine has it, zlib's used elsewhere), so that
# the binary runs on a machine with nothing installed — `ldd` lists only libc, libm, libstdc++ and libgcc_s (and the
# loader), with glibc 2.34 or newer (the build refuses a binary that needs a newer symbol version). It is the binary
# the Spark integration ships to executors (Integrations/spark) and the pip wheel carries, and the one to copy to
# other machines.
#
#   scripts/build-portable.sh            # → .build/portable/release/streammap (prints its path last)
#
# How the C libraries get in statically: the module maps of CYajl, CZlib and CZstd link "yajl", "z" and "zstd"
# (`-lyajl -lz -lzstd`), and the linker takes a directory's .so before its .a. So the build puts a directory
# holding only the static archives (libyajl.a — a link to Debian's libyajl_s.a —, libz.a, libzstd.a) first on
# the library search path, through pkg-config files of its own for the three (the system's are left alone;
# SwiftPM reads PKG_CONFIG_PATH). It builds in its own scratch folder (.build/portable), so the normal debug and
# release builds keep linking them dynamically and are not rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

SCRATCH=.build/portable
LIBDIR="$PWD/$SCRATCH/static-libs"
mkdir -p "$LIBDIR"

# static_lib PKG LIBNAME ARCHIVE...: links the first archive found as $LIBDIR/libLIBNAME.a and writes PKG.pc.
static_lib() {
    local pkg=$1 name=$2 archive=""
    shift 2
    for dir in $(pkg-config --variable=libdir "$pkg" 2>/dev/null) /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib /usr/local/lib; do
        for file in "$@"; do
            if [ -f "$dir/$file" ]; then archive="$dir/$file"; break 2; fi
        done
    done
    [ -n "$archive" ] || { echo "build-portable: the static library of $pkg ($*) is missing (scripts/bootstrap.sh installs it)" >&2; exit 2; }
    ln -sf "$archive" "$LIBDIR/lib$name.a"
    cat > "$LIBDIR/$pkg.pc" <<PC
Name: $pkg
Description: $pkg, linked statically (scripts/build-portable.sh)
Version: $(pkg-config --modversion "$pkg")
Cflags: $(pkg-config --cflags "$pkg")
Libs: -L$LIBDIR -l$name
PC
}
static_lib yajl yajl libyajl_s.a libyajl.a
static_lib zlib z libz.a
static_lib libzstd zstd libzstd.a
static_lib liblzma lzma liblzma.a
# bzip2 has no pkg-config file (CBzip2 links "bz2" by its module map): its archive in the same directory is found
# there first, as the directory is on the search path through the files above.
for dir in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib /usr/local/lib; do
    if [ -f "$dir/libbz2.a" ]; then ln -sf "$dir/libbz2.a" "$LIBDIR/libbz2.a"; break; fi
done
[ -f "$LIBDIR/libbz2.a" ] || { echo "build-portable: the static library of bzip2 (libbz2.a) is missing (scripts/bootstrap.sh installs it)" >&2; exit 2; }

# glibc 2.34 is enough: the one symbol that needed 2.35 (hypotf, called by the static Swift runtime) is the binary's
# own (scripts/portable/glibc-compat.c), an object file on the link line.
COMPAT="$PWD/$SCRATCH/glibc-compat.o"
CC="${CC:-$(command -v cc || command -v clang)}"   # (the Swift toolchain brings clang)
"$CC" -O2 -fPIC -fno-math-errno -c scripts/portable/glibc-compat.c -o "$COMPAT"

PKG_CONFIG_PATH="$LIBDIR" swift build -c release --static-swift-stdlib --product streammap --scratch-path "$SCRATCH" \
    -Xlinker "$COMPAT" >&2
BIN="$PWD/$SCRATCH/release/streammap"

# The point of the exercise: refuse a binary that still needs yajl, zlib, zstd or a Swift library.
if ldd "$BIN" | grep -E 'libyajl|libz\.|libzstd|liblzma|libbz2|libisal|libswift|libFoundation|libdispatch|libBlocksRuntime' >&2; then
    echo "build-portable: $BIN still links the libraries above dynamically" >&2
    exit 1
fi
# ...or a glibc newer than 2.34 (the wheel's manylinux tag is read off these versions: scripts/build-wheel.py).
if objdump -T "$BIN" | grep -E 'GLIBC_2\.(3[5-9]|[4-9][0-9])' >&2; then
    echo "build-portable: $BIN needs the glibc symbol versions above (newer than 2.34)" >&2
    exit 1
fi
echo "$BIN"
