#!/usr/bin/env python3
"""The peer beside the resumable-upload row: tuspy (tus-py-client) uploading a file to a tus
endpoint with its defaults (one PATCH for the whole file, which it reads into memory first).

usage: tuspy_upload.py ENDPOINT FILE
Prints one JSON line in courier-bench's shape: seconds (the upload alone), bytes, ok, the
upload's URL, and the test server's report of it (fetched after the timed section).
"""
import json
import os
import sys
import time
import urllib.request

from tusclient import client


def peak_rss_kib():
    """VmHWM of this process, as courier-bench reports its own."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    endpoint, path = sys.argv[1], sys.argv[2]
    size = os.path.getsize(path)
    metadata = {"filename": os.path.basename(path), "filetype": "application/octet-stream"}
    start = time.monotonic()
    uploader = client.TusClient(endpoint).uploader(path, metadata=metadata)
    uploader.upload()
    seconds = time.monotonic() - start
    peak = peak_rss_kib()
    with urllib.request.urlopen(uploader.url, timeout=30) as answer:
        report = answer.read().decode()
    print(json.dumps({"seconds": seconds, "ops": 1, "bytes": size, "ok": uploader.offset == size,
                      "detail": f"offset {uploader.offset} of {size}, upload {uploader.url}",
                      "server_report": report, "vmhwm_kib": peak}))


if __name__ == "__main__":
    main()
