"""`request.form()`, `request.stream()` and `request.scope`, as Starlette's: the same app
under FastAPI and Vireo, the same requests, the same answers."""

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")

import fastapi  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod):
    app = mod.FastAPI()

    @app.post("/form")
    async def form(request: mod.Request):
        data = await request.form()
        out = {"keys": list(data), "last": {k: _plain(data[k]) for k in data},
               "tags": data.getlist("tag"), "items": [(k, _plain(v)) for k, v in data.multi_items()]}
        for _, value in data.multi_items():
            if hasattr(value, "read"):
                out.setdefault("files", []).append(
                    [value.filename, value.content_type, (await value.read()).decode()])
        return out

    @app.post("/form-closed")
    async def form_closed(request: mod.Request):
        async with request.form() as data:
            upload = data["file"]
        return {"closed": upload.file.closed}

    @app.post("/form-limited")
    async def form_limited(request: mod.Request):
        data = await request.form(max_fields=1, max_files=1, max_part_size=8)
        return {"keys": list(data)}

    @app.post("/stream")
    async def stream(request: mod.Request):
        chunks = [chunk async for chunk in request.stream()]
        return {"body": b"".join(chunks).decode(), "last": chunks[-1].decode()}

    @app.get("/scope/{item}")
    def scope(item: str, request: mod.Request):
        request.state.seen = "yes"
        scope = request.scope
        return {
            "type": scope["type"], "method": scope["method"], "scheme": scope["scheme"],
            "path": scope["path"], "raw_path": scope["raw_path"].decode(),
            "query_string": scope["query_string"].decode(),
            "http_version": scope["http_version"], "root_path": scope["root_path"],
            "path_params": scope["path_params"],
            "x_custom": [v.decode() for n, v in scope["headers"] if n == b"x-custom"],
            "same_dict": scope is request.scope, "app": scope["app"] is request.app,
            "state_seen": scope["state"].get("seen") if isinstance(scope["state"], dict)
            else None,
        }

    return app


def _plain(value):
    return value if isinstance(value, str) else f"file:{value.filename}"


@pytest.fixture(scope="module")
def clients():
    with FastAPIClient(build(fastapi)) as theirs, TestClient(build(vireo)) as ours:
        yield theirs, ours


REQUESTS = [
    ("/form", {"data": {"name": "ada", "tag": ["a", "b"]}}),
    ("/form", {"data": {"name": "x y&z", "empty": ""}}),
    ("/form", {"data": {"tag": ["1", "2"], "note": "n"},
               "files": {"file": ("hello.txt", b"hello there", "text/plain")}}),
    ("/form", {"content": b"", "headers": {"content-type": "application/json"}}),
    ("/form-closed", {"files": {"file": ("a.bin", b"\x00\x01", "application/octet-stream")}}),
    ("/form-limited", {"data": {"one": "1"}}),
    ("/form-limited", {"data": {"one": "1", "two": "2"},
                       "files": {"f": ("f.txt", b"x", "text/plain")}}),
    ("/form-limited", {"data": {"a": "1", "b": "2"}, "files": {"f": ("f.txt", b"x", "text/plain")}}),
    ("/form-limited", {"files": {"f": ("f.txt", b"x", "text/plain"),
                                 "g": ("g.txt", b"y", "text/plain")}}),
    ("/form-limited", {"data": {"long": "more than eight bytes"},
                       "files": {"f": ("f.txt", b"x", "text/plain")}}),
    ("/stream", {"content": b"some body bytes"}),
    ("/stream", {"content": b""}),
]


@pytest.mark.parametrize(("path", "kwargs"), REQUESTS)
def test_form_and_stream_answer_as_under_fastapi(clients, path, kwargs):
    theirs, ours = clients
    expected = theirs.post(path, **kwargs)
    got = ours.post(path, **kwargs)
    assert (got.status_code, got.json()) == (expected.status_code, expected.json())


def test_scope_holds_what_starlettes_holds(clients):
    theirs, ours = clients
    path = "/scope/caf%C3%A9?x=1&x=2"
    expected = theirs.get(path, headers={"X-Custom": "v"}).json()
    got = ours.get(path, headers={"X-Custom": "v"}).json()
    assert got == expected
    assert got["path"] == "/scope/café" and got["x_custom"] == ["v"]
    assert got["same_dict"] and got["app"] and got["state_seen"] == "yes"


def test_scope_says_its_asgi_version():
    app = vireo.App()

    @app.get("/")
    def root(request: vireo.Request):
        return request.scope["asgi"]

    with TestClient(app) as client:
        assert client.get("/").json() == {"version": "3.0", "spec_version": "2.4"}


def test_headers_raw_and_mutablecopy_as_starlettes():
    def build_headers(mod):
        app = mod.FastAPI()

        @app.get("/raw")
        def raw(request: mod.Request):
            mine = [[k.decode(), v.decode()] for k, v in request.headers.raw
                    if k.startswith(b"x-")]
            copy = request.headers.mutablecopy()
            copy["X-Added"] = "yes"
            return {"raw": mine, "copy": [copy.get("x-one"), copy.get("X-ADDED"),
                                          copy.getlist("x-two")]}

        return app

    headers = [("X-One", "1"), ("x-two", "a"), ("X-Two", "b")]
    theirs = FastAPIClient(build_headers(fastapi)).get("/raw", headers=headers)
    with TestClient(build_headers(vireo)) as ours:
        mine = ours.get("/raw", headers=headers)
    assert mine.json() == theirs.json()
    assert mine.json()["raw"] == [["x-one", "1"], ["x-two", "a"], ["x-two", "b"]]
