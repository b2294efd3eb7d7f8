"""A Vireo App with WebSocket routes, for test_native_websocket.py: `python native_ws.py HOST:PORT`."""

from __future__ import annotations

import sys

from vireo import (APIRouter, App, Cookie, Depends, Header, HTTPException, WebSocket,
                   WebSocketDisconnect, WebSocketException)

app = App()
seen: list[str] = []


@app.get("/")
def hello():
    return "Hello, World!"


@app.get("/seen")
def get_seen():
    return seen


@app.websocket("/echo/{room}")
async def echo(websocket: WebSocket, room: str):
    await websocket.accept()
    try:
        while True:
            message = await websocket.receive()
            if message.get("text") is not None:
                await websocket.send_text(f"{room}: {message['text']}")
            else:
                await websocket.send_bytes(message["bytes"])
    except WebSocketDisconnect as gone:
        seen.append(f"{room} left with {gone.code}")


router = APIRouter(prefix="/calc")


@router.websocket("/sum/{start}")
async def add(websocket: WebSocket, start: int, q: str | None = None):
    await websocket.accept()
    total = start
    async for value in websocket.iter_json():
        total += value["add"]
        await websocket.send_json({"total": total, "q": q})


app.include_router(router)


def user(token: str) -> str:
    """The user a `token` query parameter names; any other token refuses the handshake."""
    if token != "secret":
        raise WebSocketException(1008, "bad token")
    return "alice"


@app.websocket("/auth")
async def auth(websocket: WebSocket, name: str = Depends(user)):
    await websocket.accept()
    await websocket.send_text(f"hello {name}")
    await websocket.close()


async def tracked(websocket: WebSocket):
    """A `yield` dependency: its teardown runs when the handler ends."""
    try:
        yield
    finally:
        seen.append("whoami torn down")


@app.websocket("/whoami")
async def whoami(websocket: WebSocket, user_agent: str = Header(), sid: str = Cookie(),
                 _: None = Depends(tracked)):
    await websocket.accept()
    await websocket.send_json({"agent": user_agent, "sid": sid})
    await websocket.receive_text()  # until the client leaves


def authorized(authorization: str | None = Header(None)) -> None:
    if authorization != "Bearer ok":
        raise HTTPException(401, "not authorized", headers={"WWW-Authenticate": "Bearer"})


@app.websocket("/private", dependencies=[Depends(authorized)])
async def private(websocket: WebSocket):
    await websocket.accept()
    await websocket.send_text("welcome")


@app.websocket("/late-close")
async def late_close(websocket: WebSocket):
    await websocket.accept()
    raise WebSocketException(4002, "later")


@app.websocket("/refuse")
async def refuse(websocket: WebSocket):
    return  # never accepted: the handshake is refused


@app.websocket("/close")
async def close(websocket: WebSocket):
    await websocket.accept()
    await websocket.close(4001, "bye")


@app.websocket("/boom")
async def boom(websocket: WebSocket):
    await websocket.accept()
    raise RuntimeError("boom in a websocket handler")


if __name__ == "__main__":
    host, _, port = sys.argv[1].rpartition(":")
    app.run(host, int(port))
