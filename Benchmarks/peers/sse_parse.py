#!/usr/bin/env python3
"""The peer of the sse-parse row: an event-stream corpus parsed by sseclient-py's SSEClient.

usage: sse_parse.py [--size BYTES] [--block BYTES] [--chunk BYTES] [--parser sseclient|minimal]

Makes the same block of events as courier-bench's SSECorpus (Workloads/StreamedBodies.swift),
byte for byte, cuts it into chunks before the clock starts, and times the parse of the block fed
again and again up to --size bytes (so memory holds one block, as on the Courier side). `sseclient` is
sseclient-py 1.9.0 (mpetazzoni), a pure-Python parser that takes any iterable of byte chunks;
`minimal` is a line-by-line parser written here from WHATWG HTML §9.2.6, for a machine without
sseclient-py. Prints one JSON line in courier-bench's shape: seconds, bytes, ops (events), ok.
"""
import itertools
import json
import sys
import time

FILLER = "The quick brown fox jumps over the lazy dog; streaming tokens arrive."


def make_corpus(size):
    """Kept identical to SSECorpus in Workloads/StreamedBodies.swift."""
    parts, length, events, data_bytes = [], 0, 0, 0
    while length < size:
        events += 1
        index = events
        text = ""
        if index % 4 == 0:
            text += f": keep-alive {index}\n"
        first = '{"index":%d,"delta":"%s"}' % (index, FILLER)
        text += f"event: delta\nid: {index}\ndata: {first}\n"
        data = first
        if index % 4 == 0:
            second = f"second line of event {index}"
            text += f"data: {second}\n"
            data += "\n" + second
        text += "\n"
        encoded = text.encode()
        parts.append(encoded)
        length += len(encoded)
        data_bytes += len(data.encode())
    return b"".join(parts), events, data_bytes


def parse_sseclient(chunks):
    import sseclient
    events = data_bytes = 0
    last_id = ""
    for event in sseclient.SSEClient(iter(chunks)).events():
        events += 1
        data_bytes += len(event.data.encode())
        last_id = event.id or last_id
    return events, data_bytes, last_id


def parse_minimal(chunks):
    """HTML §9.2.5-§9.2.6 for LF-terminated lines: enough for this corpus, no BOM or CR cases."""
    events = data_bytes = 0
    last_id = ""
    pending = b""
    data, event_id = [], ""
    for chunk in chunks:
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if not line:
                last_id = event_id
                if data:
                    text = "\n".join(data)
                    events += 1
                    data_bytes += len(text.encode())
                data = []
                continue
            if line[:1] == b":":
                continue
            name, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if name == b"data":
                data.append(value.decode("utf-8", "replace"))
            elif name == b"id" and b"\0" not in value:
                event_id = value.decode("utf-8", "replace")
    return events, data_bytes, last_id


def peak_rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    size = int(args.get("--size", 100_000_000))
    block = int(args.get("--block", 4 << 20))
    chunk_size = int(args.get("--chunk", 65_536))
    parser = args.get("--parser", "sseclient")
    corpus, block_events, block_data = make_corpus(block)
    repeats = max(1, -(-size // len(corpus)))
    chunks = [corpus[i:i + chunk_size] for i in range(0, len(corpus), chunk_size)]
    expected_events, expected_data = block_events * repeats, block_data * repeats
    parse = parse_sseclient if parser == "sseclient" else parse_minimal
    start = time.monotonic()
    events, data_bytes, last_id = parse(itertools.chain.from_iterable(itertools.repeat(chunks, repeats)))
    seconds = time.monotonic() - start
    ok = events == expected_events and data_bytes == expected_data and last_id == str(block_events)
    print(json.dumps({
        "workload": "sse-parse", "impl": parser, "seconds": seconds, "ops": events, "bytes": len(corpus) * repeats,
        "ok": ok, "vmhwm_kib": peak_rss_kib(),
        "detail": f"{events} events (expected {expected_events}), {data_bytes} data bytes (expected {expected_data}), last id {last_id}",
    }))


if __name__ == "__main__":
    main()
