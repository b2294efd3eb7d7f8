"""The test client's `websocket_connect`, against an app's WebSocket routes in-process."""

from __future__ import annotations

import asyncio
import enum

import pytest

from vireo import (APIRouter, App, Cookie, Depends, Header, HTTPConnection, HTTPException,
                   Query, Request, WebSocket, WebSocketDisconnect, WebSocketException)
from vireo.testclient import TestClient, WebSocketDenialResponse


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


def token(token: str = Query(), scale: int = 1) -> str:
    if token == "revoked":
        raise WebSocketException(4003, "revoked")
    return token * scale


def params_app(events: list[str]) -> App:
    """WebSocket routes whose handlers and dependencies read the handshake."""
    app = App(dependencies=[Depends(lambda: events.append("app dependency"))])

    async def session(websocket: WebSocket, sid: str | None = Cookie(None)):
        events.append("session opened")
        yield sid or "anonymous"
        events.append("session closed")

    @app.websocket("/rooms/{room}")
    async def room(websocket: WebSocket, room: str, limit: int = 10,
                   user_agent: str = Header("none"), who: str = Depends(session),
                   secret: str = Depends(token)):
        await websocket.accept()
        await websocket.send_json({"room": room, "limit": limit, "agent": user_agent,
                                   "who": who, "secret": secret})
        events.append("handler done")

    @app.websocket("/late")
    async def late(websocket: WebSocket):
        await websocket.accept()
        raise WebSocketException(4001, "changed my mind")

    router = APIRouter(dependencies=[Depends(lambda: events.append("router dependency"))])

    @router.websocket("/plain")
    async def plain(websocket: WebSocket):
        await websocket.accept()
        await websocket.close()

    app.include_router(router, prefix="/r")
    return app


def test_path_query_header_cookie_and_dependencies_come_from_the_handshake():
    events: list[str] = []
    with TestClient(params_app(events)) as client:
        url = "/rooms/lobby?limit=3&token=ab&scale=2"
        headers = {"User-Agent": "pytest", "Cookie": "sid=s1"}
        with client.websocket_connect(url, headers=headers) as ws:
            assert ws.receive_json() == {"room": "lobby", "limit": 3, "agent": "pytest",
                                         "who": "s1", "secret": "abab"}
    assert events == ["app dependency", "session opened", "handler done", "session closed"]


def test_parameters_that_do_not_validate_refuse_the_handshake_with_1008():
    events: list[str] = []
    with TestClient(params_app(events)) as client:
        with pytest.raises(WebSocketDisconnect) as refused:
            client.websocket_connect("/rooms/lobby?limit=many")
        assert refused.value.code == 1008
        assert refused.value.reason == ("query limit: Input should be a valid integer, unable "
                                        "to parse string as an integer; query token: Field "
                                        "required")
    assert events == [], "nothing runs for a handshake that does not validate"


def test_a_websocket_exception_refuses_before_accept_and_closes_after():
    events: list[str] = []
    with TestClient(params_app(events)) as client:
        with pytest.raises(WebSocketDisconnect) as refused:
            client.websocket_connect("/rooms/lobby?token=revoked")
        assert (refused.value.code, refused.value.reason) == (4003, "revoked")
        assert events == ["app dependency", "session opened"], "the exception ended `session`"
        with client.websocket_connect("/late") as ws, pytest.raises(WebSocketDisconnect) as c:
            ws.receive_text()
        assert (c.value.code, c.value.reason) == (4001, "changed my mind")


def test_router_dependencies_and_overrides_apply_to_websocket_routes():
    events: list[str] = []
    app = params_app(events)
    with TestClient(app) as client:
        with client.websocket_connect("/r/plain") as ws, pytest.raises(WebSocketDisconnect):
            ws.receive_text()
    assert events == ["app dependency", "router dependency"]

    app.dependency_overrides[token] = lambda: "overridden"
    with TestClient(app) as client, client.websocket_connect("/rooms/a") as ws:
        assert ws.receive_json()["secret"] == "overridden", "no token needed once overridden"


def test_an_http_exception_before_accept_is_a_denial_response():
    app = App()

    def authorized(token: str | None = None) -> None:
        if token != "ok":
            raise HTTPException(401, "no token", headers={"WWW-Authenticate": "Bearer"})

    @app.websocket("/private", dependencies=[Depends(authorized)])
    async def private(websocket: WebSocket):
        await websocket.accept()
        await websocket.send_text("in")

    with TestClient(app) as client:
        with pytest.raises(WebSocketDenialResponse) as denied:
            client.websocket_connect("/private")
        assert denied.value.status_code == 401
        assert denied.value.json() == {"detail": "no token"}
        assert denied.value.headers["www-authenticate"] == "Bearer"
        with client.websocket_connect("/private?token=ok") as ws:
            assert ws.receive_text() == "in"


def test_an_http_connection_dependency_serves_both_kinds_of_route():
    seen: list[tuple[str, str]] = []

    def audit(connection: HTTPConnection) -> None:
        seen.append((type(connection).__name__, connection.headers["X-Trace"]))

    app = App(dependencies=[Depends(audit)])

    @app.get("/plain")
    def plain():
        return "ok"

    @app.websocket("/ws")
    async def ws(websocket: WebSocket):
        await websocket.accept()
        await websocket.close()

    with TestClient(app) as client:
        assert client.get("/plain", headers={"X-Trace": "a"}).text == "ok"
        with client.websocket_connect("/ws", headers={"X-Trace": "b"}) as session:
            with pytest.raises(WebSocketDisconnect):
                session.receive_text()
    assert seen == [("Request", "a"), ("WebSocket", "b")]


