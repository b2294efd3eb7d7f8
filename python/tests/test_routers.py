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
