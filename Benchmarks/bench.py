#!/usr/bin/env python3
"""Runs Courier's benchmark workloads against their peers and prints one table.

Called by run.sh, which installs the peers and builds the Swift executables first. Each
workload runs Courier and its peer alternately (A B A B ...), every run in a fresh process, so
that both see the same machine state; the ratio of a workload is the median of the pairwise
ratios of the runs. Every run is checked (lengths, sha256 at the sink or of the output) and a
wrong result fails the row instead of scoring.

Environment (all optional):
  BENCH_RUNS        pairs per workload (default 5)
  BENCH_BIG         size of the large file in bytes (default 1 GiB)
  BENCH_MEMORY      size of the in-memory part in bytes (default 256 MiB)
  BENCH_SCALE       scales the iteration counts of the in-process workloads (default 1.0)
  BENCH_WORK        scratch directory (default /tmp/courier-bench; run.sh sets Benchmarks/.build/work)
  BENCH_ROW_CAP     wall-clock seconds one row may take before no further pair starts (default 300);
                    a row capped before 5 pairs fails instead of scoring on fewer
  BENCH_MARKDOWN    also write the table as Markdown to this file
  BENCH_JSON        also write every run as JSON lines to this file
"""

import hashlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import platform
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Callable, Optional

GiB = 1 << 30
MiB = 1 << 20
BOUNDARY = "courier.bench.boundary.0123456789abcdef"


def env_int(name, default):
    value = os.environ.get(name)
    return int(value) if value else default


RUNS = env_int("BENCH_RUNS", 5)
BIG = env_int("BENCH_BIG", GiB)
MEMORY = env_int("BENCH_MEMORY", 256 * MiB)
SCALE = float(os.environ.get("BENCH_SCALE", "1.0"))
WORK = os.environ.get("BENCH_WORK", "/tmp/courier-bench")


def tmpfs_directory():
    """A writable directory on a tmpfs: BENCH_TMPFS, else /dev/shm when it is one; None otherwise."""
    chosen = os.environ.get("BENCH_TMPFS")
    if chosen:
        return chosen
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) > 2 and fields[1] == "/dev/shm" and fields[2] == "tmpfs" and os.access("/dev/shm", os.W_OK):
                    return "/dev/shm"
    except OSError:
        pass
    return None


TMPFS = tmpfs_directory()
ROW_CAP = float(os.environ.get("BENCH_ROW_CAP", "300"))


def scaled(count):
    return str(max(1, int(count * SCALE)))


# ---------------------------------------------------------------------------------------------
# Running one process and measuring it


@dataclass
class Run:
    seconds: float          # the number the row is scored on (self-reported or wall)
    wall: float             # wall-clock seconds of the whole process
    rss_kib: int            # peak resident set of the process (wait4 ru_maxrss)
    ok: bool
    detail: str
    report: dict = field(default_factory=dict)
    score: float = 0.0      # higher is better: operations or bytes per second
    allocations: Optional[float] = None  # heap allocations per operation (courier-bench only)


class Failed(Exception):
    pass


TIME = "/usr/bin/time"


def run_process(argv, stdout_path=None, timeout=180, env=None):
    """Runs argv with no stdin; returns (exit status, stdout text or '', stderr, wall, maxrss KiB).

    The peak RSS comes from GNU time's %M, not from our own wait4: Python starts children with
    vfork, and Linux carries the parent's high-water mark across exec into ru_maxrss, so a
    direct wait4 would report this driver's ~40 MiB for every small process.
    """
    out = open(stdout_path, "wb") if stdout_path else tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    rss_file = tempfile.NamedTemporaryFile(prefix="rss-", dir=WORK, delete=False)
    rss_file.close()
    start = time.monotonic()
    # Its own process group, so that a hung run is killed with GNU time's child, not just time.
    process = subprocess.Popen([TIME, "-f", "%M", "-o", rss_file.name, *argv],
                               stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, start_new_session=True)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(process.pid, 0)
            os.remove(rss_file.name)
            raise Failed(f"timed out after {timeout}s: {' '.join(argv)}")
        time.sleep(0.002)
    wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    try:
        with open(rss_file.name) as handle:
            lines = [line for line in handle.read().split() if line.isdigit()]
        rss = int(lines[-1]) if lines else usage.ru_maxrss
    finally:
        os.remove(rss_file.name)
    text = ""
    if not stdout_path:
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    out.close()
    err.seek(0)
    errors = err.read().decode("utf-8", "replace")
    err.close()
    return process.returncode, text, errors, wall, rss


def read_port(path):
    if os.path.exists(path):
        text = open(path).read().strip()
        if text.isdigit():
            return text
    return None


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise Failed(f"no JSON line in output: {text[-400:]!r}")


MALLOC_COUNT = os.environ.get("BENCH_MALLOC_COUNT", "")


def swift_run(argv, metric, check=None, timeout=180):
    """A courier-bench (or other JSON-printing) process: scored on its self-reported seconds.

    courier-bench runs with the allocation counter preloaded (both its Courier and its Swift peer
    sides), so its report carries the allocations of the measured section.
    """
    env = None
    if MALLOC_COUNT and os.path.basename(argv[0]) == "courier-bench":
        env = dict(os.environ, LD_PRELOAD=MALLOC_COUNT)
    status, text, errors, wall, rss = run_process(argv, timeout=timeout, env=env)
    if status != 0 and not text.strip():
        raise Failed(f"exit {status}: {errors.strip()[-600:]}")
    report = last_json_line(text)
    ok = bool(report.get("ok")) and status == 0
    detail = report.get("detail", "")
    if ok and check:
        problem = check(report)
        if problem:
            ok, detail = False, problem
    # A process that reports its own VmHWM is measured by it: read right after the measured
    # section, it leaves out what printing the report costs (GNU time's %M includes that).
    if isinstance(report.get("vmhwm_kib"), int) and report["vmhwm_kib"] > 0:
        rss = report["vmhwm_kib"]
    allocations = report.get("allocations")
    if allocations is not None:
        allocations = allocations / max(1, report.get("ops", 1))
    return Run(seconds=report["seconds"], wall=wall, rss_kib=rss, ok=ok, detail=detail,
               report=report, score=metric(report), allocations=allocations)


def per_second(key):
    return lambda report: report[key] / report["seconds"] if report["seconds"] > 0 else 0.0


# ---------------------------------------------------------------------------------------------
# Workloads


@dataclass
class Workload:
    key: str
    title: str
    peer_name: str
    unit: str                       # "ops/s" or "GB/s"
    courier: Optional[Callable[[], Run]]
    peer: Optional[Callable[[], Run]]
    target: str                     # the target as the issue states it
    judge: Callable[[dict], tuple]  # summary -> (met: bool|None, why)
    missing: str = ""               # why Courier's side cannot run, if it cannot
    verify: list = field(default_factory=list)  # untimed runs that check sha256 at the test server


