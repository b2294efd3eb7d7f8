"""A Vireo `App` as an ASGI application: through httpx's ASGITransport, driven message by
message, mounted in a Starlette app, and served by uvicorn."""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, WebSocketRoute
from starlette.testclient import TestClient as StarletteClient

from vireo import App, HTTPException, Request, StreamingResponse, WebSocket
from conftest import stop

APPS = Path(__file__).resolve().parent / "apps"


def make_app() -> App:
    app = App()

    @app.get("/")
    def hello() -> str:
        return "Hello, World!"

    @app.get("/users/{user_id}")
    def user(user_id: int, q: str | None = None) -> dict:
        return {"id": user_id, "q": q}

    @app.post("/echo")
    async def echo(request: Request) -> dict:
        body = await request.body()
        return {"length": len(body), "type": request.headers.get("content-type")}

    @app.get("/where")
    def where(request: Request) -> dict:
        return {"url": str(request.url), "client": request.client.host if request.client else None,
                "route": request.url_for("where").path}

    @app.get("/teapot")
    def teapot() -> None:
        raise HTTPException(418, "short and stout")

    @app.delete("/gone", status_code=204)
    def gone() -> None:
        return None

    @app.get("/lines")
    def lines() -> StreamingResponse:
        return StreamingResponse((f"{i}\n" for i in range(4)), media_type="text/plain")

    return app


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))


async def get_all(app: Any, *requests: tuple[str, str, dict]) -> list[httpx.Response]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        return [await client.request(method, url, **kwargs) for method, url, kwargs in requests]


def test_routes_validation_and_errors_through_asgi_transport() -> None:
    hello, user, bad, teapot, missing = run(get_all(
        make_app(), ("GET", "/", {}), ("GET", "/users/7?q=x", {}), ("GET", "/users/x", {}),
        ("GET", "/teapot", {}), ("GET", "/nope", {})))
    assert (hello.status_code, hello.text) == (200, "Hello, World!")
    assert hello.headers["content-length"] == "13"
    assert user.json() == {"id": 7, "q": "x"}
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["path", "user_id"]
    assert (teapot.status_code, teapot.json()) == (418, {"detail": "short and stout"})
    assert missing.status_code == 404


def test_a_204_says_no_length() -> None:
    start, body = run(drive(make_app(), http_scope("/gone", method="DELETE"),
                            [{"type": "http.request"}]))
    assert start["status"] == 204
    assert b"content-length" not in dict(start["headers"])
    assert (body["body"], body["more_body"]) == (b"", False)


def test_a_head_request_gets_the_length_and_no_body() -> None:
    start, body = run(drive(make_app(), http_scope("/", method="HEAD"),
                            [{"type": "http.request"}]))
    assert (start["status"], dict(start["headers"])[b"content-length"]) == (200, b"13")
    assert body["body"] == b""


def test_request_body_and_headers_reach_the_handler() -> None:
    (echo,) = run(get_all(make_app(), ("POST", "/echo", {"json": {"a": "b" * 100}})))
    assert echo.json() == {"length": len('{"a":"' + "b" * 100 + '"}'), "type": "application/json"}


def test_request_url_and_client_come_from_the_scope() -> None:
    (where,) = run(get_all(make_app(), ("GET", "/where", {})))
    assert where.json() == {"url": "http://test/where", "client": "127.0.0.1",
                            "route": "/where"}


def test_a_body_over_the_limit_is_refused_with_413() -> None:
    small = make_app().asgi(max_body_size=10)
    over, within = run(get_all(small, ("POST", "/echo", {"content": b"x" * 11}),
                               ("POST", "/echo", {"content": b"x" * 10})))
    assert over.status_code == 413
    assert within.json()["length"] == 10


def test_a_limit_that_is_not_a_byte_count_is_refused() -> None:
    with pytest.raises(ValueError, match="max_body_size"):
        make_app().asgi(max_body_size=-1)


def test_an_unknown_scope_type_is_a_clear_error() -> None:
    async def call() -> None:
        await make_app()({"type": "email"}, None, None)

    with pytest.raises(ValueError, match="not 'email'"):
        run(call())


def test_a_head_the_engine_refuses_gets_400() -> None:
    scope = http_scope("/", headers=[(b"bad name", b"x")])
    messages = run(drive(make_app(), scope, [{"type": "http.request", "body": b""}]))
    assert messages[0]["status"] == 400


def test_handlers_run_concurrently_on_the_apps_loop() -> None:
    """One request waits for an event only a second request sets: answered one after the
    other, the first would never finish."""
    app = App()
    ready = {}

    @app.get("/wait")
    async def wait() -> str:
        ready.setdefault("event", asyncio.Event())
        await ready["event"].wait()
        return "released"

    @app.get("/release")
    async def release() -> str:
        ready.setdefault("event", asyncio.Event()).set()
        return "done"

    async def both() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://test") as client:
            waiting = asyncio.ensure_future(client.get("/wait"))
            await asyncio.sleep(0.05)
            return [await client.get("/release"), await waiting]

    released, waited = run(both())
    assert (released.text, waited.text) == ("done", "released")


