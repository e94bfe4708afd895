#!/usr/bin/env bash
# StreamMap side by side with its peers. From the repository root:
#
#   Benchmarks/compare.sh [SIZE_MB]        # default 100 (MB = 10^6 bytes)
#
# Builds streammap (release) and the small peer programs, generates a deterministic corpus in a temporary
# directory (never under the repository), runs every tool interleaved over ROUNDS rounds (default 5), checks every
# output against streammap's, and writes Benchmarks/results/comparison.{md,json,svg}. See Benchmarks/README.md.
#
# Environment: ROUNDS (5), STREAMMAP_BIN (use this binary instead of building one), CORPUS_SEED (20140831),
# KEEP_WORK=1 (keep the temporary directory with the corpus and every tool's output), RESULTS_DIR,
# TIMED_OUTPUT=file (timed runs write their output to a file; by default to /dev/null, and a first, untimed run of
# each tool writes it to a file for the checks).
set -euo pipefail

SIZE_MB="${1:-100}"
ROUNDS="${ROUNDS:-5}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/Benchmarks"
RESULTS_DIR="${RESULTS_DIR:-$BENCH/results}"
START=$(date +%s)

say() { printf 'compare.sh: %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }
apt_install() {
    say "installing $* (apt-get)"
    as_root apt-get install -y "$@" >/dev/null 2>&1 || { as_root apt-get update >/dev/null 2>&1 && as_root apt-get install -y "$@" >/dev/null; }
}

# System tools: jq (a peer), GNU time (peak RSS), yajl (the C baselines and streammap itself).
command -v jq >/dev/null || apt_install jq
[ -x /usr/bin/time ] || apt_install time
{ pkg-config --exists yajl zlib libzstd && [ -f /usr/include/isa-l/igzip_lib.h ]; } 2>/dev/null || apt_install libyajl-dev zlib1g-dev libzstd-dev libisal-dev pkg-config
command -v python3 >/dev/null || { say "python3 is required"; exit 1; }

# streammap, release build.
if [ -z "${STREAMMAP_BIN:-}" ]; then
    say "building streammap (swift build -c release --static-swift-stdlib --product streammap)"
    (cd "$ROOT" && swift build -c release --static-swift-stdlib --product streammap >&2)
    STREAMMAP_BIN="$(cd "$ROOT" && swift build -c release --static-swift-stdlib --product streammap --show-bin-path)/streammap"
fi
[ -x "$STREAMMAP_BIN" ] || { say "no streammap binary at $STREAMMAP_BIN"; exit 1; }

# Peers, built into Benchmarks/.build/peers (ignored by git), rebuilt when a source is newer.
PEERS_BIN="$BENCH/.build/peers"
mkdir -p "$PEERS_BIN"
# (This script is a source too: a change of build flags rebuilds them.)
stale() { local out="$1"; shift; [ ! -x "$out" ] || for s in "$@" "$BENCH/compare.sh"; do [ "$s" -nt "$out" ] && return 0; done; [ ! -x "$out" ]; }
P="$BENCH/Peers"
if stale "$PEERS_BIN/yajl_noop" "$P/yajl_noop.c" "$P/lines.h"; then
    say "cc -O2 yajl_noop.c"; cc -O2 -o "$PEERS_BIN/yajl_noop" "$P/yajl_noop.c" $(pkg-config --cflags --libs yajl 2>/dev/null || echo -lyajl)
fi
if stale "$PEERS_BIN/yajl_gen_identity" "$P/yajl_gen_identity.c" "$P/lines.h"; then
    say "cc -O2 yajl_gen_identity.c"; cc -O2 -o "$PEERS_BIN/yajl_gen_identity" "$P/yajl_gen_identity.c" $(pkg-config --cflags --libs yajl 2>/dev/null || echo -lyajl)
fi
# simdjson's On-Demand API (Debian libsimdjson-dev), header-compiled for this CPU (-march=native).
[ -f /usr/include/simdjson.h ] || apt_install libsimdjson-dev || say "libsimdjson-dev is not available: no simdjson peer"
if [ -f /usr/include/simdjson.h ] && stale "$PEERS_BIN/map-tweets-simdjson" "$P/map_tweets_simdjson.cpp"; then
    say "c++ -O3 -march=native map_tweets_simdjson.cpp"
    c++ -O3 -march=native -std=c++17 -o "$PEERS_BIN/map-tweets-simdjson" "$P/map_tweets_simdjson.cpp" -lsimdjson
fi
if stale "$PEERS_BIN/map-tweets-codable" "$P/MapTweetsCodable.swift" "$P/Lines.swift"; then
    say "swiftc -O -static-stdlib MapTweetsCodable.swift"; swiftc -O -static-stdlib -parse-as-library "$P/Lines.swift" "$P/MapTweetsCodable.swift" -o "$PEERS_BIN/map-tweets-codable"
fi
if stale "$PEERS_BIN/map-tweets-jsonserialization" "$P/MapTweetsJSONSerialization.swift" "$P/Lines.swift"; then
    say "swiftc -O -static-stdlib MapTweetsJSONSerialization.swift"; swiftc -O -static-stdlib -parse-as-library "$P/Lines.swift" "$P/MapTweetsJSONSerialization.swift" -o "$PEERS_BIN/map-tweets-jsonserialization"
fi

# The corpus, in a temporary directory.
WORK="$(mktemp -d "${TMPDIR:-/tmp}/streammap-compare.XXXXXX")"
if [ "${KEEP_WORK:-0}" = 1 ]; then say "keeping $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
say "generating a ${SIZE_MB} MB corpus"
python3 "$BENCH/corpus.py" "$WORK/corpus.ndjson" --size-mb "$SIZE_MB" ${CORPUS_SEED:+--seed "$CORPUS_SEED"} 2> "$WORK/corpus.txt"
SUMMARY="$(sed -e 's/^corpus.py: [^:]*: //' "$WORK/corpus.txt")"
say "corpus: $SUMMARY"

say "running $ROUNDS rounds"
python3 "$BENCH/compare.py" --corpus "$WORK/corpus.ndjson" --work "$WORK" --streammap "$STREAMMAP_BIN" \
    --peers-bin "$PEERS_BIN" --rounds "$ROUNDS" --out "$RESULTS_DIR" --timed-output "${TIMED_OUTPUT:-null}" \
    --corpus-summary "$SUMMARY (corpus.py, seed ${CORPUS_SEED:-20140831})" --command "Benchmarks/compare.sh $SIZE_MB"
say "wrote ${RESULTS_DIR#$ROOT/}/comparison.md and comparison.svg in $(( $(date +%s) - START )) s"
