#!/usr/bin/env bash
# Compiles every ```swift block of README.md as written, so that the text users copy is the text
# that compiles (issue 43). Each block goes into a file of its own in the CourierReadmeTests
# target (Tests/CourierReadmeTests/Snippets, git-ignored, removed afterwards), with exactly the
# imports it names (a block that names none gets the first block's `import Courier` and
# `import Foundation`, as the README says), its statements in the body of an async throwing
# main-actor function, as top-level code in a program's main.swift would run, and
# #sourceLocation lines so that errors point at README.md. Names the README leaves to the
# reader (a file to upload, a tracer) are declared in Tests/CourierReadmeTests/Placeholders.swift.
# A block that is a package manifest (`import PackageDescription`) is checked by
# `swift package dump-package` in a scratch package instead.
# Run after `swift build --build-tests` (CI does): only this target is compiled again.
set -euo pipefail
cd "$(dirname "$0")/.."
# Arguments: the Markdown files to check (default README.md).
[ $# -gt 0 ] || set -- README.md
snippets=Tests/CourierReadmeTests/Snippets
scratch=$(mktemp -d)
trap 'rm -rf "$snippets" "$scratch"' EXIT
rm -rf "$snippets"
mkdir -p "$snippets"

python3 - "$snippets" "$scratch" "$@" <<'PYTHON'
import os, re, sys

snippets, scratch = sys.argv[1:3]
import_line = re.compile(r"^import\s+([A-Za-z_][A-Za-z0-9_.]*)\s*(//.*)?$")

def blocks_of(markdown):
    lines = open(markdown, encoding="utf-8").read().split("\n")
    blocks, current, start = [], None, 0
    for number, line in enumerate(lines, 1):
        if current is None and line.strip() == "```swift":
            current, start = [], number + 1
        elif current is not None and line.strip() == "```":
            blocks.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    if current is not None:
        sys.exit(f"{markdown}:{start - 1}: a ```swift block that is never closed")
    return blocks

for markdown in sys.argv[3:]:
    blocks, manifests = blocks_of(markdown), 0
    name = re.sub(r"[^A-Za-z0-9]", "_", markdown)
    for start, body in blocks:
        if any(line.strip() == "import PackageDescription" for line in body):
            manifests += 1
            package = os.path.join(scratch, f"{name}-{start}")
            os.makedirs(os.path.join(package, "Sources", "App"))
            open(os.path.join(package, "Package.swift"), "w").write("\n".join(body) + "\n")
            open(os.path.join(package, "Sources", "App", "main.swift"), "w").write("")
            continue
        imports = [m.group(1) for m in map(import_line.match, body) if m] or ["Courier", "Foundation"]
        # Import lines stay as blank lines, so that every other line keeps its line number.
        kept = ["" if import_line.match(line) else line for line in body]
        text = [f"// {markdown} line {start}, written by .ci/readme-snippets.sh: edit {markdown}, not this."]
        text += [f"import {module}" for module in imports]
        text += ["", f"@MainActor func {name}_line{start}() async throws {{"]
        text += [f'#sourceLocation(file: "{markdown}", line: {start})'] + kept + ["#sourceLocation()", "}", ""]
        open(os.path.join(snippets, f"{name}_line{start}.swift"), "w").write("\n".join(text))
    print(f"{markdown}: {len(blocks)} Swift blocks ({manifests} package manifests)")
PYTHON

for package in "$scratch"/manifest-*; do
  [ -d "$package" ] || continue
  swift package --package-path "$package" dump-package >/dev/null
done
# The blocks' own warnings (a value shown for the reader and left unused) are not the build's: the
# log is shown only when a block does not compile.
log="$scratch/build.log"
if ! swift build --target CourierReadmeTests >"$log" 2>&1; then
  cat "$log"
  echo "a Swift block of $* does not compile as written (errors above, at FILE:LINE)" >&2
  exit 1
fi
echo "every Swift block of $* compiles as written"
