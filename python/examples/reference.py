"""The Python reference app: every route the benchmarks and conformance checks drive.

    python examples/reference.py --addr 127.0.0.1:8000 [--workers N]

Prints a line containing `listening on` and the address once it accepts; SIGTERM or SIGINT
shut it down gracefully (requests in progress finish), with exit status 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time

from vireo import App, Request, StreamingResponse

try:
    from pydantic import BaseModel

    class Item(BaseModel):
        name: str
        price: float

except ImportError:  # pydantic is optional: a dataclass validates the same way
    from dataclasses import dataclass

    @dataclass
    class Item:  # type: ignore[no-redef]
        name: str
        price: float


# Streams longer than this are refused, so one request cannot stream for ever.
MAX_CHUNKS = 100_000

app = App()


@app.middleware("http")
async def tag_request(request: Request, call_next):
    request.state.tagged_by = "middleware"
    return await call_next(request)


@app.get("/")
def hello():
    return "Hello, World!"


@app.get("/json")
def json_hello():
    return {"message": "Hello, World!"}


@app.get("/users/{user_id}")
def user(user_id: int, request: Request):
    assert request.state.tagged_by == "middleware", "the middleware did not run"
    return f"User: {user_id}"


@app.get("/compute")
def compute():
    return str(sum(i * i for i in range(1000)))


@app.get("/async")
async def async_hello():
    await asyncio.sleep(0)
    return "Hello, World!"


@app.get("/async-nowait")
async def async_nowait():
    return "Hello, World!"


@app.get("/sleep", blocking=True)
def sleep(ms: int = 0):
    time.sleep(max(ms, 0) / 1000)
    return f"slept {ms}"


@app.post("/items", status_code=201)
def create(item: Item):
    return item


@app.get("/stream")
def stream(chunks: int = 3):
    count = max(0, min(chunks, MAX_CHUNKS))

    def generate():
        for k in range(count):
            yield f"chunk {k}\n"

    return StreamingResponse(generate(), media_type="text/plain")


@app.get("/error")
def error():
    raise RuntimeError("the /error route fails on purpose")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addr", default="127.0.0.1:8000", help="HOST:PORT (port 0: any)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    host, _, port = args.addr.rpartition(":")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app.run(host.strip("[]") or "127.0.0.1", int(port), workers=args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
