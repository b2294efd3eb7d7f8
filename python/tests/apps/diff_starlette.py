"""A Starlette app with middleware (a pure ASGI one, BaseHTTPMiddleware, CORS), static files,
streaming and WebSockets, for the differential tests."""

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

STATIC = Path(__file__).resolve().parent / "static"


class Stamp(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        response = await call_next(request)
        response.headers["x-stamp"] = request.method.lower()
        return response


class PureAsgi:
    """Adds a header to every response, as raw ASGI middleware does."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async def wrapped(message):
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [(b"x-pure", b"1")]
            await send(message)
        await self.app(scope, receive, wrapped)


async def home(request: Request):
    return PlainTextResponse(f"hello {request.query_params.get('who', 'world')}")


async def echo(request: Request):
    body = await request.body()
    return JSONResponse({"length": len(body), "type": request.headers.get("content-type"),
                         "sum": sum(body) % 65521, "method": request.method})


async def params(request: Request):
    return JSONResponse({"path": request.path_params["rest"],
                         "query": request.query_params.multi_items()})


async def numbers(request: Request):
    async def gen():
        for i in range(int(request.query_params.get("n", "4"))):
            yield f"{i},"
    return StreamingResponse(gen(), media_type="text/csv")


async def fail(request: Request):
    raise ValueError("starlette failure")


async def ws_echo(websocket: WebSocket):
    protocol = "echo" if "echo" in websocket.scope["subprotocols"] else None
    room = websocket.query_params.get("room", "none").encode()
    await websocket.accept(subprotocol=protocol, headers=[(b"x-room", room)])
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text == "close":
                await websocket.close(code=4100, reason="asked to")
                return
            if text == "json":
                await websocket.send_json({"path": websocket.url.path,
                                           "query": websocket.query_params.multi_items(),
                                           "cookie": websocket.cookies.get("k")})
            elif text is not None:
                await websocket.send_text(text.upper())
            else:
                await websocket.send_bytes(message["bytes"][::-1])
    except WebSocketDisconnect:
        pass


async def ws_deny(websocket: WebSocket):
    await websocket.close()


async def ws_fail(websocket: WebSocket):
    raise ValueError("websocket failure")


app = Starlette(
    routes=[
        Route("/", home),
        Route("/echo", echo, methods=["POST", "PUT", "DELETE"]),
        Route("/p/{rest:path}", params),
        Route("/numbers", numbers),
        Route("/fail", fail),
        WebSocketRoute("/ws", ws_echo),
        WebSocketRoute("/ws-deny", ws_deny),
        WebSocketRoute("/ws-fail", ws_fail),
        Mount("/static", StaticFiles(directory=STATIC, html=True)),
    ],
    middleware=[
        Middleware(PureAsgi),
        Middleware(CORSMiddleware, allow_origins=["https://example.org"], allow_methods=["*"],
                   allow_headers=["x-custom"]),
        Middleware(Stamp),
    ],
)
