"""`App.mount(path, vireo.App())`, as FastAPI mounts a sub-application: the same app under
FastAPI and Vireo (a sub-app with its own middleware, exception handler and docs, under the
app's middleware and lifespan), the same requests, the same answers; and over a real socket,
the sub-app's routes, bodies and WebSocket routes."""

import json
from contextlib import asynccontextmanager

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod):
    sub = mod.FastAPI(title="Sub")

    @sub.middleware("http")
    async def tag(request, call_next):
        response = await call_next(request)
        response.headers["x-sub"] = request.url.path
        return response

    @sub.exception_handler(ValueError)
    async def refused(request, exc):
        return mod.responses.JSONResponse({"refused": str(exc)}, status_code=418)

    @sub.get("/items/{item_id}")
    def item(item_id: int, request: mod.Request):
        return {"id": item_id, "path": request.url.path, "root_path": request.scope["root_path"],
                "scope_path": request.scope["path"], "base": str(request.base_url),
                "self": str(request.url_for("v1:item", item_id=1)),
                "db": getattr(request.state, "db", None), "sub": request.app.title}

    @sub.post("/echo", status_code=201)
    async def echo(payload: dict):
        return payload

    @sub.get("/fail")
    def fail():
        raise ValueError("no")

    @asynccontextmanager
    async def lifespan(app):
        yield {"db": "up"}

    app = mod.FastAPI(lifespan=lifespan)

    @app.middleware("http")
    async def outer(request, call_next):
        response = await call_next(request)
        response.headers["x-outer"] = request.url.path
        return response

    @app.get("/v1/own")
    def own():
        return {"own": True}

    @app.get("/link")
    def link(request: mod.Request):
        return {"to": str(request.url_for("v1:item", item_id=3)),
                "path": app.url_path_for("v1:item", item_id=4)}

    app.mount("/v1", sub, name="v1")
    return app


REQUESTS = [
    ("GET", "/v1/items/5", None),
    ("GET", "/v1/items/x", None),
    ("GET", "/v1/items/5?extra=1", None),
    ("GET", "/v1/missing", None),
    ("GET", "/v1/fail", None),
    ("POST", "/v1/echo", b'{"a": [1, 2]}'),
    ("POST", "/v1/echo", b"not json"),
    ("GET", "/v1/own", None),
    ("GET", "/link", None),
    ("GET", "/v2/items/5", None),
]


@pytest.fixture(scope="module")
def clients():
    with TestClient(build(vireo)) as ours, FastAPIClient(build(fastapi)) as theirs:
        yield ours, theirs


def answer(res):
    fields = {name: res.headers.get(name) for name in ("x-sub", "x-outer", "content-type")}
    return res.status_code, fields, res.json()


@pytest.mark.parametrize("method,path,body", REQUESTS)
def test_the_same_answer_as_fastapi(clients, method, path, body):
    ours, theirs = clients
    headers = {"content-type": "application/json"}
    assert answer(ours.request(method, path, content=body, headers=headers)) == answer(
        theirs.request(method, path, content=body, headers=headers))


def test_the_sub_app_has_its_own_schema_and_docs_under_the_prefix(clients):
    ours, theirs = clients
    schemas = [client.get("/v1/openapi.json").json() for client in clients]
    for schema in schemas:
        assert schema["info"]["title"] == "Sub"
        assert schema["servers"] == [{"url": "/v1"}]
    assert sorted(schemas[0]["paths"]) == sorted(schemas[1]["paths"]) == [
        "/echo", "/fail", "/items/{item_id}"]
    assert sorted(ours.get("/openapi.json").json()["paths"]) == ["/link", "/v1/own"]
    docs = ours.get("/v1/docs")
    assert docs.status_code == 200 and '"/v1/openapi.json"' in docs.text


def test_an_app_mounted_in_a_mounted_app_routes_the_rest_of_the_path():
    inner = vireo.App()

    @inner.get("/leaf")
    def leaf(request: vireo.Request):
        return {"url": str(request.url), "root_path": request.scope["root_path"]}

    middle, outer = vireo.App(), vireo.App()
    middle.mount("/b", inner)
    outer.mount("/a", middle)
    with TestClient(outer) as client:
        res = client.get("/a/b/leaf")
        assert res.json() == {"url": "http://testserver/a/b/leaf", "root_path": "/a/b"}
        assert client.get("/a/b/other").status_code == 404


