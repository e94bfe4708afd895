#!/usr/bin/env bash
# Tests the install as a user and a packager would use it: scripts/install.sh into a temporary PREFIX, then what a
# person gets — exactly the seven files (ISA-L's inflate beside the binary), a binary that needs no yajl or Swift library and maps Examples/, a man page
# that `man` finds and renders, completions that bash, zsh and fish load from the prefix and complete with —
# then DESTDIR staging, the release tarball (scripts/dist.sh: the same files, byte for byte, plus README.md), and
# uninstall: it leaves the prefix empty and what it did not install in place. Reuses the portable build that
# scripts/spark-test.sh makes (.build/portable); the man page's plugin makes the debug build that scripts/test.sh
# then reuses. ~30 s once built; from a fresh clone after the portable build, 6 min on a loaded machine, most of
# it that debug build (the generate-manual tool: 1.5 min; zsh and fish from apt-get: 15 s).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# What the checks run: man (man-db, groff-base: on this machine image already) and the two other shells.
missing=()
for tool in man:man-db groff:groff-base zsh:zsh fish:fish; do
    command -v "${tool%%:*}" > /dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-test: installing ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" > /dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
fail() { echo "install-test: FAILED: $*" >&2; exit 1; }
ok() { passed=$((passed + 1)); echo "install-test: ok: $*"; }

FILES=$(printf '%s\n' bin/streammap share/bash-completion/completions/streammap share/fish/vendor_completions.d/streammap.fish \
    share/man/man1/streammap.1 share/zsh/site-functions/_streammap lib/streammap/libisal.so.2 share/doc/streammap/isa-l.copyright | sort)
COUNT=$(echo "$FILES" | wc -l)
listed() { (cd "$1" && find . -mindepth 1 \( -type f -o -type l \) | sed 's|^\./||' | sort); }

# 1. Install into a temporary prefix.
prefix="$tmp/prefix"
PREFIX="$prefix" scripts/install.sh > "$tmp/install.log"
[ "$(listed "$prefix")" = "$FILES" ] || fail "installed files differ from the list:"$'\n'"$(listed "$prefix")"
[ -x "$prefix/bin/streammap" ] || fail "bin/streammap is not executable"
ok "PREFIX install: exactly the $COUNT files"

bin="$prefix/bin/streammap"
if ldd "$bin" | grep -E 'libyajl|libswift|libFoundation|libdispatch|libBlocksRuntime'; then
    fail "the installed binary links the libraries above dynamically"
fi
ok "the installed binary needs no yajl or Swift library"

# 2. The installed binary, run from outside the checkout with nothing but the system on its library path, maps the
#    example: John and Jane mapped, lines 4 to 6 rejected (status 1).
mkdir "$tmp/elsewhere"
cp Examples/person.spec.json Examples/people.ndjson "$tmp/elsewhere/"
status=0
(cd "$tmp/elsewhere" && env -i PATH="$prefix/bin:/usr/bin:/bin" LD_LIBRARY_PATH= \
    streammap --spec person.spec.json people.ndjson > "$tmp/mapped" 2> "$tmp/errors") || status=$?
expected='{"firstName":"John","lastName":"Doe","homepage":"http://example.com","age":24,"children":[{"firstName":"Ann","lastName":"Doe","age":6},{"firstName":"Bob","lastName":"Doe","age":6}]}
{"firstName":"Jane","lastName":"Roe","homepage":"http://example.org/~jane","age":31,"children":[]}'
[ "$status" = 1 ] || fail "mapping Examples/people.ndjson exited $status, expected 1"
[ "$(cat "$tmp/mapped")" = "$expected" ] || fail "mapped output differs:"$'\n'"$(cat "$tmp/mapped")"
for rejected in '4: /children/0/age' '5: /last_name' '6: '; do
    grep -q "^streammap: people.ndjson:$rejected" "$tmp/errors" || fail "no rejection 'people.ndjson:$rejected':"$'\n'"$(cat "$tmp/errors")"
done
version=$("$bin" --version)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || fail "--version printed '$version'"
ok "the installed binary maps Examples/people.ndjson and says it is version $version"

# 2b. A gzip input is inflated by the ISA-L installed with the binary (the dynamic loader says which file it
#     opened), and maps as the plain text does.
gzip -c Examples/people.ndjson > "$tmp/people.ndjson.gz"
LD_DEBUG=files "$bin" --spec Examples/person.spec.json "$tmp/people.ndjson.gz" > "$tmp/mapped-gz" 2> "$tmp/ld.log" || true
grep -q "file=$prefix/bin/../lib/streammap/libisal.so.2 " "$tmp/ld.log" \
    || fail "the binary did not load its own libisal.so.2:"$'\n'"$(grep -i isal "$tmp/ld.log")"
