"""Routes whose dependencies are limited with `Depends(max_concurrency=...)`, each recording
how many of its calls overlapped: `GET /peak/{name}` gives the most seen at once."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Annotated

from vireo import App, Depends, HTTPException

app = App()
now: dict[str, int] = {}
peak: dict[str, int] = {}
lock = threading.Lock()


def enter(name: str) -> None:
    with lock:
        now[name] = now.get(name, 0) + 1
        peak[name] = max(peak.get(name, 0), now[name])


def leave(name: str) -> None:
    with lock:
        now[name] -= 1


def counted(name: str):
    """An async dependency that takes a while, counted under `name`."""

    async def dependency() -> str:
        enter(name)
        try:
            await asyncio.sleep(0.05)
        finally:
            leave(name)
        return name

    return dependency


@app.get("/peak/{name}")
def read_peak(name: str):
    return {"peak": peak.get(name, 0), "now": now.get(name, 0)}


@app.get("/unlimited")
async def unlimited(v: Annotated[str, Depends(counted("unlimited"))]):
    return v


@app.get("/limited")
async def limited(v: Annotated[str, Depends(counted("limited"), max_concurrency=2)]):
    return v


@app.get("/limited-sync-handler")
def limited_sync_handler(v: Annotated[str, Depends(counted("sync-handler"), max_concurrency=1)]):
    return v


async def held():
    """A `yield` dependency counted from its start to the end of its teardown."""
    enter("held")
    try:
        yield "held"
        await asyncio.sleep(0.02)
    finally:
        leave("held")


@app.get("/held")
async def held_route(v: Annotated[str, Depends(held, max_concurrency=1)], fail: bool = False):
    await asyncio.sleep(0.02)
    if fail:
        raise HTTPException(409, "failed after the yield")
    return v


# One object in two routes: one count. Two objects of one function: a count each.
shared = Depends(counted("shared"), max_concurrency=1)
separate = counted("separate")


@app.get("/shared-a")
async def shared_a(v: Annotated[str, shared]):
    return v


@app.get("/shared-b")
async def shared_b(v: Annotated[str, shared]):
    return v


@app.get("/separate-a")
async def separate_a(v: Annotated[str, Depends(separate, max_concurrency=1)]):
    return v


@app.get("/separate-b")
async def separate_b(v: Annotated[str, Depends(separate, max_concurrency=1)]):
    return v


async def refuses() -> str:
    await asyncio.sleep(0.01)
    raise HTTPException(418, "refused")


@app.get("/refuses")
async def refuses_route(v: Annotated[str, Depends(refuses, max_concurrency=1)]):
    return v


def original() -> str:
    return "original"


@app.get("/overridden")
async def overridden(v: Annotated[str, Depends(original, max_concurrency=1)]):
    return v


app.dependency_overrides[original] = counted("overridden")


def blocking_dependency() -> str:
    enter("blocking")
    try:
        time.sleep(0.05)
    finally:
        leave("blocking")
    return "blocking"


@app.get("/blocking", blocking=True)
def blocking_route(v: Annotated[str, Depends(blocking_dependency, max_concurrency=2)]):
    return v


if __name__ == "__main__":
    host, port = sys.argv[1].rsplit(":", 1)
    app.run(host, int(port), workers=1)
