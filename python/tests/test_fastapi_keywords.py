"""Keyword arguments FastAPI apps pass, each with FastAPI's effect: `App(middleware=[...],
exception_handlers={...})`; a parameter's `example`, `openapi_examples`, `json_schema_extra`
and `validation_alias`; a body's `media_type` and `openapi_examples`; a route's
`response_description` and `openapi_extra`; `delete_cookie`'s attributes and `set_cookie`'s
datetime `expires`; `FileResponse(content_disposition_type=...)`. The same app is built with
FastAPI and with Vireo and answers the same."""

import datetime
import email.utils
import re
from typing import Annotated

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.middleware.cors import CORSMiddleware  # noqa: E402
from fastapi.middleware.gzip import GZipMiddleware  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Item(BaseModel):
    name: str


ORIGIN = "https://app.example"


def build(mod, tmp_path):
    async def teapot(request, exc):
        return mod.responses.JSONResponse({"teapot": str(exc)}, 418)

    app = (mod.FastAPI if mod is fastapi else mod.App)(
        middleware=[Middleware(CORSMiddleware, allow_origins=[ORIGIN]),
                    Middleware(GZipMiddleware, minimum_size=10)],
        exception_handlers={ValueError: teapot},
    )
    query, body = mod.Query, mod.Body

    @app.get("/params")
    def params(a: int = query(1, example=5),
               b: str = query("x", openapi_examples={"one": {"summary": "S", "value": "v"}}),
               c: str = query("y", json_schema_extra={"x-thing": 1}),
               d: str | None = query(None, validation_alias="dee")):
        return {"a": a, "b": b, "c": c, "d": d, "padding": "p" * 20}

    @app.post("/items", response_description="The item, as stored",
              openapi_extra={"x-extra": True, "parameters": [{"name": "trace", "in": "header"}]})
    def create(item: Item = body(media_type="application/vnd.item+json",
                                 openapi_examples={"pen": {"value": {"name": "pen"}}}),
               copies: int = 1):
        return item

    @app.get("/bad")
    def bad():
        raise ValueError("no good")

    @app.get("/logout")
    def logout():
        response = mod.responses.JSONResponse({"bye": True})
        response.delete_cookie("session", secure=True, httponly=True, samesite="strict")
        response.set_cookie("seen", "1", expires=datetime.datetime(2030, 1, 2, 3, 4, 5,
                                                                   tzinfo=datetime.timezone.utc))
        return response

    @app.get("/logout-here")
    def logout_here(response: mod.Response):
        response.delete_cookie("session", path="/app", samesite="none", secure=True)
        return {"bye": True}

    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.7 fake")

    @app.get("/report")
    def report():
        return mod.responses.FileResponse(tmp_path / "report.pdf", filename="report.pdf",
                                          content_disposition_type="inline")

    return app


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("files")
    with TestClient(build(vireo, tmp)) as ours:
        yield ours, FastAPIClient(build(fastapi, tmp))


REQUESTS = [
    ("GET", "/params?dee=1&d=2", {}),
    ("GET", "/params", {"origin": ORIGIN, "accept-encoding": "gzip"}),
    ("GET", "/bad", {"origin": ORIGIN}),
    ("GET", "/logout", {}),
    ("GET", "/logout-here", {}),
    ("GET", "/report", {}),
]
FIELDS = ("content-type", "content-disposition", "vary", "access-control-allow-origin",
          "content-encoding")


def cookies_of(res) -> list[str]:
    """The `set-cookie` fields, an `expires` of the moment of the answer (a deleted cookie's)
    written as `now`: the two apps answer a second apart at times."""

    def now(match: re.Match) -> str:
        when = email.utils.parsedate_to_datetime(match.group(1))
        moment = datetime.datetime.now(datetime.timezone.utc)
        return "expires=now" if abs((when - moment).total_seconds()) < 60 else match.group(0)

    return [re.sub(r"expires=([^;]+)", now, field) for field in res.headers.get_list("set-cookie")]


@pytest.mark.parametrize(("method", "path", "headers"), REQUESTS)
def test_the_same_answer_as_fastapi(clients, method, path, headers):
    def seen(res):
        body = res.content
        fields = {name: res.headers.get(name) for name in FIELDS}
        return res.status_code, fields, cookies_of(res), body

    ours, theirs = clients
    headers = {"accept-encoding": "identity", **headers}
    mine, other = ours.request(method, path, headers=headers), theirs.request(
        method, path, headers=headers)
    assert seen(mine)[:3] == (other.status_code, {n: other.headers.get(n) for n in FIELDS},
                              cookies_of(other))
    assert seen(mine)[3] == other.content


