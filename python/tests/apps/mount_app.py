"""A Vireo App for `vireo serve mount_app:app`: a route of its own, Starlette's StaticFiles
mounted at /static, and a FastAPI app mounted at /sub that echoes what it is sent."""

from __future__ import annotations

from pathlib import Path

import fastapi
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
