"""An app served over a socket by test_async_server.py: async handlers that sleep and that do
socket I/O through the worker's event loop."""

from __future__ import annotations

import asyncio
import sys

from vireo import App, PlainTextResponse, StreamingResponse

app = App()


@app.get("/sleep")
async def sleep(ms: int = 0):
    await asyncio.sleep(ms / 1000)
    return f"waited {ms}"


@app.get("/big")
def big(kib: int = 1024):
    return b"x" * (kib * 1024)


@app.get("/fetch")
async def fetch(port: int, path: str = "/big"):
    """GET `path` from this same server through asyncio streams: the worker must keep
    serving while this handler waits on the loop's sockets."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = data.partition(b"\r\n\r\n")
    return PlainTextResponse(f"{head.split(b' ')[1].decode()} {len(body)}")


@app.get("/timeout")
async def timeout():
    try:
        await asyncio.wait_for(asyncio.sleep(5), 0.05)
    except asyncio.TimeoutError:
        return "timed out"
    return "not timed out"


streams_closed: list[str] = []


@app.get("/events")
async def events(pause: str = "await"):
    """An event stream that sends one event, then waits for the next (`pause=await`) or, once
    its consumer has taken the first, stays paused at its `yield` (`pause=yield`; `pause=sync`
    is the same as a sync generator). Its `finally` awaits, as a real unsubscribe would, and
    records that it ran."""
    def sync_stream():
        try:
            yield "data: first\n\n"
            yield "data: " + "x" * (16 << 20) + "\n\n"
            yield "data: never\n\n"
        finally:
            streams_closed.append(pause)

    if pause == "sync":
        return StreamingResponse(sync_stream(), media_type="text/event-stream")

    async def stream():
        try:
            yield "data: first\n\n"
            if pause == "await":
                await asyncio.sleep(3600)
            yield "data: " + "x" * (16 << 20) + "\n\n"
            yield "data: never\n\n"
        finally:
            await asyncio.sleep(0)
            streams_closed.append(pause)
    return StreamingResponse(stream(), media_type="text/event-stream")


@app.get("/streams-closed")
def closed():
    return streams_closed


if __name__ == "__main__":
    host, _, port = sys.argv[1].rpartition(":")
    app.run(host, int(port), workers=int(sys.argv[2]) if len(sys.argv) > 2 else 1)
