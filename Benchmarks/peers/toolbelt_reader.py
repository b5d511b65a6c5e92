#!/usr/bin/env python3
"""The peer of the multipart-file row: requests-toolbelt's MultipartEncoder read to the end.

usage: toolbelt_reader.py FILE BOUNDARY [--sha256]
Prints one JSON line in courier-bench's shape: seconds, bytes, content_length, ok.
"""
import hashlib
import json
import os
import sys
import time

from requests_toolbelt.multipart.encoder import MultipartEncoder

CHUNK = 64 * 1024  # the same read size the Courier side uses; toolbelt is fastest here (1 MiB reads: ~35% slower)


def peak_rss_kib():
    """VmHWM of this process, as courier-bench reports its own."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    path, boundary = sys.argv[1], sys.argv[2]
    want_sha = "--sha256" in sys.argv[3:]
    digest = hashlib.sha256() if want_sha else None
    with open(path, "rb") as handle:
        start = time.monotonic()
        encoder = MultipartEncoder(
            fields={"file": (os.path.basename(path), handle, "application/octet-stream")},
            boundary=boundary)
        declared = encoder.len
        total = 0
        while True:
            chunk = encoder.read(CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if digest:
                digest.update(chunk)
        seconds = time.monotonic() - start
    report = {"workload": "multipart-file", "impl": "toolbelt", "seconds": seconds, "ops": 1,
              "bytes": total, "content_length": declared, "ok": total == declared,
              "detail": f"{total} bytes, encoder.len {declared}"}
    if digest:
        report["sha256"] = digest.hexdigest()
    report["vmhwm_kib"] = peak_rss_kib()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
