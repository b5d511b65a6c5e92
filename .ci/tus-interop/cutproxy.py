"""A TCP proxy in front of the tus server for the interop run.

It forwards bytes both ways and counts what clients send. The first CUTS connections that carry
a PATCH are closed (an orderly close of both sides, not a reset: tuspyserver 4.4.3 keeps the
offset of a body cut by a close, not of one cut by a reset) once CUT_BYTES of their request bytes
have gone through. While RATE is set, client bytes are paced to about RATE bytes per second, so
that a run can be interrupted part way. It writes its counters as JSON to STATS every 100 ms:
bytes from clients, creation requests (POST) and cuts.

usage: cutproxy.py LISTEN_PORT TARGET_PORT STATS [CUTS CUT_BYTES RATE]
"""
import asyncio
import json
import sys
import time

listen_port, target_port, stats_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cuts_left = int(sys.argv[4]) if len(sys.argv) > 4 else 0
cut_bytes = int(sys.argv[5]) if len(sys.argv) > 5 else 0
rate = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
stats = {"client_bytes": 0, "posts": 0, "patches": 0, "cuts": 0}


async def pump_client(reader, writer, closing):
    global cuts_left
    sent = 0
    carries_patch = False
    started = time.monotonic()
    while True:
        data = await reader.read(256 * 1024)
        if not data:
            break
        stats["posts"] += data.count(b"POST /files")
        patches = data.count(b"PATCH /files/")
        stats["patches"] += patches
        if patches and not carries_patch and cuts_left > 0:
            carries_patch = True
            cuts_left -= 1
        if carries_patch and sent + len(data) >= cut_bytes:
            data = data[: max(0, cut_bytes - sent)]
            writer.write(data)
            stats["client_bytes"] += len(data)
            await writer.drain()
            stats["cuts"] += 1
            closing.set()
            return
        writer.write(data)
        sent += len(data)
        stats["client_bytes"] += len(data)
        await writer.drain()
        if rate > 0:
            ahead = sent / rate - (time.monotonic() - started)
            if ahead > 0:
                await asyncio.sleep(ahead)
    closing.set()


async def pump_server(reader, writer, closing):
    while True:
        data = await reader.read(64 * 1024)
        if not data:
            break
        writer.write(data)
        await writer.drain()
    closing.set()


async def handle(client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_writer.close()
        return
    closing = asyncio.Event()
    tasks = [
        asyncio.ensure_future(pump_client(client_reader, server_writer, closing)),
        asyncio.ensure_future(pump_server(server_reader, client_writer, closing)),
    ]
    await closing.wait()
    for task in tasks:
        task.cancel()
    for writer in (client_writer, server_writer):
        try:
            writer.close()
        except Exception:
            pass


async def write_stats():
    while True:
        with open(stats_path + ".tmp", "w") as out:
            json.dump(stats, out)
        import os

        os.replace(stats_path + ".tmp", stats_path)
        await asyncio.sleep(0.1)


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    asyncio.ensure_future(write_stats())
    async with server:
        await server.serve_forever()


asyncio.run(main())
