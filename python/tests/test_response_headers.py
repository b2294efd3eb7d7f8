"""A response's `headers` as Starlette's `MutableHeaders`: names compared without case, a
set replacing the field, `append` adding one more of a name, `add_vary_header`; on a
response a handler makes and on the one `call_next` gives a middleware. The same app under
FastAPI and Vireo sends the same fields."""

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.datastructures import MutableHeaders  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod):
    app = mod.FastAPI() if mod is fastapi else mod.App()

    @app.middleware("http")
    async def stamp(request, call_next):
        response = await call_next(request)
        kind = response.headers.get("Content-Type", "")
        response.headers["X-Kind"] = kind.partition(";")[0]
        response.headers["x-kind"] = "json" if "json" in kind else "other"
        response.headers.append("X-Via", "stamp")
        if "X-Drop" in response.headers:
            del response.headers["X-DROP"]
        return response

    @app.get("/made")
    def made():
        response = mod.responses.JSONResponse({"a": 1}, headers={"X-Token": "1", "X-Drop": "d"})
        response.headers["x-token"] = "2"
        response.headers.append("X-Many", "1")
        response.headers.append("x-many", "2")
        response.headers.add_vary_header("Accept")
        response.headers.add_vary_header("Origin")
        return {"seen": [response.headers.get("X-TOKEN"), "X-Many" in response.headers]}

    @app.get("/sent")
    def sent():
        response = mod.responses.PlainTextResponse("hi", headers={"X-Token": "1"})
        response.headers["x-token"] = "2"
        response.headers.append("X-Many", "1")
        response.headers.append("x-many", "2")
        response.headers.add_vary_header("Accept")
        return response

    @app.get("/param")
    def param(response: mod.Response):
        response.headers["X-Param"] = "a"
        response.headers["x-param"] = "b"
        return {"ok": True}

    return app


FIELDS = ("x-token", "x-many", "vary", "x-kind", "x-via", "x-drop", "x-param")


@pytest.mark.parametrize("path", ["/made", "/sent", "/param"])
def test_the_same_fields_as_fastapi(path):
    with TestClient(build(vireo)) as ours:
        mine = ours.get(path)
    other = FastAPIClient(build(fastapi)).get(path)
    assert mine.content == other.content
    for name in FIELDS:
        assert mine.headers.get_list(name) == other.headers.get_list(name), name


def test_mutable_headers_compares_names_without_case():
    headers = MutableHeaders({"Content-Type": "text/plain"}, X_Other="1")
    assert headers["content-type"] == headers.get("CONTENT-TYPE") == "text/plain"
    assert "Content-type" in headers and list(headers) == ["content-type", "x_other"]
    headers.append("Set-Cookie", "a=1")
    headers.append("set-cookie", "b=2")
    assert headers.getlist("SET-COOKIE") == ["a=1", "b=2"]
    assert headers.raw[-1] == (b"set-cookie", b"b=2")
    copy = headers.mutablecopy()
    copy.append("set-cookie", "c=3")
    assert headers.getlist("set-cookie") == ["a=1", "b=2"] and len(copy.getlist("set-cookie")) == 3
    assert headers.pop("Content-Type") == "text/plain" and "content-type" not in headers