def test_an_app_cannot_be_mounted_in_itself():
    app = vireo.App()
    with pytest.raises(ValueError, match="in itself"):
        app.mount("/again", app)
    with pytest.raises(TypeError, match="Vireo App or an ASGI application"):
        app.mount("/x", 42)


def test_over_a_socket_the_sub_app_answers_with_and_without_middleware(serve):
    for spec in ("mount_vireo_app:app", "mount_vireo_app:wrapped"):
        served = serve(spec)
        status, fields, body = served.get("/api/items/7?q=a")
        assert status == 200, body
        assert json.loads(body) == {"id": 7, "q": "a", "url": f"http://127.0.0.1:{served.port}"
                                    "/api/items/7?q=a"}
        assert dict(fields).get("x-sub") == "/api/items/7"
        payload = b"x" * 300_000
        status, _, body = served.request("POST", "/api/size", body=payload, chunked=True)
        assert (status, body) == (200, b"300000")
        assert served.get("/api/missing")[0] == 404
        assert served.get("/own")[2] == b"own"
        assert served.stop() == 0


def test_over_a_socket_a_sub_app_takes_websocket_handshakes(serve):
    from websockets.sync.client import connect

    served = serve("mount_vireo_app:app")
    with connect(f"ws://127.0.0.1:{served.port}/api/ws", open_timeout=10) as ws:
        ws.send("hi")
        assert ws.recv(timeout=10) == "echo: hi"
    assert served.stop() == 0


def test_a_handshake_goes_to_the_apps_own_websocket_route_first_then_to_a_mount(serve):
    from websockets.sync.client import connect

    served = serve("ws_beside_mount:app")
    answers = {}
    for path in ("/ws", "/sub/ws", "/sub/own"):
        with connect(f"ws://127.0.0.1:{served.port}{path}", open_timeout=10) as ws:
            answers[path] = ws.recv(timeout=10)
    assert answers == {"/ws": "from the app", "/sub/ws": "from the mount",
                       "/sub/own": "from the app"}
    assert served.stop() == 0


def test_a_trailing_slash_redirect_keeps_the_prefix_as_in_fastapi():
    ours = TestClient(build(vireo), follow_redirects=False)
    theirs = FastAPIClient(build(fastapi), follow_redirects=False)
    for path in ("/v1/items/5/", "/link/"):
        mine, other = ours.get(path), theirs.get(path)
        assert (mine.status_code, mine.headers["location"]) == (
            other.status_code, other.headers["location"]), path


def test_the_test_clients_handshake_no_route_takes_goes_to_the_mount_holding_it():
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute

    async def starlette_echo(ws):
        await ws.accept()
        await ws.send_json({"by": "starlette", "path": ws.url.path,
                            "root": ws.scope["root_path"]})
        await ws.close()

    answers = []
    for mod, client_class in ((fastapi, FastAPIClient), (vireo, TestClient)):
        sub = mod.FastAPI()

        @sub.websocket("/ws")
        async def sub_ws(websocket: mod.WebSocket):
            await websocket.accept()
            await websocket.send_json({"by": "sub", "path": websocket.url.path})
            await websocket.close()

        app = mod.FastAPI()

        @app.websocket("/own")
        async def own(websocket: mod.WebSocket):
            await websocket.accept()
            await websocket.send_json({"by": "own"})
            await websocket.close()

        app.mount("/star", Starlette(routes=[WebSocketRoute("/ws", starlette_echo)]))
        app.mount("/sub", sub)
        with client_class(app) as client:
            seen = []
            for path in ("/own", "/star/ws", "/sub/ws"):
                with client.websocket_connect(path) as ws:
                    seen.append(ws.receive_json())
            answers.append(seen)
    assert answers[1] == answers[0]
    assert [a["by"] for a in answers[1]] == ["own", "starlette", "sub"]
