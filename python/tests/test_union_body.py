"""A body of one of several models (`item: OtherItem | Item`) is read from the body and
validated as the union, and an embedded member that may be `None` takes an explicit `null`,
as FastAPI reads them; checked against FastAPI."""

from typing import Annotated, Optional, Union

import pytest
from pydantic import BaseModel

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Item(BaseModel):
    name: Optional[str] = None


class OtherItem(BaseModel):
    price: int


def build(mod):
    app = mod.FastAPI()

    @app.post("/items")
    def save(item: Union[OtherItem, Item]):
        return {"item": item, "kind": type(item).__name__}

    @app.post("/maybe")
    def maybe(item: Optional[Union[OtherItem, Item]] = None):
        return {"item": item}

    return app


@pytest.mark.parametrize("path, body", [
    ("/items", {"price": 100}), ("/items", {"name": "x"}), ("/items", {"price": "x"}),
    ("/items", None), ("/maybe", None), ("/maybe", {"price": 1}),
])
def test_a_union_of_models_is_the_body_as_in_fastapi(path, body):
    mine = TestClient(build(vireo)).post(path, json=body)
    other = FastAPIClient(build(fastapi)).post(path, json=body)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())
    assert build(vireo).openapi()["paths"]["/items"]["post"]["requestBody"] == build(
        fastapi).openapi()["paths"]["/items"]["post"]["requestBody"]


def nullable_members(mod):
    app = mod.FastAPI()

    @app.post("/required")
    def required(value: Annotated[Optional[int], mod.Body(embed=True)]):
        return {"value": value}

    @app.post("/defaulted")
    def defaulted(value: Annotated[Optional[int], mod.Body(embed=True)] = 10):
        return {"value": value}

    return app


@pytest.mark.parametrize("path", ["/required", "/defaulted"])
@pytest.mark.parametrize("body", [{"value": None}, {"value": 3}, {}, {"value": "x"}])
def test_an_explicit_null_member_is_a_value_when_the_type_allows_it(path, body):
    mine = TestClient(nullable_members(vireo)).post(path, json=body)
    other = FastAPIClient(nullable_members(fastapi)).post(path, json=body)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())