def test_the_same_schema_as_fastapi(clients):
    ours, theirs = clients
    # openapi_extra's parameters come after the route's own, as FastAPI merges lists.
    names = [p["name"] for p in ours.get("/openapi.json").json()["paths"]["/items"]["post"][
        "parameters"]]
    assert names == ["copies", "trace"]
    assert ours.get("/openapi.json").json()["paths"] == theirs.get("/openapi.json").json()["paths"]


def test_a_body_is_read_whatever_media_type_the_schema_gives(clients):
    ours, _ = clients
    res = ours.post("/items", content=b'{"name": "pen"}',
                    headers={"content-type": "application/vnd.item+json"})
    assert res.status_code == 200 and res.json() == {"name": "pen"}


def test_mistakes_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="samesite must be either"):
        vireo.Response().set_cookie("a", "1", samesite="sideways")
    with pytest.raises(TypeError, match="Middleware"):
        vireo.App(middleware=["not a middleware"])

    async def mw(request, call_next):
        return await call_next(request)

    with pytest.raises(TypeError, match="arguments are for a middleware class"):
        vireo.App().add_middleware(mw, minimum_size=3)


def test_the_scope_names_the_route_matched_as_in_fastapi():
    def build(mod):
        app = mod.FastAPI()

        @app.middleware("http")
        async def seen(request, call_next):
            response = await call_next(request)
            route = request.scope.get("route")
            response.headers["x-route"] = getattr(route, "path", "none")
            return response

        @app.get("/users/{user_id}", name="user")
        def user(user_id: int, request: mod.Request):
            route = request.scope["route"]
            return {"path": route.path, "name": route.name, "methods": sorted(route.methods),
                    "endpoint": request.scope["endpoint"] is user}

        return app

    for client in (TestClient(build(vireo)), FastAPIClient(build(fastapi))):
        res = client.get("/users/3")
        assert res.json() == {"path": "/users/{user_id}", "name": "user", "methods": ["GET"],
                              "endpoint": True}
        assert res.headers["x-route"] == "/users/{user_id}"
        assert client.get("/missing").headers["x-route"] == "none"


@pytest.mark.parametrize("marker", ["Path", "Query", "Header", "Cookie", "Form", "Body"])
@pytest.mark.parametrize("field", [{"alias": "wire"},
                                   {"alias": "unused", "validation_alias": "wire"}])
def test_a_pydantic_field_alias_in_the_metadata_names_the_parameter_as_in_fastapi(marker,
                                                                                   field):
    from pydantic import Field

    def build(mod):
        app = mod.FastAPI()
        made = mod.Body(embed=True) if marker == "Body" else getattr(mod, marker)()

        @app.post("/{wire}" if marker == "Path" else "/")
        def read(value: Annotated[int, Field(**field), made]):
            return value

        return app

    send = {"Path": ("/5", {}), "Query": ("/?wire=5", {}),
            "Header": ("/", {"headers": {"wire": "5"}}),
            "Cookie": ("/", {"headers": {"cookie": "wire=5"}}),
            "Form": ("/", {"data": {"wire": "5"}}), "Body": ("/", {"json": {"wire": 5}})}
    path, kwargs = send[marker]
    mine = TestClient(build(vireo)).post(path, **kwargs)
    other = FastAPIClient(build(fastapi)).post(path, **kwargs)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json()) == (200, 5)


@pytest.mark.parametrize("marker", ["Query", "Header", "Cookie", "Form"])
def test_a_markers_validation_alias_wins_over_its_alias_as_in_fastapi(marker):
    def build(mod):
        app = mod.FastAPI()

        @app.post("/")
        def read(value: Annotated[int, getattr(mod, marker)(alias="unused",
                                                             validation_alias="wire")]):
            return value

        return app

    given = {"Query": {"params": {"wire": "5"}}, "Header": {"headers": {"wire": "5"}},
             "Cookie": {"headers": {"cookie": "wire=5"}}, "Form": {"data": {"wire": "5"}}}
    by_alias = {"Query": {"params": {"unused": "5"}}, "Header": {"headers": {"unused": "5"}},
                "Cookie": {"headers": {"cookie": "unused=5"}}, "Form": {"data": {"unused": "5"}}}
    mine_app, their_app = build(vireo), build(fastapi)
    for kwargs in (given[marker], by_alias[marker]):
        mine = TestClient(mine_app).post("/", **kwargs)
        other = FastAPIClient(their_app).post("/", **kwargs)
        assert (mine.status_code, mine.json()) == (other.status_code, other.json())
    assert TestClient(mine_app).post("/", **given[marker]).json() == 5
    assert (mine_app.openapi()["paths"]["/"]["post"].get("parameters")
            == their_app.openapi()["paths"]["/"]["post"].get("parameters"))
