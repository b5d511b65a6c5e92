#!/usr/bin/env bash
# Interop with a real tus server: tuspyserver (a FastAPI router under uvicorn on 127.0.0.1),
# behind a proxy that cuts PATCH connections mid-body with an orderly close, with the tuspy
# client as the peer. Slow (a 1 GiB file by default), so not part of `swift test`.
#
#   .ci/tus-interop.sh [SIZE_MIB]        COURIER=path/to/courier to test another build
#
# Checks, for `courier --resumable`: the file arrives byte-identical after three cuts with at
# most 1.1x its size sent; Ctrl-C at 40% exits 130 and the same command finishes the same upload
# (one creation) with at most 1.15x sent. Then tuspy does the cut run, for comparison.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/.ci/tus-interop"
venv="$root/.venv-tus"
size_mib=${1:-1024}
size=$((size_mib << 20))
courier=${COURIER:-$root/.build/debug/courier}

if [ ! -x "$venv/bin/uvicorn" ] || [ ! -d "$venv/lib/python3"*/site-packages/tusclient ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'tuspyserver==4.4.3' uvicorn tuspy
fi
[ -x "$courier" ] || { echo "no courier at $courier (swift build --product courier)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tus-interop.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { "$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
    for _ in $(seq 1 100); do
        "$venv/bin/python" -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on $1" >&2
    return 1
}
stat_of() { "$venv/bin/python" -c "import json,sys; print(json.load(open('$1'))['$2'])"; }
ratio() { "$venv/bin/python" -c "print(f'{$1/$2:.3f}')"; }
check_ratio() { "$venv/bin/python" -c "import sys; sys.exit(0 if $1/$2 <= $3 else 1)"; }

"$venv/bin/python" - "$work/source.bin" "$size" <<'PY'
import os, sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as out:
    left = size
    while left:
        piece = os.urandom(min(left, 1 << 20))
        out.write(piece)
        left -= len(piece)
PY
source_sha=$(sha256sum "$work/source.bin" | cut -d' ' -f1)
mkdir -p "$work/files" "$work/state"

server_port=$(free_port)
TUS_FILES_DIR="$work/files" "$venv/bin/uvicorn" --app-dir "$here" app:app --host 127.0.0.1 --port "$server_port" \
    --log-level warning &
pids+=($!)
wait_port "$server_port"

# start_proxy NAME CUTS CUT_BYTES RATE: a proxy on a fresh port; sets proxy_port and proxy_pid.
start_proxy() {
    proxy_port=$(free_port)
    "$venv/bin/python" "$here/cutproxy.py" "$proxy_port" "$server_port" "$work/$1.json" "$2" "$3" "$4" &
    proxy_pid=$!
    pids+=("$proxy_pid")
    wait_port "$proxy_port"
}
stored_sha() { sha256sum "$work/files/${1##*/}" | cut -d' ' -f1; }
upload_url_in() { sed -n 's/^courier: upload URL: //p' "$1" | tail -1; }

status=0
echo "== courier --resumable, ${size_mib} MiB, three PATCH connections cut mid-body"
start_proxy cut 3 $((size / 5)) 0
start=$(date +%s.%N)
XDG_STATE_HOME="$work/state" "$courier" --progress never --resumable "http://127.0.0.1:$proxy_port/files" \
    "@$work/source.bin" 2> "$work/cut.err" || { cat "$work/cut.err" >&2; exit 1; }
elapsed=$("$venv/bin/python" -c "import time; print(f'{time.time()-$start:.1f}')")
url=$(upload_url_in "$work/cut.err")
sent=$(stat_of "$work/cut.json" client_bytes)
echo "upload $url; cuts $(stat_of "$work/cut.json" cuts); sent $(ratio "$sent" "$size")x the size; ${elapsed}s"
if [ "$(stored_sha "$url")" = "$source_sha" ]; then echo "byte-identical on the server"; else echo "FAIL: the stored file differs"; status=1; fi
check_ratio "$sent" "$size" 1.1 || { echo "FAIL: more than 1.1x sent"; status=1; }
kill "$proxy_pid"

echo "== courier --resumable, Ctrl-C at 40%, then the same command again"
start_proxy pace 0 0 $((size / 8))
XDG_STATE_HOME="$work/state" "$courier" --progress never --resumable "http://127.0.0.1:$proxy_port/files" \
    "@$work/source.bin" 2> "$work/first.err" &
first=$!
until [ -f "$work/pace.json" ] && [ "$(stat_of "$work/pace.json" client_bytes)" -ge $((size * 2 / 5)) ]; do
    kill -0 "$first" 2>/dev/null || break
    sleep 0.05
done
kill -INT "$first"
set +e
wait "$first"
code=$?
set -e
echo "first run: exit $code at $(ratio "$(stat_of "$work/pace.json" client_bytes)" "$size")x"
[ "$code" = 130 ] || { echo "FAIL: expected exit 130"; cat "$work/first.err" >&2; status=1; }
ls "$work/state/courier/uploads" | sed 's/^/stored: /'
XDG_STATE_HOME="$work/state" "$courier" --progress never --resumable "http://127.0.0.1:$proxy_port/files" \
    "@$work/source.bin" 2> "$work/second.err" || { cat "$work/second.err" >&2; exit 1; }
sleep 0.3
url=$(upload_url_in "$work/second.err")
posts=$(stat_of "$work/pace.json" posts)
sent=$(stat_of "$work/pace.json" client_bytes)
echo "upload $url; creations $posts; sent $(ratio "$sent" "$size")x the size; $(tail -1 "$work/second.err")"
[ "$posts" = 1 ] || { echo "FAIL: $posts creation requests"; status=1; }
if [ "$(stored_sha "$url")" = "$source_sha" ]; then echo "byte-identical on the server"; else echo "FAIL: the stored file differs"; status=1; fi
check_ratio "$sent" "$size" 1.15 || { echo "FAIL: more than 1.15x sent"; status=1; }
[ -z "$(ls -A "$work/state/courier/uploads")" ] || { echo "FAIL: the store still holds an entry"; status=1; }
kill "$proxy_pid"

echo "== tuspy (the peer), three PATCH connections cut mid-body"
start_proxy peer 3 $((size / 5)) 0
start=$(date +%s.%N)
if url=$("$venv/bin/python" "$here/peer.py" "http://127.0.0.1:$proxy_port/files" "$work/source.bin" 2> "$work/peer.err"); then
    elapsed=$("$venv/bin/python" -c "import time; print(f'{time.time()-$start:.1f}')")
    sent=$(stat_of "$work/peer.json" client_bytes)
    same=$([ "$(stored_sha "$url")" = "$source_sha" ] && echo byte-identical || echo DIFFERENT)
    echo "upload $url; cuts $(stat_of "$work/peer.json" cuts); sent $(ratio "$sent" "$size")x; ${elapsed}s; $same"
else
    echo "tuspy failed: $(tail -1 "$work/peer.err")"
fi
kill "$proxy_pid"
exit $status
