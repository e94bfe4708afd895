#!/usr/bin/env bash
# Installs what StreamMap needs beyond the Swift toolchain: the headers and libraries of yajl (Debian: libyajl-dev),
# zlib (zlib1g-dev), zstd (libzstd-dev), xz (liblzma-dev) and bzip2 (libbz2-dev) — compressed input and output — and ISA-L (libisal-dev: its inflate,
# loaded at run time, is about twice as fast as zlib's). Safe to run again: it does nothing when
# they are all there.
set -euo pipefail
if pkg-config --exists yajl zlib libzstd 2>/dev/null && [ -f /usr/include/yajl/yajl_parse.h ] \
    && [ -f /usr/include/zlib.h ] && [ -f /usr/include/zstd.h ] && [ -f /usr/include/isa-l/igzip_lib.h ] \
    && pkg-config --exists liblzma 2>/dev/null && [ -f /usr/include/bzlib.h ]; then
    exit 0
fi
echo "streammap: installing libyajl-dev zlib1g-dev libzstd-dev liblzma-dev libbz2-dev libisal-dev" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq pkg-config libyajl-dev zlib1g-dev libzstd-dev liblzma-dev libbz2-dev libisal-dev >/dev/null