cmp -s "$tmp/mapped" "$tmp/mapped-gz" || fail "the gzip input mapped otherwise than the plain one"
ok "a gzip input is inflated by lib/streammap/libisal.so.2 (ISA-L, installed with the binary)"

# 3. The man page: found by name under the prefix, rendered by man -l, and clean under groff's warnings.
page="$prefix/share/man/man1/streammap.1"
MANWIDTH=100 MANPAGER=cat man -l "$page" > "$tmp/man.txt" 2> "$tmp/man.err" || fail "man -l failed: $(cat "$tmp/man.err")"
[ ! -s "$tmp/man.err" ] || fail "man -l warned: $(cat "$tmp/man.err")"
for heading in NAME SYNOPSIS DESCRIPTION "EXIT STATUS"; do
    grep -q "^$heading" "$tmp/man.txt" || fail "the rendered page has no $heading section"
done
for text in '--spec' '--key-style' '--jobs' 'Reshape JSON records at stream speed'; do
    grep -qF -- "$text" "$tmp/man.txt" || fail "the rendered page does not mention $text"
done
MANWIDTH=100 MANPAGER=cat man -M "$prefix/share/man" streammap > "$tmp/man-by-name.txt" 2>&1 \
    || fail "man -M PREFIX/share/man streammap failed: $(cat "$tmp/man-by-name.txt")"
cmp -s "$tmp/man.txt" "$tmp/man-by-name.txt" || fail "man by name shows another page than man -l"
# Every option of every command is on the page, with its help text whole (the generator drops non-ASCII characters:
# they must have been written in ASCII, not lost).
"$bin" --experimental-dump-help | python3 -c '
import json, re, subprocess, sys
page = open(sys.argv[1], encoding="ascii").read()
flat = lambda text: re.sub(r"\s+", "", text.replace("\\&", "").replace("\\(dq", "\"").replace("\\e", "\\"))
ascii = lambda text: subprocess.run(["iconv", "-f", "UTF-8", "-t", "ASCII//TRANSLIT"], input=text, capture_output=True,
                                    text=True, check=True).stdout
source, missing, seen = flat(page), [], 0
spelled = set()  # ".It Fl s , -spec Ar file" spells -s and --spec
for line in page.splitlines():
    words = line.split()
    if words[:1] == [".It"]:
        spelled.update("-" + after for word, after in zip(words, words[1:]) if word in ("Fl", ","))
def visit(command):
    global seen
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True):
            continue
        for name in argument.get("names", []):
            seen += 1
            if ("-" if name["kind"] == "short" else "--") + name["name"] not in spelled:
                missing.append(name["name"])
        if argument.get("abstract") and flat(ascii(argument["abstract"])) not in source:
            missing.append(argument["abstract"])
    for sub in command.get("subcommands", []):
        visit(sub)
visit(json.load(sys.stdin)["command"])
if missing or seen < 20:
    sys.exit(f"{seen} option names; not on the page: {missing}")
' "$page" || fail "streammap.1 misses the options or help texts above"
groff -mandoc -Tutf8 -ww -z "$page" 2> "$tmp/groff.err" || fail "groff failed: $(cat "$tmp/groff.err")"
[ ! -s "$tmp/groff.err" ] || fail "groff -ww warned: $(cat "$tmp/groff.err")"
ok "man renders streammap.1 ($(wc -l < "$tmp/man.txt") lines), also found as 'man streammap' under the prefix"

# 4. Completions: bash, zsh and fish each load theirs from the prefix, as a user's shell would, and complete with it.
mkdir -p "$tmp/home"
bash_completion="$prefix/share/bash-completion/completions/streammap"
registered=$(bash -c 'source "$1" && complete -p streammap' _ "$bash_completion") || fail "bash did not load the completion"
[ "$registered" = "complete -o filenames -F _streammap streammap" ] || fail "bash registered: $registered"
# And it completes, as bash calls it: 'streammap ch' to the subcommand, 'streammap map --key-st' to the option.
complete_words() {
    bash -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _streammap streammap "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_completion" "$@"
}
[ "$(complete_words streammap ch)" = check ] || fail "bash completes 'streammap ch' to: $(complete_words streammap ch)"
[ "$(complete_words streammap map --key-st)" = --key-style ] \
    || fail "bash completes 'streammap map --key-st' to: $(complete_words streammap map --key-st)"
