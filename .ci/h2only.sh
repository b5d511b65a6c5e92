#!/usr/bin/env bash
# Starts an HTTP/2-only TLS server on python-h2 (.ci/h2only_server.py: ALPN `h2` alone) on
# loopback for the interop suite, in a venv under the worktree (.venv-h2, made and filled with
# PyPI's `h2` when missing). Prints `export` lines for the tests (eval them). Stop it with
# `kill "$(cat $COURIER_H2ONLY_PID_FILE)"`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-h2"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import h2' 2>/dev/null; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q h2 >&2
fi
dir=$(mktemp -d /tmp/courier-h2only.XXXXXX)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 2 \
  -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
"$venv/bin/python" "$root/.ci/h2only_server.py" "$dir/cert.pem" "$dir/key.pem" "$dir/port" \
  >"$dir/server.log" 2>&1 &
echo $! > "$dir/server.pid"
for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
[ -s "$dir/port" ] || { echo "the HTTP/2-only server did not start: $(cat "$dir/server.log")" >&2; exit 1; }
echo "export COURIER_H2ONLY_URL=https://localhost:$(cat "$dir/port")"
echo "export COURIER_H2ONLY_CA=$dir/cert.pem"
echo "export COURIER_H2ONLY_PID_FILE=$dir/server.pid"
