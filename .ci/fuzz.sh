#!/usr/bin/env bash
# Builds the libFuzzer target for Courier's header-value parsers and runs it for a bounded time.
# Exits non-zero when the build fails or the fuzzer finds a crash or a broken invariant.
# Environment: FUZZ_SECONDS (default 120), FUZZ_BUILD_DIR (default .build-fuzz), FUZZ_JOBS (default 1).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-120}
out=${FUZZ_BUILD_DIR:-$root/.build-fuzz}
binary="$out/header-value-fuzzer"
mkdir -p "$out/corpus" "$out/artifacts"

echo "fuzz: building $binary"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -use-ld=lld \
    -module-name HeaderValueFuzzer -package-name Courier \
    "$root"/Sources/CourierCore/Response/HeaderValues/*.swift \
    "$root"/Fuzz/HeaderValueFuzzer.swift \
    -o "$binary"

echo "fuzz: running for ${seconds}s (seeds: Fuzz/corpus, working corpus: $out/corpus)"
# The first directory receives new inputs; the committed seeds are only read.
# `timeout` is a second bound in case the fuzzer itself stops making progress.
# Swift's own backtracer would symbolicate for up to 30 s before libFuzzer sees the crash.
status=0
SWIFT_BACKTRACE=enable=no timeout --kill-after=10 $((seconds + 60)) "$binary" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
    "$out/corpus" "$root/Fuzz/corpus" || status=$?

if [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED (exit $status); reproduce with: $binary $out/artifacts/<file>" >&2
    ls -l "$out/artifacts" >&2 || true
    exit "$status"
fi
echo "fuzz: passed"
