#!/usr/bin/env python3
"""Splits a callgrind profile's instructions by owner: Courier, AsyncHTTPClient, NIO, and the
Swift concurrency runtime's own loop.

    python3 Benchmarks/callgrind_split.py SMALL.out LARGE.out REQUESTS [TOP] [--calls]

takes two profiles of the same side that differ only in the number of requests (say 1,000 and
3,000) and prints instructions per request, (large - small) / REQUESTS, so that start-up,
warm-up and connection set-up cancel out.

Owners are read from the mangled Swift name (its first module: `$s11CourierCore...`, or the
first module named inside a specialisation of a standard-library generic). Code that is
nobody's own - the standard library, the runtime (swift_retain/release, swift_allocObject,
swift_task_alloc), Foundation, HTTPTypes, swift-log/metrics/tracing, libc (malloc, free,
memcpy, pthread locks) - is charged to whoever called it, in proportion to each caller's share
of its calls' inclusive cost (as gprof does), so that a malloc is Courier's when Courier asked
for it. What no owner called (the concurrency runtime's job loop, thread start) stays
"runtime, no caller". The "of which" columns show how much of each owner's total came through
allocation (malloc/free and friends) and reference counting (swift_retain/release).

With --calls it also counts, per request, the calls that cost more than their instructions on
two cores (atomics, locks, thread hand-offs), by the owner of the calling function: reference
counting, malloc, mutex locks, jobs handed to the Swift executor, continuations resumed, and
tasks handed to an event loop (`execute`, whose caller is often NIO's own witness).
"""

import re
import sys
from collections import defaultdict

OWNERS = [
    ("Courier", ("CourierCore", "CourierAsyncHTTPClient", "Courier")),
    ("AsyncHTTPClient", ("AsyncHTTPClient",)),
    ("NIO", ("NIOCore", "NIOPosix", "NIOHTTP1", "NIOHTTP2", "NIOConcurrencyHelpers", "NIOEmbedded", "_NIODataStructures",
             "NIOSSL", "NIOTLS", "NIOHPACK", "NIOHTTPCompression", "NIOExtras", "NIOTransportServices", "_NIOBase64",
             "NIOFileSystem", "_NIOFileSystem", "NIOPosix", "CNIOLinux", "CNIOPosix", "CNIOLLHTTP", "NIOSOCKS",
             "_NIOConcurrency")),
    ("bench", ("CourierBench",)),
]
MODULE_OWNER = {module: owner for owner, modules in OWNERS for module in modules}
C_PREFIXES = [("c_nio_", "NIO"), ("CNIO", "NIO"), ("llhttp", "NIO")]
ALLOC = re.compile(r"^(malloc|free|calloc|realloc|posix_memalign|aligned_alloc|_int_malloc|_int_free|malloc_consolidate|"
                   r"swift_slowAlloc|swift_slowDealloc|swift_allocObject|swift_deallocObject|swift_deallocClassInstance|"
                   r"_swift_release_dealloc|swift_task_alloc|swift_task_dealloc|tcache_.*|cfree|__libc_malloc|__libc_free|"
                   r"_int_realloc|unlink_chunk.*)$")
REFCOUNT = re.compile(r"^(swift_retain|swift_release|swift_retain_n|swift_release_n|swift_bridgeObjectRetain|"
                      r"swift_bridgeObjectRelease|swift_unknownObjectRetain|swift_unknownObjectRelease|"
                      r"swift_bridgeObjectRetain_n|swift_bridgeObjectRelease_n|swift_weak.*|swift_unownedRetain.*|"
                      r"swift_unownedRelease.*|swift_isUniquelyReferenced.*)$")


def owner_of(name):
    if name.startswith(("$s", "_$s", "$S")):
        body = name[name.index("s") + 1:]
        # An extension's members belong to the module that declares the extension
        # (`...3URLV15AsyncHTTPClientE...`), not to the extended type's.
        for module, owner in MODULE_OWNER.items():
            if f"{len(module)}{module}E" in body:
                return owner
        # Identifiers are length-prefixed: read each whole, so digits inside one are not a length.
        i = 0
        while i < len(body):
            if body[i].isdigit() and body[i] != "0":
                j = i
                while j < len(body) and body[j].isdigit():
                    j += 1
                length = int(body[i:j])
                module = body[j:j + length]
                if module in MODULE_OWNER:
                    return MODULE_OWNER[module]
                i = j + length
            else:
                i += 1
        return None
    for prefix, owner in C_PREFIXES:
        if name.startswith(prefix):
            return owner
    return None


def parse(path):
    """Self cost per function, and per (caller, callee) the calls' inclusive cost."""
    names = {}
    self_cost = defaultdict(int)
    edges = defaultdict(int)
    current = None
    callee = None
    pending_call = False

    def resolve(text):
        text = text.strip()
        match = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not match:
            return text
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
            return match.group(2)
        return names[match.group(1)]

    with open(path, errors="replace") as handle:
        for line in handle:
            if line.startswith("fn="):
                current = resolve(line[3:])
            elif line.startswith("cfn="):
                callee = resolve(line[4:])
            elif line.startswith("calls="):
                pending_call = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if len(parts) < 2 or current is None:
                    continue
                cost = int(parts[1])
                if pending_call:
                    edges[(current, callee)] += cost
                    pending_call = False
                else:
                    self_cost[current] += cost
            elif line.startswith(("cfi=", "cfl=", "cob=", "fl=", "fi=", "fe=", "ob=")):
                continue
    return self_cost, edges


