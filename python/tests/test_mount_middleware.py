"""A mounted app behind the app's middleware, as in FastAPI (Starlette), where middleware
wraps the whole app, mounts included: the same app (GZip, CORS and a middleware of its own
around `StaticFiles` and a FastAPI sub-app) under FastAPI and Vireo, the same requests, the
same answers; over a real socket, a streamed file compressed and a chunked upload read."""

from __future__ import annotations

import gzip
import json

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
import starlette.exceptions  # noqa: E402
from fastapi.middleware.cors import CORSMiddleware  # noqa: E402
from fastapi.middleware.gzip import GZipMiddleware  # noqa: E402
from fastapi.staticfiles import StaticFiles  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

ORIGIN = "https://app.example"


def sub_app() -> fastapi.FastAPI:
    sub = fastapi.FastAPI()

    @sub.get("/hello/{name}")
    def hello(name: str):
        return {"hello": name, "padding": "x" * 64}

    @sub.post("/echo")
    async def echo(request: fastapi.Request):
        return {"body": (await request.body()).decode()}

    @sub.get("/fail")
    def fail():
        raise RuntimeError("the mounted app fails")

    return sub


def build(mod, site):
    app = mod.FastAPI()
    app.add_middleware(GZipMiddleware, minimum_size=16)
    app.add_middleware(CORSMiddleware, allow_origins=[ORIGIN], allow_methods=["GET", "POST"],
                       expose_headers=["x-seen"])

    @app.middleware("http")
    async def seen(request, call_next):
        if request.url.path == "/static/refused":
            return mod.responses.JSONResponse({"refused": True}, status_code=403)
        response = await call_next(request)
        response.headers["x-seen"] = f"{request.method} {request.url.path}"
        return response

    @app.get("/api/items")
    def items():
        return {"items": list(range(20))}

    app.mount("/static", StaticFiles(directory=site), name="static")
    app.mount("/sub", sub_app())
    return app


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "app.js").write_text("console.log('hello from a static file');\n" * 20)
    (site / "tiny.txt").write_text("tiny")
    return site


# Every request names its encodings: httpx asks for gzip unless told otherwise.
GZIP = {"accept-encoding": "gzip"}
PLAIN = {"accept-encoding": "identity"}
CORS = {**PLAIN, "origin": ORIGIN}
PREFLIGHT = {**CORS, "access-control-request-method": "POST"}

REQUESTS = [
    ("GET", "/api/items", GZIP, None),
    ("GET", "/static/app.js", GZIP, None),
    ("GET", "/static/app.js", PLAIN, None),
    ("GET", "/static/tiny.txt", GZIP, None),
    ("GET", "/static/missing.js", GZIP, None),
    ("GET", "/static/refused", PLAIN, None),
    ("POST", "/static/app.js", PLAIN, None),
    ("GET", "/static/app.js", CORS, None),
    ("OPTIONS", "/static/app.js", PREFLIGHT, None),
    ("GET", "/sub/hello/ada", {**CORS, **GZIP}, None),
    ("GET", "/sub/hello/ada", PLAIN, None),
    ("POST", "/sub/echo", CORS, b"some body"),
    ("OPTIONS", "/sub/echo", PREFLIGHT, None),
    ("GET", "/sub/nothing", GZIP, None),
]

FIELDS = ("content-type", "content-encoding", "vary", "x-seen", "access-control-allow-origin",
          "access-control-expose-headers", "access-control-allow-methods", "allow")


@pytest.fixture(scope="module")
def clients(site):
    with TestClient(build(vireo, site)) as ours:
        yield ours, FastAPIClient(build(fastapi, site))


def seen(res):
    # The body decompressed, as both clients give it. (Vireo compresses a streamed file as a
    # stream, Starlette whole when it fits one chunk, so the compressed bytes may differ.)
    return res.status_code, {name: res.headers.get(name) for name in FIELDS}, res.content


@pytest.mark.parametrize(("method", "path", "headers", "body"), REQUESTS)
def test_the_middleware_wraps_a_mount_as_in_fastapi(clients, method, path, headers, body):
    ours, theirs = clients
    assert seen(ours.request(method, path, headers=headers, content=body)) == seen(
        theirs.request(method, path, headers=headers, content=body)
    )


def test_a_head_request_gets_the_fields_a_get_would(clients):
    # RFC 9110 section 9.3.2. (Starlette's GZip leaves a file's HEAD answer uncompressed,
    # without `Vary`, as its body is empty.)
    ours, _ = clients
    head, get = ours.head("/static/app.js", headers=GZIP), ours.get("/static/app.js", headers=GZIP)
    assert head.status_code == get.status_code == 200
    fields = [{**seen(res)[1], "x-seen": None} for res in (head, get)]
    assert fields[0] == fields[1] and get.headers["content-encoding"] == "gzip"


def test_a_mounted_app_that_fails_is_a_500_the_middleware_sees(clients):
    ours, _ = clients
    res = ours.get("/sub/fail", headers=PLAIN)
    assert res.status_code == 500 and res.text == "Internal Server Error"
    assert res.headers["x-seen"] == "GET /sub/fail"


def handled(mod, site):
    # Exception handlers alone, no middleware: FastAPI's apply to what a mount raises too
    # (a single-page app's 404 page, say).
    app = mod.FastAPI()
    # Starlette's, which StaticFiles raises (FastAPI's is a subclass); Vireo's are one kind.
    http_error = starlette.exceptions.HTTPException if mod is fastapi else vireo.HTTPException

    @app.exception_handler(404)
    async def missing(request, exc):
        return mod.responses.HTMLResponse(f"<p>no {request.url.path}</p>", status_code=404)

    @app.exception_handler(http_error)
    async def other(request, exc):
        return mod.responses.JSONResponse({"handled": exc.status_code}, exc.status_code)

    @app.get("/gone")
    def gone():
        raise http_error(410)

    app.mount("/static", StaticFiles(directory=site), name="static")
    app.mount("/sub", sub_app())
    return app


@pytest.mark.parametrize("path", ["/static/tiny.txt", "/static/missing.js", "/gone", "/nothing", "/sub/nothing", "/sub/hello/ada"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_exception_handlers_answer_what_a_mount_raises_as_in_fastapi(site, method, path):
    with TestClient(handled(vireo, site)) as ours:
        mine = ours.request(method, path, headers=PLAIN)
    theirs = FastAPIClient(handled(fastapi, site)).request(method, path, headers=PLAIN)
    assert seen(mine) == seen(theirs)


def test_over_a_socket_middleware_wraps_a_mount(serve):
    from pathlib import Path

    served = serve("mount_app:wrapped")
    data = (Path(__file__).parent / "apps" / "static" / "data.bin").read_bytes()
    status, fields, body = served.get("/static/data.bin", headers=GZIP)
    fields = dict(fields)
    assert status == 200 and fields["content-encoding"] == "gzip"
    assert fields["x-seen"] == "GET /static/data.bin"
    assert gzip.decompress(body) == data
    payload = b"x" * 300_000
    status, fields, body = served.request("POST", "/sub/echo", body=payload, chunked=True)
    assert status == 200 and dict(fields)["x-seen"] == "POST /sub/echo"
    assert json.loads(body) == {"size": len(payload), "root_path": "/sub", "path": "/sub/echo"}
    assert served.stop() == 0