def http_scope(path: str, headers: list | None = None, method: str = "GET",
               **extra: Any) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "client": ("10.0.0.1", 5000),
            "server": ("example.org", 80),
            "headers": headers if headers is not None else [(b"host", b"example.org")],
            **extra}


async def drive(app: Any, scope: dict, incoming: list[dict]) -> list[dict]:
    """Call the app with `incoming` as its messages (then waiting forever); what it sent."""
    queue: asyncio.Queue[dict] = asyncio.Queue()
    for message in incoming:
        queue.put_nowait(message)
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, queue.get, send)
    return sent


def test_a_streamed_body_arrives_in_chunks_then_ends() -> None:
    messages = run(drive(make_app(), http_scope("/lines"), [{"type": "http.request"}]))
    start, *bodies = messages
    assert start["status"] == 200
    assert b"content-length" not in dict(start["headers"])
    assert b"".join(m["body"] for m in bodies) == b"0\n1\n2\n3\n"
    assert [m["more_body"] for m in bodies][-1] is False
    assert len([m for m in bodies if m["body"]]) == 4


def test_a_stream_is_held_back_by_a_slow_client_and_stopped_when_it_leaves() -> None:
    """The handler's generator runs at most a few chunks ahead of what the server has sent,
    and is closed once the client disconnects."""
    app = App()
    produced = []
    closed = threading.Event()

    @app.get("/forever")
    def forever() -> StreamingResponse:
        def chunks():
            try:
                while True:
                    produced.append(1)
                    yield b"x" * 100
            finally:
                closed.set()
        return StreamingResponse(chunks())

    async def scenario() -> tuple[int, int]:
        queue: asyncio.Queue[dict] = asyncio.Queue()
        queue.put_nowait({"type": "http.request"})
        sent = []
        gate = asyncio.Event()

        async def send(message: dict) -> None:
            sent.append(message)
            if len(sent) == 4:  # the start and three chunks, then the client stalls
                await gate.wait()

        call = asyncio.ensure_future(app(http_scope("/forever"), queue.get, send))
        while len(sent) < 4:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        ahead = len(produced) - (len(sent) - 1)
        queue.put_nowait({"type": "http.disconnect"})
        gate.set()
        await call
        return ahead, len(sent)

    ahead, _ = run(scenario())
    assert 0 <= ahead <= 4
    assert closed.wait(5)


def test_a_stream_that_fails_after_starting_raises_so_the_server_closes() -> None:
    app = App()

    @app.get("/broken")
    def broken() -> StreamingResponse:
        def chunks():
            yield b"first"
            raise OSError("disk gone")
        return StreamingResponse(chunks())

    sent: list[dict] = []

    async def call() -> None:
        queue: asyncio.Queue[dict] = asyncio.Queue()
        queue.put_nowait({"type": "http.request"})

        async def send(message: dict) -> None:
            sent.append(message)

        await app(http_scope("/broken"), queue.get, send)

    with pytest.raises(RuntimeError, match="response body failed"):
        run(call())
    assert sent[0]["status"] == 200
    assert sent[1]["body"] == b"first"


def test_lifespan_runs_the_hooks_on_the_apps_loop() -> None:
    app = App()
    seen: dict[str, Any] = {}

    @app.on_event("startup")
    async def up() -> None:
        seen["up"] = asyncio.get_running_loop()

    @app.on_event("shutdown")
    async def down() -> None:
        seen["down"] = asyncio.get_running_loop()

    @app.get("/loop")
    async def loop() -> bool:
        return asyncio.get_running_loop() is seen["up"]

    async def scenario() -> tuple[list[dict], list[dict]]:
        life: asyncio.Queue[dict] = asyncio.Queue()
        said: list[dict] = []

        async def send(message: dict) -> None:
            said.append(message)

        lifespan = asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"},
                                              "state": {}}, life.get, send))
        life.put_nowait({"type": "lifespan.startup"})
        while not said:
            await asyncio.sleep(0.01)
        answer = await drive(app, http_scope("/loop"), [{"type": "http.request"}])
        life.put_nowait({"type": "lifespan.shutdown"})
        await lifespan
        return said, answer

    said, answer = run(scenario())
    assert [m["type"] for m in said] == ["lifespan.startup.complete",
                                         "lifespan.shutdown.complete"]
    assert answer[1]["body"] == b"true"
    assert seen["down"] is seen["up"]
    assert seen["up"] is not None


def test_a_failing_startup_is_reported_to_the_server() -> None:
    app = App()

    @app.on_event("startup")
    def up() -> None:
        raise RuntimeError("no database")

    async def scenario() -> list[dict]:
        life: asyncio.Queue[dict] = asyncio.Queue()
        life.put_nowait({"type": "lifespan.startup"})
        said: list[dict] = []

        async def send(message: dict) -> None:
            said.append(message)

        await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, life.get, send)
        return said

    (failed,) = run(scenario())
    assert failed["type"] == "lifespan.startup.failed"
    assert "no database" in failed["message"]


