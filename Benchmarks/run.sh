#!/usr/bin/env bash
# Runs every benchmark workload against its peer and prints the table (see BENCHMARKS.md).
#
#   bash Benchmarks/run.sh [filter]     # filter: a substring of the workload keys, e.g. "multipart"
#
# Installs the peers (curl, GNU time, gcc from apt; requests-toolbelt, httpie, httpbin, gunicorn, tuspy
# into a venv), builds the release executables, starts the loopback servers, alternates Courier
# and each peer BENCH_RUNS times (default 5, never fewer), checks every result, stops the
# servers, and prints how long each phase took. Sizes and counts can be shrunk for a quick look:
# BENCH_BIG=$((64<<20)) BENCH_MEMORY=$((32<<20)) BENCH_SCALE=0.1.
# BENCH_SWIFT="/work/cb" builds through another swift front end (the team's bind-mount wrapper).
# BENCH_WORK (default Benchmarks/.build/work) holds the 1 GiB fixture, reused by later runs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
filter=${1:-}
swift_cmd=${BENCH_SWIFT:-swift}

log() { printf '# %s\n' "$*"; }
now() { date +%s.%N; }
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
# CPU seconds (user + system) of every finished child so far. On a machine shared with other
# builds the wall time of a phase is only an upper bound; its CPU time is what it costs.
cpu_file="${TMPDIR:-/tmp}/courier-bench-times.$$"
child_cpu() {  # child_cpu NAME: sets $NAME; called directly, never in $(...), which would fork
    times >"$cpu_file"  # a builtin with a redirection runs in this shell
    printf -v "$1" '%s' "$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.1f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$cpu_file")"
    rm -f "$cpu_file"
}

mkdir -p "$here/.build"
started=$(now)

# --- peers ---------------------------------------------------------------------------------------
# Every apt package up front, in one update and one install, so later phases only measure.
apt_wanted=()
command -v curl >/dev/null 2>&1 || apt_wanted+=(curl)
command -v gcc >/dev/null 2>&1 || apt_wanted+=(gcc)
[ -x /usr/bin/time ] || apt_wanted+=(time)
command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' 2>/dev/null || apt_wanted+=(python3-venv)
if [ ${#apt_wanted[@]} -gt 0 ]; then
    log "installing ${apt_wanted[*]} from apt"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_wanted[@]}" >/dev/null
fi
apt_done=$(now); child_cpu apt_cpu

# Only what the peer rows import: toolbelt (multipart-file), httpie (cli rows), httpbin and
# gunicorn (the CLI's interop check against a server that is not ours), tuspy (resumable-upload-tuspy).
venv="$here/.venv-bench"
if ! { [ -x "$venv/bin/http" ] && "$venv/bin/python" -c 'import requests_toolbelt, httpbin, gunicorn, sseclient, tusclient' 2>/dev/null; }; then
    log "installing requests-toolbelt, httpie, httpbin, gunicorn, sseclient-py and tuspy into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check requests-toolbelt httpie httpbin gunicorn sseclient-py==1.9.0 tuspy
fi
venv_done=$(now); child_cpu venv_cpu

# --- build ---------------------------------------------------------------------------------------
# One release build of courier-bench (which pulls in Courier, CourierTestServer and every
# dependency), then the `courier` CLI product from the same build directory: that second step
# compiles only what the CLI adds (its module, ArgumentParser) and links it. Each output line is
# stamped with the time it appeared, so that the dependency build and Courier's own build can be
# told apart afterwards.
cd "$root"
# Debug info changes no generated code, but on a cold build it is a large part of the work: the
# two BoringSSL copies (swift-crypto's and swift-nio-ssl's, ~770 C/C++ files) compile about 40%
# faster without it. A cold build therefore leaves it out; a build directory that was made with
# it keeps it (changing the flags would rebuild every dependency); BENCH_DEBUG_INFO=1 forces it
# (perf annotate with source lines), BENCH_DEBUG_INFO=0 forces it off. Symbols stay either way.
# The choice is remembered in .build/debug-info beside the build it made.
marker="$here/.build/debug-info"
case "${BENCH_DEBUG_INFO:-auto}" in
    1) debug_info=dwarf ;;
    0) debug_info=none ;;
    *) if [ -f "$marker" ]; then debug_info=$(cat "$marker")
       elif [ -f "$here/.build/release.yaml" ]; then debug_info=dwarf   # made before this choice existed
       else debug_info=none
       fi ;;
esac
echo "$debug_info" >"$marker"
# With its cached build manifest SwiftPM 6.3 does not see a source file added to or removed from
# Courier (this package's path dependency) and builds the old file list; planning anew is cheap.
build_flags=(-debug-info-format "$debug_info" --disable-build-manifest-caching)
cold=""
[ -d "$here/.build/release" ] || cold=" (a cold build: every dependency too, 10 minutes or more on 2 cores)"
log "building the benchmark executables in release, debug info: $debug_info$cold"
stamp() { while IFS= read -r line; do printf '%s %s\n' "${EPOCHREALTIME}" "$line"; done; }
build_log="$here/.build/build.log"
: >"$build_log"
for product in courier-bench courier; do
    { $swift_cmd build --package-path Benchmarks -c release "${build_flags[@]}" --product "$product" 2>&1; echo "exit $?"; } | stamp >>"$build_log"
    if [ "$(tail -1 "$build_log" | cut -d' ' -f3)" != 0 ]; then
        tail -30 "$build_log" | cut -d' ' -f2- >&2
        echo "run.sh: building $product failed (log: $build_log)" >&2
        exit 1
    fi
