#!/usr/bin/env python3
"""Puts the last run of Benchmarks/run.sh into BENCHMARKS.md.

usage: python3 Benchmarks/refresh_doc.py [BENCHMARKS.md]

Replaces what stands between the `<!-- last-run:begin -->` and `<!-- last-run:end -->` markers
with Benchmarks/.build/last-run.md (the run's facts and its table) and the phase times from
Benchmarks/.build/last-run-timing.txt. Everything outside the markers (the analysis of missed
rows, the method) is left for a person to update. Refuses a run that selected only some rows:
the section is called the last *full* run.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BEGIN, END = "<!-- last-run:begin -->", "<!-- last-run:end -->"


def main():
    doc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(HERE), "BENCHMARKS.md")
    run_path = os.path.join(HERE, ".build", "last-run.md")
    timing_path = os.path.join(HERE, ".build", "last-run-timing.txt")
    if not os.path.exists(run_path):
        sys.exit(f"refresh_doc: no {run_path}; run `bash Benchmarks/run.sh` first")
    run = open(run_path).read().strip()
    command = next((line for line in run.splitlines() if line.startswith("- **Command:**")), "")
    shrunk = any(name in command for name in ("BENCH_BIG", "BENCH_MEMORY", "BENCH_SCALE", "BENCH_RUNS=1",
                                               "BENCH_RUNS=2", "BENCH_RUNS=3", "BENCH_RUNS=4"))
    if not command.rstrip(".").endswith("bash Benchmarks/run.sh`") or shrunk:
        sys.exit(f"refresh_doc: the last run was not a full run ({command}); not replacing the table")
    block = [BEGIN, run]
    if os.path.exists(timing_path):
        block.append("\n- **Phases:** " + open(timing_path).read().strip().removeprefix("run.sh phases, ") + ".")
    block.append(END)
    text = open(doc).read()
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        sys.exit(f"refresh_doc: {doc} has no {BEGIN} … {END} block")
    text = text[:start] + "\n".join(block) + text[stop + len(END):]
    with open(doc, "w") as handle:
        handle.write(text)
    print(f"refresh_doc: {doc} now shows the run of {run_path}")


if __name__ == "__main__":
    main()
