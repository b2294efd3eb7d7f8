"""`vireo.FastAPI`, the app class for code moved from FastAPI: a returned `str` is a JSON
string, as FastAPI sends it, on every path a value takes to the client (plain, with a
`Response` parameter, with a `yield` dependency or background task, behind middleware,
through the ASGI side); `vireo.App` sends it as text."""

import asyncio

import httpx
import pytest

import vireo
from vireo.testclient import TestClient

fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402


def build(mod, cls_name="FastAPI", middleware=False):
    app = getattr(mod, cls_name)()

    def opened():
        yield "resource"

    @app.get("/plain")
    def plain():
        return "hello"

    @app.get("/typed")
    async def typed() -> str:
        return "typed"

    @app.get("/sub")
    def sub(response: mod.Response):
        response.headers["x-sub"] = "1"
        return "with a sub-response"

    @app.get("/yield")
    def with_yield(resource: str = mod.Depends(opened)):
        return resource

    @app.get("/background")
    def background(tasks: mod.BackgroundTasks):
        tasks.add_task(lambda: None)
        return "later"

    if middleware:
        @app.middleware("http")
        async def passing(request, call_next):
            return await call_next(request)

    return app


PATHS = ["/plain", "/typed", "/sub", "/yield", "/background"]


@pytest.mark.parametrize("middleware", [False, True])
@pytest.mark.parametrize("path", PATHS)
def test_a_str_is_a_json_string_as_in_fastapi(path, middleware):
    ours = TestClient(build(vireo, middleware=middleware)).get(path)
    theirs = FastAPIClient(build(fastapi, middleware=middleware)).get(path)
    assert ours.status_code == theirs.status_code == 200
    assert ours.headers["content-type"] == theirs.headers["content-type"] == "application/json"
    assert ours.content == theirs.content
    assert ours.headers.get("x-sub") == theirs.headers.get("x-sub")


@pytest.mark.parametrize("path", PATHS)
def test_app_sends_a_str_as_text(path):
    res = TestClient(build(vireo, "App")).get(path)
    assert res.headers["content-type"] == "text/plain; charset=utf-8"
    assert not res.text.startswith('"')


def test_through_the_asgi_side():
    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=build(vireo))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get("/plain")

    assert asyncio.run(get()).json() == "hello"


def test_fastapi_keeps_fastapis_default_title():
    assert vireo.FastAPI().openapi()["info"]["title"] == "FastAPI"
    assert vireo.App().openapi()["info"]["title"] == "Vireo"