done
# Our own warnings and the build summaries (zero warnings is the rule; show any that crept in).
cut -d' ' -f2- "$build_log" | grep -E 'warning: .*/(Sources|Benchmarks)/|Build of product|Build complete' || true
bin=$($swift_cmd build --package-path Benchmarks -c release "${build_flags[@]}" --show-bin-path | tail -1)
[ -x "$bin/courier-bench" ] || { echo "run.sh: $bin/courier-bench was not built" >&2; exit 1; }
[ -x "$bin/courier" ] || { echo "run.sh: $bin/courier was not built" >&2; exit 1; }
build_done=$(now); child_cpu build_cpu
# Split the build's wall time. SwiftPM prints a step's line when the step completes, so the time
# since the previous line is charged to the step on this line: package resolution and planning,
# a dependency's module, or one of ours (Courier, CourierTestServer, CourierCLI, CourierBench and
# their links). Steps run two at a time, so this is an attribution, not a profile.
read -r plan_seconds dependency_seconds courier_seconds < <(awk -v prev="$venv_done" -v done="$build_done" '
    {
        gap = $1 - prev; prev = $1
        line = $0; sub(/^[^ ]+ /, "", line)
        if (line ~ /\] (Compiling|Linking|Emitting module) (Courier|CourierCore|CourierAsyncHTTPClient|CourierTestServer|CourierCLI|CourierBench|courier-bench|courier)( |$)/) ours += gap
        else if (line ~ /^\[[0-9]+\/[0-9]+\] / && line !~ /Planning build/) deps += gap
        else plan += gap
    }
    END { plan += done - prev; printf "%.0f %.0f %.0f\n", plan, deps, ours }' "$build_log")

# The allocation counter preloaded into courier-bench (see malloc-count/malloc_count.c).
gcc -O2 -shared -fPIC -o "$here/.build/libmalloc_count.so" "$here/malloc-count/malloc_count.c"
export BENCH_MALLOC_COUNT="$here/.build/libmalloc_count.so"
# Every run's numbers and the table in Markdown are kept beside the build for BENCHMARKS.md.
export BENCH_JSON=${BENCH_JSON:-$here/.build/last-run.jsonl}
export BENCH_MARKDOWN=${BENCH_MARKDOWN:-$here/.build/last-run.md}
# Per checkout, so that two checkouts benchmarking at once do not share port files.
export BENCH_WORK=${BENCH_WORK:-$here/.build/work}
# For the facts at the head of last-run.md.
export BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
export BENCH_SWIFT_VERSION=${BENCH_SWIFT_VERSION:-$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')}
runs_began=$(now); child_cpu runs_began_cpu

# --- run -----------------------------------------------------------------------------------------
set +e
python3 "$here/bench.py" "$bin/courier-bench" "$bin/courier" "$venv/bin/python" "$venv/bin/http" \
    "$(command -v curl)" "$filter"
outcome=$?
set -e
finished=$(now); child_cpu finished_cpu

cpu_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
timing="run.sh phases, wall (CPU) seconds: apt $(seconds_between "$started" "$apt_done") ($(cpu_between 0 "$apt_cpu")),"
timing+=" venv/pip $(seconds_between "$apt_done" "$venv_done") ($(cpu_between "$apt_cpu" "$venv_cpu")),"
timing+=" resolution/planning $plan_seconds + dependency build $dependency_seconds + Courier build $courier_seconds"
timing+=" ($(cpu_between "$venv_cpu" "$build_cpu") together),"
timing+=" fixtures and runs $(seconds_between "$runs_began" "$finished") ($(cpu_between "$runs_began_cpu" "$finished_cpu"));"
timing+=" total $(seconds_between "$started" "$finished") ($(cpu_between 0 "$finished_cpu")) on $(nproc) cores"
echo
echo "$timing"
echo "$timing" >"$here/.build/last-run-timing.txt"
# A copy of every run's record that later runs do not overwrite: a row missed in a full run and
# met alone can then be looked at pair by pair afterwards (the last-run files hold only the
# latest run, often a single row rerun).
archive="$here/.build/runs/$(date -u +%Y%m%dT%H%M%SZ)-${filter:-all}"
archive=${archive//,/+}
mkdir -p "$archive"
cp "$here/.build/last-run-timing.txt" "$archive/"
for kept in "$BENCH_JSON" "$BENCH_MARKDOWN"; do
    if [ -f "$kept" ]; then cp "$kept" "$archive/"; fi
done
exit $outcome