def test_a_websocket_session_through_asgi() -> None:
    app = App()

    @app.websocket("/ws")
    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        text = await websocket.receive_text()
        await websocket.send_text(f"echo {text}")
        await websocket.close()

    messages = run(drive(app, ws_scope("/ws"), [{"type": "websocket.connect"},
                                                {"type": "websocket.receive", "text": "hi"}]))
    assert [m["type"] for m in messages] == ["websocket.accept", "websocket.send",
                                             "websocket.close"]
    assert messages[1]["text"] == "echo hi"


def ws_scope(path: str, root_path: str = "") -> dict:
    return {"type": "websocket", "asgi": {"version": "3.0"}, "scheme": "ws", "path": path,
            "raw_path": path.encode(), "query_string": b"", "root_path": root_path,
            "headers": [], "client": ("127.0.0.1", 1), "server": ("test", 80),
            "subprotocols": []}


async def where_am_i(websocket: Any) -> None:
    """A Starlette WebSocket endpoint that says the root path and path it was given."""
    await websocket.accept()
    text = await websocket.receive_text()
    await websocket.send_text(f"{websocket.scope['root_path']} {websocket.scope['path']} {text}")
    await websocket.close()


def test_a_handshake_no_route_of_the_app_takes_goes_to_its_mount() -> None:
    app = App(root_path="/api")

    @app.websocket("/sub/own")
    async def own(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text("own")
        await websocket.close()

    app.mount("/sub", Starlette(routes=[WebSocketRoute("/echo", where_am_i)]))
    inner = App()

    @inner.websocket("/echo")
    async def inner_echo(websocket: WebSocket) -> None:
        await websocket.accept()
        text = await websocket.receive_text()
        await websocket.send_text(f"{websocket.scope['root_path']} {websocket.url.path} {text}")
        await websocket.close()

    app.mount("/v2", inner)
    say_hi = [{"type": "websocket.connect"}, {"type": "websocket.receive", "text": "hi"}]
    # A mounted Vireo app takes the prefix as its root path and routes the rest.
    messages = run(drive(app, ws_scope("/api/v2/echo", "/api"), say_hi))
    assert [m.get("text") for m in messages if m["type"] == "websocket.send"] == [
        "/api/v2 /api/v2/echo hi"]
    # With and without the root path, as HTTP requests are routed.
    for path in ("/api/sub/echo", "/sub/echo"):
        messages = run(drive(app, ws_scope(path, "/api"), say_hi))
        assert [m.get("text") for m in messages if m["type"] == "websocket.send"] == [
            "/api/sub /api/sub/echo hi"], path
    # The app's own route comes first, though it is under the mount's prefix.
    messages = run(drive(app, ws_scope("/api/sub/own", "/api"), say_hi))
    assert [m.get("text") for m in messages if m["type"] == "websocket.send"] == ["own"]
    # Neither a route nor a mount: refused, as when the app serves itself.
    messages = run(drive(app, ws_scope("/api/elsewhere", "/api"), say_hi))
    assert [m["type"] for m in messages] == ["websocket.close"]


def test_mounted_in_starlette_it_routes_below_the_prefix() -> None:
    outer = Starlette(routes=[Mount("/v1", app=make_app())])
    with StarletteClient(outer) as client:
        where = client.get("/v1/where")
        user = client.get("/v1/users/3")
        schema = client.get("/v1/openapi.json")
    assert where.json()["url"] == "http://testserver/v1/where"
    assert where.json()["route"] == "/v1/where"
    assert user.json() == {"id": 3, "q": None}
    assert schema.json()["servers"] == [{"url": "/v1"}]


def test_served_by_uvicorn_with_its_lifespan() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "vireo_as_asgi:app", "--app-dir", str(APPS),
         "--host", "127.0.0.1", "--port", "0", "--lifespan", "on"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        port = None
        deadline = time.monotonic() + 30
        assert proc.stdout is not None
        while port is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "uvicorn ended before listening"
            match = re.search(r"running on http://127.0.0.1:(\d+)", line)
            port = int(match.group(1)) if match else None
        assert port is not None
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/")
        hello = conn.getresponse()
        assert (hello.status, hello.read()) == (200, b"Hello, World!")
        conn.request("GET", "/started")
        started = conn.getresponse()
        assert started.status == 200
        body = started.read()
        assert b'"started":true' in body and b'"same_loop":true' in body
        conn.close()
    finally:
        # uvicorn shuts down on SIGTERM, then raises the signal again as its exit status.
        assert stop(proc, 30) in (0, -signal.SIGTERM)
    output = proc.stdout.read()
    assert "Application shutdown complete" in output
