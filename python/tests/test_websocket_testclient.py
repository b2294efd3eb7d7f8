"""The test client's `websocket_connect`, against an app's WebSocket routes in-process."""

from __future__ import annotations

import asyncio

import pytest

from vireo import App, WebSocket, WebSocketDisconnect
from vireo.testclient import TestClient


def make_app() -> App:
    app = App()
    app.state.log = []

    @app.websocket("/echo/{room}")
    async def echo(websocket: WebSocket, room: str):
        await websocket.accept(subprotocol="chat")
        try:
            async for text in websocket.iter_text():
                await websocket.send_text(f"{room}: {text}")
        finally:
            app.state.log.append(f"{room} closed")

    @app.websocket("/json")
    async def json_sum(websocket: WebSocket):
        await websocket.accept()
        total = 0
        async for item in websocket.iter_json():
            total += item["n"]
            await asyncio.sleep(0)  # suspends on the app's loop, as a real handler would
            await websocket.send_json({"total": total})

    @app.websocket("/params/{n}")
    async def params(ws: WebSocket, n: int):
        await ws.accept()
        await ws.send_json(ws.path_params)

    @app.websocket("/bye")
    async def bye(websocket: WebSocket):
        await websocket.accept()
        await websocket.close(4000, "enough")

    @app.websocket("/refuse")
    async def refuse(websocket: WebSocket):
        await websocket.close()

    @app.websocket("/boom")
    async def boom(websocket: WebSocket):
        await websocket.accept()
        raise RuntimeError("boom in a test")

    @app.get("/log")
    def log():
        return app.state.log

    return app


def test_echo_and_the_handlers_finally_on_close():
    app = make_app()
    with TestClient(app) as client:
        with client.websocket_connect("/echo/lobby") as ws:
            assert ws.accepted_subprotocol == "chat"
            ws.send_text("hi")
            assert ws.receive_text() == "lobby: hi"
        assert client.get("/log").json() == ["lobby closed"]


def test_path_params_are_the_converted_path_values_only():
    with TestClient(make_app()) as client, client.websocket_connect("/params/5") as ws:
        assert ws.receive_json() == {"n": 5}


def test_json_through_a_handler_that_suspends():
    with TestClient(make_app()) as client, client.websocket_connect("/json") as ws:
        for n in (1, 2, 3):
            ws.send_json({"n": n})
        assert [ws.receive_json() for _ in range(3)] == [{"total": 1}, {"total": 3}, {"total": 6}]


def test_a_close_from_the_app_and_a_refusal_raise_websocket_disconnect():
    with TestClient(make_app()) as client:
        with client.websocket_connect("/bye") as ws:
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert (closed.value.code, closed.value.reason) == (4000, "enough")
        for path in ("/refuse", "/nowhere"):
            with pytest.raises(WebSocketDisconnect):
                client.websocket_connect(path)


def test_an_exception_in_the_handler_reaches_the_test():
    with TestClient(make_app()) as client:
        with pytest.raises(RuntimeError, match="boom in a test"):
            with client.websocket_connect("/boom") as ws:
                ws.receive_text()
