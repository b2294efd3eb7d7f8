"""`pydantic.Json[T]` parameters: one text value (query, header, cookie or form field),
parsed as JSON and validated as T, as FastAPI reads them."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import BaseModel, Json

from vireo import App, Cookie, Form, Header, Query
from vireo.testclient import TestClient


class Point(BaseModel):
    x: int
    y: int


app = App()


@app.get("/query")
def query_list(items: Annotated[Json[list[str]], Query()]) -> list[str]:
    return items


@app.get("/header")
def header_list(x_items: Annotated[Json[list[int]], Header()]) -> list[int]:
    return x_items


@app.get("/cookie")
def cookie_model(point: Annotated[Json[Point], Cookie()]) -> dict:
    return {"sum": point.x + point.y}


@app.post("/form")
def form_list(items: Annotated[Json[list[str]], Form()]) -> dict:
    return {"items": items, "count": len(items)}


client = TestClient(app)


def test_query_value_is_parsed_as_json():
    response = client.get("/query", params={"items": json.dumps(["a", "b"])})
    assert response.status_code == 200, response.text
    assert response.json() == ["a", "b"]


def test_header_value_is_validated_after_parsing():
    assert client.get("/header", headers={"x-items": "[1, 2]"}).json() == [1, 2]
    response = client.get("/header", headers={"x-items": '["one"]'})
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"][0] == "header" and error["type"] == "int_parsing"


def test_cookie_value_may_be_a_model():
    client.cookies.set("point", json.dumps({"x": 2, "y": 3}))
    try:
        response = client.get("/cookie")
    finally:
        client.cookies.clear()
    assert response.status_code == 200, response.text
    assert response.json() == {"sum": 5}


def test_form_field_is_one_value_not_a_list():
    response = client.post("/form", data={"items": json.dumps(["x", "y", "z"])})
    assert response.status_code == 200, response.text
    assert response.json() == {"items": ["x", "y", "z"], "count": 3}


def test_text_that_is_not_json_is_a_422():
    response = client.get("/query", params={"items": "[not json"})
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["type"] == "json_invalid"
    assert error["loc"] == ["query", "items"]
    response = client.post("/form", data={"items": "{"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "json_invalid"


def test_schema_describes_json_text_as_fastapi_does():
    import pytest

    fastapi = pytest.importorskip("fastapi")

    def build(module, make):
        built = make()

        def q(items):
            return items

        def f(items):
            return items

        # Set as objects: this file's annotations are strings, and `module` is local.
        q.__annotations__ = {"items": Annotated[Json[list[str]], module.Query()],
                             "return": list[str]}
        f.__annotations__ = {"items": Annotated[Json[list[str]], module.Form()],
                             "return": list[str]}
        built.get("/q")(q)
        built.post("/f")(f)
        return built.openapi()

    import vireo

    ours, theirs = build(vireo, vireo.App), build(fastapi, fastapi.FastAPI)
    assert ours["paths"] == theirs["paths"]
    assert ours["components"] == theirs["components"]
    [parameter] = ours["paths"]["/q"]["get"]["parameters"]
    assert parameter["schema"]["contentMediaType"] == "application/json"
