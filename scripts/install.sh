#!/usr/bin/env bash
# Installs streammap: the portable release binary (scripts/build-portable.sh: the Swift runtime and yajl linked in),
# its man page (streammap.1, generated from the argument parser by swift-argument-parser's generate-manual)
# and its bash, zsh and fish completions (`streammap --generate-completion-script SHELL`).
#
#   scripts/install.sh                          # into /usr/local (builds as you, copies with sudo if need be)
#   PREFIX=~/.local scripts/install.sh          # into another prefix
#   DESTDIR=/tmp/pkg PREFIX=/usr scripts/install.sh   # staged for a package: files land in $DESTDIR$PREFIX
#   scripts/install.sh --uninstall              # removes exactly the files below (same PREFIX and DESTDIR), then
#                                               # the folders among their parents that are left empty, up to PREFIX
#   scripts/install.sh --stage DIR              # builds the tree below into DIR without installing (scripts/dist.sh)
#
# What it installs, relative to PREFIX (and nothing else):
#   bin/streammap
#   share/man/man1/streammap.1
#   share/bash-completion/completions/streammap
#   share/zsh/site-functions/_streammap
#   share/fish/vendor_completions.d/streammap.fish
#   lib/streammap/libisal.so.2                  # ISA-L's inflate, where the building machine has libisal.so.2:
#   share/doc/streammap/isa-l.copyright         #   the binary loads it from there (2.3x zlib's speed on gzip input)
#
# The build needs the Swift toolchain and libyajl-dev (scripts/bootstrap.sh installs the latter); the installed
# files need nothing: the binary depends only on libc, libm, libstdc++ and libgcc_s (ISA-L, which it loads at run
# time, on libc).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

FILES=(
    bin/streammap
    share/man/man1/streammap.1
    share/bash-completion/completions/streammap
    share/zsh/site-functions/_streammap
    share/fish/vendor_completions.d/streammap.fish
    lib/streammap/libisal.so.2
    share/doc/streammap/isa-l.copyright
)

# ISA-L's shared library on this machine (the file, not a link), and its copyright notice: installed beside the
# binary when both are here. ISA-L is BSD-3-Clause: its notice goes with it.
isal_library() { readlink -f "$(ldconfig -p 2>/dev/null | awk '$1 == "libisal.so.2" {print $NF; exit}')" 2>/dev/null || true; }
ISAL_COPYRIGHT=/usr/share/doc/libisal2/copyright

