"""Checks the API breaks that `swift package diagnose-api-breaking-changes` reported against
CHANGELOG.md: every break must be listed in an entry written since the baseline release.

A break is listed when a backticked span in those entries names its declaration: the qualified
name as the digester prints it (`Type.member(label:)`), the same without argument labels
(`Type.member`), or, for a change to a whole type, the type's name. The digester's own wording
("has been removed", "has parameter 0 type change") stays free: the CHANGELOG says it in words.

Usage: python3 api_breaks_check.py DIGESTER_OUTPUT CHANGELOG BASELINE_VERSION
       python3 api_breaks_check.py --self-test
Exit 0 when every break is listed, 1 (listing the others) when not, 2 on bad input.
"""

import re
import sys

BREAK_LINE = re.compile(r"API breakage:\s+(?P<kind>[A-Za-z]+)\s+(?P<name>\S+)\s+(?P<rest>.*)$")
ACCESSOR_SUFFIX = re.compile(r"\.(Get|Set|Modify|Read|_modify|_read|init|Init)\(\)$")
LABELS = re.compile(r"\(.*\)$")
SPAN = re.compile(r"`([^`\n]+)`")
BREAK_SECTIONS = {"Changed", "Removed", "Deprecated", "Security"}


def entries_since(changelog: str, version: str) -> str:
    """The entries of CHANGELOG.md above the heading of `version` (Unreleased and newer) that may
    list a break: those under Changed, Removed, Deprecated or Security, not Added or Fixed (an
    Added entry naming a declaration says nothing about what callers must change)."""
    heading = re.compile(r"^## \[" + re.escape(version) + r"\]", re.MULTILINE)
    match = heading.search(changelog)
    if match is None:
        raise ValueError(f"CHANGELOG.md has no '## [{version}]' heading")
    kept, keeping = [], False
    for line in changelog[: match.start()].splitlines():
        if line.startswith("### "):
            keeping = line[4:].strip() in BREAK_SECTIONS
        elif line.startswith("## "):
            keeping = False
        elif keeping:
            kept.append(line)
    return "\n".join(kept)


def names_in(text: str) -> set:
    """Every backticked name in `text`, as written and without argument labels or a leading dot."""
    names = set()
    for span in SPAN.findall(text):
        for candidate in (span, LABELS.sub("", span)):
            candidate = candidate.strip().lstrip(".")
            if candidate:
                names.add(candidate)
    return names


def declaration_forms(kind: str, name: str) -> list:
    """The names under which a CHANGELOG entry may list the declaration a break is about."""
    name = ACCESSOR_SUFFIX.sub("", name) if kind == "accessor" else name
    bare = LABELS.sub("", name)
    forms = [name, bare]
    # `Type.init(a:b:)` is listed as written, or as `Type(a:b:)`, the way callers write it.
    if bare.endswith(".init"):
        forms.append(bare[: -len(".init")] + name[len(bare):])
        forms.append(bare[: -len(".init")])
    if kind in ("struct", "class", "enum", "protocol", "typealias", "actor"):
        forms.append(bare.rsplit(".", 1)[-1])
    return forms


def self_test() -> int:
    """The matching rules on made-up digester lines and CHANGELOG entries."""
    changelog = (
        "## [Unreleased]\n### Added\n- `Added.only()` is new.\n### Changed\n"
        "- `Foo(a:b:)` takes `c:`; `Outer.Config.flag` is gone; `Gone` too.\n"
        "### Removed\n- `Bar.baz(_:)`: use `qux`.\n## [0.1.0] - 2026-01-01\n- `Old.entry()`\n"
    )
    listed = names_in(entries_since(changelog, "0.1.0"))
    cases = [
        ("constructor", "Foo.init(a:b:)", True),
        ("accessor", "Outer.Config.flag.Get()", True),
        ("func", "Bar.baz(_:)", True),
        ("struct", "Module.Gone", True),
        ("func", "Added.only()", False),  # named only under Added
        ("func", "Old.entry()", False),  # named only in the baseline's own entries
        ("func", "Bar.other(_:)", False),
    ]
    failures = [
        (kind, name)
        for kind, name, expected in cases
        if any(form in listed for form in declaration_forms(kind, name)) != expected
    ]
    for kind, name in failures:
        print(f"self-test: wrong verdict for {kind} {name}", file=sys.stderr)
    return 1 if failures else 0


def main(arguments: list) -> int:
    if arguments == ["--self-test"]:
        return self_test()
    if len(arguments) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    output_path, changelog_path, version = arguments
    with open(output_path, encoding="utf-8") as output:
        breaks = [m for m in (BREAK_LINE.search(line) for line in output) if m]
    with open(changelog_path, encoding="utf-8") as changelog:
        try:
            listed = names_in(entries_since(changelog.read(), version))
        except ValueError as error:
            print(f"api breaks: {error}", file=sys.stderr)
            return 2
    unlisted = [b for b in breaks if not any(f in listed for f in declaration_forms(b["kind"], b["name"]))]
    for found in breaks:
        mark = "UNLISTED" if found in unlisted else "listed  "
        print(f"{mark} {found['kind']} {found['name']} {found['rest']}")
    if unlisted:
        sys.stdout.flush()
        print(
            f"\n{len(unlisted)} of {len(breaks)} API breaks since {version} are not in CHANGELOG.md: "
            "list each under [Unreleased] (Changed or Removed) with its replacement, naming the "
            "declaration in backticks as above.",
            file=sys.stderr,
        )
        return 1
    print(f"{len(breaks)} API breaks since {version}, all listed in CHANGELOG.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
