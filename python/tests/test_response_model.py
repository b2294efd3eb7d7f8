"""Response models: what a handler returns is validated against `response_model` (or its
return annotation) and sent as the model's fields only, shaped by the `response_model_*`
options. The same app is built under FastAPI and under Vireo, and every request must get the
same status and the same JSON body from both."""

from __future__ import annotations

import dataclasses
import datetime
import logging
import sys
from collections.abc import Iterator
from typing import Any, Optional

import pydantic
import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class UserIn(pydantic.BaseModel):
    name: str
    email: str
    password: str


class UserOut(pydantic.BaseModel):
    name: str
    email: str


class Item(pydantic.BaseModel):
    name: str
    price: float = 10.5
    tags: list[str] = []
    note: Optional[str] = None


class Aliased(pydantic.BaseModel):
    user_name: str = pydantic.Field(alias="userName")


class Stamped(pydantic.BaseModel):
    at: datetime.datetime
    day: datetime.date


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Opaque:
    """A type pydantic has no schema for."""


@dataclasses.dataclass
class Holder:
    thing: Opaque


@dataclasses.dataclass
class Dangling:
    thing: NoSuchType  # noqa: F821 - a name that never resolves


class Row:
    """An object that is not a model: read by attribute, as from an ORM."""

    def __init__(self) -> None:
        self.name = "ada"
        self.email = "ada@example.com"
        self.password = "hunter2"


SECRET = {"name": "ada", "email": "ada@example.com", "password": "hunter2"}


def build(mod: Any) -> Any:
    """The same routes, written against `fastapi` or `vireo`."""
    app = mod.FastAPI()

    @app.get("/dict", response_model=UserOut)
    def from_dict():
        return dict(SECRET)

    @app.get("/annotated")
    def annotated() -> UserOut:
        return UserIn(**SECRET)

    @app.get("/attributes", response_model=UserOut)
    def attributes():
        return Row()

    @app.get("/async", response_model=UserOut)
    async def from_async():
        return dict(SECRET)

    @app.get("/list", response_model=list[UserOut])
    def many():
        return [dict(SECRET), UserIn(**SECRET)]

    @app.get("/optional", response_model=Optional[UserOut])
    def nothing():
        return None

    @app.get("/by-key", response_model=dict[str, UserOut])
    def by_key():
        return {"a": dict(SECRET)}

    @app.get("/defaults", response_model=Item)
    def defaults():
        return {"name": "x"}

    @app.get("/exclude-unset", response_model=Item, response_model_exclude_unset=True)
    def exclude_unset():
        return Item(name="x", tags=["a"])

    @app.get("/exclude-defaults", response_model=Item, response_model_exclude_defaults=True)
    def exclude_defaults():
        return Item(name="x", price=10.5, note="n")

    @app.get("/exclude-none", response_model=Item, response_model_exclude_none=True)
    def exclude_none():
        return {"name": "x", "note": None}

    @app.get("/include", response_model=Item, response_model_include={"name", "price"})
    def include():
        return {"name": "x", "note": "n"}

    @app.get("/exclude", response_model=Item, response_model_exclude={"tags"})
    def exclude():
        return {"name": "x"}

    @app.get("/alias", response_model=Aliased)
    def alias():
        return {"userName": "ada"}

    @app.get("/no-alias", response_model=Aliased, response_model_by_alias=False)
    def no_alias():
        return {"userName": "ada"}

    @app.get("/dates", response_model=Stamped)
    def dates():
        return {"at": datetime.datetime(2026, 12, 1, 9, 30), "day": "2026-12-01"}

    @app.get("/dataclass", response_model=Point)
    def point():
        return {"x": "1", "y": 2}

    @app.get("/off", response_model=None)
    def off() -> UserOut:
        return dict(SECRET)

    @app.get("/plain")
    def plain() -> dict:
        return {"a": 1}

    @app.get("/response")
    def response() -> UserOut:
        return mod.responses.JSONResponse(dict(SECRET))

    @app.get("/invalid", response_model=UserOut)
    def invalid():
        return {"name": "ada"}

    def current_user():
        return UserIn(**SECRET)

    @app.post("/created", response_model=UserOut, status_code=201)
    def created(user: UserIn = mod.Depends(current_user)):
        return user

    @app.get("/items/{item_id}", response_model=Item)
    def item(item_id: int, q: str | None = None):
        return {"name": f"item {item_id}", "note": q, "secret": "s"}

    return app