PREFIX="${PREFIX:-/usr/local}"
PREFIX="${PREFIX%/}"
DESTDIR="${DESTDIR:-}"
case "$PREFIX" in /*) ;; *) echo "install: PREFIX must be an absolute path (got '$PREFIX')" >&2; exit 64 ;; esac
TARGET="${DESTDIR%/}$PREFIX"

# Builds run as the caller (so that .build stays theirs); only copying into, or removing from, a TARGET the caller
# cannot write goes through sudo.
AS_OWNER=""
writable="$TARGET"
while [ ! -e "$writable" ]; do writable=$(dirname "$writable"); done
if [ "$(id -u)" -ne 0 ] && [ ! -w "$writable" ]; then AS_OWNER="sudo"; fi

# Builds the installed tree into $1: the portable binary, then what it generates about itself.
stage() {
    local dir="$1"
    local bin manual day tool work
    bin=$(cd "$ROOT" && scripts/build-portable.sh | tail -1)

    # The man page: swift-argument-parser's generate-manual turns the JSON of `streammap --experimental-dump-help`
    # into mdoc. Its plugin builds the tool (and the package: debug, the build that `swift test` reuses). The tool
    # drops every non-ASCII character of the help texts ("model → original shape" comes out as "model  original
    # shape"), so it reads the dump of the portable binary through iconv, which writes them in ASCII ("->", "...")
    # first. Dated by the last commit, so that one commit gives one page.
    day=$(git -C "$ROOT" log -1 --format=%cs 2>/dev/null || date -u +%F)
    (cd "$ROOT" && swift package plugin generate-manual --configuration debug --date "$day") >&2
    tool=$(ls "$ROOT"/.build/*/debug/generate-manual-tool 2>/dev/null | head -1)
    [ -x "$tool" ] || { echo "install: the plugin built no .build/*/debug/generate-manual-tool" >&2; exit 1; }
    work=$(mktemp -d)
    printf '#!/usr/bin/env bash\nset -o pipefail\n"%s" "$@" | iconv -f UTF-8 -t ASCII//TRANSLIT\n' "$bin" > "$work/streammap"
    chmod +x "$work/streammap"
    "$tool" "$work/streammap" --date "$day" --output-directory "$work" >&2
    manual="$work/streammap.1"
    [ -s "$manual" ] || { echo "install: generate-manual wrote no streammap.1" >&2; exit 1; }

    mkdir -p "$dir/bin" "$dir/share/man/man1" "$dir/share/bash-completion/completions" \
        "$dir/share/zsh/site-functions" "$dir/share/fish/vendor_completions.d"
    # Without its DWARF (a fifth of its size) but with its symbols, so that a crash's backtrace still names functions.
    strip --strip-debug -o "$dir/bin/streammap" "$bin"
    chmod 0755 "$dir/bin/streammap"
    # The help texts' blank lines between paragraphs come out as empty lines, which mdoc renders but warns about
    # ("mdoc warning: Empty input line"): they become the paragraph macro, which renders the same.
    sed 's/^$/.Pp/' "$manual" > "$dir/share/man/man1/streammap.1"
    rm -rf "$work"
    "$bin" --generate-completion-script bash > "$dir/share/bash-completion/completions/streammap"
    "$bin" --generate-completion-script zsh > "$dir/share/zsh/site-functions/_streammap"
    "$bin" --generate-completion-script fish > "$dir/share/fish/vendor_completions.d/streammap.fish"
    chmod 0644 "$dir/share/man/man1/streammap.1" "$dir/share/bash-completion/completions/streammap" \
        "$dir/share/zsh/site-functions/_streammap" "$dir/share/fish/vendor_completions.d/streammap.fish"
    local isal
    isal=$(isal_library)
    if [ -n "$isal" ] && [ -f "$isal" ] && [ -f "$ISAL_COPYRIGHT" ]; then
        mkdir -p "$dir/lib/streammap" "$dir/share/doc/streammap"
        strip --strip-debug -o "$dir/lib/streammap/libisal.so.2" "$isal"
        cp "$ISAL_COPYRIGHT" "$dir/share/doc/streammap/isa-l.copyright"
        chmod 0644 "$dir/lib/streammap/libisal.so.2" "$dir/share/doc/streammap/isa-l.copyright"
    else
        echo "install: no libisal.so.2 (libisal-dev) here: the binary will inflate gzip with zlib where the system has no ISA-L" >&2
    fi
}

uninstall() {
    local file dir
    for file in "${FILES[@]}"; do
        if [ -e "$TARGET/$file" ] || [ -L "$TARGET/$file" ]; then
            $AS_OWNER rm -f "$TARGET/$file"
            echo "removed $TARGET/$file"
        fi
    done
    # Folders left empty, deepest first, never PREFIX itself nor anything above it.
    for file in "${FILES[@]}"; do
        dir=$(dirname "$file")
        while [ "$dir" != "." ]; do
            $AS_OWNER rmdir "$TARGET/$dir" 2>/dev/null || break
            dir=$(dirname "$dir")
        done
    done
}

case "${1:-}" in
    --uninstall)
        uninstall
        ;;
    --stage)
        [ $# -eq 2 ] || { echo "usage: scripts/install.sh --stage DIR" >&2; exit 64; }
        stage "$2"
        ;;
    "")
        staging=$(mktemp -d)
        trap 'rm -rf "$staging"' EXIT
        stage "$staging"
        for file in "${FILES[@]}"; do
            [ -e "$staging/$file" ] || continue  # (ISA-L, where this machine had none)
            mode=0644; [ "${file%%/*}" = bin ] && mode=0755
            $AS_OWNER install -D -m "$mode" "$staging/$file" "$TARGET/$file"
            echo "installed $TARGET/$file"
        done
        ;;
    *)
        echo "usage: [PREFIX=/usr/local] [DESTDIR=] scripts/install.sh [--uninstall | --stage DIR]" >&2
        exit 64
        ;;
esac
