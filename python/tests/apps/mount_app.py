"""A Vireo App for `vireo serve mount_app:app`: a route of its own, Starlette's StaticFiles
mounted at /static, and a FastAPI app mounted at /sub that echoes what it is sent."""

from __future__ import annotations

from pathlib import Path

import fastapi
import fastapi.middleware.gzip
from fastapi.staticfiles import StaticFiles

from vireo import App

HERE = Path(__file__).parent

sub = fastapi.FastAPI()


@sub.post("/echo")
async def echo(request: fastapi.Request):
    body = await request.body()
    return {"size": len(body), "root_path": request.scope["root_path"],
            "path": request.scope["path"]}


app = App()


@app.get("/static/own")
def own():
    return "a route of the app under the mount's prefix"


app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
app.mount("/sub", sub)


# The same mounts behind the app's middleware: GZip and a middleware of the app's own, which
# wrap a mounted app as they wrap a route.
wrapped = App()
wrapped.add_middleware(fastapi.middleware.gzip.GZipMiddleware, minimum_size=16)


@wrapped.middleware("http")
async def seen(request, call_next):
    response = await call_next(request)
    response.headers["x-seen"] = f"{request.method} {request.url.path}"
    return response


wrapped.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
wrapped.mount("/sub", sub)
