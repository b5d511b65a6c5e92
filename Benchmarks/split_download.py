#!/usr/bin/env python3
"""Split downloads against nginx capping each connection at 20 MB/s (issue 46; BENCHMARKS.md).

    python3 Benchmarks/split_download.py [path/to/courier]   # default .build/release/courier

Starts nginx with .ci/nginx.sh, writes a 400 MB file of random bytes into its www root, then in
one run, alternating BENCH_RUNS times (default 3):
  curl (one connection), aria2c -x8 -s8, courier -d --split 8 (wall time, peak RSS, sha256);
then courier --split 8 against /noranges/ (max_ranges 0: one connection, byte-identical), and
courier --split 8 stopped with SIGINT after a second (exit 130) and continued with -d -c --split 8,
summing nginx's body bytes for that file (split.log) against the file's length. Needs curl,
aria2 (apt-get install -y aria2), GNU time and nginx; stops nginx at the end.
"""
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZE = int(os.environ.get("BENCH_SPLIT_SIZE", 400 * 1000 * 1000))
RUNS = int(os.environ.get("BENCH_RUNS", 3))


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def timed(command):
    """Runs command under GNU time; returns (seconds, peak RSS in MiB, exit status). Not by
    wait4's rusage: a child's maximum RSS counts the Python process it was forked from."""
    with tempfile.NamedTemporaryFile("r") as report:
        started = time.monotonic()
        status = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", report.name] + command,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        elapsed = time.monotonic() - started
        return elapsed, int(report.read().strip().splitlines()[-1]) / 1024, status


def logged_bytes(log, uri):
    total = 0
    with open(log) as handle:
        for line in handle:
            parts = line.split(" ")
            if len(parts) >= 4 and parts[1] == uri:
                total += int(parts[3])
    return total


def main():
    courier = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/courier"))
    for tool in ("curl", "aria2c", "nginx", "/usr/bin/time"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing (apt-get install -y curl aria2 nginx-light)")
    exports = subprocess.run(["bash", os.path.join(ROOT, ".ci/nginx.sh")], check=True, capture_output=True, text=True)
    env = dict(re.findall(r"export (\w+)='([^']*)'", exports.stdout))
    nginx_dir, base, log = env["COURIER_NGINX_DIR"], env["COURIER_NGINX_SPLIT_URL"], env["COURIER_NGINX_SPLIT_LOG"]
    work = tempfile.mkdtemp(prefix="courier-split-")
    try:
        source = os.path.join(nginx_dir, "www", "big.bin")
        with open(source, "wb") as handle:
            left = SIZE
            while left > 0:
                chunk = os.urandom(min(left, 8 << 20))
                handle.write(chunk)
                left -= len(chunk)
        os.chmod(source, 0o644)
        expected = sha256(source)
        url = f"{base}/limited/big.bin"
        out = lambda name: os.path.join(work, name)
        sides = {
            "curl": lambda: ["curl", "-sS", "-o", out("curl.bin"), url],
            "aria2c -x8 -s8": lambda: [
                "aria2c", "-q", "-x8", "-s8", "--allow-overwrite=true", "--auto-file-renaming=false",
                "-d", work, "-o", "aria2.bin", url],
            "courier --split 8": lambda: [courier, "-q", "-d", "--split", "8", "-o", out("courier.bin"), url],
        }
        files = {"curl": "curl.bin", "aria2c -x8 -s8": "aria2.bin", "courier --split 8": "courier.bin"}
        results = {name: [] for name in sides}
        for _ in range(RUNS):
            for name, command in sides.items():
                path = out(files[name])
                if os.path.exists(path):
                    os.unlink(path)
                seconds, rss, status = timed(command())
                identical = status == 0 and sha256(path) == expected
                results[name].append((seconds, rss, identical))
        print(f"# {SIZE} bytes from nginx, limit_rate 20m per connection, {RUNS} runs each, alternating")
        best = {}
        for name, rows in results.items():
            seconds = sorted(row[0] for row in rows)[len(rows) // 2]
            best[name] = seconds
            print(
                f"{name:20} median {seconds:6.2f} s  {SIZE / seconds / 1e6:7.1f} MB/s  "
                f"peak RSS {max(row[1] for row in rows):6.1f} MiB  byte-identical {all(row[2] for row in rows)}"
            )
        courier_time = best["courier --split 8"]
        print(f"courier --split 8 vs curl: {best['curl'] / courier_time:.2f}x faster")
        print(f"courier --split 8 vs aria2c -x8 -s8: {best['aria2c -x8 -s8'] / courier_time:.2f}x its speed")

        # max_ranges 0: ranges ignored, so one connection and the same bytes.
        open(log, "w").close()
        path = out("noranges.bin")
        seconds, rss, status = timed([courier, "-q", "-d", "--split", "8", "-o", path, f"{base}/noranges/big.bin"])
        requests = sum(1 for line in open(log) if " /noranges/big.bin " in line)
        print(
            f"max_ranges 0: {seconds:.2f} s, {requests} request(s), exit {status}, "
            f"byte-identical {status == 0 and sha256(path) == expected}, peak RSS {rss:.1f} MiB"
        )

        # SIGINT after a second, then -c: nginx's body bytes for the file against its length.
        open(log, "w").close()
        path = out("resumed.bin")
        first = subprocess.Popen(
            [courier, "-q", "-d", "--split", "8", "-o", path, url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1)
        first.send_signal(signal.SIGINT)
        interrupted = first.wait(timeout=30)
        first.stderr.close()
        time.sleep(0.5)  # nginx logs a request when its connection's last write ends
        seconds, rss, status = timed([courier, "-q", "-d", "-c", "--split", "8", "-o", path, url])
        time.sleep(0.5)
        fetched = logged_bytes(log, "/limited/big.bin")
        print(
            f"SIGINT after 1 s: exit {interrupted}; -d -c --split 8: exit {status}, "
            f"byte-identical {status == 0 and sha256(path) == expected}, fetched {fetched / SIZE:.3f}x the file"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        with open(os.path.join(nginx_dir, "nginx.pid")) as handle:
            os.kill(int(handle.read().strip()), signal.SIGTERM)
        time.sleep(0.5)
        shutil.rmtree(nginx_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
