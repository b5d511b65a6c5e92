#!/bin/sh
# Runs the httpie comparison (Tests/CourierCLITests/HttpieComparisonTests.swift) against a
# local httpbin: makes a venv with httpie, httpbin and gunicorn if needed, starts httpbin on a
# free loopback port, runs the suite, and stops httpbin again.
set -eu
venv=${COURIER_HTTPIE_VENV:-.venv-httpie}
[ -x "$venv/bin/http" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q httpie httpbin gunicorn; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/gunicorn" -b "127.0.0.1:$port" -w 2 httpbin:app >/dev/null 2>&1 &
pid=$!
trap 'kill $pid' EXIT
i=0
until "$venv/bin/http" --ignore-stdin --check-status "127.0.0.1:$port/get" >/dev/null 2>&1; do
  i=$((i + 1)); [ $i -lt 100 ] || { echo "httpbin did not start" >&2; exit 1; }; sleep 0.1
done
COURIER_HTTPIE="$PWD/$venv/bin/http" COURIER_HTTPBIN_URL="http://127.0.0.1:$port" \
  swift test --filter HttpieComparisonTests "$@"