class Context:
    def __init__(self, bench, courier_cli, python, http, curl):
        self.bench = bench
        self.courier_cli = courier_cli
        self.python = python
        self.http = http
        self.curl = curl
        self.server_url = None   # Courier's TestServer, when it is on main
        self.sink_url = None     # the discarding sink the timed uploads go to
        self.server = None
        self.h2_url = None       # the test server in its HTTP/2 mode (TLS, ALPN h2 and http/1.1)
        self.h2_stats_url = None # its counters, as JSON, over plain HTTP
        self.h2_cert = None      # its self-signed certificate (PEM), the only root the HTTP/2 rows trust
        self.httpbin = None      # real httpbin under gunicorn, for the CLI's interop check
        self.httpbin_url = None
        self.big_path = os.path.join(WORK, "big.bin")
        self.big_sha256 = None
        self.download_sha256 = None
        self.available = set()

    # --- the large file and the server --------------------------------------------------------

    def make_big_file(self):
        os.makedirs(WORK, exist_ok=True)
        sha_path = self.big_path + ".sha256"
        if os.path.exists(self.big_path) and os.path.getsize(self.big_path) == BIG and os.path.exists(sha_path):
            self.big_sha256 = open(sha_path).read().strip()
            return
        digest = hashlib.sha256()
        block = os.urandom(4 * MiB)
        with open(self.big_path, "wb") as handle:
            written = 0
            counter = 0
            while written < BIG:
                # Vary each block cheaply so that no two blocks are equal.
                chunk = counter.to_bytes(8, "little") + block[8:]
                chunk = chunk[: BIG - written]
                handle.write(chunk)
                digest.update(chunk)
                written += len(chunk)
                counter += 1
        self.big_sha256 = digest.hexdigest()
        with open(sha_path, "w") as handle:
            handle.write(self.big_sha256)

    def start_server(self, with_h2=False):
        """Starts courier-bench serve: the discarding sink, the test server when it exists, and
        with `with_h2` the test server in its HTTP/2 mode with its counters listener."""
        port_file = os.path.join(WORK, "server.port")
        sink_file = os.path.join(WORK, "sink.port")
        h2_file = os.path.join(WORK, "h2.port")
        h2_stats_file = os.path.join(WORK, "h2-stats.port")
        for path in (port_file, sink_file, h2_file, h2_stats_file):
            if os.path.exists(path):
                os.remove(path)
        with_test_server = ("serve", "test") in self.available
        with_h2 = with_h2 and ("serve", "h2") in self.available
        argv = [self.bench, "serve", "all", "--sink-port-file", sink_file]
        if with_test_server:
            argv += ["--port-file", port_file]
        if with_h2:
            argv += ["--h2-port-file", h2_file, "--h2-stats-port-file", h2_stats_file,
                     "--h2-cert-dir", os.path.join(WORK, "h2-cert")]
        log = open(os.path.join(WORK, "server.log"), "wb")
        self.server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise Failed("the servers exited: " + open(os.path.join(WORK, "server.log")).read()[-600:])
            ports = [read_port(sink_file)] + ([read_port(port_file)] if with_test_server else [])
            h2_ports = [read_port(h2_file), read_port(h2_stats_file)] if with_h2 else []
            if all(ports) and all(h2_ports):
                self.sink_url = f"http://127.0.0.1:{ports[0]}"
                if with_test_server:
                    self.server_url = f"http://127.0.0.1:{ports[1]}"
                if with_h2:
                    self.h2_url = f"https://127.0.0.1:{h2_ports[0]}"
                    self.h2_stats_url = f"http://127.0.0.1:{h2_ports[1]}/"
                    self.h2_cert = os.path.join(WORK, "h2-cert", "server.pem")
                return
            time.sleep(0.05)
        raise Failed("the servers did not report their ports within 30 s")

    def stop_server(self):
        for process in (self.server, self.httpbin):
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.server = self.httpbin = None

    def start_httpbin(self):
        """Real httpbin under gunicorn on a free loopback port, for the CLI's interop check."""
        if self.httpbin_url:
            return self.httpbin_url
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        gunicorn = os.path.join(os.path.dirname(self.python), "gunicorn")
        log = open(os.path.join(WORK, "httpbin.log"), "wb")
        self.httpbin = subprocess.Popen([gunicorn, "-b", f"127.0.0.1:{port}", "-w", "1", "httpbin:app"],
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.httpbin.poll() is not None:
                raise Failed("gunicorn exited: " + open(os.path.join(WORK, "httpbin.log")).read()[-400:])
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                self.httpbin_url = f"http://127.0.0.1:{port}"
                return self.httpbin_url
            except OSError:
                time.sleep(0.1)
        raise Failed("httpbin did not listen within 30 s")

    def check_count(self, sink):
        """The discarding sink's answer: every byte that Content-Length announced arrived."""
        received, declared = sink.get("bytes"), sink.get("content_length")
        if declared is None:
            return f"no Content-Length on the upload (sink received {received} bytes)"
        if int(declared) != received or received <= BIG:
            return f"sink received {received} bytes, Content-Length {declared}, file {BIG}"
        return None

    def h2_stats(self):
        """The HTTP/2 test server's counters (see Server/StatsListener.swift)."""
        with urllib.request.urlopen(self.h2_stats_url, timeout=10) as answer:
            return json.loads(answer.read())

    # --- checks -------------------------------------------------------------------------------

    def check_sink(self, sink):
        """The sink's report of a one-file multipart upload: the file part must be the big file."""
        parts = sink.get("parts") or []
        files = [p for p in parts if p.get("name") == "file"]
        if len(files) != 1:
            return f"sink saw parts {[p.get('name') for p in parts]}, expected one 'file'"
        part = files[0]
        if part.get("size") != BIG:
            return f"sink saw {part.get('size')} bytes in the file part, expected {BIG}"
        if part.get("sha256") != self.big_sha256:
            return f"sink sha256 {part.get('sha256')} != file sha256 {self.big_sha256}"
        return None

    def check_download(self, path):
        if not os.path.exists(path):
            return "no downloaded file"
        size = os.path.getsize(path)
        if size != BIG:
            return f"downloaded {size} bytes, expected {BIG}"
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while True:
                chunk = handle.read(8 * MiB)
                if not chunk:
                    break
                digest.update(chunk)
        value = digest.hexdigest()
        if self.download_sha256 is None:
            self.download_sha256 = value
        elif value != self.download_sha256:
            return f"downloaded sha256 {value} differs from the first download's {self.download_sha256}"
        return None


def workloads(ctx: Context):
    b = ctx.bench
    rows = []

    def bench(workload, impl, *extra, metric, check=None):
        # "{server}" is filled in at run time: the server's port is known only once it started.
        return lambda: swift_run([b, workload, impl, *[a.replace("{server}", ctx.server_url or "") for a in extra]],
                                 metric, check)

    def has(workload, impl="courier"):
        return (workload, impl) in ctx.available

    def absolute_or_ratio(minimum_rate=None, minimum_ratio=None, max_rss_mib=None, rss_multiple=None):
        def judge(summary):
            reasons, met = [], True
            if minimum_rate is not None:
                good = summary["courier_median"] >= minimum_rate
                met &= good
                reasons.append(f"{summary['courier_median']:,.0f} {'≥' if good else '<'} {minimum_rate:,} ops/s")
            if minimum_ratio is not None:
                good = summary["ratio"] >= minimum_ratio
                met &= good
                reasons.append(f"ratio {summary['ratio']:.2f} {'≥' if good else '<'} {minimum_ratio}")
            if max_rss_mib is not None:
                rss = summary["courier_rss_kib"] / 1024
                good = rss <= max_rss_mib
                met &= good
                reasons.append(f"RSS {rss:.1f} MiB {'≤' if good else '>'} {max_rss_mib} MiB")
            if rss_multiple is not None:
                multiple = summary["courier_rss_kib"] * 1024 / MEMORY
                good = multiple <= rss_multiple
                met &= good
                reasons.append(f"RSS {multiple:.2f}× part {'≤' if good else '>'} {rss_multiple}×")
            return met, "; ".join(reasons)
        return judge

    def of_ceiling(ceiling_key, minimum, max_rss_mib=None):
        # A row judged against a reference row of the same run (measured first, as the rows are
        # ordered): Courier's median over the reference's, since a ratio to a peer moves with the
        # machine. Without the reference in this run the row is only reported.
        def judge(summary):
            rss = summary["courier_rss_kib"] / 1024
            rss_ok = max_rss_mib is None or rss <= max_rss_mib
            rss_text = "" if max_rss_mib is None else f"; RSS {rss:.1f} MiB {'≤' if rss_ok else '>'} {max_rss_mib} MiB"
            ceiling = MEDIANS.get(ceiling_key)
            if not ceiling:
                return None, f"{ceiling_key} not in this run{rss_text}"
            share = summary["courier_median"] / ceiling
            good = share >= minimum
            return good and rss_ok, f"{share:.2f}× {ceiling_key} {'≥' if good else '<'} {minimum}{rss_text}"
        return judge

    def reported(max_rss_mib=None):
        def judge(summary):
            if max_rss_mib is None:
                return None, "no target set; reported"
            rss = summary["courier_rss_kib"] / 1024
            return (rss <= max_rss_mib), f"RSS {rss:.1f} MiB {'≤' if rss <= max_rss_mib else '>'} {max_rss_mib} MiB (constant memory)"
        return judge

    missing = lambda feature: "" if has_feature(feature) else f"{feature} is not on main"

    def has_feature(feature):
        return any(w == feature for (w, i) in ctx.available if i == "courier")

    # Issue 2: query strings.
    rows.append(Workload(
        "querystring-nested", "QueryString.encode, nested 1,000 keys (6,000 pairs)", "Foundation URLComponents",
        "ops/s",
        bench("querystring-nested", "courier", "--iterations", scaled(400), metric=per_second("ops")),
        bench("querystring-nested", "foundation", "--iterations", scaled(400), metric=per_second("ops")),
        "≥ 1,000 encodes/s (issue 2)", absolute_or_ratio(minimum_rate=1000),
        missing=missing("querystring-nested")))
    rows.append(Workload(
        "querystring-flat", "QueryString.encode, flat 1,000 keys", "Foundation URLComponents",
        "ops/s",
        bench("querystring-flat", "courier", "--iterations", scaled(2000), metric=per_second("ops")),
        bench("querystring-flat", "foundation", "--iterations", scaled(2000), metric=per_second("ops")),
        "≥ 1.0× Foundation (issue 2)", absolute_or_ratio(minimum_ratio=1.0),
        missing=missing("querystring-flat")))

    # Issue 3: multipart.
    rows.append(Workload(
        "multipart-fields", "Multipart, 1,000 small fields built + encoded", "vapor/multipart-kit",
        "ops/s",
        bench("multipart-fields", "courier", "--iterations", scaled(400), metric=per_second("ops")),
        bench("multipart-fields", "multipartkit", "--iterations", scaled(400), metric=per_second("ops")),
        "≥ 2× multipart-kit (issue 3)", absolute_or_ratio(minimum_ratio=2.0),
        missing=missing("multipart-fields")))

    def toolbelt():
        argv = [ctx.python, os.path.join(HERE, "peers", "toolbelt_reader.py"), ctx.big_path, BOUNDARY]
        return swift_run(argv, per_second("bytes"), check=length_check)

    def length_check(report):
        expected = report.get("content_length")
        if expected is not None and int(expected) != report["bytes"]:
            return f"read {report['bytes']} bytes, contentLength says {expected}"
        return None

    rows.append(Workload(
        "multipart-file", f"Multipart, {human(BIG)} file part through the reader", "requests-toolbelt MultipartEncoder",
        "GB/s",
        bench("multipart-file", "courier", "--path", ctx.big_path, "--boundary", BOUNDARY,
              metric=per_second("bytes"), check=length_check),
        toolbelt,
        "≥ 2× toolbelt, RSS ≤ 32 MiB (issue 3)", absolute_or_ratio(minimum_ratio=2.0, max_rss_mib=32),
        missing=missing("multipart-file")))
    rows.append(Workload(
        "multipart-memory", f"Multipart, {human(MEMORY)} in-memory part → Data", "vapor/multipart-kit",
        "GB/s",
        bench("multipart-memory", "courier", "--size", str(MEMORY), metric=per_second("bytes")),
        bench("multipart-memory", "multipartkit", "--size", str(MEMORY), metric=per_second("bytes")),
        "peak RSS ≤ 2.2× the part (issue 3)", absolute_or_ratio(rss_multiple=2.2),
        missing=missing("multipart-memory")))

    # Issue 4: the session layer. Timed uploads go to the discarding sink (byte count checked
    # every run); one untimed upload per side goes to the test server's /upload, which checks
    # the file part's sha256. Downloads come from the test server and are hashed after each run.
    def curl_upload(base):
        def go():
            argv = [ctx.curl, "-sS", "--fail", "-H", "Expect:", "-F", f"file=@{ctx.big_path};type=application/octet-stream",
                    "-w", "\n%{time_total}", base() + "/upload"]
            status, text, errors, wall, rss = run_process(argv)
            if status != 0:
                raise Failed(f"curl exit {status}: {errors.strip()[-400:]}")
            body, _, seconds = text.rpartition("\n")
            seconds = float(seconds)
            sink = json.loads(body)
            problem = ctx.check_count(sink) if base() == ctx.sink_url else ctx.check_sink(sink)
            return Run(seconds, wall, rss, problem is None, problem or "sink check passed", score=BIG / seconds)
        return go

    def courier_upload(base):
        def check(report):
            sink = json.loads(report["sink"])
            return ctx.check_count(sink) if base() == ctx.sink_url else ctx.check_sink(sink)
        return lambda: swift_run([b, "upload", "courier", "--url", base() + "/", "--path", ctx.big_path],
                                 per_second("bytes"), check)

    download_base = lambda: ctx.server_url or ctx.sink_url

    # Downloads are saved on disk (WORK) and, for the -tmpfs rows, on a tmpfs (TMPFS): a
    # destination on another file system than the temporary directory is where a download that
    # goes through the temporary directory pays a second copy (issue 14).
    def destination(name, on_tmpfs):
        path = os.path.join(TMPFS if on_tmpfs else WORK, name)
        if os.path.exists(path):
            os.remove(path)
        return path

    def checked_download(run, dest):
        problem = ctx.check_download(dest)
        if os.path.exists(dest):
            os.remove(dest)
        if problem:
            run.ok, run.detail = False, problem
        return run

    def curl_download(on_tmpfs=False, wall_clock=False):
        def go():
            dest = destination("download-curl.bin", on_tmpfs)
            argv = [ctx.curl, "-sS", "--fail", "-o", dest, "-w", "%{time_total}", f"{download_base()}/bytes/{BIG}"]
            status, text, errors, wall, rss = run_process(argv)
            if status != 0:
                raise Failed(f"curl exit {status}: {errors.strip()[-400:]}")
            # The CLI rows compare whole processes, start-up included, so curl is timed the same way there.
            seconds = wall if wall_clock else float(text.strip())
            return checked_download(Run(seconds, wall, rss, True, "size and sha256 match", score=BIG / seconds), dest)
        return go

    def courier_download(on_tmpfs=False):
        def go():
            dest = destination("download-courier.bin", on_tmpfs)
            run = swift_run([b, "download", "courier", "--url", f"{download_base()}/", "--path", f"bytes/{BIG}",
                             "--destination", dest], per_second("bytes"))
            return checked_download(run, dest)
        return go

    def cli_download(on_tmpfs=False):
        def go():
            dest = destination("download-cli.bin", on_tmpfs)
            argv = [ctx.courier_cli, "--ignore-stdin", "--download", "--output", dest, f"{download_base()}/bytes/{BIG}"]
            status, _, errors, wall, rss = run_process(argv)
            if status != 0:
                raise Failed(f"courier exit {status}: {errors.strip()[-400:]}")
            return checked_download(Run(wall, wall, rss, True, "size and sha256 match", score=BIG / wall), dest)
        return go

    def recv_write(on_tmpfs=False, wall_clock=False, pipelined=False):
        def go():
            dest = destination("download-c-pipelined.bin" if pipelined else "download-c.bin", on_tmpfs)
            host, port = download_base().split("//", 1)[1].rsplit(":", 1)
            exe = recv_client("recv_write_pipelined") if pipelined else recv_client()
            run = swift_run([exe, host, port, f"/bytes/{BIG}", dest], per_second("bytes"))
            # Against the CLI, whole processes on both sides, start-up included.
            if wall_clock:
                run.seconds, run.score = run.wall, BIG / run.wall
            return checked_download(run, dest)
        return go

    def recv_client(name="recv_discard"):
        exe = os.path.join(WORK, name)
        source = os.path.join(HERE, "peers", name + ".c")
        if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(source):
            subprocess.run(["gcc", "-O2", "-pthread", "-o", exe, source], check=True)
        return exe

    sink = lambda: ctx.sink_url
    server = lambda: ctx.server_url
    no_server = "" if ("serve", "test") in ctx.available else "CourierTestServer is not on main"

    def c_ceiling_upload():
        # The machine's ceiling for the upload rows: a C client that only sends the file to the same
        # sink, with no multipart framing and nothing parsed but the answer, once by sendfile() and
        # once by read() + send() of 1 MiB; the faster of the two is the run's score (which one
        # wins differs between machines and, for sendfile on loopback, between runs).
        exe = recv_client("sendfile_upload")
        port = str(urllib.parse.urlsplit(ctx.sink_url).port)
        best = None
        for mode, chunk in (("nbsendfile", 4 << 20), ("copy", 1 << 20)):
            status, text, errors, wall, rss = run_process([exe, mode, str(chunk), port, ctx.big_path])
            if status != 0:
                raise Failed(f"sendfile_upload {mode} exit {status}: {errors.strip()[-400:]}")
            rate, _, body = text.partition(" GB/s ")
            seconds = BIG / (float(rate.split()[-1]) * 1e9)
            sink = json.loads(body)
            if sink.get("bytes") != BIG or str(sink.get("content_length")) != str(BIG):
                return Run(seconds, wall, rss, False, f"{mode}: sink answered {body.strip()}")
            if best is None or seconds < best.seconds:
                best = Run(seconds, wall, rss, True, f"{mode} was faster; the sink received every byte",
                           score=BIG / seconds)
        return best

    rows.append(Workload(
        "upload-ceiling-c", "Reference, not Courier: the file alone from C to the same sink, the faster of "
        "sendfile() and read() + send() (peers/sendfile_upload.c)",
        "curl -F", "GB/s",
        c_ceiling_upload, curl_upload(sink),
        "— (the machine's ceiling for the upload row)", reported(), missing=""))

    rows.append(Workload(
        "upload", f"Upload, {human(BIG)} multipart file to a loopback sink", "curl -F", "GB/s",
        courier_upload(sink), curl_upload(sink),
        "≥ 0.9× upload-ceiling-c run beside it, RSS ≤ 64 MiB (issue 43; the 1.5× curl target is retired)",
        of_ceiling("upload-ceiling-c", minimum=0.9, max_rss_mib=64),
        missing=missing("upload"),
        verify=[("courier sha256 at /upload", courier_upload(server)), ("curl sha256 at /upload", curl_upload(server))]
        if not no_server else []))
    def ahc_sendfile_upload():
        check = lambda report: ctx.check_count(json.loads(report["sink"]))
        return swift_run([b, "upload", "ahc-sendfile", "--url", ctx.sink_url + "/", "--path", ctx.big_path],
                         per_second("bytes"), check)

    rows.append(Workload(
        "upload-reference", "Reference, not Courier: the same upload by raw AsyncHTTPClient, file part by sendfile",
        "curl -F", "GB/s",
        ahc_sendfile_upload, curl_upload(sink),
        "— (what AsyncHTTPClient itself reaches on this machine)", reported(), missing=""))

    # Issue 45: resumable uploads, timed the way the upload row is: the timed runs send to servers
    # that count the bytes and hash nothing (a hashing server costs this 2-core machine more than
    # sending, and would make every client look the same; the test server's /upload even hashes
    # twice, the body and the part), and untimed runs check sha256 at the test server first.
    # The resumable side goes to the test server's /files/ with hash=0 (it counts and keeps the
    # offset only), the plain upload to the discarding sink, as in the upload row.
    def check_upload_report(hashed):
        def check(report):
            server_report = json.loads(report.get("server_report") or "{}")
            if server_report.get("offset") != BIG or not server_report.get("complete"):
                return f"server holds {server_report.get('offset')} of {BIG} bytes, complete {server_report.get('complete')}"
            if hashed and server_report.get("sha256") != ctx.big_sha256:
                return f"server sha256 {server_report.get('sha256')} != file sha256 {ctx.big_sha256}"
            return None
        return check

    def files_endpoint(hashed):
        return ctx.server_url + "/files/" + ("" if hashed else "?hash=0")

    def resumable_upload(impl, hashed=False):
        # courier-bench takes the endpoint relative to the server's root, as the CLI's users do.
        return lambda: swift_run([b, "resumable-upload", impl, "--url", ctx.server_url + "/",
                                  "--endpoint", files_endpoint(hashed)[len(ctx.server_url) + 1:], "--path", ctx.big_path],
                                 per_second("bytes"), check_upload_report(hashed))

    def tuspy_upload(hashed=False):
        def go():
            argv = [ctx.python, os.path.join(HERE, "peers", "tuspy_upload.py"), files_endpoint(hashed), ctx.big_path]
            return swift_run(argv, per_second("bytes"), check_upload_report(hashed))
        return go

    plain_upload_peer = "Courier's plain upload of the same file (the upload row's, multipart to the sink)"
    plain_check = ("courier plain upload, sha256 at /upload", courier_upload(server))
    no_resumable = missing("resumable-upload") or no_server
    rows.append(Workload(
        "resumable-upload", f"Resumable upload (tus), {human(BIG)} file to the test server /files/?hash=0 "
        "(a creation, one PATCH)",
        plain_upload_peer, "GB/s",
        resumable_upload("courier"), courier_upload(sink),
        "≥ 0.9× the plain upload, RSS ≤ 64 MiB (issue 45)", absolute_or_ratio(minimum_ratio=0.9, max_rss_mib=64),
        missing=no_resumable,
        verify=[("courier tus, sha256 at /files/", resumable_upload("courier", hashed=True)), plain_check]
        if not no_resumable else []))
    rows.append(Workload(
        "resumable-upload-ietf", f"Resumable upload (IETF draft, interop version 8), {human(BIG)} file to the "
        "test server /files/?hash=0", plain_upload_peer, "GB/s",
        resumable_upload("courier-ietf"), courier_upload(sink),
        "— (the draft beside tus; RSS ≤ 64 MiB, issue 45)", reported(max_rss_mib=64), missing=no_resumable,
        verify=[("courier draft, sha256 at /files/", resumable_upload("courier-ietf", hashed=True))]
        if not no_resumable else []))
    rows.append(Workload(
        "resumable-upload-tuspy", f"Peer, not Courier: tuspy (tus-py-client) uploading the same {human(BIG)} "
        "to the same /files/?hash=0 with its defaults (one PATCH, the file read into memory; peers/tuspy_upload.py)",
        plain_upload_peer, "GB/s",
        tuspy_upload(), courier_upload(sink),
        "— (the tus client beside Courier's, issue 45)", reported(), missing=no_server,
        verify=[("tuspy, sha256 at /files/", tuspy_upload(hashed=True))] if not no_server else []))
    rows.append(Workload(
        "download", f"Download, {human(BIG)} to a file"
        + (" (test server /bytes)" if not no_server else " (bench server /bytes: test server not on main)"),
        "curl -o", "GB/s",
        courier_download(), curl_download(),
        "≥ 1.0× curl, RSS ≤ 64 MiB (issue 4)", absolute_or_ratio(minimum_ratio=1.0, max_rss_mib=64),
        missing=missing("download")))
    no_tmpfs = "" if TMPFS else "no tmpfs mount to write to (set BENCH_TMPFS)"
    download_rows = [
        ("download-c", False, "the library, download(_:to:), on disk", courier_download(False), recv_write(False)),
        ("download-tmpfs", True, "the library, download(_:to:), on tmpfs", courier_download(True), curl_download(True)),
        ("download-tmpfs-c", True, "the library, download(_:to:), on tmpfs", courier_download(True), recv_write(True)),
    ]
    for key, on_tmpfs, what, courier_side, peer_side in download_rows:
        against_c = key.endswith("-c")
        rows.append(Workload(
            key, f"Download, {human(BIG)} to a file: {what}",
            "C recv() + write() client (peers/recv_discard.c)" if against_c else "curl -o", "GB/s",
            courier_side, peer_side,
            ("≥ 0.8× the C client (issue 14)" if against_c else "≥ 1.0× curl, RSS ≤ 64 MiB (issue 14)"),
            absolute_or_ratio(minimum_ratio=0.8) if against_c else absolute_or_ratio(minimum_ratio=1.0, max_rss_mib=64),
            missing=(no_tmpfs if on_tmpfs else "") or missing("download")))
    for key, on_tmpfs in (("download-reference", False), ("download-tmpfs-reference", True)):
        rows.append(Workload(
            key, f"Reference, not Courier: {human(BIG)} by recv() into 1 MiB and write() to a file on "
            + ("tmpfs" if on_tmpfs else "disk") + " (peers/recv_discard.c)",
            "curl -o", "GB/s",
            recv_write(on_tmpfs), curl_download(on_tmpfs),
            "— (the ceiling for the download rows on this machine)", reported(),
            missing=(no_tmpfs if on_tmpfs else "") or no_server))
    # The C loop split in a reading and a writing thread with 8 MiB between them, the shape of
    # Courier's downloads (TaskOverrides.downloadReadAheadLimit): what that shape costs or gains
    # without Swift in it (BENCHMARKS.md, "What reading ahead of the writer costs").
    rows.append(Workload(
        "download-pipelined-reference", f"Reference, not Courier: {human(BIG)} to a file on disk by a reading and a "
        "writing thread, 8 × 1 MiB between them (peers/recv_write_pipelined.c)",
        "C recv() + write() client (peers/recv_discard.c)", "GB/s",
        recv_write(pipelined=True), recv_write(),
        "— (a pipelined download without Swift: the shape of Courier's)", reported(), missing=no_server))
    # A large body over TLS from the test server's HTTP/2 mode (16 KiB DATA frames, many per TLS
    # read): what HTTP/2 framing costs a download, beside the same server over HTTP/1.1. Each run
    # reads the server's counters, so a side that fell back to HTTP/1.1 (or went over HTTP/2 when
    # told not to) fails the row instead of being timed.
    def over_protocol(run, before, http2):
        delta = {key: value - before.get(key, 0) for key, value in ctx.h2_stats().items()}
        streams = delta.get("http2StreamsServed", 0)
        if run.ok and (streams < 1 if http2 else streams != 0):
            run.ok, run.detail = False, f"{streams} HTTP/2 streams served, expected {'one' if http2 else 'none'}"
        return run

    # A download rides HTTP/2 where the server offers it (its stream's window held for the reader
    # by HTTP2StreamWindow); with allowsHTTP2 off it must not.
    def courier_h2_download(http2_allowed):
        def go():
            dest = destination("download-courier-h2.bin", False)
            before = ctx.h2_stats()
            run = swift_run([b, "download", "courier", "--url", f"{ctx.h2_url}/", "--path", f"bytes/{BIG}",
                             "--destination", dest, "--ca", ctx.h2_cert, "--http2", "on" if http2_allowed else "off"],
                            per_second("bytes"))
            return over_protocol(checked_download(run, dest), before, http2_allowed)
        return go

    def curl_h2_download(http2):
        def go():
            dest = destination("download-curl-h2.bin", False)
            before = ctx.h2_stats()
            argv = [ctx.curl, "-sS", "--fail", "--http2" if http2 else "--http1.1", "--cacert", ctx.h2_cert,
                    "-o", dest, "-w", "%{time_total}", f"{ctx.h2_url}/bytes/{BIG}"]
            status, text, errors, wall, rss = run_process(argv)
            if status != 0:
                raise Failed(f"curl exit {status}: {errors.strip()[-400:]}")
            seconds = float(text.strip())
            run = Run(seconds, wall, rss, True, "size and sha256 match", score=BIG / seconds)
            return over_protocol(checked_download(run, dest), before, http2)
        return go

    no_h2_server = "" if ("serve", "h2") in ctx.available else "the test server's HTTP/2 mode is not on main"
    rows.append(Workload(
        "h2-download", f"Download, {human(BIG)} to a file on disk over TLS and HTTP/2 (test server's HTTP/2 mode, /bytes)",
        "curl --http2 -o", "GB/s",
        courier_h2_download(True), curl_h2_download(True),
        "≥ 0.9× curl --http2, RSS ≤ 64 MiB (issue 44)", absolute_or_ratio(minimum_ratio=0.9, max_rss_mib=64),
        missing=no_h2_server or missing("download")))
    rows.append(Workload(
        "h2-download-http1", f"Diagnostic: the same {human(BIG)} from the same TLS server, both sides over HTTP/1.1 (Courier allowsHTTP2 = false)",
        "curl --http1.1 -o", "GB/s",
        courier_h2_download(False), curl_h2_download(False),
        "— (the same download without HTTP/2 framing)", reported(),
        missing=no_h2_server or missing("download")))
    get_base = lambda: ctx.server_url or ctx.sink_url
    rows.append(Workload(
        "small-gets", "10,000 small GETs, concurrency 16, keep-alive"
        + (" (test server /get)" if not no_server else " (discarding sink: test server not on main)"),
        "raw AsyncHTTPClient", "ops/s",
        lambda: swift_run([b, "small-gets", "courier", "--url", get_base(), "--requests", scaled(10000),
                           "--concurrency", "16"], per_second("ops")),
        lambda: swift_run([b, "small-gets", "ahc", "--url", get_base(), "--requests", scaled(10000),
                           "--concurrency", "16"], per_second("ops")),
        "≥ 0.9× AsyncHTTPClient (issue 4)", absolute_or_ratio(minimum_ratio=0.9),
        missing=missing("small-gets")))
    rows.append(Workload(
        "small-gets-transport", "Reference, not scored: the same GETs through Courier's transport alone, "
        "no session (what the session costs is the gap to the small-gets row)",
        "raw AsyncHTTPClient", "ops/s",
        lambda: swift_run([b, "small-gets", "transport", "--url", get_base(), "--requests", scaled(10000),
                           "--concurrency", "16"], per_second("ops")),
        lambda: swift_run([b, "small-gets", "ahc", "--url", get_base(), "--requests", scaled(10000),
                           "--concurrency", "16"], per_second("ops")),
        "— (the transport's share of the small-gets row)", reported(), missing=missing("small-gets")))
    # Issue 43: the small-gets gap split in two. Courier's transport runs on AsyncHTTPClient's
    # delegate API, the raw peer on its async API; these two rows measure each part of the gap
    # (small-gets ~ small-gets-delegate x small-gets-apis): what Courier adds on the same API, and
    # what the delegate API costs against the async one with nothing on top.
    def small_gets(side):
        return lambda: swift_run([b, "small-gets", side, "--url", get_base(), "--requests", scaled(10000),
                                  "--concurrency", "16"], per_second("ops"))

    rows.append(Workload(
        "small-gets-delegate", "Diagnostic: the same GETs, peer on AsyncHTTPClient's delegate API (the one Courier's transport uses)",
        "raw AsyncHTTPClient delegate API", "ops/s", small_gets("courier"), small_gets("ahc-delegate"),
        "— (Courier's own share of the small-gets gap)", reported(), missing=missing("small-gets")))
    rows.append(Workload(
        "small-gets-apis", "Diagnostic: raw AsyncHTTPClient's delegate API against its async API, nothing on top",
        "raw AsyncHTTPClient async API", "ops/s", small_gets("ahc-delegate"), small_gets("ahc"),
        "— (the two APIs' share of the small-gets gap)", reported(), missing=missing("small-gets")))

    # Issue 19: what the second transport costs. The same session over URLSessionTransport
    # (FoundationNetworking and libcurl on Linux) against the same session over the default
    # AsyncHTTPClient transport, on the upload and small-GETs workloads. Speed is not its goal;
    # these rows say what choosing it costs.
    def urlsession_upload(base):
        def check(report):
            return ctx.check_count(json.loads(report["sink"]))
        return lambda: swift_run([b, "upload", "courier-urlsession", "--url", base() + "/", "--path", ctx.big_path],
                                 per_second("bytes"), check, timeout=600)

    rows.append(Workload(
        "upload-urlsession", f"Upload, {human(BIG)} multipart file to a loopback sink: the session over URLSessionTransport",
        "the same session over AsyncHTTPClientTransport", "GB/s",
        urlsession_upload(sink), courier_upload(sink),
        "— (the cost of the URLSession transport, issue 19)", reported(),
        missing=missing("upload")))
    rows.append(Workload(
        "small-gets-urlsession", "10,000 small GETs, concurrency 16 (test server /get): the session over URLSessionTransport",
        "the same session over AsyncHTTPClientTransport", "ops/s",
        lambda: swift_run([b, "small-gets", "courier-urlsession", "--url", get_base(), "--requests", scaled(10000),
                           "--concurrency", "16"], per_second("ops"), timeout=600),
        lambda: swift_run([b, "small-gets", "courier", "--url", get_base(), "--requests", scaled(10000),
                           "--concurrency", "16"], per_second("ops")),
        "— (the cost of the URLSession transport, issue 19)", reported(),
        missing=missing("small-gets") or no_server))

    # Issue 18: the HTTP cache. GETs of the test server's /cache/600 (public, max-age=600) through
    # a SessionManager: with an HTTPCache (the warm-up stores the response, so every timed GET is
    # a fresh hit) against the same manager without one (every GET reaches the server). The
    # reference row is the ceiling for a hit: the session over a transport that answers at once
    # from memory. Every GET checks status 200 and the body's length.
    def cached_gets(impl, requests):
        return lambda: swift_run([b, "cached-gets", impl, "--url", get_base(), "--requests", scaled(requests),
                                  "--concurrency", "16"], per_second("ops"))

    rows.append(Workload(
        "cached-gets", "GETs of /cache/600 (max-age=600), concurrency 16: fresh HTTPCache hits (test server)",
        "the same GETs, no cache", "ops/s",
        cached_gets("courier", 100000), cached_gets("network", 10000),
        "≥ 10× a network GET (issue 18)", absolute_or_ratio(minimum_ratio=10),
        missing=missing("cached-gets") or no_server))
    rows.append(Workload(
        "cached-gets-reference", "Reference, not the cache: the same session over a transport answering from memory",
        "the same GETs, no cache", "ops/s",
        cached_gets("memory-transport", 100000), cached_gets("network", 10000),
        "— (the ceiling for the cached-gets row on this machine)", reported(), missing=""))

    # Issues 20 and 44: small requests over TLS to the test server in its HTTP/2 mode; since
    # issue 44 Courier's POSTs ride HTTP/2 like its GETs (HTTP2EarlyAnswerGuard keeps
    # AsyncHTTPClient 1.37's early-answer trap unreachable). Every run reads the
    # server's counters before and after: every request sent (warm-up included) must have been
    # served, over HTTP/2 or not at all over it, as the side claims.
    def h2_run(workload, impl, protocol, *extra, requests=5000):
        def go():
            before = ctx.h2_stats()
            run = swift_run([b, workload, impl, "--url", ctx.h2_url, "--ca", ctx.h2_cert,
                             "--requests", scaled(requests), "--concurrency", "16", "--connections", "8", *extra],
                            per_second("ops"))
            after = ctx.h2_stats()
            delta = {key: after[key] - before.get(key, 0) for key in after}
            sent = int(run.report.get("requests_sent", -1))
            served, streams = delta["requestsServed"], delta["http2StreamsServed"]
            problem = None
            if served != sent:
                problem = f"the server served {served} requests, the client sent {sent}"
            elif protocol == "h2" and (streams != sent or delta["http2ConnectionsOpened"] < 1):
                problem = f"{streams} of {sent} requests came over HTTP/2, expected all"
            elif protocol == "http/1.1" and (streams != 0 or delta["http2ConnectionsOpened"] != 0):
                problem = f"{streams} of {sent} requests came over HTTP/2, expected none"
            server = (f"server: {served} served, {streams} over HTTP/2, {delta['connectionsAccepted']} TLS connections"
                      f" ({delta['http2ConnectionsOpened']} h2)")
            run.report["server"] = delta
            if problem and run.ok:
                run.ok, run.detail = False, f"{problem}; {server}"
            else:
                run.detail = f"{run.detail}; {server}"
            return run
        return go

    no_h2 = "" if ("serve", "h2") in ctx.available else "the test server's HTTP/2 mode is not on main"
    rows.append(Workload(
        "h2-posts", "5,000 POSTs of 1 KiB, concurrency 16, TLS, server offers h2 (test server /post): both over HTTP/2",
        "raw AsyncHTTPClient, HTTP/2", "ops/s",
        h2_run("h2-posts", "courier", "h2"), h2_run("h2-posts", "ahc-h2", "h2"),
        "≥ 1.0× raw AsyncHTTPClient over HTTP/2 (issue 44)", absolute_or_ratio(minimum_ratio=1.0),
        missing=no_h2 or missing("h2-posts")))
    rows.append(Workload(
        "h2-posts-reference", "Reference, not Courier: the same POSTs by raw AsyncHTTPClient .http1Only (8 connections)",
        "raw AsyncHTTPClient, HTTP/2", "ops/s",
        h2_run("h2-posts", "ahc-h1", "http/1.1"), h2_run("h2-posts", "ahc-h2", "h2"),
        "— (what HTTP/1.1 allows here)", reported(), missing=no_h2 or missing("h2-posts")))
    # Loopback answers in microseconds, so 8 HTTP/1.1 connections keep up with one HTTP/2
    # connection there. A server that takes 20 ms over each answer (as a remote one's round trip
    # would) shows what the connection cap costs: 16 requests in flight on HTTP/2, 8 on HTTP/1.1.
    delayed = ("--path", "/delay/0.02")
    rows.append(Workload(
        "h2-posts-delayed", "1,000 POSTs of 1 KiB answered after 20 ms (test server /delay/0.02), concurrency 16, TLS, h2 offered: both over HTTP/2",
        "raw AsyncHTTPClient, HTTP/2", "ops/s",
        h2_run("h2-posts", "courier", "h2", *delayed, requests=1000),
        h2_run("h2-posts", "ahc-h2", "h2", *delayed, requests=1000),
        "≥ 0.95× raw AsyncHTTPClient over HTTP/2 (issue 44)", absolute_or_ratio(minimum_ratio=0.95),
        missing=no_h2 or missing("h2-posts")))
    rows.append(Workload(
        "h2-gets", "5,000 GETs, concurrency 16, TLS, server offers h2 (test server /get): both over HTTP/2",
        "raw AsyncHTTPClient, HTTP/2", "ops/s",
        h2_run("h2-gets", "courier", "h2"), h2_run("h2-gets", "ahc-h2", "h2"),
        "— (bodyless requests still multiplex)", reported(), missing=no_h2 or missing("h2-gets")))
    rows.append(Workload(
        "h2-gets-delegate", "Diagnostic: the same GETs, peer on AsyncHTTPClient's delegate API (the one Courier uses), both over HTTP/2",
        "raw AsyncHTTPClient delegate API, HTTP/2", "ops/s",
        h2_run("h2-gets", "courier", "h2"), h2_run("h2-gets", "ahc-h2-delegate", "h2"),
        "— (Courier's own cost per GET on HTTP/2, resend logic included)", reported(), missing=no_h2 or missing("h2-gets")))
    rows.append(Workload(
        "h2-gets-http1", "Diagnostic: the same GETs with HTTP/2 off on both sides (Courier allowsHTTP2 = false, AHC .http1Only)",
        "raw AsyncHTTPClient, HTTP/1.1", "ops/s",
        h2_run("h2-gets", "courier-h1", "http/1.1"), h2_run("h2-gets", "ahc-h1", "http/1.1"),
        "— (Courier's own cost per GET over TLS, without HTTP/2)", reported(), missing=no_h2 or missing("h2-gets")))

    # Issue 43: the scale rows. 10,000 GETs held open at once by the test server's /long-poll (it
    # answers them all when the last arrives), on a pool sized to hold them: one connection each
    # over HTTP/1.1, streams of one connection over HTTP/2. Scored on memory (open requests per
    # MiB of resident memory, so that higher is better: 1 / 1.2 = 0.83 means 1.2x the peer's KiB
    # per request) and, in the -time rows, on how soon all are answered.
    def held(impl, base, *extra):
        return lambda: swift_run([b, "held-requests", impl, "--url", base(), "--requests", scaled(10000), *extra],
                                 lambda report: 1024 / max(0.001, float(report["kib_per_request"])), timeout=600)

    def held_time(impl, base, *extra):
        return lambda: swift_run([b, "held-requests", impl, "--url", base(), "--requests", scaled(10000), *extra],
                                 per_second("ops"), timeout=600)

    h2_base = lambda: ctx.h2_url
    h2_ca = lambda: ("--ca", ctx.h2_cert)
    for key, title, base, extra, gone in (
            ("held-requests", "HTTP/1.1, one connection per request (test server /long-poll)", get_base, (),
             no_server),
            ("h2-held-requests", "HTTP/2 over TLS, streams of one connection (test server's HTTP/2 mode)", h2_base,
             None, no_h2)):
        def args(extra=extra):
            return extra if extra is not None else h2_ca()
        rows.append(Workload(
            key, f"Scale: 10,000 GETs held open at once, {title}: resident memory per open request",
            "raw AsyncHTTPClient", "req/MiB",
            lambda key=key, base=base, args=args: held("courier", base, *args())(),
            lambda key=key, base=base, args=args: held("ahc", base, *args())(),
            "≥ 0.83 (at most 1.2× AsyncHTTPClient's memory per open request, issue 43)",
            absolute_or_ratio(minimum_ratio=0.83), missing=gone or missing("held-requests")))
        rows.append(Workload(
            key + "-time", f"Scale: the same 10,000 held GETs ({title}): time until all are answered",
            "raw AsyncHTTPClient", "ops/s",
            lambda base=base, args=args: held_time("courier", base, *args())(),
            lambda base=base, args=args: held_time("ahc", base, *args())(),
            "— (reported beside the memory row)", reported(), missing=gone or missing("held-requests")))

    # Issue 5: the CLI, as whole processes, timed by the wall clock (start-up included).
    def offline(tool):
        def go():
            out = os.path.join(WORK, f"offline-{tool}.out")
            exe = ctx.courier_cli if tool == "courier" else ctx.http
            argv = [exe, "--offline", "--ignore-stdin", "--print=B", "--multipart", f"--boundary={BOUNDARY}",
                    "POST", "http://127.0.0.1:9/upload", f"file@{ctx.big_path};type=application/octet-stream"]
            status, _, errors, wall, rss = run_process(argv, stdout_path=out)
            if status != 0:
                raise Failed(f"{tool} exit {status}: {errors.strip()[-400:]}")
            size = os.path.getsize(out)
            digest = file_sha256(out) if BIG <= 64 * MiB else None
            os.remove(out)
            ok = size > BIG
            return Run(wall, wall, rss, ok, f"{size} body bytes" if ok else f"only {size} bytes written",
                       report={"bytes": size, "sha256": digest}, score=size / wall)
        return go

    def offline_same_bytes():
        # Untimed: with the same boundary and part, courier and httpie must print the same body.
        small = os.path.join(WORK, "small.bin")
        with open(small, "wb") as handle:
            handle.write(os.urandom(3 * MiB + 17))
        digests = {}
        for tool, exe in (("courier", ctx.courier_cli), ("httpie", ctx.http)):
            out = os.path.join(WORK, f"offline-check-{tool}.out")
            argv = [exe, "--offline", "--ignore-stdin", "--print=B", "--multipart", f"--boundary={BOUNDARY}",
                    "POST", "http://127.0.0.1:9/upload", f"file@{small};type=application/octet-stream"]
            status, _, errors, wall, rss = run_process(argv, stdout_path=out)
            if status != 0:
                raise Failed(f"{tool} exit {status}: {errors.strip()[-400:]}")
            digests[tool] = file_sha256(out)
            os.remove(out)
        same = digests["courier"] == digests["httpie"]
        return Run(0, 0, 0, same, "identical bodies" if same else f"bodies differ: {digests}")

    def httpbin_same_form():
        # Untimed: httpbin (an independent server) must receive the same fields and file from
        # `courier` as from httpie's `http`.
        url = ctx.start_httpbin() + "/post"
        text_file = os.path.join(WORK, "interop.txt")
        with open(text_file, "w") as handle:
            handle.write("line one\nline two ä\n" * 1000)
        seen = {}
        for tool, exe in (("courier", ctx.courier_cli), ("httpie", ctx.http)):
            argv = [exe, "--ignore-stdin", "--multipart", "--print=b", "POST", url, "name=value ä&=",
                    f"file@{text_file};type=text/plain"]
            status, text, errors, _, _ = run_process(argv, timeout=60)
            if status != 0:
                raise Failed(f"{tool} exit {status}: {errors.strip()[-300:]}")
            answer = json.loads(text[text.find("{"):])
            seen[tool] = (answer.get("form"), answer.get("files"))
        expected_file = open(text_file).read()
        same = seen["courier"] == seen["httpie"] and seen["courier"][1].get("file") == expected_file
        return Run(0, 0, 0, same, "same form and file" if same else f"httpbin saw {seen}")

    def cli_upload(tool, base):
        def go():
            if tool == "courier":
                argv = [ctx.courier_cli, "--ignore-stdin", "--multipart", "--print=b", "POST", base() + "/upload",
                        f"file@{ctx.big_path};type=application/octet-stream"]
            else:
                argv = [ctx.curl, "-sS", "--fail", "-H", "Expect:", "-F",
                        f"file=@{ctx.big_path};type=application/octet-stream", base() + "/upload"]
            status, text, errors, wall, rss = run_process(argv)
            if status != 0:
                raise Failed(f"{tool} exit {status}: {errors.strip()[-400:]}")
            start = text.find("{")
            try:
                answer = json.loads(text[start:]) if start >= 0 else {}
            except json.JSONDecodeError:
                answer = {}
            problem = ctx.check_count(answer) if base() == ctx.sink_url else ctx.check_sink(answer)
            return Run(wall, wall, rss, problem is None, problem or "sink check passed", score=BIG / wall)
        return go

    rows.append(Workload(
        "cli-offline", f"CLI, --offline {human(BIG)} multipart body to a file", "httpie http --offline", "GB/s",
        offline("courier"), offline("httpie"),
        "none set (issue 5); constant memory", reported(max_rss_mib=64), missing=missing("cli"),
        verify=[("courier and httpie print the same body", offline_same_bytes)]))
    rows.append(Workload(
        "cli-upload", f"CLI, upload {human(BIG)} multipart file to a loopback sink", "curl -F", "GB/s",
        cli_upload("courier", sink), cli_upload("curl", sink),
        "none set (issue 5); constant memory", reported(max_rss_mib=64), missing=missing("cli"),
        verify=([("courier sha256 at /upload", cli_upload("courier", server))] if not no_server else [])
        + [("courier and httpie send the same form to real httpbin", httpbin_same_form)]))

    for key, on_tmpfs in (("cli-download", False), ("cli-download-tmpfs", True)):
        rows.append(Workload(
            key, f"CLI, courier -d -o: {human(BIG)} to a file on " + ("tmpfs" if on_tmpfs else "disk")
            + " (whole processes, start-up included)", "curl -o (whole process)", "GB/s",
            cli_download(on_tmpfs), curl_download(on_tmpfs, wall_clock=True),
            "≥ 1.0× curl, RSS ≤ 64 MiB (issue 14)", absolute_or_ratio(minimum_ratio=1.0, max_rss_mib=64),
            missing=(no_tmpfs if on_tmpfs else "") or missing("cli")))
    for key, on_tmpfs in (("cli-download-c", False), ("cli-download-tmpfs-c", True)):
        rows.append(Workload(
            key, f"CLI, courier -d -o: {human(BIG)} to a file on " + ("tmpfs" if on_tmpfs else "disk")
            + " (whole processes, start-up included)", "C recv() + write() client (whole process)", "GB/s",
            cli_download(on_tmpfs), recv_write(on_tmpfs, wall_clock=True),
            "≥ 0.8× the C client (issue 14)", absolute_or_ratio(minimum_ratio=0.8),
            missing=(no_tmpfs if on_tmpfs else "") or missing("cli")))

    # Issue 14: streamed responses and event streams. A 1 GiB body from the test server's /bytes
    # read as it arrives and dropped: Courier through stream(_:), curl to /dev/null, raw
    # AsyncHTTPClient's streaming API, and a recv() loop in C as the machine's ceiling. Each run
    # checks the byte count; the untimed check compares Courier's sha256 of the body with curl's.
    stream_url = lambda: f"{download_base()}/bytes/{BIG}"

    def curl_stream(digest=False):
        def go():
            if digest:
                process = subprocess.Popen([ctx.curl, "-sS", "--fail", stream_url()], stdout=subprocess.PIPE,
                                           stdin=subprocess.DEVNULL)
                sha = hashlib.sha256()
                for piece in iter(lambda: process.stdout.read(8 * MiB), b""):
                    sha.update(piece)
                process.wait()
                return Run(0, 0, 0, process.returncode == 0, sha.hexdigest(), report={"sha256": sha.hexdigest()})
            argv = [ctx.curl, "-sS", "--fail", "-o", "/dev/null", "-w", "%{time_total} %{size_download}", stream_url()]
            status, text, errors, wall, rss = run_process(argv)
            if status != 0:
                raise Failed(f"curl exit {status}: {errors.strip()[-400:]}")
            seconds, size = text.split()
            seconds, size = float(seconds), int(size)
            ok = size == BIG
            return Run(seconds, wall, rss, ok, f"{size} bytes" if ok else f"{size} of {BIG} bytes", score=BIG / seconds)
        return go

    def stream_side(impl, digest=False):
        extra = ["--sha256", "1"] if digest else []
        return lambda: swift_run([b, "stream", impl, "--url", stream_url(), "--length", str(BIG), *extra],
                                 per_second("bytes"), timeout=600)

    def recv_discard(buffer=None, switches=()):
        exe = recv_client()
        host_port = download_base().split("//", 1)[1]
        host, port = host_port.rsplit(":", 1)
        size = [f"--buffer={buffer}"] if buffer else []
        return swift_run([exe, *size, *switches, host, port, f"/bytes/{BIG}"], per_second("bytes"))

    def same_stream_digest():
        courier = stream_side("courier", digest=True)()
        curl = curl_stream(digest=True)()
        same = courier.ok and curl.ok and courier.report.get("sha256") == curl.report.get("sha256")
        return Run(0, 0, 0, same, "same sha256" if same else f"courier {courier.report.get('sha256')} / curl {curl.detail}")

    no_stream = missing("stream") if not no_server else no_server
    rows.append(Workload(
        "stream", f"Streamed response, {human(BIG)} read through stream(_:) and dropped (test server /bytes)",
        "curl -s > /dev/null", "GB/s",
        stream_side("courier"), curl_stream(),
        "≥ 1.0× curl, RSS ≤ 64 MiB (issue 14)", absolute_or_ratio(minimum_ratio=1.0, max_rss_mib=64),
        missing=no_stream, verify=[("courier's stream and curl read the same bytes", same_stream_digest)]))
    rows.append(Workload(
        "stream-ahc", f"Streamed response, {human(BIG)}: Courier stream(_:) against the client it is built on",
        "raw AsyncHTTPClient execute + body", "GB/s",
        stream_side("courier"), stream_side("ahc"),
        "— (Courier's cost over AsyncHTTPClient's streaming API)", reported(max_rss_mib=64), missing=no_stream))
    rows.append(Workload(
        "stream-reference", f"Reference, not Courier: {human(BIG)} by recv() into 1 MiB and discarded (peers/recv_discard.c)",
        "curl -s > /dev/null", "GB/s",
        recv_discard, curl_stream(),
        "— (the least a client can do to receive; curl outran it on 2026-11-25, see that section)", reported(),
        missing=no_server))
    rows.append(Workload(
        "stream-reference-100k", f"Reference, not Courier: {human(BIG)} by recv() into 100 KiB (curl's buffer) and discarded",
        "curl -s > /dev/null", "GB/s",
        lambda: recv_discard(buffer=100 * 1024), curl_stream(),
        "— (the C loop with curl's read size: whether the buffer size explains curl's lead)",
        reported(), missing=no_server))
    # Why curl outruns the blocking loop (BENCHMARKS.md, 2026-11-25 afternoon): the receiver's
    # sleeps. These two loops sleep less (SO_RCVLOWAT) or never (spinning on MSG_DONTWAIT).
    rows.append(Workload(
        "stream-reference-lowat", f"Reference, not Courier: {human(BIG)} by recv() into 1 MiB, SO_RCVLOWAT 256 KiB",
        "curl -s > /dev/null", "GB/s",
        lambda: recv_discard(switches=["--lowat=262144"]), curl_stream(),
        "— (the C loop woken a quarter as often: what fewer wake-ups are worth)",
        reported(), missing=no_server))
    rows.append(Workload(
        "stream-reference-spin", f"Reference, not Courier: {human(BIG)} by non-blocking recv() into 1 MiB, never sleeping",
        "curl -s > /dev/null", "GB/s",
        lambda: recv_discard(switches=["--spin"]), curl_stream(),
        "— (a receiver that never sleeps, burning a core: the machine's ceiling for this row)",
        reported(), missing=no_server))
    sse_python = ctx.python
    rows.append(Workload(
        "sse-parse", "Event-stream parsing, 100 MB of events in 64 KiB chunks (a 4 MiB block fed 25 times)",
        "sseclient-py 1.9.0 SSEClient (pure Python)", "GB/s",
        bench("sse-parse", "courier", "--size", str(100_000_000), metric=per_second("bytes")),
        lambda: swift_run([sse_python, os.path.join(HERE, "peers", "sse_parse.py"), "--size", str(100_000_000),
                           "--parser", "sseclient"], per_second("bytes")),
        "≥ 2× the peer parser, RSS ≤ 64 MiB (issue 14 names mattt/EventSource, which does not build on Linux)",
        absolute_or_ratio(minimum_ratio=2.0, max_rss_mib=64), missing=missing("sse-parse")))
    rows.append(Workload(
        "sse-parse-minimal", "Event-stream parsing, the same 100 MB: against a minimal split-based parser",
        "peers/sse_parse.py --parser minimal (bytes.split, Python)", "GB/s",
        bench("sse-parse", "courier", "--size", str(100_000_000), metric=per_second("bytes")),
        lambda: swift_run([sse_python, os.path.join(HERE, "peers", "sse_parse.py"), "--size", str(100_000_000),
                           "--parser", "minimal"], per_second("bytes")),
        "— (a peer that leans on C string splitting)", reported(max_rss_mib=64), missing=missing("sse-parse")))
    return rows


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(8 * MiB)
            if not chunk:
                break
            digest.update(chunk)
    return digest.hexdigest()


def human(size):
    if size >= GiB and size % GiB == 0:
        return f"{size // GiB} GiB"
    if size >= MiB and size % MiB == 0:
        return f"{size // MiB} MiB"
    return f"{size} B"


HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------------------------
# Running a workload A B A B ... and summarising it


def run_workload(workload, ctx, log):
    """Runs the row's checks, then its timed pairs; returns the runs and every failure seen.

    A failed check does not stop the timed runs (the numbers still show), but fails the row.
    """
    courier_runs, peer_runs, errors, check_errors = [], [], [], []
    for name, factory in workload.verify:
        try:
            run = factory()
            outcome = "ok" if run.ok else run.detail
        except Failed as failure:
            outcome = str(failure)
        print(f"#   check {name}: {outcome}", flush=True)
        if outcome != "ok":
            check_errors.append(f"check {name}: {outcome}")
    if workload.key in ("upload", "cli-upload") and not workload.verify:
        print("#   no sha256 check: CourierTestServer is not on main (byte counts are still checked)", flush=True)
    began = time.monotonic()
    for index in range(RUNS):
        if index > 0 and time.monotonic() - began > ROW_CAP:
            note = f"row capped: {time.monotonic() - began:.0f} s > BENCH_ROW_CAP {ROW_CAP:.0f} s after {index} of {RUNS} pairs"
            if index < 5:
                errors.append(note)  # fewer than 5 pairs is not a measurement
            else:
                print(f"#   {note}", flush=True)
            break
        for side, factory, runs in (("courier", workload.courier, courier_runs), ("peer", workload.peer, peer_runs)):
            try:
                run = factory()
            except Failed as failure:
                errors.append(f"{side} run {index + 1}: {failure}")
                run = None
            if run is not None:
                runs.append(run)
                if log:
                    log.write(json.dumps({"workload": workload.key, "side": side, "run": index + 1,
                                          "seconds": run.seconds, "wall": run.wall, "rss_kib": run.rss_kib,
                                          "score": run.score, "allocations_per_op": run.allocations,
                                          "ok": run.ok, "detail": run.detail}) + "\n")
                    log.flush()
                if not run.ok:
                    errors.append(f"{side} run {index + 1}: {run.detail}")
        if errors and index == 0:
            break  # a broken first pair will not mend itself; do not spend minutes on it
    return courier_runs, peer_runs, check_errors + errors


# Courier medians of the rows measured so far in this run, for rows judged against another.
MEDIANS = {}


def summarise(workload, courier_runs, peer_runs, errors):
    good = lambda runs: [r for r in runs if r.ok]
    c, p = good(courier_runs), good(peer_runs)
    summary = {"key": workload.key, "title": workload.title, "peer": workload.peer_name, "unit": workload.unit,
               "target": workload.target, "runs": min(len(c), len(p)), "errors": errors}
    if not c or not p:
        summary["status"] = "FAILED" if courier_runs or peer_runs or errors else "not run"
        return summary
    scale = 1e9 if workload.unit == "GB/s" else 1.0
    pairs = [a.score / b.score for a, b in zip(c, p)]
    summary.update({
        "courier_median": statistics.median(r.score for r in c) / scale,
        "peer_median": statistics.median(r.score for r in p) / scale,
        "courier_min": min(r.score for r in c) / scale, "courier_max": max(r.score for r in c) / scale,
        "peer_min": min(r.score for r in p) / scale, "peer_max": max(r.score for r in p) / scale,
        "ratio": statistics.median(pairs), "ratio_min": min(pairs), "ratio_max": max(pairs),
        "courier_rss_kib": max(r.rss_kib for r in c), "peer_rss_kib": max(r.rss_kib for r in p),
        "courier_allocs": median_or_none([r.allocations for r in c]),
        "peer_allocs": median_or_none([r.allocations for r in p]),
    })
    MEDIANS[workload.key] = summary["courier_median"]
    met, why = workload.judge(summary)
    summary["met"], summary["why"] = met, why
    summary["status"] = "met" if met else ("reported" if met is None else "MISSED")
    if errors:
        summary["status"], summary["why"] = "FAILED", "; ".join(errors)[:300]
    return summary


def select_rows(rows, selected):
    """The rows a filter names: comma-separated; a word that is a row's key picks that row only,
    any other word picks every row whose key contains it ("" picks all)."""
    keys = {w.key for w in rows}
    words = [word.strip() for word in selected.split(",")] if selected else [""]
    return [w for w in rows if any(w.key == word if word in keys else word in w.key for word in words)]


def row_line(s):
    """One row's result on one line, printed as soon as the row is done."""
    if "ratio" not in s:
        return f"{s['key']}: {s['status']}"
    return (f"{s['key']}: Courier {fmt(s['courier_median'], s['unit'])}, {s['peer']} {fmt(s['peer_median'], s['unit'])}, "
            f"ratio {s['ratio']:.2f}× ({s['ratio_min']:.2f}–{s['ratio_max']:.2f}), "
            f"RSS {s['courier_rss_kib'] / 1024:.1f} / {s['peer_rss_kib'] / 1024:.1f} MiB, {s['status']} ({s['why']})")


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_allocs(value):
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def fmt(value, unit):
    if unit == "GB/s":
        return f"{value:.2f} GB/s"
    if unit == "req/MiB":
        return f"{value:,.1f} req/MiB"
    return f"{value:,.0f}/s"


def reproduce(key, markdown):
    command = f"bash Benchmarks/run.sh {key}"
    return f"`{command}`" if markdown else key


def table(summaries, markdown=False):
    header = ["workload", "reproduce" if markdown else "key", "Courier (median)", "peer", "peer (median)", "ratio", "ratio min–max",
              "Courier min–max", "peak RSS Courier / peer", "allocs/op Courier / peer", "target", "status"]
    lines = []
    for s in summaries:
        if "ratio" not in s:
            why = s.get("missing") or "; ".join(s.get("errors", []))[:160]
            lines.append([s["title"], reproduce(s["key"], markdown), "—", s["peer"], "—", "—", "—", "—", "—", "—", s["target"], f"{s['status']}: {why}"])
            continue
        lines.append([
            s["title"], reproduce(s["key"], markdown), fmt(s["courier_median"], s["unit"]), s["peer"], fmt(s["peer_median"], s["unit"]),
            f"{s['ratio']:.2f}×", f"{s['ratio_min']:.2f}–{s['ratio_max']:.2f}",
            f"{fmt(s['courier_min'], s['unit'])}–{fmt(s['courier_max'], s['unit'])}",
            f"{s['courier_rss_kib'] / 1024:.1f} / {s['peer_rss_kib'] / 1024:.1f} MiB",
            f"{fmt_allocs(s['courier_allocs'])} / {fmt_allocs(s['peer_allocs'])}",
            s["target"], f"{s['status']} ({s['why']})",
        ])
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(str(cell) for cell in line) + " |" for line in lines]
        return "\n".join(out)
    widths = [max(len(str(row[i])) for row in [header] + lines) for i in range(len(header))]
    render = lambda row: "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
    return "\n".join([render(header), render(["-" * w for w in widths])] + [render(line) for line in lines])