ok "bash loads the completion ($registered) and completes a subcommand and an option"
# zsh: compinit, with the prefix's site-functions on fpath, binds _streammap to streammap.
bound=$(HOME="$tmp/home" zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -D; print -r -- ${_comps[streammap]}' \
    _ "$prefix/share/zsh/site-functions") || fail "zsh compinit failed"
[ "$bound" = _streammap ] || fail "zsh bound streammap to '$bound'"
ok "zsh's compinit finds _streammap under the prefix and binds it"
# fish: finds the completion by itself under PREFIX/share (XDG_DATA_DIRS) and completes with it.
fished=$(HOME="$tmp/home" XDG_DATA_DIRS="$prefix/share:/usr/share" PATH="$prefix/bin:$PATH" \
    fish -c 'complete -C "streammap ch"; complete -C "streammap map --key-st"' | cut -f1 | tr '\n' ' ')
[ "$fished" = "check --key-style " ] || fail "fish completes 'streammap ch' and 'streammap map --key-st' to: $fished"
ok "fish finds streammap.fish under the prefix and completes a subcommand and an option"

# 5. DESTDIR, as a packager stages: the files land under DESTDIR/PREFIX, identical; uninstall with the same two
#    removes them and the folders left empty, and leaves a file it did not install (and its folder) alone.
dest="$tmp/dest"
mkdir -p "$dest/usr/share/man/man1"
echo "not ours" > "$dest/usr/share/man/man1/other.1"
DESTDIR="$dest" PREFIX=/usr scripts/install.sh > "$tmp/install-destdir.log"
[ "$(listed "$dest/usr" | grep -v other.1)" = "$FILES" ] || fail "DESTDIR install: $(listed "$dest")"
for file in $FILES; do cmp -s "$prefix/$file" "$dest/usr/$file" || fail "DESTDIR's $file differs from PREFIX's"; done
DESTDIR="$dest" PREFIX=/usr scripts/install.sh --uninstall > "$tmp/uninstall-destdir.log"
[ "$(cd "$dest" && find . -mindepth 1 | sort | tr '\n' ' ')" = "./usr ./usr/share ./usr/share/man ./usr/share/man/man1 ./usr/share/man/man1/other.1 " ] \
    || fail "DESTDIR uninstall left: $(cd "$dest" && find . -mindepth 1 | sort | tr '\n' ' ')"
ok "DESTDIR=… PREFIX=/usr installs the same files; uninstall removes them and keeps what it did not install"

# 6. The release tarball: one folder streammap-VERSION-linux-ARCH holding the installed files, byte for byte,
#    and README.md.
tarball=$(OUT="$tmp/dist" scripts/dist.sh 2> "$tmp/dist.log" | tail -1)
name="streammap-$version-linux-$(uname -m)"
[ "$(basename "$tarball")" = "$name.tar.gz" ] || fail "the tarball is named $(basename "$tarball")"
extra=README.md; [ -f LICENSE ] && extra=$(printf 'LICENSE\nREADME.md')
[ "$(tar -tzf "$tarball" | grep -v '/$' | sort)" = "$(printf '%s\n' $FILES $extra | sed "s|^|$name/|" | sort)" ] \
    || fail "the tarball holds:"$'\n'"$(tar -tzf "$tarball")"
mkdir "$tmp/unpacked"
tar -C "$tmp/unpacked" -xzf "$tarball"
for file in $FILES; do cmp -s "$prefix/$file" "$tmp/unpacked/$name/$file" || fail "the tarball's $file differs"; done
[ -x "$tmp/unpacked/$name/bin/streammap" ] || fail "the tarball's bin/streammap is not executable"
cmp -s README.md "$tmp/unpacked/$name/README.md" || fail "the tarball's README.md differs"
ok "$name.tar.gz holds exactly the installed files and README.md ($(du -k "$tarball" | cut -f1) KiB)"

# 7. Uninstall leaves the prefix empty.
PREFIX="$prefix" scripts/install.sh --uninstall > "$tmp/uninstall.log"
[ "$(wc -l < "$tmp/uninstall.log")" = "$COUNT" ] || fail "uninstall said: $(cat "$tmp/uninstall.log")"
[ -d "$prefix" ] && [ -z "$(ls -A "$prefix")" ] || fail "uninstall left: $(cd "$prefix" && find . -mindepth 1)"
PREFIX="$prefix" scripts/install.sh --uninstall > "$tmp/uninstall-again.log"
[ ! -s "$tmp/uninstall-again.log" ] || fail "a second uninstall removed: $(cat "$tmp/uninstall-again.log")"
ok "uninstall removes the $COUNT files and the folders it left empty: the prefix is empty"

echo "install-test: $passed passed, 0 failed"
