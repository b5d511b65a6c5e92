#!/usr/bin/env python3
"""How often a client sleeps while it receives: wall time and context switches of one command.

usage: wakeups.py ROUNDS LABEL=COMMAND [LABEL=COMMAND ...]

Runs the commands in turn, ROUNDS times, each as a child whose stdout and stderr are discarded,
and prints per run the wall time from outside and the child's voluntary context switches (each
one a sleep: a blocked recv(), poll(), epoll_wait() or futex wait) and involuntary ones (taken off
a core). BENCHMARKS.md, "Why curl outruns a blocking receive loop", used it to compare curl, the
C loops of peers/recv_discard.c and `courier-bench stream courier` against one test server.
"""
import os
import shlex
import subprocess
import sys
import time


def measure(command):
    started = time.monotonic()
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    return time.monotonic() - started, status, usage


def main(argv):
    if len(argv) < 3 or not argv[1].isdigit() or any("=" not in pair for pair in argv[2:]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    commands = [pair.split("=", 1) for pair in argv[2:]]
    for round_number in range(1, int(argv[1]) + 1):
        for label, command in commands:
            wall, status, usage = measure(shlex.split(command))
            print(f"round {round_number} {label:>12}: wall {wall:.3f} s, voluntary switches "
                  f"{usage.ru_nvcsw:>6}, involuntary {usage.ru_nivcsw:>6}, CPU "
                  f"{usage.ru_utime + usage.ru_stime:.3f} s, minor faults {usage.ru_minflt}, exit {os.waitstatus_to_exitcode(status)}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