CALLS = [
    ("retain/release", r"^swift_(retain|release|bridgeObjectRetain|bridgeObjectRelease|unknownObjectRetain|"
                       r"unknownObjectRelease)(_n)?$"),
    ("malloc", r"^(malloc|calloc|realloc|posix_memalign)$"),
    ("mutex lock", r"^(__)?pthread_mutex_lock(@.*)?$"),
    ("executor jobs", r"^swift_task_enqueueGlobal$"),
    ("continuation resumes", r"^swift_continuation_(throwingResume|resume)"),
    ("event-loop execute", r"^\$s8NIOPosix19SelectableEventLoopC10_schedule0"),
]


def call_counts(path):
    """Per (caller, callee), how many calls."""
    names = {}
    counts = defaultdict(int)
    current = callee = None
    pending = None
    with open(path, errors="replace") as handle:
        for line in handle:
            if line.startswith(("fn=", "cfn=")):
                text = line.split("=", 1)[1].strip()
                match = re.match(r"\((\d+)\)(?: (.*))?$", text)
                if match:
                    if match.group(2) is not None:
                        names[match.group(1)] = match.group(2)
                    text = names[match.group(1)]
                if line.startswith("fn="):
                    current = text
                else:
                    callee = text
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif pending is not None and (line[:1].isdigit() or line[:1] in "+-*"):
                counts[(current, callee)] += pending
                pending = None
    return counts


def print_calls(small, large, requests):
    a, b = call_counts(small), call_counts(large)
    print(f"\n{'calls per request':<22}{'all':>8}  by the caller's owner")
    for label, pattern in CALLS:
        matcher = re.compile(pattern)
        by_owner = defaultdict(float)
        for (caller, callee), count in b.items():
            if matcher.search(callee or "") and not matcher.search(caller or ""):
                by_owner[owner_of(caller) or "other"] += (count - a.get((caller, callee), 0)) / requests
        total = sum(by_owner.values())
        parts = "  ".join(f"{owner} {n:.1f}" for owner, n in sorted(by_owner.items(), key=lambda x: -x[1]) if n >= 0.05)
        print(f"{label:<22}{total:>8.1f}  {parts}")


def attribute(self_cost, edges):
    """Owner totals, with each ownerless function's self cost pushed up to its callers."""
    incoming = defaultdict(list)
    for (caller, callee), cost in edges.items():
        if caller != callee:
            incoming[callee].append((caller, cost))
    shares = {}
    for callee, callers in incoming.items():
        total = sum(cost for _, cost in callers)
        if total:
            shares[callee] = [(caller, cost / total) for caller, cost in callers]
    kinds = ("all", "alloc", "refcount")
    totals = {kind: defaultdict(float) for kind in kinds + ("self",)}
    by_function = defaultdict(float)
    owners = {}

    def owner(name):
        if name not in owners:
            owners[name] = owner_of(name)
        return owners[name]

    for kind in kinds:
        # Mass waiting at ownerless functions, pushed one level up per round (depth-bounded).
        frontier = defaultdict(float)
        for function, cost in self_cost.items():
            if kind == "alloc" and not ALLOC.match(function):
                continue
            if kind == "refcount" and not REFCOUNT.match(function):
                continue
            frontier[function] += cost
        for _ in range(60):
            next_frontier = defaultdict(float)
            for name, mass in frontier.items():
                who = owner(name)
                if who:
                    totals[kind][who] += mass
                    if kind == "all":
                        by_function[name] += mass
                elif name in shares:
                    for caller, share in shares[name]:
                        next_frontier[caller] += mass * share
                else:
                    totals[kind]["runtime, no caller"] += mass
            frontier = next_frontier
            if not frontier:
                break
        for mass in frontier.values():
            totals[kind]["runtime, no caller"] += mass
    for function, cost in self_cost.items():
        who = owner(function)
        if who:
            totals["self"][who] += cost
    return totals, by_function


def profile(path):
    self_cost, edges = parse(path)
    return attribute(self_cost, edges)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    wants_calls = "--calls" in sys.argv
    args = [arg for arg in sys.argv if arg != "--calls"]
    small, large, requests = args[1], args[2], int(args[3])
    top = int(args[4]) if len(args) > 4 else 0
    (a, fa), (b, fb) = profile(small), profile(large)
    owners = sorted(set(a["all"]) | set(b["all"]), key=lambda o: -(b["all"][o] - a["all"][o]))
    grand = sum(b["all"][o] - a["all"][o] for o in owners) / requests
    print(f"{'owner':<22}{'instr/request':>14}{'share':>8}{'own frames only':>17}{'share':>8}"
          f"{'of which alloc':>16}{'refcount':>10}")
    for owner in owners:
        per = (b["all"][owner] - a["all"][owner]) / requests
        alloc = (b["alloc"][owner] - a["alloc"][owner]) / requests
        rc = (b["refcount"][owner] - a["refcount"][owner]) / requests
        own = (b["self"][owner] - a["self"][owner]) / requests
        print(f"{owner:<22}{per:>14,.0f}{per / grand:>8.1%}{own:>17,.0f}{own / grand:>8.1%}{alloc:>16,.0f}{rc:>10,.0f}")
    print(f"{'total':<22}{grand:>14,.0f}")
    if top:
        print(f"\nfunctions, self + what they called of nobody's own, per request (top {top}):")
        rows = sorted(((fb[n] - fa.get(n, 0)) / requests, n) for n in fb)
        for per, name in reversed(rows[-top:]):
            print(f"{per:>10,.0f}  {owner_of(name):<16} {name[:150]}")
    if wants_calls:
        print_calls(small, large, requests)


if __name__ == "__main__":
    main()
