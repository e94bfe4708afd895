#!/usr/bin/env bash
# Installs what StreamMap needs beyond the Swift toolchain: yajl's headers and library (Debian: libyajl-dev).
# Safe to run again: it does nothing when yajl is already there.
set -euo pipefail
if pkg-config --exists yajl 2>/dev/null && [ -f /usr/include/yajl/yajl_parse.h ]; then
    exit 0
fi
echo "streammap: installing libyajl-dev" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq pkg-config libyajl-dev >/dev/null
