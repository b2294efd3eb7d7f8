"""Tuples and sets: a tuple of models is a JSON body, a tuple or set of scalars a form
field given once per value, each validated whole and described as FastAPI describes it."""

from __future__ import annotations

from pydantic import BaseModel

from vireo import App, Form
from vireo.testclient import TestClient


class Coordinate(BaseModel):
    x: float
    y: float


app = App()


@app.post("/square")
def square(corners: tuple[Coordinate, Coordinate]) -> dict:
    (a, b) = corners
    return {"width": abs(b.x - a.x), "first": a.model_dump()}


@app.post("/pair")
def pair(values: tuple[int, int] = Form()) -> dict:
    return {"sum": values[0] + values[1], "type": type(values).__name__}


@app.post("/tags")
def tags(names: set[str] = Form()) -> dict:
    return {"names": sorted(names)}


@app.post("/bare/set")
def bare_set(items: set = Form()) -> list:
    return sorted(items)


@app.post("/bare/tuple")
def bare_tuple(items: tuple = Form()) -> list:
    return list(items)


client = TestClient(app)


def test_tuple_of_models_is_the_json_body():
    response = client.post("/square", json=[{"x": 1, "y": 2}, {"x": 4, "y": 2}])
    assert response.status_code == 200, response.text
    assert response.json() == {"width": 3.0, "first": {"x": 1.0, "y": 2.0}}


def test_tuple_body_of_the_wrong_length_is_a_422():
    response = client.post("/square", json=[{"x": 1, "y": 2}])
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][0] == "body"


def test_tuple_form_field_takes_every_value_of_its_name():
    response = client.post("/pair", data={"values": ["2", "3"]})
    assert response.status_code == 200, response.text
    assert response.json() == {"sum": 5, "type": "tuple"}


def test_tuple_form_field_with_too_many_or_bad_values_is_a_422():
    too_many = client.post("/pair", data={"values": ["1", "2", "3"]})
    assert too_many.status_code == 422
    assert too_many.json()["detail"][0]["loc"][:2] == ["body", "values"]
    not_a_number = client.post("/pair", data={"values": ["1", "x"]})
    assert not_a_number.status_code == 422
    assert not_a_number.json()["detail"][0]["type"] == "int_parsing"


def test_set_form_field_drops_repeats():
    response = client.post("/tags", data={"names": ["b", "a", "b"]})
    assert response.json() == {"names": ["a", "b"]}


def test_schema_gives_a_fixed_tuple_an_item_schema_per_position():
    schema = app.openapi()["components"]["schemas"]
    pair_schema = schema["Body_pair_pair_post"]["properties"]["values"]
    assert pair_schema["prefixItems"] == [{"type": "integer"}, {"type": "integer"}]
    assert (pair_schema["minItems"], pair_schema["maxItems"]) == (2, 2)
    body = app.openapi()["paths"]["/square"]["post"]["requestBody"]["content"]
    corners = body["application/json"]["schema"]
    ref = {"$ref": "#/components/schemas/Coordinate"}
    assert corners["prefixItems"] == [ref, ref]


def test_a_bare_set_or_tuple_form_field_takes_every_value():
    data = {"items": ["first", "second", "first"]}
    assert client.post("/bare/set", data=data).json() == ["first", "second"]
    assert client.post("/bare/tuple", data=data).json() == ["first", "second", "first"]
