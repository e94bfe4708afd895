#!/usr/bin/env bash
# Fuzzes the two engines against each other: builds the libFuzzer target in Fuzz/ (a separate package, with
# -sanitize=fuzzer,address) and runs it for SECONDS (default 60) from the seed corpus Fuzz/corpus/. Every input
# chooses a generated mapper and records (Sources/StreamMapTestSupport/EngineFuzzing.swift); the tree engine and
# the stream engine map them whole and in pieces and must agree byte for byte and error for error.
#
#   scripts/fuzz.sh [SECONDS] [libFuzzer flags…]     e.g. scripts/fuzz.sh 600 -fork=2 -ignore_crashes=1
#
# Prints the number of executions. Exits 1 when an input makes the engines diverge or crashes: the input is saved
# as Fuzz/artifacts/crash-… and replayed with `Fuzz/.build/release/StreamMapFuzz Fuzz/artifacts/crash-…`
# (or add it to HardeningTests.swift with EngineFuzzing.check). Inputs that found new coverage are kept in
# Fuzz/.build/corpus/ for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
scripts/bootstrap.sh

cd Fuzz
flags=(-c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
echo "fuzz: building (cd Fuzz && swift build ${flags[*]})"
mkdir -p .build/corpus artifacts
if ! swift build "${flags[@]}" > .build/fuzz-build.log 2>&1; then
    grep -E "error" .build/fuzz-build.log | head -n 20 >&2
    echo "fuzz: the build failed (Fuzz/.build/fuzz-build.log)" >&2
    exit 2
fi
bin=$(swift build "${flags[@]}" --show-bin-path)/StreamMapFuzz
log=.build/fuzz.log

# LeakSanitizer is off while fuzzing: Swift packs enum tags into the spare bits of pointers, so memory held by
# globals (the spec compiler's tables, caches) looks unreachable to it; the seed corpus is replayed with it on after
# the run, those globals suppressed (Fuzz/lsan.supp). AddressSanitizer's memory checks stay on. Swift's own
# backtracer is off so that libFuzzer's and ASan's reports come through.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export SWIFT_BACKTRACE=enable=no
echo "fuzz: running for $seconds s on $(ls corpus | wc -l) seed inputs (log: Fuzz/$log)"
before=$(ls artifacts | wc -l)
set +e
"$bin" -max_total_time="$seconds" -timeout=10 -max_len=16384 -detect_leaks=0 -print_final_stats=1 -dict=json.dict \
    -artifact_prefix=artifacts/ "$@" .build/corpus corpus > "$log" 2>&1
status=$?
set -e

executions=$( (grep -E '^stat::number_of_executed_units' "$log" || true) | awk '{s += $2} END {print s + 0}')
if [ "$executions" -eq 0 ]; then   # fork mode prints no final stats: take the last progress line
    executions=$( (grep -oE '^#[0-9]+' "$log" || true) | tail -n 1 | tr -d '#')
fi
rate=$( (grep -E '^stat::average_exec_per_sec' "$log" || true) | tail -n 1 | awk '{print $2}')
[ -n "$rate" ] && [ "$rate" != 0 ] || rate=$(( ${executions:-0} / seconds ))
found=$(( $(ls artifacts | wc -l) - before ))
if [ "$status" -eq 0 ] && [ "$found" -eq 0 ]; then
    echo "fuzz: ${executions:-0} executions in $seconds s (${rate:-?}/s), corpus $(ls .build/corpus | wc -l) inputs: no divergence, no crash"
    # Memory lost: the seed corpus replayed once with LeakSanitizer on (off above: every input would be checked), what
    # one-time initializers keep suppressed (Fuzz/lsan.supp). An engine or a plan that loses memory shows here.
    if ! ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$PWD/lsan.supp" "$bin" -runs=0 -artifact_prefix=.build/leaks- corpus \
            > .build/leaks.log 2>&1; then
        grep -A14 -E 'Direct leak|Indirect leak' .build/leaks.log | head -n 40 >&2 || tail -n 40 .build/leaks.log >&2
        echo "fuzz: LeakSanitizer found memory lost over the seed corpus (Fuzz/.build/leaks.log)" >&2
        exit 1
    fi
    echo "fuzz: the seed corpus loses no memory (LeakSanitizer)"
else
    grep -B2 -A14 -E 'StreamMap fuzz:|ERROR: AddressSanitizer|ERROR: libFuzzer|Fatal error' "$log" | head -n 60 >&2 || tail -n 40 "$log" >&2
    echo "fuzz: FAILED after ${executions:-?} executions (status $status); inputs saved: $(ls -t artifacts | head -n "$(( found > 0 ? found : 1 ))" | sed 's|^|Fuzz/artifacts/|' | tr '\n' ' ')" >&2
    exit 1
fi
