"""WebSocket routes of a Vireo App over a real socket: accept, text and binary echo, JSON,
typed path parameters, refusals, closes and a handler that raises."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import websockets

from vireo import App, BackgroundTasks, Body, Request, UploadFile, WebSocket

APP = Path(__file__).resolve().parent / "apps" / "native_ws.py"


@pytest.fixture
def server():
    proc = subprocess.Popen([sys.executable, str(APP), "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    match = re.search(r"listening on http://[\d.]+:(\d+)", proc.stdout.readline())
    assert match
    yield int(match.group(1)), proc
    proc.terminate()
    assert proc.wait(15) == 0


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 10))


def get(port: int, path: str) -> bytes:
    return urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).read()


def test_echo_with_a_path_parameter_and_the_disconnect_seen(server):
    port, _ = server

    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{port}/echo/lobby") as ws:
            await ws.send("hi")
            assert await ws.recv() == "lobby: hi"
            await ws.send(b"\x00\x01")
            assert await ws.recv() == b"\x00\x01"

    run(talk())
    deadline = time.monotonic() + 5
    while json.loads(get(port, "/seen")) != ["lobby left with 1000"]:
        assert time.monotonic() < deadline, get(port, "/seen")
        time.sleep(0.02)
    assert get(port, "/") == b"Hello, World!", "HTTP routes are served beside"


def test_json_iteration_and_a_typed_parameter_on_a_router(server):
    port, _ = server

    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{port}/calc/sum/10?q=x") as ws:
            for n in (1, 2):
                await ws.send(json.dumps({"add": n}))
            return [json.loads(await ws.recv()) for _ in range(2)]

    assert run(talk()) == [{"total": 11, "q": "x"}, {"total": 13, "q": "x"}]


@pytest.mark.parametrize("path", ["/refuse", "/nowhere", "/calc/sum/not-a-number", "/auth",
                                  "/auth?token=wrong"])
def test_a_handshake_no_route_accepts_is_refused_with_403(server, path):
    port, _ = server

    async def talk():
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(f"ws://127.0.0.1:{port}{path}")
        return refused.value.response.status_code

    assert run(talk()) == 403


def test_a_dependency_reads_the_handshakes_query(server):
    port, _ = server

    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{port}/auth?token=secret") as ws:
            return await ws.recv()

    assert run(talk()) == "hello alice"


def test_header_cookie_and_a_yield_dependency_over_the_socket(server):
    port, _ = server

    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{port}/whoami",
                                      user_agent_header="ws-test",
                                      additional_headers={"Cookie": "sid=abc"}) as ws:
            return json.loads(await ws.recv())

    assert run(talk()) == {"agent": "ws-test", "sid": "abc"}
    deadline = time.monotonic() + 5
    while "whoami torn down" not in json.loads(get(port, "/seen")):
        assert time.monotonic() < deadline, "the dependency's teardown never ran"
        time.sleep(0.02)


def test_an_http_exception_before_accept_is_the_handshakes_answer(server):
    port, _ = server

    async def talk(headers):
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}/private",
                                          additional_headers=headers) as ws:
                return await ws.recv()
        except websockets.InvalidStatus as refused:
            response = refused.response
            return response.status_code, response.headers["WWW-Authenticate"], response.body

    assert run(talk({})) == (401, "Bearer", b'{"detail":"not authorized"}')
    assert run(talk({"Authorization": "Bearer ok"})) == "welcome"


def test_a_websocket_exception_after_accept_closes_with_its_code(server):
    assert close_frame(server[0], "/late-close") == (4002, "later")


def close_frame(port: int, path: str) -> tuple[int, str]:
    """Connect to `path` and wait for the server's close: its code and reason."""
    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{port}{path}") as ws:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            return closed.value.rcvd.code, closed.value.rcvd.reason

    return run(talk())


def test_close_code_and_reason_reach_the_client(server):
    assert close_frame(server[0], "/close") == (4001, "bye")


def test_a_handler_that_raises_closes_with_1011_and_is_logged(server):
    port, proc = server
    assert close_frame(port, "/boom")[0] == 1011
    proc.terminate()
    assert proc.wait(15) == 0
    assert "boom in a websocket handler" in proc.stderr.read()


def test_vireo_serve_sets_the_limits_of_an_apps_websockets(serve):
    served = serve("native_ws:app", "--ws-max-size", "10")

    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{served.port}/echo/a") as ws:
            await ws.send("short")
            assert await ws.recv() == "a: short"
            await ws.send("x" * 11)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            return closed.value.rcvd.code

    assert run(talk()) == 1009
    assert served.stop() == 0


def test_vireo_serve_ws_none_serves_an_upgrade_as_plain_http(serve):
    served = serve("native_ws:app", "--ws", "none")
    status, _, _ = served.get("/echo/a", headers={
        "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    assert status == 404
    assert served.stop() == 0


def test_a_websocket_handler_must_be_async():
    def sync_handler(websocket):
        pass

    async def handler(websocket):
        pass

    app = App()
    with pytest.raises(TypeError, match="must be an async function"):
        app.websocket("/ws")(sync_handler)
    with pytest.raises(ValueError, match="starts with '/'"):
        app.add_websocket_route("ws", handler)


def test_a_parameter_the_handshake_cannot_fill_is_refused_at_registration():
    async def body_handler(websocket: WebSocket, item: dict):
        pass

    async def marker_handler(websocket: WebSocket, item: str = Body()):
        pass

    async def request_handler(websocket: WebSocket, request: Request):
        pass

    async def tasks_handler(websocket: WebSocket, tasks: BackgroundTasks):
        pass

    async def upload_handler(websocket: WebSocket, file: UploadFile):
        pass

    app = App()
    for handler, message in ((body_handler, "no body"), (marker_handler, "no body"),
                             (request_handler, "takes Request, which a WebSocket route has not"),
                             (tasks_handler, "takes BackgroundTasks, which"),
                             (upload_handler, "no form")):
        with pytest.raises(TypeError, match=message):
            app.websocket("/ws/{room}")(handler)

    async def fine(websocket, room: str, limit: int = 10, token: str | None = None):
        pass

    app.websocket("/ws/{room}")(fine)