def main():
    bench, courier_cli, python, http, curl = sys.argv[1:6]
    selected = sys.argv[6] if len(sys.argv) > 6 else ""
    ctx = Context(bench, courier_cli, python, http, curl)
    ctx.available = set()
    os.makedirs(WORK, exist_ok=True)
    status, text, errors, _, _ = run_process([bench, "list", "all"])
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            ctx.available.add((parts[0], parts[1]))
    if os.path.exists(courier_cli):
        # The CLI counts as there once it knows --offline (before that main has only a stub).
        _, usage_text, usage_errors, _, _ = run_process([courier_cli, "request", "--help"], timeout=30)
        if "--offline" in usage_text + usage_errors:
            ctx.available.add(("cli", "courier"))
    os.makedirs(WORK, exist_ok=True)
    log = open(os.environ["BENCH_JSON"], "w") if os.environ.get("BENCH_JSON") else None
    started = time.time()
    load_before = os.getloadavg()
    if RUNS < 5:
        print(f"# {RUNS} pairs per row: a quick look, not a measurement (BENCHMARKS.md uses 5 or more)", flush=True)
    summaries = []
    try:
        all_rows = workloads(ctx)
        rows = select_rows(all_rows, selected)
        needs_big = any(w.key in ("multipart-file", "upload", "upload-reference", "upload-ceiling-c", "upload-urlsession",
                                  "cli-offline", "cli-upload") or w.key.startswith("resumable-upload")
                        for w in rows)
        needs_h2 = any(w.key.startswith("h2-") for w in rows)
        needs_server = needs_h2 or any(w.key in ("upload", "upload-reference", "download", "small-gets", "cli-upload",
                                                 "stream")
                                       for w in rows)
        needs_server = needs_server or any(w.key.startswith(("cached-gets", "download", "cli-download", "upload", "resumable-upload",
                                                             "small-gets", "stream-", "held-requests"))
                                           for w in rows)
        if needs_big:
            made = time.monotonic()
            ctx.make_big_file()
            print(f"# the {human(BIG)} file in {WORK}: ready in {time.monotonic() - made:.1f} s", flush=True)
        if needs_server:
            ctx.start_server(with_h2=needs_h2)
            print(f"# test server at {ctx.server_url or '(not on main)'}, discarding sink at {ctx.sink_url}"
                  + (f", HTTP/2 test server at {ctx.h2_url or '(not on main)'}" if needs_h2 else ""), flush=True)
        for workload in rows:
            print(f"# {workload.key}: {RUNS} pairs", flush=True)
            if workload.missing:
                summaries.append({"key": workload.key, "title": workload.title, "peer": workload.peer_name,
                                  "unit": workload.unit, "target": workload.target, "status": "not run",
                                  "missing": workload.missing, "errors": []})
                continue
            began = time.time()
            load = os.getloadavg()[0]
            courier_runs, peer_runs, errors = run_workload(workload, ctx, log)
            summary = summarise(workload, courier_runs, peer_runs, errors)
            summary["seconds"] = time.time() - began
            summaries.append(summary)
            for error in errors:
                print(f"#   {error}", flush=True)
            # The load average beside each row: absolute rates (the nested query-string target)
            # fall with it, ratios mostly do not.
            print(f"#   {row_line(summary)} [{summary['seconds']:.0f} s, load {load:.1f}]", flush=True)
    finally:
        ctx.stop_server()
    elapsed = time.time() - started
    print()
    print(f"Courier benchmarks — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"{memory_gib():.0f} GiB, {platform.platform()}, {RUNS} alternating pairs per row, {elapsed:.0f} s")
    print(table(summaries))
    if os.environ.get("BENCH_MARKDOWN"):
        with open(os.environ["BENCH_MARKDOWN"], "w") as handle:
            handle.write(run_facts(ctx, selected, started, elapsed, load_before) + "\n\n")
            handle.write(table(summaries, markdown=True) + "\n")
    failed = [s for s in summaries if s["status"] == "FAILED"]
    return 1 if failed else 0


def run_facts(ctx, selected, started, elapsed, load_before):
    """The facts BENCHMARKS.md gives beside a table: when, where, with what, by which command."""
    def first_line(argv):
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
            return result.stdout.strip().splitlines()[0] if result.returncode == 0 else "unknown"
        except (OSError, subprocess.SubprocessError, IndexError):
            return "unknown"
    versions = first_line([ctx.python, "-c", "import importlib.metadata as m; print(', '.join(f'{p} {m.version(p)}' "
                           "for p in ('requests-toolbelt', 'httpie', 'httpbin', 'gunicorn', 'tuspy')))"])
    curl = " ".join(first_line([ctx.curl, "--version"]).split()[:2])
    model = "unknown CPU"
    with open("/proc/cpuinfo") as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    settings = " ".join(f"{name}={os.environ[name]}" for name in
                        ("BENCH_SWIFT", "BENCH_RUNS", "BENCH_BIG", "BENCH_MEMORY", "BENCH_SCALE", "BENCH_ROW_CAP")
                        if os.environ.get(name))
    command = " ".join(part for part in (settings, "bash Benchmarks/run.sh", selected) if part)
    end = time.gmtime(started + elapsed)
    return "\n".join([
        f"- **When:** {time.strftime('%Y-%m-%d %H:%M', time.gmtime(started))}–{time.strftime('%H:%M', end)} UTC, "
        f"{elapsed:.0f} s of measuring, {RUNS} alternating pairs per row"
        + (f", commit {os.environ['BENCH_COMMIT']}" if os.environ.get("BENCH_COMMIT") else "") + ".",
        f"- **Machine:** {os.cpu_count()} cores ({model}), {memory_gib():.0f} GiB, {platform.platform()}; "
        f"load average {load_before[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.",
        f"- **Tools:** {os.environ.get('BENCH_SWIFT_VERSION', 'swift (version unknown)')}; {curl}; {versions}.",
        f"- **Command:** `{command}`.",
    ])


def memory_gib():
    with open("/proc/meminfo") as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1 << 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
