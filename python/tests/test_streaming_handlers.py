"""Handlers that `yield`, as FastAPI streams them: JSON Lines by default (items validated
against the annotation's item type), Server-Sent Events under `EventSourceResponse` (plain
items, `ServerSentEvent` fields, raw data, keep-alive pings while the handler is quiet, for
async and sync generators), and the items as a response class's content otherwise. Each is
checked against FastAPI on the same app, the schema too."""

import asyncio
import time
from collections.abc import AsyncIterable, Iterable
from typing import Optional

import pytest
from pydantic import BaseModel

fastapi = pytest.importorskip("fastapi")

import fastapi.routing  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
import vireo.sse  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Item(BaseModel):
    name: str
    price: Optional[float] = None


ITEMS = [Item(name="plumbus", price=3.5), Item(name="portal gun")]


def build(mod):
    sse = __import__(f"{mod.__name__}.sse", fromlist=["x"])
    responses = __import__(f"{mod.__name__}.responses", fromlist=["x"])
    app = mod.FastAPI()

    @app.get("/jsonl")
    async def jsonl() -> AsyncIterable[Item]:
        for item in ITEMS:
            yield item

    @app.get("/jsonl-sync")
    def jsonl_sync() -> Iterable[Item]:
        yield from ITEMS

    @app.get("/jsonl-plain")
    async def jsonl_plain():
        yield {"n": 1, "word": "é"}
        yield [1, 2]

    @app.get("/jsonl-as-dicts")
    def jsonl_as_dicts() -> Iterable[Item]:
        yield {"name": "from a dict", "price": "2"}

    @app.get("/sse", response_class=sse.EventSourceResponse)
    async def events() -> AsyncIterable[Item]:
        for item in ITEMS:
            yield item

    @app.post("/sse-fields", response_class=sse.EventSourceResponse)
    def event_fields(q: str = "x") -> Iterable[sse.ServerSentEvent]:
        yield sse.ServerSentEvent(comment="starting\nnow")
        yield sse.ServerSentEvent(data={"q": q}, event="query", id="1", retry=5000)
        yield sse.ServerSentEvent(data=ITEMS[0], id="2")
        yield sse.ServerSentEvent(raw_data="[DONE]", event="done")

    @app.get("/raw", response_class=responses.StreamingResponse)
    async def raw():
        yield "a,"
        yield b"b"

    return app


def both():
    return TestClient(build(vireo)), FastAPIClient(build(fastapi))


@pytest.mark.parametrize("method, path", [
    ("GET", "/jsonl"), ("GET", "/jsonl-sync"), ("GET", "/jsonl-plain"),
    ("GET", "/jsonl-as-dicts"), ("GET", "/sse"), ("POST", "/sse-fields?q=é"), ("GET", "/raw"),
])
def test_the_stream_is_fastapis(method, path):
    ours, theirs = both()
    mine, other = ours.request(method, path), theirs.request(method, path)
    assert (mine.status_code, mine.content) == (other.status_code, other.content)
    for field in ("content-type", "cache-control", "x-accel-buffering"):
        assert mine.headers.get(field) == other.headers.get(field), field


def statuses(mod):
    sse = __import__(f"{mod.__name__}.sse", fromlist=["x"])
    app = mod.FastAPI()

    def accepted(response: mod.Response):
        response.status_code = 202
        response.headers["x-accepted"] = "yes"

    @app.post("/jsonl", status_code=201)
    async def jsonl():
        yield {"ok": True, "nan": float("nan"), "inf": [float("inf")]}

    @app.post("/sse-dependency", response_class=sse.EventSourceResponse)
    async def sse_dependency(_: None = mod.Depends(accepted)):
        yield {"ok": True}

    @app.post("/jsonl-dependency", status_code=201)
    def jsonl_dependency(_: None = mod.Depends(accepted)):
        yield {"ok": True}

    return app


@pytest.mark.parametrize("path", ["/jsonl", "/sse-dependency", "/jsonl-dependency"])
def test_a_streams_status_and_a_dependencys_response_fields_are_fastapis(path):
    mine = TestClient(statuses(vireo)).post(path)
    other = FastAPIClient(statuses(fastapi)).post(path)
    assert (mine.status_code, mine.content) == (other.status_code, other.content)
    assert mine.headers.get("x-accepted") == other.headers.get("x-accepted")


def test_the_schema_of_streaming_routes_is_fastapis():
    mine, theirs = build(vireo).openapi(), build(fastapi).openapi()
    assert mine["paths"] == theirs["paths"]
    assert mine["components"] == theirs["components"]


def test_an_item_that_does_not_fit_its_type_ends_the_stream_with_an_error(caplog):
    app = vireo.App()

    @app.get("/bad")
    def bad() -> Iterable[Item]:
        yield ITEMS[0]
        yield {"price": "not a number"}

    with pytest.raises(vireo.ResponseValidationError):
        TestClient(app).get("/bad")


def slow(mod):
    sse = __import__(f"{mod.__name__}.sse", fromlist=["x"])
    app = mod.FastAPI()

    @app.get("/slow-async", response_class=sse.EventSourceResponse)
    async def slow_async():
        yield {"n": 1}
        await asyncio.sleep(0.3)
        yield {"n": 2}

    @app.get("/slow-sync", response_class=sse.EventSourceResponse)
    def slow_sync():
        yield {"n": 1}
        time.sleep(0.3)
        yield {"n": 2}

    return app


@pytest.mark.parametrize("path", ["/slow-async", "/slow-sync"])
def test_a_quiet_handler_gets_keep_alive_pings_as_under_fastapi(monkeypatch, path):
    monkeypatch.setattr(vireo.sse, "PING_INTERVAL", 0.05)
    monkeypatch.setattr(fastapi.routing, "_PING_INTERVAL", 0.05)
    for client in (TestClient(slow(vireo)), FastAPIClient(slow(fastapi))):
        text = client.get(path).text
        assert text.startswith('data: {"n": 1}\n\n'), client
        assert ": ping\n\n" in text
        assert text.endswith('data: {"n": 2}\n\n')


def test_no_ping_when_items_come_quickly():
    assert ": ping" not in TestClient(build(vireo)).get("/sse").text


def test_a_sync_event_stream_leaves_the_worker_free_while_it_waits(serve):
    served = serve("sse_app:app")
    stream = served.connection()
    stream.request("GET", "/waiting")
    events = stream.getresponse()
    assert events.read(len(b'data: {"n": 1}\n\n')) == b'data: {"n": 1}\n\n'
    # The generator blocks on a thread of the loop's pool until this request, which the
    # one worker serves meanwhile, releases it.
    status, _, body = served.get("/release")
    assert (status, body) == (200, b'{"ok":true}')
    assert events.read().endswith(b'data: {"released": true}\n\n')
    stream.close()


@pytest.mark.parametrize("fields, message", [
    ({"data": 1, "raw_data": "1"}, "Cannot set both"),
    ({"event": "two\nlines"}, "SSE 'event' must be a single line"),
    ({"id": "a\rb"}, "SSE 'id' must be a single line"),
    ({"id": "nul\0"}, "SSE 'id' must not contain null characters"),
    ({"retry": -1}, "retry"),
    ({"retry": 1.5}, "retry"),
])
def test_an_event_that_cannot_be_sent_is_refused_as_fastapi_refuses_it(fields, message):
    for sse in (vireo.sse, __import__("fastapi.sse", fromlist=["x"])):
        with pytest.raises(ValueError, match=message if sse is vireo.sse or
                           message != "retry" else None):
            sse.ServerSentEvent(**fields)
