"""A handler or dependency that takes a `Response` sets the answer's status, header fields and
cookies on it, as in FastAPI; a `Response` the handler returns itself is sent as it is."""

from __future__ import annotations

from typing import Annotated

import pytest

from vireo import App, Depends, JSONResponse, Response, WebSocket
from vireo.testclient import TestClient


def tag(response: Response) -> str:
    response.headers["x-tag"] = "from-dependency"
    return "tagged"


app = App()


@app.post("/made", status_code=201)
def made(response: Response, tagged: Annotated[str, Depends(tag)]):
    response.set_cookie("session", "abc", httponly=True)
    response.headers["x-made"] = "1"
    return {"tagged": tagged}


@app.get("/moved")
async def moved(response: Response):
    response.status_code = 202
    return "accepted"


@app.get("/own")
def own(response: Response):
    response.headers["x-lost"] = "1"
    return JSONResponse({"own": True}, status_code=200)


client = TestClient(app)


def test_fields_and_cookies_set_on_it_reach_the_answer():
    res = client.post("/made")
    assert res.status_code == 201, "the route's status, as none was set"
    assert res.json() == {"tagged": "tagged"}
    assert res.headers["x-made"] == "1"
    assert res.headers["x-tag"] == "from-dependency", "the dependency's Response is the same one"
    assert res.headers["set-cookie"].startswith("session=abc;")
    assert "HttpOnly" in res.headers["set-cookie"]


def test_a_status_set_on_it_replaces_the_route_s():
    res = client.get("/moved")
    assert (res.status_code, res.text) == (202, "accepted")


def test_a_response_the_handler_returns_is_sent_as_it_is():
    res = client.get("/own")
    assert res.json() == {"own": True}
    assert "x-lost" not in res.headers


def test_a_websocket_route_cannot_take_one():
    bad = App()

    async def socket(websocket: WebSocket, response: Response):
        await websocket.accept()

    socket.__annotations__ = {"websocket": WebSocket, "response": Response}
    with pytest.raises(TypeError, match="a WebSocket has no response"):
        bad.websocket("/ws")(socket)
        TestClient(bad).websocket_connect("/ws")
