#!/usr/bin/env bash
# Installs the `courier` command under PREFIX: one binary that runs without Swift, its man page,
# and completions for bash, zsh and fish, in the places those tools look.
#
#   bash .ci/install-cli.sh PREFIX        # e.g. /usr/local (as root), or ~/.local
#   DESTDIR=/tmp/stage bash .ci/install-cli.sh /usr   # stage a package's files
#
# Installs:
#   PREFIX/bin/courier                                  swift build -c release --static-swift-stdlib
#   PREFIX/share/man/man1/courier.1                     from the same help text as `courier --help`
#   PREFIX/share/bash-completion/completions/courier    courier --generate-completion-script bash
#   PREFIX/share/zsh/site-functions/_courier            … zsh
#   PREFIX/share/fish/vendor_completions.d/courier.fish … fish
#
# The man page comes from swift-argument-parser's generate-manual plugin (a dependency already,
# so it needs no network): it runs `courier --experimental-dump-help`, the command's options and
# help strings as the parser knows them, the same ones `--help` prints, and writes mdoc. The
# script checks that every long option `courier --help` lists is in the page. The plugin builds
# every product of the package first, without --static-swift-stdlib (the static build comes after
# it, so the binary installed is the static one): in debug mode when a debug build of courier
# exists (as in CI after `swift build`: 44-62 s for the whole install), else in release mode,
# which then costs the release build of the other products and, since 42 modules are compiled
# with other flags than under --static-swift-stdlib, their second compile (602 s on 2026-11-27
# after a static build). COURIER_MANUAL_CONFIGURATION=debug|release chooses.
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: bash .ci/install-cli.sh PREFIX   (e.g. /usr/local or \$HOME/.local)" >&2
  exit 2
