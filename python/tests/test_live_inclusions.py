"""Inclusions are live, as in FastAPI 0.165: what a router gets after it was included (routes,
WebSocket routes, frontends, routers of its own) is served where it was included, shaped by
the inclusion, also by a test client or ASGI client already open; inclusion cycles are
refused."""

from __future__ import annotations

import asyncio

import httpx
import pytest

import vireo
from vireo import APIRouter, App, Depends
from vireo.testclient import TestClient

fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

calls: list[str] = []


def included_dependency() -> None:
    calls.append("dependency")


def late_route_app(mod):
    """An app including a router before the router has its route."""
    app = mod.FastAPI()
    router = mod.APIRouter()
    app.include_router(router, prefix="/api", tags=["included"],
                       dependencies=[mod.Depends(included_dependency)],
                       responses={418: {"description": "Teapot"}})

    @router.get("/later/{item_id}")
    def read_later(item_id: int):
        return {"later": item_id}

    return app


def test_a_route_added_after_the_inclusion_is_served_with_the_inclusions_options():
    theirs = FastAPIClient(late_route_app(fastapi))
    with TestClient(late_route_app(vireo)) as ours:
        for path in ["/api/later/3", "/api/later/x", "/later/3"]:
            calls.clear()
            mine = ours.get(path)
            mine_calls = list(calls)
            calls.clear()
            other = theirs.get(path)
            assert (mine.status_code, mine.json(), mine_calls) == (
                other.status_code, other.json(), calls), path
        mine = ours.get("/openapi.json").json()["paths"]["/api/later/{item_id}"]["get"]
        other = theirs.get("/openapi.json").json()["paths"]["/api/later/{item_id}"]["get"]
        assert mine["tags"] == other["tags"] == ["included"]
        assert mine["responses"]["418"] == other["responses"]["418"] == {"description": "Teapot"}


def test_a_route_added_while_a_client_is_open_is_served_and_documented():
    app = App()
    router = APIRouter()
    app.include_router(router, prefix="/api")
    with TestClient(app) as client:
        assert client.get("/api/later").status_code == 404
        assert "/api/later" not in client.get("/openapi.json").json()["paths"]

        @router.get("/later")
        def read_later():
            return "later"

        assert client.get("/api/later").text == "later"
        assert "/api/later" in client.get("/openapi.json").json()["paths"]


def test_a_router_included_after_its_parents_inclusion_is_live():
    app = App()
    parent, child = APIRouter(), APIRouter()
    app.include_router(parent, prefix="/api")
    parent.include_router(child, prefix="/child", tags=["child"])

    @child.get("/items")
    def read_items():
        return ["item"]

    with TestClient(app) as client:
        assert client.get("/api/child/items").json() == ["item"]
        operation = client.get("/openapi.json").json()["paths"]["/api/child/items"]["get"]
        assert operation["tags"] == ["child"]
    assert app.url_path_for("read_items") == "/api/child/items"


def test_a_router_included_twice_at_each_level_serves_every_path():
    shared, parent, app = APIRouter(), APIRouter(), App()
    parent.include_router(shared, prefix="/a")
    parent.include_router(shared, prefix="/b")
    app.include_router(parent, prefix="/v1")
    app.include_router(parent, prefix="/v2")

    @shared.get("/items")
    def read_items():
        return []

    paths = ["/v1/a/items", "/v1/b/items", "/v2/a/items", "/v2/b/items"]
    with TestClient(app) as client:
        assert [client.get(p).status_code for p in paths] == [200] * 4
        assert set(client.get("/openapi.json").json()["paths"]) == set(paths)


def test_a_websocket_route_added_after_the_inclusion_is_served():
    app, router = App(), APIRouter()
    app.include_router(router, prefix="/live")

    @router.websocket("/ws")
    async def talk(websocket: vireo.WebSocket):
        await websocket.accept()
        await websocket.send_text("hello")
        await websocket.close()

    with TestClient(app) as client, client.websocket_connect("/live/ws") as socket:
        assert socket.receive_text() == "hello"


def test_a_frontend_added_after_the_inclusion_is_served(tmp_path):
    (tmp_path / "index.html").write_text("<h1>app</h1>")
    app, router = App(), APIRouter()
    app.include_router(router, prefix="/ui")
    router.frontend("/", directory=tmp_path)
    with TestClient(app) as client:
        res = client.get("/ui/index.html")
        assert (res.status_code, res.text) == (200, "<h1>app</h1>")


def test_a_route_added_after_the_first_asgi_request_is_served():
    app, router = App(), APIRouter()
    app.include_router(router, prefix="/api")

    async def run() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            before = (await client.get("/api/later")).status_code

            @router.get("/later")
            def read_later():
                return "later"

            after = await client.get("/api/later")
            return [before, after.status_code, after.text == "later"]

    assert asyncio.run(run()) == [404, 200, True]


def test_inclusion_cycles_are_refused():
    router = APIRouter()
    with pytest.raises(ValueError, match="into itself"):
        router.include_router(router)
    parent, child, grandchild = APIRouter(), APIRouter(), APIRouter()
    parent.include_router(child, prefix="/child")
    with pytest.raises(ValueError, match="already includes this router"):
        child.include_router(parent, prefix="/parent")
    child.include_router(grandchild, prefix="/grandchild")
    with pytest.raises(ValueError, match="already includes this router"):
        grandchild.include_router(parent, prefix="/parent")


def test_a_router_may_be_included_by_two_routers_that_share_a_parent():
    app, left, right, shared = App(), APIRouter(), APIRouter(), APIRouter()
    left.include_router(shared, prefix="/s")
    right.include_router(shared, prefix="/s")
    app.include_router(left, prefix="/l")
    app.include_router(right, prefix="/r")

    @shared.get("/x", dependencies=[Depends(included_dependency)])
    def x():
        return "x"

    with TestClient(app) as client:
        assert [client.get(p).text for p in ["/l/s/x", "/r/s/x"]] == ["x", "x"]
