#!/usr/bin/env bash
# Runs every benchmark workload against its peer and prints the table (see BENCHMARKS.md).
#
#   bash Benchmarks/run.sh [filter]     # filter: a substring of the workload keys, e.g. "multipart"
#
# Installs the peers (curl from apt; requests-toolbelt, httpie, httpbin, gunicorn into a venv),
# builds the release executables, starts the loopback test server, alternates Courier and each
# peer BENCH_RUNS times (default 5), checks every result, stops the server. Sizes and counts can
# be shrunk for a quick look: BENCH_BIG=$((64<<20)) BENCH_MEMORY=$((32<<20)) BENCH_SCALE=0.1.
# BENCH_SWIFT="/work/cb" builds through another swift front end (the team's bind-mount wrapper).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
filter=${1:-}
swift_cmd=${BENCH_SWIFT:-swift}

log() { printf '# %s\n' "$*"; }

# --- peers ---------------------------------------------------------------------------------------
if ! command -v curl >/dev/null 2>&1; then
    log "installing curl"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
fi
venv="$here/.venv-bench"
if ! { [ -x "$venv/bin/http" ] && "$venv/bin/python" -c 'import requests_toolbelt, httpbin, gunicorn' 2>/dev/null; }; then
    log "installing requests-toolbelt, httpie, httpbin and gunicorn into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check requests-toolbelt httpie httpbin gunicorn
fi

# --- build ---------------------------------------------------------------------------------------
cd "$root"
log "building the benchmark executables in release (a first build compiles every dependency: ~10 minutes on 2 cores)"
mkdir -p "$here/.build"
for product in courier-bench courier; do
    $swift_cmd build --package-path Benchmarks -c release --product "$product" >"$here/.build/build-$product.log" 2>&1 \
        || { tail -30 "$here/.build/build-$product.log" >&2; echo "run.sh: building $product failed" >&2; exit 1; }
    grep -E 'error|warning: .*Benchmarks/|Build.*complete' "$here/.build/build-$product.log" || true
done
bin=$($swift_cmd build --package-path Benchmarks -c release --show-bin-path | tail -1)
[ -x "$bin/courier-bench" ] || { echo "run.sh: $bin/courier-bench was not built" >&2; exit 1; }

# The allocation counter preloaded into courier-bench (see malloc-count/malloc_count.c).
command -v gcc >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >/dev/null; }
[ -x /usr/bin/time ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
mkdir -p "$here/.build"
gcc -O2 -shared -fPIC -o "$here/.build/libmalloc_count.so" "$here/malloc-count/malloc_count.c"
export BENCH_MALLOC_COUNT="$here/.build/libmalloc_count.so"
# Every run's numbers and the table in Markdown are kept beside the build for BENCHMARKS.md.
export BENCH_JSON=${BENCH_JSON:-$here/.build/last-run.jsonl}
export BENCH_MARKDOWN=${BENCH_MARKDOWN:-$here/.build/last-run.md}

# --- run -----------------------------------------------------------------------------------------
exec python3 "$here/bench.py" "$bin/courier-bench" "$bin/courier" "$venv/bin/python" "$venv/bin/http" \
    "$(command -v curl)" "$filter"
