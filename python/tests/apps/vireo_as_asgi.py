"""A Vireo app served as an ASGI application, by uvicorn in `test_asgi_app.py`."""

from __future__ import annotations

import asyncio

from vireo import App, Request

app = App()
started: dict[str, object] = {}


@app.on_event("startup")
async def remember_loop() -> None:
    started["loop"] = asyncio.get_running_loop()


@app.get("/")
def hello() -> str:
    return "Hello, World!"


@app.get("/started")
async def on_startup_loop(request: Request) -> dict:
    return {"started": "loop" in started,
            "same_loop": started.get("loop") is asyncio.get_running_loop(),
            "url": str(request.url)}
