"""A Starlette app with middleware (a pure ASGI one, BaseHTTPMiddleware, CORS), static files
and streaming, for the differential tests."""

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

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


app = Starlette(
    routes=[
        Route("/", home),
        Route("/echo", echo, methods=["POST", "PUT", "DELETE"]),
        Route("/p/{rest:path}", params),
        Route("/numbers", numbers),
        Route("/fail", fail),
        Mount("/static", StaticFiles(directory=STATIC, html=True)),
    ],
    middleware=[
        Middleware(PureAsgi),
        Middleware(CORSMiddleware, allow_origins=["https://example.org"], allow_methods=["*"],
                   allow_headers=["x-custom"]),
        Middleware(Stamp),
    ],
)
