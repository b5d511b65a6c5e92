#!/usr/bin/env bash
# `courier` as one binary that runs on a Linux machine without Swift: builds it with the Swift
# runtime and Foundation linked in (`--static-swift-stdlib`), checks with ldd that it needs no
# Swift library, then runs `courier --version` and `courier demo` (the whole job against the
# embedded loopback server) with the toolchain hidden. What it still loads are system libraries:
# glibc, libstdc++, zlib, and libcurl (for FoundationNetworking, which the URLSession transport
# uses), so a machine needs the libcurl4 package; linking needs libcurl's .so, which the
# script installs (libcurl4-openssl-dev) where apt-get is at hand.
#
#   bash .ci/static-binary.sh [DEST]     # DEST: where to copy the binary (default .build/courier-static)
#
# Hiding the toolchain: the binary is copied out of the build folder and run with an empty
# environment (no PATH entry, LD_LIBRARY_PATH or Swift variable pointing at the toolchain) and,
# where the kernel lets us (root, or user namespaces), in a private mount namespace where an
# empty tmpfs covers the toolchain's directory, so that no RUNPATH or ld.so.conf entry could
# reach its libraries either. As a control, a build without --static-swift-stdlib is run the same
# way when one exists (the debug build's courier) and must fail to start.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dest=${1:-.build/courier-static}
case "$dest" in /*) ;; *) dest="$root/$dest" ;; esac
started=$(date +%s)
step() { echo "== $* ($(date -u +%H:%M:%S), +$(($(date +%s) - started)) s)"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

. "$root/.ci/libcurl-dev.sh"

step "swift build -c release --static-swift-stdlib --product courier"
swift build -c release --static-swift-stdlib --product courier
bin_path=$(swift build -c release --static-swift-stdlib --show-bin-path)
mkdir -p "$(dirname "$dest")"
cp "$bin_path/courier" "$dest"
echo "$(du -h "$dest" | cut -f1) $dest"

# The toolchain: the directory above usr/bin/swift (e.g. /opt/swift, or /usr for a distribution's).
swift_bin=$(readlink -f "$(command -v swift)")
toolchain=$(dirname "$(dirname "$(dirname "$swift_bin")")")
runtime_dir="$toolchain/usr/lib/swift/linux"
echo "toolchain: $toolchain"

step "ldd: no Swift runtime, Foundation or dispatch library is needed"
needed=$(ldd "$dest")
echo "$needed"
if echo "$needed" | grep -E 'libswift|libFoundation|lib_FoundationICU|libdispatch|libBlocksRuntime|not found'; then
  echo "static-binary: the binary still needs the libraries above" >&2
  exit 1
fi
if echo "$needed" | grep -F "$toolchain/"; then
  echo "static-binary: the binary loads a library from the toolchain ($toolchain)" >&2
  exit 1
fi
# SwiftPM gives every executable the run path $ORIGIN (its own directory); any other would be a
# way back into the toolchain.
if readelf -d "$dest" | grep -E 'RPATH|RUNPATH' | grep -vF '[$ORIGIN]'; then
  echo "static-binary: the binary has a run path other than \$ORIGIN (above)" >&2
  exit 1
fi

# Runs "$@" with an empty environment, the toolchain's directory covered by an empty tmpfs
# when a private mount namespace is allowed.
hidden() {
  local clean=(env -i HOME="$scratch" TMPDIR="$scratch" PATH=/usr/bin:/bin LANG=C.UTF-8 LD_LIBRARY_PATH=)
  if [ "$can_unshare" = 1 ]; then
    unshare --mount --propagation private -- sh -c 'mount -t tmpfs -o size=1m courier-hidden "$1" && shift && exec "$@"' \
      sh "$toolchain" "${clean[@]}" "$@"
  else
    "${clean[@]}" "$@"
  fi
}
can_unshare=0
if unshare --mount --propagation private -- sh -c "mount -t tmpfs -o size=1m courier-hidden '$toolchain' && test ! -e '$swift_bin'" 2>"$scratch/unshare.log"; then
  can_unshare=1
  echo "the toolchain ($toolchain) is hidden under an empty tmpfs in a private mount namespace"
else
  echo "no private mount namespace here ($(head -1 "$scratch/unshare.log")): hiding by environment only"
fi

debug_courier="$(swift build --show-bin-path)/courier"
if [ -x "$debug_courier" ]; then
  step "control: a build without --static-swift-stdlib does not start with the toolchain hidden"
  cp "$debug_courier" "$scratch/courier-dynamic"
  if hidden "$scratch/courier-dynamic" --version >"$scratch/control.out" 2>&1; then
    if [ "$can_unshare" = 1 ]; then
      echo "static-binary: the dynamically linked courier ran with the toolchain hidden: the hiding does not work" >&2
      exit 1
    fi
    echo "(it ran: without a mount namespace its RUNPATH still reaches the toolchain)"
  else
    echo "as expected: $(head -1 "$scratch/control.out")"
  fi
fi

step "courier --version, with the toolchain hidden"
cp "$dest" "$scratch/courier"
version=$(cd "$scratch" && hidden ./courier --version)
echo "courier --version: $version"
[ -n "$version" ]

step "courier demo (20 MB upload, 16 MB resumed download), with the toolchain hidden"
(cd "$scratch" && hidden ./courier demo --upload-megabytes 20 --download-megabytes 16 --progress never) >"$scratch/demo.out" 2>&1 || {
  cat "$scratch/demo.out" >&2
  echo "static-binary: courier demo failed" >&2
  exit 1
}
tail -5 "$scratch/demo.out"

step "done in $(($(date +%s) - started)) s: $dest runs without Swift (it needs only: $(ldd "$dest" | awk '{print $1}' | tr '\n' ' '))"
