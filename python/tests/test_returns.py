"""Every kind of return value, and the response classes."""

from __future__ import annotations

import dataclasses
import datetime
import enum

import msgspec
import pytest
import pydantic

from vireo import (
    App,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from vireo.testclient import TestClient

app = App()


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Model(pydantic.BaseModel):
    name: str
    when: datetime.date


class Struct(msgspec.Struct):
    a: int
    b: list[str]


class Colour(enum.Enum):
    RED = "red"


@app.get("/str")
def text():
    return "héllo"


@app.get("/bytes")
def raw():
    return b"\x00\x01\xff"


@app.get("/big")
def big():
    return "x" * 100_000


@app.get("/dict")
def mapping():
    return {"a": [1, 2.5, True, None, "s"], "nested": {"k": (1, 2)}, 3: "int key"}


@app.get("/list")
def sequence():
    return [1, "two", {"three": 3}]


@app.get("/big-json")
def big_json():
    return {"items": [{"n": n, "name": f"item {n}"} for n in range(2_000)]}


class Ordered(dict):
    """A dict subclass: JSON as well, not taken for a response."""


@app.get("/dict-subclass")
def dict_subclass():
    return Ordered(b=1, a=2)


@app.get("/none")
def nothing():
    return None


@app.get("/dataclass")
def dataclass():
    return Point(1, 2)


@app.get("/pydantic")
def model():
    return Model(name="m", when=datetime.date(2024, 1, 2))


@app.get("/msgspec")
def struct():
    return Struct(a=1, b=["x"])


@app.get("/mixed")
def mixed():
    return {"points": [Point(0, 1)], "colour": Colour.RED, "day": datetime.date(2024, 5, 6)}


@app.get("/nan")
def nan():
    return {"x": float("nan")}


@app.get("/unserializable")
def unserializable():
    return {"x": object()}


@app.post("/created", status_code=201)
def created():
    return {"ok": True}


@app.get("/response")
def response():
    return Response("custom", status_code=202, headers={"X-Thing": "1"}, media_type="text/csv")


@app.get("/json-response")
def json_response():
    return JSONResponse({"a": 1}, status_code=418, headers={"x-tea": "pot"})


@app.get("/html")
def html():
    return HTMLResponse("<p>hi</p>")


@app.get("/plain")
def plain():
    return PlainTextResponse("plain")


@app.get("/redirect")
def redirect():
    return RedirectResponse("/str")


@app.get("/stream")
def stream(n: int = 3):
    return StreamingResponse((f"chunk {k}\n" for k in range(n)), media_type="text/plain")


@app.get("/astream")
async def astream(n: int = 3):
    import asyncio

    async def chunks():
        for k in range(n):
            await asyncio.sleep(0.001)
            yield f"a{k};".encode()

    return StreamingResponse(chunks())


@app.get("/stream-fails")
def stream_fails():
    def chunks():
        yield b"first"
        raise RuntimeError("broken stream")

    return StreamingResponse(chunks())


client = TestClient(app, raise_server_exceptions=False)


def test_str_is_text():
    res = client.get("/str")
    assert res.status_code == 200
    assert res.headers["content-type"] == "text/plain; charset=utf-8"
    assert res.text == "héllo"


def test_bytes_untouched():
    res = client.get("/bytes")
    assert res.headers["content-type"] == "application/octet-stream"
    assert res.content == b"\x00\x01\xff"


def test_large_str():
    assert client.get("/big").text == "x" * 100_000


def test_dict_and_list_as_compact_json():
    res = client.get("/dict")
    assert res.headers["content-type"] == "application/json"
    assert res.content == b'{"a":[1,2.5,true,null,"s"],"nested":{"k":[1,2]},"3":"int key"}'
    assert client.get("/list").json() == [1, "two", {"three": 3}]
    assert client.get("/none").content == b"null"


def test_json_bodies_of_any_size_in_turn_are_whole_and_exact():
    big = {"items": [{"n": n, "name": f"item {n}"} for n in range(2_000)]}
    small = b'{"a":[1,2.5,true,null,"s"],"nested":{"k":[1,2]},"3":"int key"}'
    for _ in range(2):
        assert client.get("/big-json").json() == big
        assert client.get("/dict").content == small
        # A failed encoding leaves nothing behind for the next one.
        assert client.get("/nan").status_code == 500
        assert client.get("/dict").content == small
    assert client.get("/dict-subclass").content == b'{"b":1,"a":2}'


def test_models():
    assert client.get("/dataclass").json() == {"x": 1, "y": 2}
    assert client.get("/pydantic").json() == {"name": "m", "when": "2024-01-02"}
    assert client.get("/msgspec").json() == {"a": 1, "b": ["x"]}
    assert client.get("/mixed").json() == {
        "points": [{"x": 0, "y": 1}], "colour": "red", "day": "2024-05-06",
    }


def test_values_json_cannot_hold_are_500():
    assert client.get("/nan").status_code == 500
    assert client.get("/unserializable").status_code == 500
    assert client.get("/str").status_code == 200


def test_status_code_on_the_decorator():
    res = client.post("/created")
    assert res.status_code == 201
    assert res.json() == {"ok": True}


def test_response_classes():
    res = client.get("/response")
    assert (res.status_code, res.text) == (202, "custom")
    assert res.headers["content-type"] == "text/csv; charset=utf-8"
    assert res.headers["x-thing"] == "1"
    res = client.get("/json-response")
    assert (res.status_code, res.json(), res.headers["x-tea"]) == (418, {"a": 1}, "pot")
    res = client.get("/html")
    assert res.headers["content-type"] == "text/html; charset=utf-8"
    assert res.text == "<p>hi</p>"
    assert client.get("/plain").headers["content-type"] == "text/plain; charset=utf-8"
    res = client.get("/redirect", follow_redirects=False)
    assert (res.status_code, res.headers["location"]) == (307, "/str")
    # Followed by default, as Starlette's test client follows it.
    assert client.get("/redirect").text == client.get("/str").text


def test_streaming_sync_and_async():
    res = client.get("/stream?n=4")
    assert res.text == "chunk 0\nchunk 1\nchunk 2\nchunk 3\n"
    assert res.headers["content-type"] == "text/plain; charset=utf-8"
    assert client.get("/astream?n=3").text == "a0;a1;a2;"


def test_a_failing_stream_is_cut_short_and_the_app_goes_on():
    try:
        client.get("/stream-fails")
    except ValueError as exc:
        assert "broken stream" in str(exc)
    assert client.get("/str").status_code == 200


def _thread_stream_app(with_middleware: bool) -> App:
    """Routes whose sync streams report the thread each chunk is made on."""
    import threading

    threads = App()
    if with_middleware:
        @threads.middleware("http")
        async def passthrough(request, call_next):
            return await call_next(request)

    def idents():
        for _ in range(2):
            yield f"{threading.get_ident()}\n"

    @threads.get("/worker")
    def worker():
        return str(threading.get_ident())

    @threads.get("/sync-stream")
    def sync_stream():
        return StreamingResponse(idents())

    @threads.get("/blocking-stream", blocking=True)
    def blocking_stream():
        return StreamingResponse(idents())

    return threads


@pytest.mark.parametrize("with_middleware", [False, True])
def test_a_blocking_routes_sync_stream_is_pulled_on_the_pool(with_middleware):
    # A `def` route's chunks are made on the worker; a `blocking=True` route's on the pool,
    # where a chunk may block without holding up the worker.
    with TestClient(_thread_stream_app(with_middleware)) as c:
        worker = c.get("/worker").text
        assert c.get("/sync-stream").text.split() == [worker, worker]
        pulled = c.get("/blocking-stream").text.split()
        assert len(pulled) == 2 and worker not in pulled
