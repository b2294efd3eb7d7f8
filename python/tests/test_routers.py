"""Routers: routes grouped and added under a prefix, as FastAPI's APIRouter."""

from __future__ import annotations

from vireo import APIRouter, App
from vireo.testclient import TestClient

users = APIRouter(prefix="/users")


@users.get("/{user_id}")
def get_user(user_id: int):
    return {"id": user_id}


@users.post("/", status_code=201)
def create_user():
    return "created"


admin = APIRouter()


@admin.delete("/purge")
def purge():
    return "purged"


users.include_router(admin, prefix="/admin")

app = App()
app.include_router(users, prefix="/v1")


@app.get("/")
def root():
    return "root"


def test_prefixed_routes():
    with TestClient(app) as client:
        assert client.get("/v1/users/3").json() == {"id": 3}
        res = client.post("/v1/users/")
        assert (res.status_code, res.text) == (201, "created")
        assert client.delete("/v1/users/admin/purge").text == "purged"
        assert client.get("/").text == "root"
        assert client.get("/users/3").status_code == 404


def empty_path_app(mod):
    app = mod.FastAPI() if mod.__name__ == "fastapi" else mod.App()
    items = mod.APIRouter(prefix="/items")

    @items.get("")
    def list_items():
        return {"items": []}

    @items.post("", status_code=201)
    def create_item():
        return {"created": True}

    app.include_router(items)
    return app


def test_a_router_route_with_the_empty_path_answers_at_the_prefix_as_in_fastapi():
    import pytest

    fastapi = pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient as FastAPIClient

    import vireo

    theirs = FastAPIClient(empty_path_app(fastapi))
    with TestClient(empty_path_app(vireo)) as ours:
        for method, path in [("GET", "/items"), ("POST", "/items"), ("GET", "/items/")]:
            mine, other = ours.request(method, path), theirs.request(method, path)
            assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_an_empty_prefix_and_an_empty_path_are_refused():
    import pytest

    router = APIRouter()

    @router.get("")
    def nowhere():
        return "never"

    with pytest.raises(ValueError, match="cannot both be empty .*'nowhere'"):
        App().include_router(router)
    with pytest.raises(ValueError, match="starts with '/'"):
        App().get("")(nowhere)
