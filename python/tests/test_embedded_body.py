"""Several JSON body values on one handler, or one marked `Body(embed=True)`: the body is one
object with a member for each, read and reported as FastAPI reads and reports it."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Optional

from pydantic import BaseModel

from vireo import App, Body, Depends
from vireo.testclient import TestClient


class Item(BaseModel):
    name: str
    price: float


@dataclasses.dataclass
class User:
    name: str


app = App()


@app.put("/items/{item_id}")
def update(
    item_id: int,
    item: Item,
    user: User,
    importance: Annotated[int, Body()],
    note: Annotated[Optional[str], Body()] = None,
):
    return {"id": item_id, "item": item, "user": user, "importance": importance, "note": note}


@app.put("/embedded")
def embedded(item: Annotated[Item, Body(embed=True, alias="thing")]):
    return item


client = TestClient(app)

MISSING = "Field required"


def missing(*loc):
    return {"type": "missing", "loc": ["body", *loc], "msg": MISSING, "input": None}


def test_each_value_is_its_member_of_the_body():
    body = {"item": {"name": "pen", "price": 2}, "user": {"name": "ann"}, "importance": "3"}
    assert client.put("/items/7", json=body).json() == {
        "id": 7,
        "item": {"name": "pen", "price": 2.0},
        "user": {"name": "ann"},
        "importance": 3,
        "note": None,
    }
    body["note"] = "soon"
    assert client.put("/items/7", json=body).json()["note"] == "soon"


def test_errors_are_located_in_their_member():
    res = client.put("/items/7", json={"item": {"name": "pen"}, "user": {}, "importance": "x"})
    assert res.status_code == 422
    assert res.json()["detail"] == [
        {"type": "missing", "loc": ["body", "item", "price"], "msg": MISSING, "input": {"name": "pen"}},
        {"type": "missing", "loc": ["body", "user", "name"], "msg": MISSING, "input": {}},
        {
            "type": "int_parsing",
            "loc": ["body", "importance"],
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "input": "x",
        },
    ]


def test_an_empty_body_misses_each_required_member():
    res = client.put("/items/7")
    assert res.json()["detail"] == [missing("item"), missing("user"), missing("importance")]
    assert client.put("/items/7", json=None).json()["detail"] == res.json()["detail"]


def test_a_body_that_is_no_object_misses_every_member():
    res = client.put("/items/7", json=[1])
    assert res.json()["detail"] == [
        missing("item"), missing("user"), missing("importance"), missing("note")
    ]


def test_a_null_body_is_no_object_either_and_misses_every_member():
    res = client.put("/items/7", content=b"null", headers={"content-type": "application/json"})
    assert res.status_code == 422
    assert res.json()["detail"] == [
        missing("item"), missing("user"), missing("importance"), missing("note")
    ]


def test_json_that_does_not_parse_is_reported_once():
    res = client.put("/items/7", content=b"{bad", headers={"content-type": "application/json"})
    [error] = res.json()["detail"]
    assert (error["type"], error["loc"]) == ("json_invalid", ["body", 1])


def test_embed_reads_a_single_value_from_its_member_by_alias():
    assert client.put("/embedded", json={"thing": {"name": "a", "price": 1}}).json() == {
        "name": "a",
        "price": 1.0,
    }
    res = client.put("/embedded", json={"name": "a", "price": 1})
    assert res.json()["detail"] == [missing("thing")]


def test_the_schema_is_one_object_named_as_fastapi_names_it():
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/items/{item_id}"]["put"]["requestBody"]
    assert body == {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Body_update_items__item_id__put"}}},
        "required": True,
    }
    component = schema["components"]["schemas"]["Body_update_items__item_id__put"]
    assert component["required"] == ["item", "user", "importance"]
    assert component["properties"]["note"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "title": "Note",
    }
    assert component["properties"]["item"] == {"$ref": "#/components/schemas/Item"}


def current_user(user: User) -> str:
    return user.name


shared = App()


@shared.post("/orders")
def order(item: Item, name: Annotated[str, Depends(current_user)]):
    return {"item": item.name, "by": name}


def test_a_dependency_s_body_value_and_the_handler_s_share_the_object():
    with TestClient(shared) as c:
        body = {"item": {"name": "pen", "price": 1}, "user": {"name": "ann"}}
        assert c.post("/orders", json=body).json() == {"item": "pen", "by": "ann"}
        assert c.post("/orders", json={"item": {"name": "pen", "price": 1}}).json()["detail"] == [
            missing("user")
        ]
