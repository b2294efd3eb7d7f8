"""`App.mount(path, asgi_app)`, as FastAPI's (Starlette's `Mount`): the same app under
FastAPI and Vireo (routes of its own, `StaticFiles` mounted at a prefix and at `/`, a
FastAPI app mounted at a prefix), the same requests, the same answers; and over a real
socket, a mounted app's request body streamed to it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.staticfiles import StaticFiles  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def sub_app() -> fastapi.FastAPI:
    sub = fastapi.FastAPI()

    @sub.get("/hello/{name}")
    def hello(name: str, request: fastapi.Request):
        return {"hello": name, "root_path": request.scope["root_path"],
                "path": request.scope["path"], "url": str(request.url)}

    @sub.post("/echo")
    async def echo(request: fastapi.Request):
        return {"body": (await request.body()).decode()}

    return sub


def build(mod, site, spa):
    app = mod.FastAPI()

    @app.get("/api/items")
    def items():
        return {"items": [1, 2]}

    @app.get("/static/own")
    def own():
        return {"own": True}

    app.mount("/static", StaticFiles(directory=site), name="static")
    app.mount("/sub", sub_app())
    app.mount("/", StaticFiles(directory=spa, html=True), name="spa")
    return app


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "app.js").write_text("console.log('hi')\n")
    (site / "nested").mkdir()
    (site / "nested" / "data.json").write_text('{"a": 1}')
    spa = tmp_path_factory.mktemp("spa")
    (spa / "index.html").write_text("<h1>spa</h1>")
    (spa / "about.txt").write_text("about")
    return site, spa


REQUESTS = [
    ("GET", "/api/items", None),
    ("GET", "/static/own", None),
    ("GET", "/static/app.js", None),
    ("HEAD", "/static/app.js", None),
    ("GET", "/static/nested/data.json", None),
    ("GET", "/static/missing.js", None),
    ("GET", "/static/../secret", None),
    ("POST", "/static/app.js", None),
    ("GET", "/sub/hello/ada?x=1", None),
    ("POST", "/sub/echo", b"some body"),
    ("GET", "/sub/nothing", None),
    ("GET", "/", None),
    ("GET", "/about.txt", None),
    ("GET", "/missing", None),
]


@pytest.fixture(scope="module")
def clients(sites):
    site, spa = sites
    with TestClient(build(vireo, site, spa)) as ours:
        yield ours, FastAPIClient(build(fastapi, site, spa))


def seen(res):
    fields = {name: res.headers.get(name) for name in ("content-type", "etag", "allow")}
    return res.status_code, fields, res.content


@pytest.mark.parametrize(("method", "path", "body"), REQUESTS)
def test_the_same_answer_as_fastapi(clients, method, path, body):
    ours, theirs = clients
    assert seen(ours.request(method, path, content=body)) == seen(
        theirs.request(method, path, content=body)
    )


def test_a_mount_path_must_be_absolute_and_the_app_callable():
    app = vireo.App()
    with pytest.raises(ValueError, match="starts with '/'"):
        app.mount("static", sub_app())
    with pytest.raises(TypeError, match="ASGI application"):
        app.mount("/static", "not an app")


def test_over_a_socket_a_mounted_app_gets_its_requests_and_their_bodies(serve):
    served = serve("mount_app:app")
    status, _, body = served.get("/static/site.css")
    assert status == 200 and body == (served_static("site.css"))
    assert served.get("/static/own")[2] == b"a route of the app under the mount's prefix"
    payload = b"x" * 300_000
    status, _, body = served.request("POST", "/sub/echo", body=payload, chunked=True)
    assert status == 200
    assert json.loads(body) == {"size": len(payload), "root_path": "/sub", "path": "/sub/echo"}
    assert served.get("/sub/missing")[0] == 404
    assert served.stop() == 0


def served_static(name: str) -> bytes:
    from pathlib import Path

    return (Path(__file__).parent / "apps" / "static" / name).read_bytes()
