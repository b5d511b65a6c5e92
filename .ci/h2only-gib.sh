#!/usr/bin/env bash
# The slow half of issue 44's done criterion: POST, PUT and PATCH bodies of 1 GiB, from a file and
# streamed, reach the HTTP/2-only python-h2 server (.ci/h2only.sh) intact. Six gibibytes through
# Python take minutes, so the unit suite leaves this test out (it runs only with
# COURIER_H2ONLY_GIB=1). Builds the tests, starts the server, runs the test, stops the server.
#
#   bash .ci/h2only-gib.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
swift build --build-tests
eval "$(bash .ci/h2only.sh)"
trap 'kill "$(cat "$COURIER_H2ONLY_PID_FILE")" 2>/dev/null || true' EXIT
COURIER_H2ONLY_GIB=1 swift test --skip-build --filter 'HTTP2OnlyPeerTests/gibibyteBodiesOfEveryMethodArriveIntact'
