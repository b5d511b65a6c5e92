#!/usr/bin/env bash
# Builds the tests under ThreadSanitizer and AddressSanitizer (each in its own scratch path, so
# the normal .build stays untouched) and runs the concurrency suites under each.
# Exits non-zero when a build fails, a test fails, or a sanitizer reports.
# Bounded: the whole script stops after SANITIZER_BUDGET_SECONDS (default 1500 = 25 min).
#
# Environment:
#   SANITIZER_FILTER          regex of suites to run (default: the concurrency/fault/load suites)
#   SANITIZERS                which to run, default "thread address"
#   SANITIZER_BUDGET_SECONDS  total time bound, default 1500
#   SWIFT                     the swift driver, default "swift" (a wrapper such as /work/cb works)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
swift_driver=${SWIFT:-swift}
filter=${SANITIZER_FILTER:-'Reliability|Session|Transport|TestServer|Concurren|Load|Fault'}
budget=${SANITIZER_BUDGET_SECONDS:-1500}
deadline=$(( $(date +%s) + budget ))

# TSan: report every race, then fail. ASan: Swift's runtime and Foundation keep global
# allocations alive on purpose, so LeakSanitizer's exit-time report is off; memory errors still fail.
export TSAN_OPTIONS=${TSAN_OPTIONS:-"halt_on_error=0:exitcode=66:history_size=4"}
export ASAN_OPTIONS=${ASAN_OPTIONS:-"detect_leaks=0:abort_on_error=0:halt_on_error=1"}

remaining() {
    local left=$(( deadline - $(date +%s) ))
    if [ "$left" -le 0 ]; then
        echo "sanitizers: time budget of ${budget}s spent" >&2
        exit 124
    fi
    echo "$left"
}

step() {
    local started left
    started=$(date +%s)
    left=$(remaining) || exit 124
    echo "sanitizers: $* (at most ${left}s left)"
    timeout --kill-after=20 "$left" "$@"
    echo "sanitizers: done in $(( $(date +%s) - started ))s: $*"
}

for sanitizer in ${SANITIZERS:-thread address}; do
    case "$sanitizer" in
        thread) scratch=.build-tsan ;;
        address) scratch=.build-asan ;;
        *) echo "sanitizers: unknown sanitizer $sanitizer" >&2; exit 2 ;;
    esac
    step "$swift_driver" build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
    step "$swift_driver" test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --filter "$filter"
done
echo "sanitizers: passed"
