"""Constraints on body values (`Body(gt=0)`), alone or as members of an object body, and on
form values (`Form(min_length=3)`): checked by pydantic as FastAPI checks them, and shown in
the schema as FastAPI shows them."""

from typing import Annotated

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def body_constraints(mod):
    from pydantic import BaseModel

    class Item(BaseModel):
        name: str

    app = mod.FastAPI()

    @app.post("/one")
    def one(n: Annotated[int, mod.Body(ge=1)]):
        return {"n": n}

    @app.put("/many")
    def many(item: Item, importance: Annotated[int, mod.Body(gt=0)],
             note: Annotated[str, mod.Body(max_length=3)] = "ok"):
        return {"item": item.name, "importance": importance, "note": note}

    return app


@pytest.mark.parametrize("method, path, body", [
    ("POST", "/one", 1), ("POST", "/one", 0), ("POST", "/one", "x"),
    ("PUT", "/many", {"item": {"name": "a"}, "importance": 2}),
    ("PUT", "/many", {"item": {"name": "a"}, "importance": 0}),
    ("PUT", "/many", {"item": {"name": "a"}, "importance": 1, "note": "long"}),
    ("PUT", "/many", {"item": {}, "importance": -1}),
])
def test_constraints_on_a_body_value_are_checked_as_fastapi_checks_them(method, path, body):
    mine = TestClient(body_constraints(vireo)).request(method, path, json=body)
    other = FastAPIClient(body_constraints(fastapi)).request(method, path, json=body)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_a_body_values_constraints_are_in_its_schema_as_fastapis():
    schemas = [body_constraints(mod).openapi()["components"]["schemas"]
               for mod in (vireo, fastapi)]
    for name in ("Body_many_many_put",):
        assert schemas[0][name] == schemas[1][name]


def form_constraints(mod):
    app = mod.FastAPI()

    @app.post("/login")
    def login(username: Annotated[str, mod.Form(min_length=3)],
              pin: Annotated[int, mod.Form(ge=1000, le=9999)],
              tags: Annotated[list[str], mod.Form(max_length=2)] = []):
        return {"username": username, "pin": pin, "tags": tags}

    return app


@pytest.mark.parametrize("form", [
    {"username": "ada", "pin": "1234"},
    {"username": "al", "pin": "1234"},
    {"username": "ada", "pin": "12"},
    {"username": "ada", "pin": "x"},
    {"username": "ada", "pin": "1234", "tags": ["a", "b", "c"]},
])
def test_constraints_on_a_form_value_are_checked_as_fastapi_checks_them(form):
    mine = TestClient(form_constraints(vireo)).post("/login", data=form)
    other = FastAPIClient(form_constraints(fastapi)).post("/login", data=form)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_a_form_values_constraints_are_in_its_schema_as_fastapis():
    schemas = [form_constraints(mod).openapi()["components"]["schemas"]["Body_login_login_post"]
               for mod in (vireo, fastapi)]
    assert schemas[0] == schemas[1]
