"""FastAPI peer. Run: python fastapi_app.py PORT (uvicorn, one process; uvicorn uses uvloop and
httptools because they are installed). The granian-asgi peer serves the same `app` with Granian.

Handlers are plain `def` functions, as most FastAPI apps write them (FastAPI runs each in its
thread pool); with BENCH_FASTAPI_ASYNC=1 in the environment they are `async def` instead, run
on the event loop. `/async` awaits a timer either way."""
import asyncio
import functools
import os
import sys

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response

ASYNC = os.environ.get("BENCH_FASTAPI_ASYNC") == "1"

app = FastAPI()


def route(path, **kwargs):
    """app.get(path), registering the handler as written (`def`) or, in the async variant, as an
    `async def` that calls it: FastAPI reads the parameters through functools.wraps."""
    def register(handler):
        if ASYNC:
            @functools.wraps(handler)
            async def endpoint(*args, **kw):
                return handler(*args, **kw)
            app.get(path, **kwargs)(endpoint)
        else:
            app.get(path, **kwargs)(handler)
        return handler
    return register


class TagRequest:
    """The app-wide middleware of the Python reference app's contract: it sets a request state
    value the users handler reads. A pure ASGI middleware, the form Starlette's own middlewares
    take; `@app.middleware("http")` runs each request through a task group and memory streams,
    which costs more than the rest of this app, so no server's share could show."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            scope.setdefault("state", {})["tagged_by"] = "middleware"
        await self.app(scope, receive, send)


app.add_middleware(TagRequest)


@route("/", response_class=PlainTextResponse)
def hello():
    return "Hello, World!"


@route("/json")
def json_():
    return {"message": "Hello, World!"}


@route("/users/{id}", response_class=PlainTextResponse)
def user(id: int, request: Request):
    if getattr(request.state, "tagged_by", None) != "middleware":
        return Response(status_code=500)
    return f"User: {id}"


@route("/favicon.ico")
def favicon():
    return Response(status_code=204)


@route("/compute", response_class=PlainTextResponse)
def compute():
    return str(sum(i * i for i in range(1000)))


@app.get("/async", response_class=PlainTextResponse)
async def wait(ms: int = 0):
    await asyncio.sleep(ms / 1000)
    return f"waited {ms}"


if __name__ == "__main__":
    import uvicorn

    port = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PORT", 8080))
    # access_log off: per-request logging to a terminal would dominate the cost.
    uvicorn.run(app, host="127.0.0.1", port=port, access_log=False, log_level="warning")
