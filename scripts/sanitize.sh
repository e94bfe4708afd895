#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
#     swift test --sanitize=address      swift test --sanitize=undefined
# each in its own build directory (.build/sanitize-address, …), so the normal debug build is left alone. A
# sanitizer report fails the run (halt_on_error).
#
#   scripts/sanitize.sh                       # address and undefined, the whole suite (~4 minutes with the build)
#   scripts/sanitize.sh address               # one of them (also: thread)
#   scripts/sanitize.sh all --filter 'Differential|StrictJSON'   # extra arguments go to swift test
#
# A sanitizer the toolchain does not support is reported and skipped, not failed: Swift 6.3 on Linux rejects
# -sanitize=undefined ("unsupported option"); there the package has no C code of its own for it to instrument
# anyway (yajl is the system's prebuilt library), and Swift's own checks (overflow, bounds, unwrapping) are always on.
#
# LeakSanitizer is off (detect_leaks=0): Swift packs enum tags into the spare bits of pointers, so memory held by
# globals and caches looks unreachable to it and every run would report "leaks". The CLI tests run the binary
# built with the same sanitizer, which inherits these options.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
[ $# -gt 0 ] && shift
case "$which" in
    all) sanitizers=(address undefined) ;;
    address|undefined|thread) sanitizers=("$which") ;;
    *) echo "usage: scripts/sanitize.sh [all|address|undefined|thread] [swift test arguments…]" >&2; exit 64 ;;
esac
scripts/bootstrap.sh
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
export SWIFT_BACKTRACE=enable=no   # let the sanitizers' own reports through
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'print("probe")' > "$probe/probe.swift"
skipped=()
for s in "${sanitizers[@]}"; do
    if ! swiftc -sanitize="$s" "$probe/probe.swift" -o "$probe/probe-$s" > "$probe/probe-$s.log" 2>&1; then
        echo "sanitize: $s is not supported by this toolchain, skipped: $(grep -m1 error "$probe/probe-$s.log")"
        skipped+=("$s")
        continue
    fi
    # Peak-RSS bounds mean nothing under ASan (its quarantine keeps freed memory, shadow memory adds an eighth):
    # the one test that measures RSS is left to the normal suite (and scripts/hardening.sh).
    skip=()
    [ "$s" = address ] && skip=(--skip autoStreamsAHugeLineInBoundedMemory)
    echo "sanitize: swift test --sanitize=$s ${skip[*]} $*"
    start=$(date +%s)
    swift test --sanitize="$s" --scratch-path ".build/sanitize-$s" "${skip[@]}" "$@"
    echo "sanitize: $s clean ($(( $(date +%s) - start )) s)"
done
[ ${#skipped[@]} -eq 0 ] || echo "sanitize: skipped (unsupported here): ${skipped[*]}"
