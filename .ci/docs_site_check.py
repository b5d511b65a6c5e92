#!/usr/bin/env python3
"""Checks a DocC static site in headless Chromium; run by .ci/docs-site.sh.

    python3 .ci/docs_site_check.py OUTPUT_DIR

OUTPUT_DIR holds the site under DOCS_HOSTING_BASE_PATH: the combined DocC archive of the targets
of DOCS_TARGETS, as .ci/docs-site.sh builds it. The site is served from a static HTTP server on 127.0.0.1 (the
standard library's http.server, in a thread), and each page is opened with `chromium --headless
--dump-dom`, which prints the DOM once the page's scripts have run: DocC is a Vue app, and the
static index.html of every page holds no content until its JavaScript has fetched the page's
JSON and rendered it. A page passes when its <h1> is the expected title and it is not DocC's
"page not found" view. Every link on it that points into the site must resolve to a built page
(its index.html and its render JSON); links to other hosts are counted, not fetched.

The pages checked: the site's landing page (which lists the modules), each target's landing page,
titled with the module's name, and every article of the target's catalog
(Sources/<target>/*.docc/*.md whose title is not a ``Symbol`` link), titled with its first
heading; with DOCS_CHECK_ALL_PAGES=1, every page the archive holds.
"""

import concurrent.futures
import functools
import html.parser
import http.server
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

NOT_FOUND_TEXT = "The page you're looking for can't be found"


class PageDOM(html.parser.HTMLParser):
    """The parts of a rendered page the check reads: h1 texts, link targets, all text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.h1 = []
        self.links = []
        self.text = []
        self._in_h1 = 0

    def handle_starttag(self, tag, attrs):
        if tag == "h1":
            self._in_h1 += 1
            self.h1.append("")
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)

    def handle_endtag(self, tag):
        if tag == "h1" and self._in_h1:
            self._in_h1 -= 1

    def handle_data(self, data):
        self.text.append(data)
        if self._in_h1:
            self.h1[-1] += data


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # one line per request would drown the report
        pass


def serve(directory):
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def first_heading(markdown_file):
    for line in markdown_file.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None


def title_in_data(site, relative_path):
    """The title DocC stored for a page (documentation/..., without a suffix), or None."""
    data = site / "data" / (relative_path + ".json")
    if not data.is_file():
        return None
    return json.loads(data.read_text(encoding="utf-8")).get("metadata", {}).get("title")


def pages_to_check(root, base, targets, all_pages):
    """(URL path, expected title) for every page to open."""
    site = root / base
    pages = []
    landing = title_in_data(site, "documentation")
    if landing:  # the landing page `docc merge` makes for a combined archive
        pages.append((f"/{base}/documentation/", landing))
    for target in targets:
        slug = target.lower()
        prefix = f"/{base}/documentation/{slug}"
        pages.append((prefix + "/", target))
        for catalog in sorted(pathlib.Path("Sources", target).glob("*.docc")):
            for article in sorted(catalog.glob("*.md")):
                title = first_heading(article)
                if title is None or title.startswith("``"):
                    continue  # the landing page or a symbol's extension file
                pages.append((f"{prefix}/{article.stem.lower()}", title))
    if all_pages:
        listed = {path.rstrip("/") for path, _ in pages}
        for json_file in sorted((site / "data").glob("documentation/**/*.json")):
            relative = json_file.relative_to(site / "data").with_suffix("").as_posix()
            path = f"/{base}/{relative}"
            title = title_in_data(site, relative)
            if path not in listed and title:
                pages.append((path, title))
    return pages


def resolves(root, base, path):
    """Whether a site path is a built page (its index.html and its render JSON) or a built file."""
    relative = urllib.parse.unquote(path).strip("/")
    local = root / relative
    if local.is_file():
        return True
    parts = relative.split("/")
    if len(parts) >= 2 and parts[0] == base and parts[1] in ("documentation", "tutorials"):
        page = local / "index.html"
        data = root.joinpath(base, "data", *parts[1:-1], parts[-1] + ".json")
        return page.is_file() and data.is_file()
    return (local / "index.html").is_file()


def render(chromium, url, profile):
    command = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-extensions", "--mute-audio", f"--user-data-dir={profile}",
        "--virtual-time-budget=20000", "--dump-dom", url,
    ]
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return result.stdout, result.returncode, result.stderr, time.monotonic() - started


def check_page(chromium, root, base, origin, path, title):
    """One page: (problems, internal links checked, external links, seconds)."""
    profile = tempfile.mkdtemp(prefix="docs-site-chromium-")
    try:
        dom, status, stderr, seconds = render(chromium, origin + path, profile)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    problems = []
    if status != 0 or not dom.strip():
        tail = stderr.strip().splitlines()[-3:]
        return [f"{path}: chromium exited {status}: {' | '.join(tail)}"], 0, 0, seconds
    page = PageDOM()
    page.feed(dom)
    headings = [" ".join(h.split()) for h in page.h1]
    if title not in headings:
        problems.append(f"{path}: expected the title {title!r}, rendered h1 {headings or 'none'}")
    if NOT_FOUND_TEXT in " ".join(page.text):
        problems.append(f"{path}: rendered DocC's 'page not found' view")
    internal = external = 0
    for href in sorted(set(page.links)):
        target = urllib.parse.urlsplit(urllib.parse.urljoin(origin + path, href))
        if target.scheme not in ("http", "https"):
            continue
        if target.netloc != urllib.parse.urlsplit(origin).netloc:
            external += 1
            continue
        internal += 1
        if not resolves(root, base, target.path):
            problems.append(f"{path}: the link {href} resolves to no page")
    return problems, internal, external, seconds


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    base = os.environ.get("DOCS_HOSTING_BASE_PATH", "courier")
    targets = os.environ.get("DOCS_TARGETS", "Courier CourierTesting CourierOpenAPI").split()
    all_pages = os.environ.get("DOCS_CHECK_ALL_PAGES") == "1"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("docs-site: no chromium on PATH")
    pages = pages_to_check(root, base, targets, all_pages)
    server = serve(root)
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    started = time.monotonic()
    problems = []
    internal_total = external_total = 0
    # Two browsers at a time: the CI machine has two cores.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {pool.submit(check_page, chromium, root, base, origin, p, t): (p, t) for p, t in pages}
        for future in concurrent.futures.as_completed(futures):
            path, title = futures[future]
            found, internal, external, seconds = future.result()
            internal_total += internal
            external_total += external
            problems.extend(found)
            mark = "FAIL" if found else "ok"
            print(f"  {mark:4} {path}  {title!r}  ({internal} site links, {seconds:.1f} s)", flush=True)
    server.shutdown()
    print(
        f"docs-site: {len(pages)} pages rendered, {internal_total} site links checked, "
        f"{external_total} links to other hosts not fetched, {time.monotonic() - started:.1f} s in Chromium"
    )
    if problems:
        print("docs-site: problems:", *problems, sep="\n  ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