fi
prefix=$1
# A relative PREFIX is taken from where the script was started, before it changes directory.
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cd "$(dirname "$0")/.."
root=$PWD
stage="${DESTDIR:-}$prefix"
started=$(date +%s)
step() { echo "== $* ($(date -u +%H:%M:%S), +$(($(date +%s) - started)) s)"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

. "$root/.ci/libcurl-dev.sh"

step "man page: swift package generate-manual (swift-argument-parser's plugin)"
# The page's date is the last commit's, so that the same source makes the same page.
page_date=$(git log -1 --format=%cs 2>"$scratch/git.log" || date -u +%F)
if [ -z "${COURIER_MANUAL_CONFIGURATION:-}" ]; then
  COURIER_MANUAL_CONFIGURATION=release
  [ -x "$(swift build --show-bin-path)/courier" ] && COURIER_MANUAL_CONFIGURATION=debug
fi
echo "(in $COURIER_MANUAL_CONFIGURATION mode)"
swift package generate-manual --configuration "$COURIER_MANUAL_CONFIGURATION" --date "$page_date" \
  >"$scratch/manual.log" 2>&1 || {
  cat "$scratch/manual.log" >&2
  exit 1
}
# The plugin writes into its work directory, named after the executable's target.
manual=.build/plugins/GenerateManual/outputs/CourierCLI/courier.1
if [ ! -f "$manual" ] || [ "$manual" -ot "$scratch" ]; then
  cat "$scratch/manual.log" >&2
  echo "install-cli: generate-manual wrote no new $manual" >&2
  exit 1
fi
cp "$manual" "$scratch/courier.1"

step "binary: swift build -c release --static-swift-stdlib --product courier"
swift build -c release --static-swift-stdlib --product courier
binary="$(swift build -c release --static-swift-stdlib --show-bin-path)/courier"
if ldd "$binary" | grep -E 'libswift|libFoundation|libdispatch'; then
  echo "install-cli: $binary needs the Swift libraries above; it would not run without Swift" >&2
  exit 1
fi

step "the man page covers every long option of courier --help"
"$binary" --help >"$scratch/help.txt"
missing=()
for option in $(grep -oE -- '--[a-z][a-z0-9.-]*[a-z0-9]' "$scratch/help.txt" | sort -u); do
  # mdoc writes an option as `.It Fl -name` or `.It Fl n , -name` (Fl adds the first dash).
  name=${option#--}
  name=${name//./\\.}
  if ! grep -qE -- "^\.It Fl (. , )?-${name}( |\$)" "$scratch/courier.1"; then
    missing+=("$option")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-cli: courier.1 lacks these options of courier --help: ${missing[*]}" >&2
  exit 1
fi
echo "$(grep -oE -- '--[a-z][a-z0-9.-]*[a-z0-9]' "$scratch/help.txt" | sort -u | wc -l) long options, all in courier.1"

step "completions: courier --generate-completion-script bash|zsh|fish"
for shell in bash zsh fish; do
  "$binary" --generate-completion-script "$shell" >"$scratch/completion.$shell"
  [ -s "$scratch/completion.$shell" ] || { echo "install-cli: empty $shell completion script" >&2; exit 1; }
done
# argument-parser's fish script gives fish's `argparse` every option of a subcommand as a spec;
# fish refuses a spec with a dot (`http1.1`: "Invalid option spec"), and the script's parsing
# loop then never ends: fish 3.6 hung on `courier request --<TAB>`. Without that spec the option
# is still completed (its own `complete -l 'http1.1'` line stays).
sed -E "/__courier_parse_subcommand /s/ '[^' ]*\.[^' ]*'//g" "$scratch/completion.fish" >"$scratch/completion.fish.fixed"
mv "$scratch/completion.fish.fixed" "$scratch/completion.fish"
printf '' >"$scratch/empty.in"
if [ -n "$(command -v zsh || true)" ]; then
  zsh -n "$scratch/completion.zsh" || { echo "install-cli: zsh rejects the completion script" >&2; exit 1; }
fi
if [ -n "$(command -v fish || true)" ]; then
  completed=$(PATH="$(dirname "$binary"):$PATH" timeout 20 fish --no-config -c \
    'source $argv[1]; complete -C "courier request --htt"' "$scratch/completion.fish" <"$scratch/empty.in" || true)
  [[ "$completed" == *--http2* ]] || { echo "install-cli: fish did not complete courier request --htt" >&2; exit 1; }
  echo "  fish: courier request --htt → $(echo "$completed" | cut -f1 | tr '\n' ' ')"
fi

step "install under $stage"
install -d "$stage/bin" "$stage/share/man/man1" "$stage/share/bash-completion/completions" \
  "$stage/share/zsh/site-functions" "$stage/share/fish/vendor_completions.d"
# Stripped, as distributions ship binaries: 146 MB → 76 MB on 2026-11-27. COURIER_STRIP=0 keeps
# the symbols, for backtraces with function names.
if [ "${COURIER_STRIP:-1}" = 1 ]; then strip_option=(-s); else strip_option=(); fi
install -m 0755 "${strip_option[@]}" "$binary" "$stage/bin/courier"
install -m 0644 "$scratch/courier.1" "$stage/share/man/man1/courier.1"
install -m 0644 "$scratch/completion.bash" "$stage/share/bash-completion/completions/courier"
install -m 0644 "$scratch/completion.zsh" "$stage/share/zsh/site-functions/_courier"
install -m 0644 "$scratch/completion.fish" "$stage/share/fish/vendor_completions.d/courier.fish"
for file in bin/courier share/man/man1/courier.1 share/bash-completion/completions/courier \
  share/zsh/site-functions/_courier share/fish/vendor_completions.d/courier.fish; do
  echo "  $stage/$file"
done
step "the installed bash completion completes: courier request --ht → --http1.1 --http2"
# argument-parser completes a default subcommand's options after its name only: `courier request
# --<TAB>`; at the root it offers --help, --version and the subcommands.
completed=$(bash -c 'source "$1"; COMP_WORDS=(courier request --ht); COMP_CWORD=2
  COMP_LINE="courier request --ht"; COMP_POINT=${#COMP_LINE}; _courier courier --ht request
  printf "%s " "${COMPREPLY[@]}"' bash "$stage/share/bash-completion/completions/courier")
echo "  $completed"
[[ "$completed" == *--http2* ]] || { echo "install-cli: the bash completion did not offer --http2" >&2; exit 1; }
"$stage/bin/courier" --version >"$scratch/version.txt"
step "done in $(($(date +%s) - started)) s: courier $(cat "$scratch/version.txt") in $stage/bin"