PATHS = [
    ("GET", "/dict"),
    ("GET", "/annotated"),
    ("GET", "/attributes"),
    ("GET", "/async"),
    ("GET", "/list"),
    ("GET", "/optional"),
    ("GET", "/by-key"),
    ("GET", "/defaults"),
    ("GET", "/exclude-unset"),
    ("GET", "/exclude-defaults"),
    ("GET", "/exclude-none"),
    ("GET", "/include"),
    ("GET", "/exclude"),
    ("GET", "/alias"),
    ("GET", "/no-alias"),
    ("GET", "/dates"),
    ("GET", "/dataclass"),
    ("GET", "/off"),
    ("GET", "/plain"),
    ("GET", "/response"),
    ("POST", "/created"),
    ("GET", "/items/3?q=hi"),
    ("GET", "/items/x"),
]


@pytest.fixture(scope="module")
def clients():
    with TestClient(build(vireo), raise_server_exceptions=False) as ours:
        yield ours, FastAPIClient(build(fastapi))


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_the_same_answer_as_fastapi(clients, method, path):
    ours, theirs = clients
    mine, expected = ours.request(method, path), theirs.request(method, path)
    assert mine.status_code == expected.status_code
    assert mine.json() == expected.json()


def test_fields_outside_the_model_are_not_sent(clients):
    ours, _ = clients
    for path in ("/dict", "/annotated", "/attributes", "/async", "/list", "/by-key"):
        assert "hunter2" not in ours.get(path).text, path
    assert ours.get("/off").json()["password"] == "hunter2"


def test_a_return_that_does_not_fit_is_a_logged_500(clients, caplog):
    ours, _ = clients
    theirs = FastAPIClient(build(fastapi), raise_server_exceptions=False)
    with caplog.at_level(logging.ERROR, logger="vireo"):
        res = ours.get("/invalid")
    assert res.status_code == theirs.get("/invalid").status_code == 500
    assert "email" not in res.text
    raised = [r.exc_info[1] for r in caplog.records if r.exc_info]
    assert any(isinstance(exc, vireo.ResponseValidationError) for exc in raised)
    assert "response.email: Field required" in str(raised[-1])


def test_the_error_lists_each_field_under_response():
    app = vireo.App()

    @app.get("/", response_model=list[UserOut])
    def broken():
        return [{"name": "a"}, {"email": "e"}]

    filtered = app._plan()[0][2]
    with pytest.raises(vireo.ResponseValidationError) as caught:
        filtered()
    locs = [error["loc"] for error in caught.value.errors()]
    assert locs == [["response", 0, "email"], ["response", 1, "name"]]
    assert "response.0.email: Field required [type=missing]" in str(caught.value)


def test_the_wrapped_handler_keeps_its_parameters_and_kind():
    app = vireo.App()

    @app.get("/items/{item_id}", response_model=Item)
    async def read(item_id: int, q: str = "none"):
        return {"name": str(item_id), "note": q}

    with TestClient(app) as client:
        assert client.get("/items/5?q=z").json() == {
            "name": "5", "price": 10.5, "tags": [], "note": "z"}
        assert client.get("/items/five").status_code == 422
    schema = app.openapi()["paths"]["/items/{item_id}"]["get"]
    assert [p["name"] for p in schema["parameters"]] == ["item_id", "q"]
    ok = schema["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/Item"}


def test_a_model_type_pydantic_cannot_build_is_refused_at_start_up():
    for model in (list[Holder], Dangling):
        app = vireo.App()
        app.get("/", response_model=model)(lambda: [])
        with pytest.raises(TypeError, match="cannot be a response model"):
            app._plan()


def test_a_plain_return_type_is_not_checked_and_a_generator_streams_its_items():
    app = vireo.App()

    @app.get("/text")
    def text() -> str:
        return "hello"

    @app.get("/lines")
    def lines() -> Iterator[UserOut]:
        yield UserOut(name="a", email="e")

    handlers = {route[1]: route[2] for route in app._plan()}
    assert handlers["/text"] is text
    # The generator's items are streamed as JSON Lines, each validated as a UserOut.
    assert handlers["/lines"].__wrapped__ is lines
    answer = TestClient(app).get("/lines")
    assert answer.headers["content-type"] == "application/jsonl"
    assert answer.text == '{"name":"a","email":"e"}\n'


def test_without_pydantic_only_an_explicit_response_model_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "pydantic", None)  # `import pydantic` fails
    app = vireo.App()

    @app.get("/")
    def me() -> Point:
        return Point(1, 2)

    assert app._plan()[0][2] is me
    app.get("/strict", response_model=Point)(lambda: Point(1, 2))
    with pytest.raises(TypeError, match="needs pydantic"):
        app._plan()