def test_a_request_dependency_shared_with_a_websocket_route_is_refused_by_name():
    def needs_request(request: Request) -> None:
        pass

    app = App(dependencies=[Depends(needs_request)])

    @app.websocket("/ws")
    async def ws(websocket: WebSocket):
        pass

    with pytest.raises(TypeError, match=r"WebSocket route /ws: .*HTTPConnection"):
        with TestClient(app):
            pass


def test_rest_of_path_templates_and_a_routers_prefix_parameters():
    app = App()
    router = APIRouter(prefix="/rooms/{room}")

    @router.websocket("/files/{name:path}")
    async def files(websocket: WebSocket, room: str, name: str):
        await websocket.accept()
        await websocket.send_json([room, name, websocket.path_params])

    @app.websocket("/any/{*rest}")
    async def anything(websocket: WebSocket, rest: str):
        await websocket.accept()
        await websocket.send_text(rest)

    app.include_router(router)
    with TestClient(app) as client:
        with client.websocket_connect("/rooms/r1/files/a/b.txt") as ws:
            assert ws.receive_json() == ["r1", "a/b.txt", {"room": "r1", "name": "a/b.txt"}]
        with client.websocket_connect("/any/x/y") as ws:
            assert ws.receive_text() == "x/y"


def test_handshake_headers_ignore_case_and_cookies_are_parsed():
    app = App()

    @app.websocket("/ws")
    async def ws(websocket: WebSocket):
        await websocket.accept()
        await websocket.send_json({"agent": websocket.headers["User-Agent"],
                                   "all": websocket.headers.getlist("x-many"),
                                   "cookies": websocket.cookies})

    headers = {"User-Agent": "t", "X-Many": "1", "Cookie": 'a=1; b="two"'}
    with TestClient(app) as client, client.websocket_connect("/ws", headers=headers) as ws:
        assert ws.receive_json() == {"agent": "t", "all": ["1"],
                                     "cookies": {"a": "1", "b": "two"}}


def test_the_socket_is_the_annotated_parameter_wherever_it_is():
    app = App()

    @app.websocket("/late/{room}")
    async def late(room: str, limit: int = 2, websocket: WebSocket = None):  # type: ignore
        await websocket.accept()
        await websocket.send_json([room, limit])

    @app.websocket("/optional/{room}")
    async def optional(room: str, websocket: WebSocket | None = None):
        await websocket.accept()
        await websocket.send_text(room)

    async def no_socket(room: str):
        pass

    with pytest.raises(TypeError, match="takes no socket"):
        app.websocket("/none/{room}")(no_socket)
    with TestClient(app) as client, client.websocket_connect("/late/r") as ws:
        assert ws.receive_json() == ["r", 2]
    with TestClient(app) as client, client.websocket_connect("/optional/o") as ws:
        assert ws.receive_text() == "o"


class Color(str, enum.Enum):
    red = "red"
    blue = "blue"


def test_a_typed_handshake_value_is_made_its_type_or_refuses_with_1008():
    app = App()

    @app.websocket("/paint/{color}")
    async def paint(websocket: WebSocket, color: Color):
        await websocket.accept()
        await websocket.send_text(f"{type(color).__name__} {color.value}")

    with TestClient(app) as client:
        with client.websocket_connect("/paint/red") as ws:
            assert ws.receive_text() == "Color red"
        with pytest.raises(WebSocketDisconnect) as refused:
            client.websocket_connect("/paint/green")
        assert refused.value.code == 1008
        assert refused.value.reason == "path color: Input should be 'red' or 'blue'"


def connection_facts(mod):
    """An app whose WebSocket route reports what Starlette's `WebSocket` exposes of the
    handshake: `url`, `base_url`, `query_params`, `client`."""
    app = mod.FastAPI() if mod is not None else App()
    socket_class = WebSocket if mod is None else mod.WebSocket

    async def facts(websocket):
        await websocket.accept()
        url, base = websocket.url, websocket.base_url
        params = websocket.query_params
        await websocket.send_json({
            "url": str(url), "parts": [url.scheme, url.netloc, url.path, url.query],
            "base": [str(base), base.path], "last": params["x"], "all": params.getlist("x"),
            "names": list(params), "blank": params.get("e"),
            "client": [websocket.client.host, websocket.client.port],
        })
        await websocket.close()

    # The annotation as an object: this module's annotations are strings.
    facts.__annotations__ = {"websocket": socket_class}
    app.websocket("/facts")(facts)
    return app


def test_url_query_params_and_client_are_starlettes_types():
    fastapi = pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient as FastAPIClient

    path = "/facts?x=1&y=%C3%A9&x=2&e="
    with TestClient(connection_facts(None)) as ours:
        with ours.websocket_connect(path) as socket:
            mine = socket.receive_json()
    with FastAPIClient(connection_facts(fastapi)).websocket_connect(path) as socket:
        theirs = socket.receive_json()
    assert mine == theirs
    assert mine["url"] == "ws://testserver/facts?x=1&y=%C3%A9&x=2&e="
    assert (mine["all"], mine["names"], mine["blank"]) == (["1", "2"], ["x", "y", "e"], "")


def test_under_a_root_path_the_url_has_it_and_either_path_is_routed():
    app = App(root_path="/api")

    @app.websocket("/ws")
    async def where(websocket: WebSocket):
        await websocket.accept()
        await websocket.send_text(f"{websocket.url} {websocket.base_url}")
        await websocket.close()

    with TestClient(app) as client:
        for path in ("/ws", "/api/ws"):
            with client.websocket_connect(path) as socket:
                assert socket.receive_text() == "ws://testserver/api/ws ws://testserver/api/", path
