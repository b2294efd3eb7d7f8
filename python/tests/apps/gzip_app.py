"""A Vireo App for `vireo serve gzip_app:app`: GZipMiddleware over a stream whose second
chunk comes long after its first."""

from __future__ import annotations

import asyncio

from vireo import App, StreamingResponse
from vireo.middleware import GZipMiddleware

app = App()
app.add_middleware(GZipMiddleware)


@app.get("/ticks")
async def ticks():
    async def produce():
        yield "tick 0\n"
        await asyncio.sleep(30)
        yield "tick 1\n"

    return StreamingResponse(produce(), media_type="text/plain")
