#!/usr/bin/env bash
# Fails on a break of the public API since the last release that CHANGELOG.md does not list.
#
# The last release is named in .ci/api-baseline (its version, a heading of CHANGELOG.md, and its
# commit, since a clone may carry no tags). `swift package diagnose-api-breaking-changes` builds
# that commit's library modules in a scratch checkout, dumps their API and compares it with this
# tree's; .ci/api_breaks_check.py then looks up every reported break in the CHANGELOG entries
# written since that version. The baseline's dump is kept in .build/api-baselines, so a second
# run on the same machine builds only the current tree.
#
# A fresh clone has no such dump, and building the release's modules (every dependency again, in
# a checkout of its own) was the costliest part of this step on CI. So the release's dump is
# committed too, compressed (.ci/api-baseline-dump.tar.xz, ~90 KB for 3.4 MB of JSON), with the
# `swift --version` that wrote it: a clone on the same toolchain unpacks it and builds nothing of
# the release; on another toolchain the dump's format may differ, so the release is built as before.
#
# Cutting a release: give CHANGELOG.md's [Unreleased] a version heading, set the version in
# DefaultHeaders.libraryVersion and the CLI's CourierCommand, commit, put that version and commit
# in .ci/api-baseline, then run `bash .ci/api-breaks.sh --archive-baseline` and commit the archive.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 .ci/api_breaks_check.py --self-test

baseline_file=.ci/api-baseline
version=$(sed -n 's/^version=//p' "$baseline_file")
commit=$(sed -n 's/^commit=//p' "$baseline_file")
if [ -z "$version" ] || [ -z "$commit" ]; then
  echo "api breaks: $baseline_file names no version= and commit=" >&2
  exit 2
fi
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  # A shallow clone: fetch the one commit rather than the whole history.
  git fetch --quiet --depth=1 origin "$commit" 2>/dev/null || true
  git cat-file -e "$commit^{commit}" 2>/dev/null || {
    echo "api breaks: the baseline commit $commit ($version) is not in this clone; fetch it" >&2
    exit 2
  }
fi

archive=.ci/api-baseline-dump.tar.xz
dump_dir=.build/api-baselines/$commit
toolchain=$(swift --version 2>/dev/null | head -1)

if [ "${1:-}" = --archive-baseline ]; then
  # Builds the release's dump if it is missing, then packs it with the toolchain's name.
  swift package diagnose-api-breaking-changes "$commit" --baseline-dir .build/api-baselines >/dev/null 2>&1 || true
  ls "$dump_dir"/*.json >/dev/null 2>&1 || { echo "api breaks: no dump in $dump_dir" >&2; exit 2; }
  printf '%s\n' "$toolchain" >"$dump_dir/toolchain.txt"
  tar -C .build/api-baselines -cJf "$archive" "$commit"
  echo "api breaks: $archive holds the $version dump ($commit), written by $toolchain"
  exit 0
fi

if [ ! -d "$dump_dir" ] && [ -f "$archive" ]; then
  packed=$(tar -xJOf "$archive" "$commit/toolchain.txt" 2>/dev/null || true)
  if [ -n "$packed" ] && [ "$packed" = "$toolchain" ]; then
    mkdir -p .build/api-baselines
    tar -C .build/api-baselines -xJf "$archive" "$commit"
    echo "api breaks: the $version dump unpacked from $archive"
  else
    echo "api breaks: $archive was written by ${packed:-an unknown toolchain}, not $toolchain; building $version"
  fi
fi

output=$(mktemp)
trap 'rm -f "$output"' EXIT
# The digester's exit status says whether it found breaks; whether they are allowed is decided
# below, so only its output matters here, unless it printed no verdict at all (a build failure).
swift package diagnose-api-breaking-changes "$commit" --baseline-dir .build/api-baselines \
  2>&1 | tee "$output" | grep -E "API breakage|No breaking changes|error:" || true
if ! grep -q -E "API breakage|No breaking changes" "$output"; then
  echo "api breaks: the digester gave no verdict; its output:" >&2
  tail -40 "$output" >&2
  exit 2
fi
python3 .ci/api_breaks_check.py "$output" CHANGELOG.md "$version"
