"""FastAPI peer, served by uvicorn (one process; uvicorn uses uvloop and httptools
because they are installed). Run: python fastapi_app.py PORT."""
import asyncio
import os
import sys

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response

app = FastAPI()


# The two app-wide middlewares each store a value on the request (request.state).
@app.middleware("http")
async def first(request: Request, call_next):
    request.state.one = True
    return await call_next(request)


@app.middleware("http")
async def second(request: Request, call_next):
    request.state.two = True
    return await call_next(request)


@app.get("/", response_class=PlainTextResponse)
async def hello():
    return "Hello, World!"


@app.get("/json")
async def json_():
    return {"message": "Hello, World!"}


@app.get("/users/{id}", response_class=PlainTextResponse)
async def user(id: str, request: Request):
    if not (getattr(request.state, "one", False) and getattr(request.state, "two", False)):
        return Response(status_code=500)
    return f"User: {id}"


@app.get("/favicon.ico")
async def favicon():
    return Response(status_code=204)


@app.get("/compute", response_class=PlainTextResponse)
async def compute():
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
