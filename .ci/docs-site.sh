#!/usr/bin/env bash
# The documentation site: builds the DocC catalogs of the documented targets as one combined
# archive for static hosting, serves it from a loopback static server, and checks it in headless
# Chromium (Debian's `chromium`, installed here if missing): the site's landing page, each
# module's landing page and every article of each catalog open and render their titles, and every
# link on those pages that points into the site resolves to a built page.
#
#   bash .ci/docs-site.sh [OUTPUT_DIR]     # default .build/docs-site
#
# DOCS_TARGETS names the documented targets (the products' modules, as .spi.yml names them):
# change it in this one place when a catalog moves to another target. They are built together
# (swift-docc-plugin's --enable-experimental-combined-documentation), so a doc comment in one
# module links to another with an absolute link, ``/CourierCore/CourierError``.
# DOCS_STRICT_TARGETS: targets whose DocC warnings (an unresolved ``Symbol`` link, a parameter
# the comment does not document) fail the run; the other targets' warnings are only counted.
# DOCS_HOSTING_BASE_PATH is where the site lives on its host (https://host/<base>/documentation/…);
# the output directory holds it under that path, so the local server sees the same URLs.
# DOCS_CHECK_ALL_PAGES=1 renders every symbol page in Chromium too, not only the articles.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
DOCS_TARGETS=${DOCS_TARGETS:-"CourierCore CourierAsyncHTTPClient CourierTesting CourierOpenAPI"}
# Every target links to another's symbols with an absolute link (``/CourierCore/CourierError``),
# so all four are strict.
DOCS_STRICT_TARGETS=${DOCS_STRICT_TARGETS:-"$DOCS_TARGETS"}
DOCS_HOSTING_BASE_PATH=${DOCS_HOSTING_BASE_PATH:-courier}
out=${1:-.build/docs-site}
case "$out" in /*) ;; *) out="$root/$out" ;; esac
site="$out/$DOCS_HOSTING_BASE_PATH"
started=$(date +%s)
step() { echo "== $* ($(date -u +%H:%M:%S), +$(($(date +%s) - started)) s)"; }

step "tools"
if [ -z "$(command -v chromium || true)" ]; then
  apt-get update -qq && apt-get install -y -qq chromium
fi

step "DocC: $DOCS_TARGETS, combined, for static hosting under /$DOCS_HOSTING_BASE_PATH"
rm -rf "$out"
mkdir -p "$out"
target_options=()
for target in $DOCS_TARGETS; do target_options+=(--target "$target"); done
combined=()
[ ${#target_options[@]} -gt 2 ] && combined=(--enable-experimental-combined-documentation)
set +e
swift package --allow-writing-to-directory "$out" generate-documentation "${target_options[@]}" "${combined[@]}" \
  --transform-for-static-hosting --hosting-base-path "$DOCS_HOSTING_BASE_PATH" --output-path "$site" \
  >"$out/docc.log" 2>&1
status=$?
set -e
if [ $status -ne 0 ] || [ ! -f "$site/index.html" ]; then
  cat "$out/docc.log" >&2
  echo "docs-site: DocC failed (exit $status)" >&2
  exit 1
fi

# DocC prints each diagnostic as `warning: …` (or `error: …`), then ` --> Sources/<target>/…`.
step "DocC diagnostics (strict for: $DOCS_STRICT_TARGETS)"
strict_failures=0
for target in $DOCS_TARGETS; do
  count=$(grep -cE -- "--> Sources/$target/" "$out/docc.log" || true)
  if [[ " $DOCS_STRICT_TARGETS " == *" $target "* ]] && [ "$count" -gt 0 ]; then
    grep -B1 -A6 -E -- "--> Sources/$target/" "$out/docc.log" >&2
    echo "docs-site: $count DocC warning(s) in $target" >&2
    strict_failures=1
  else
    echo "  $target: $count warning(s)"
  fi
done
[ $strict_failures -eq 0 ]

step "Chromium: the landing pages and every article render their titles; every site link resolves"
DOCS_TARGETS="$DOCS_TARGETS" DOCS_HOSTING_BASE_PATH="$DOCS_HOSTING_BASE_PATH" \
  python3 .ci/docs_site_check.py "$out"

step "done in $(($(date +%s) - started)) s: the site is $site, served at /$DOCS_HOSTING_BASE_PATH/documentation/"
