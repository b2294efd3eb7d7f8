"""A FastAPI app for the differential tests: path, query and body parameters, dependencies,
background tasks, streaming and file responses, redirects, cookies, errors."""

from pathlib import Path
from typing import Annotated

from fastapi import (BackgroundTasks, Depends, FastAPI, Header, HTTPException, Query, Request,
                     WebSocket, WebSocketDisconnect)
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, RedirectResponse, StreamingResponse
from pydantic import BaseModel

STATIC = Path(__file__).resolve().parent / "static"
app = FastAPI()
done_tasks: list[str] = []


class Item(BaseModel):
    name: str
    price: float
    tags: list[str] = []


def token(x_token: Annotated[str | None, Header()] = None) -> str:
    if x_token != "secret":
        raise HTTPException(status_code=401, detail="bad token", headers={"WWW-Authenticate": "Token"})
    return x_token


@app.get("/items/{item_id}")
def read_item(item_id: int, q: Annotated[list[str] | None, Query()] = None):
    return {"item_id": item_id, "q": q}


@app.post("/items", status_code=201)
async def create_item(item: Item):
    return {"created": item.model_dump(), "total": item.price * len(item.tags or [1])}


@app.put("/items/{item_id}")
async def put_item(item_id: int, item: Item):
    return {"item_id": item_id, "name": item.name}


@app.patch("/items/{item_id}")
def patch_item(item_id: int):
    return {"patched": item_id}


@app.delete("/items/{item_id}", status_code=204)
def delete_item(item_id: int):
    return None


@app.get("/search")
def search(tag: Annotated[list[str], Query()] = [], name: str = ""):
    return {"tag": tag, "name": name}


@app.get("/private")
def private(user: Annotated[str, Depends(token)]):
    return {"user": user}


@app.post("/bg")
def background(tasks: BackgroundTasks, name: str = "x"):
    tasks.add_task(done_tasks.append, name)
    return {"scheduled": name}


@app.get("/stream")
def stream(n: int = 3):
    def chunks():
        for i in range(n):
            yield f"line {i}\n"
    return StreamingResponse(chunks(), media_type="text/plain")


@app.get("/astream")
async def astream(n: int = 3):
    async def chunks():
        for i in range(n):
            yield f"async line {i}\n".encode()
    return StreamingResponse(chunks(), media_type="text/plain")


@app.get("/file")
def file():
    return FileResponse(STATIC / "data.bin", media_type="application/octet-stream")


@app.get("/redirect")
def redirect():
    return RedirectResponse("/items/1?q=r", status_code=307)


@app.get("/cookies")
def cookies(request: Request):
    res = JSONResponse({"seen": dict(sorted(request.cookies.items()))})
    res.set_cookie("a", "1", httponly=True)
    res.set_cookie("b", "two words", path="/x")
    return res


@app.get("/error")
def error():
    raise RuntimeError("unhandled")


@app.get("/teapot")
def teapot():
    raise HTTPException(status_code=418, detail="short and stout")


@app.post("/raw")
async def raw(request: Request):
    total = 0
    count = 0
    async for chunk in request.stream():
        total += sum(chunk)
        count += len(chunk)
    return PlainTextResponse(f"{count}:{total % 65521}")


@app.get("/headers")
def headers(request: Request):
    return {"x": request.headers.getlist("x-multi"), "empty": request.headers.get("x-empty"),
            "host": request.headers.get("host"), "url": str(request.url)}


@app.websocket("/ws/{room}")
async def chat(websocket: WebSocket, room: str, token: Annotated[str, Query()]):
    if token != "secret":
        await websocket.close(code=1008)
        return
    await websocket.accept()
    try:
        while True:
            text = await websocket.receive_text()
            await websocket.send_json({"room": room, "echo": text})
    except WebSocketDisconnect as gone:
        done_tasks.append(f"ws closed {gone.code}")
