"""An app served over a socket by test_async_server.py: async handlers that sleep and that do
socket I/O through the worker's event loop."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import weakref

from vireo import App, BackgroundTask, PlainTextResponse, Request, StreamingResponse

app = App()


@app.get("/sleep")
async def sleep(ms: int = 0):
    await asyncio.sleep(ms / 1000)
    return f"waited {ms}"


@app.get("/sleep-for")
async def sleep_for(seconds: float):
    """Sleep `seconds` after one turn of the loop, so the timer is set from the loop's own
    iteration; asyncio runs a timer of `nan` seconds at once."""
    await asyncio.sleep(0)
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


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


def mark(path: str) -> None:
    """Leave a file at `path`, for a test to see without asking the server (and so without
    waking its loop)."""
    with open(path, "w") as out:
        out.write("done")


@app.get("/events")
async def events(marker: str, pause: str = "await"):
    """An event stream that sends one event, then waits for the next (`pause=await`) or, once
    its consumer has taken the first, stays paused at its `yield` (`pause=yield`; `pause=sync`
    is the same as a sync generator). Its `finally` awaits, as a real unsubscribe would, then
    leaves `marker`."""
    def sync_stream():
        try:
            yield "data: first\n\n"
            yield "data: " + "x" * (16 << 20) + "\n\n"
            yield "data: never\n\n"
        finally:
            mark(marker)

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
            mark(marker)
    return StreamingResponse(stream(), media_type="text/event-stream")


@app.get("/blocking-events", blocking=True)
def blocking_events(marker: str = "", pause_ms: int = 0):
    """A `blocking=True` route's sync stream that sleeps before each chunk, as a database
    cursor blocks. `marker` (if given) is left by its `finally`, after a sleep of its own; a
    16 MiB chunk the client never reads keeps it paused after the first."""
    def stream():
        try:
            for i in range(3):
                time.sleep(pause_ms / 1000)
                yield f"chunk {i}\n"
            if marker:
                yield "x" * (16 << 20)
        finally:
            if marker:
                time.sleep(0.05)
                mark(marker)
    return StreamingResponse(stream())


@app.get("/until-disconnected")
async def until_disconnected(request: Request, marker: str, ms: int = 5000):
    """Polls `request.is_disconnected()` for up to `ms`; leaves `marker` if the client left."""
    for _ in range(ms // 20):
        if await request.is_disconnected():
            mark(marker)
            return "left"
        await asyncio.sleep(0.02)
    return "stayed"


@app.get("/slow-then-background")
async def slow_then_background(marker: str, fail: bool = False):
    """Answers after 300 ms, with a background task that leaves `marker` (or raises first)."""
    await asyncio.sleep(0.3)
    if fail:
        raise RuntimeError("failed after the client left")
    return PlainTextResponse("done", background=BackgroundTask(mark, marker))


class _Sentinel:
    pass


@app.get("/wait-forever")
async def wait_forever(marker: str):
    """Waits on an event nothing can reach but this handler; `marker` is left when its frame
    is collected."""
    await asyncio.sleep(0)
    kept = _Sentinel()
    weakref.finalize(kept, mark, marker)
    await asyncio.Event().wait()


@app.get("/collect")
def collect():
    gc.collect()
    return "collected"


if __name__ == "__main__":
    host, _, port = sys.argv[1].rpartition(":")
    app.run(host, int(port), workers=int(sys.argv[2]) if len(sys.argv) > 2 else 1)
