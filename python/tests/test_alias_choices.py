"""`validation_alias=AliasChoices(...)`: a parameter read by the first of its names the
request has, as FastAPI reads it, from every source; errors name the name the value came by
(the first choice when none is there), and so does the schema."""

from __future__ import annotations

from typing import Annotated

import pydantic
import pytest
from pydantic import AliasChoices, AliasPath

from vireo import APIRouter, App, Body, Cookie, Form, Header, Path, Query, UploadFile
from vireo.testclient import TestClient

app = App()


@app.get("/query")
def query(value: Annotated[int, Query(alias="ignored",
                                      validation_alias=AliasChoices("first", "second"))],
          items: Annotated[list[str], Query(validation_alias=AliasChoices("item", "tag"))]
          = ["none"]):  # noqa: B006
    return {"value": value, "items": items}


@app.get("/header")
def header(token: Annotated[str, Header(validation_alias=AliasChoices("X-Token",
                                                                       "X-Legacy_Token"))]):
    return token


@app.get("/cookie")
def cookie(session: Annotated[str | None, Cookie(validation_alias=AliasChoices(
        "session", "sessionId"))] = None):
    return session


@app.post("/embedded")
def embedded(value: Annotated[int, Body(embed=True, validation_alias=AliasChoices("a", "b"))]):
    return value


@app.post("/form")
def form(name: Annotated[str, Form(validation_alias=AliasChoices("name", "username"))]):
    return name


class Filters(pydantic.BaseModel):
    limit: Annotated[int, pydantic.Field(validation_alias=AliasChoices("limit", "max"))] = 10


@app.get("/model")
def model(filters: Annotated[Filters, Query()]):
    return filters.limit


@app.post("/path-ignored")
def path_ignored(value: Annotated[int, Body(embed=True,
                                            validation_alias=AliasPath("nested", "value"))]):
    return value


router = APIRouter()


@router.get("/")
def in_router(item: Annotated[int, Path(validation_alias=AliasChoices("item_id", "id"))]):
    return item


app.include_router(router, prefix="/items/{item_id}")
app.include_router(router, prefix="/legacy/{id}")

client = TestClient(app)


@pytest.mark.parametrize("name", ["first", "second"])
def test_a_query_value_comes_by_either_name(name):
    assert client.get("/query", params={name: "3"}).json() == {"value": 3, "items": ["none"]}


def test_the_first_choice_wins_when_both_are_given():
    assert client.get("/query?second=2&first=1").json()["value"] == 1


def test_a_list_comes_by_the_first_name_given():
    assert client.get("/query?first=1&tag=x&tag=y").json()["items"] == ["x", "y"]


def test_an_error_names_the_name_the_value_came_by():
    detail = client.get("/query?second=abc").json()["detail"]
    assert [(e["type"], e["loc"]) for e in detail] == [("int_parsing", ["query", "second"])]


def test_a_missing_value_is_named_by_the_first_choice():
    detail = client.get("/query").json()["detail"]
    assert [(e["type"], e["loc"]) for e in detail] == [("missing", ["query", "first"])]


@pytest.mark.parametrize("name", ["x-token", "X-LEGACY_TOKEN"])
def test_a_header_choice_is_its_literal_name_in_any_case(name):
    response = client.get("/header", headers={name: "t"})
    assert response.status_code == 200
    assert response.text == "t"


def test_a_header_choice_is_not_converted_from_underscores():
    assert client.get("/header", headers={"X-Legacy-Token": "t"}).status_code == 422


def test_a_cookie_comes_by_either_name():
    assert client.get("/cookie", headers={"cookie": "sessionId=s2"}).text == "s2"
    assert client.get("/cookie", headers={"cookie": "sessionid=s2"}).json() is None


@pytest.mark.parametrize("body, expected", [({"a": 1}, 1), ({"b": 2}, 2), ({"b": 2, "a": 0}, 0)])
def test_an_embedded_body_member_comes_by_either_name(body, expected):
    assert client.post("/embedded", json=body).json() == expected


def test_an_embedded_member_error_names_its_choice():
    detail = client.post("/embedded", json={"b": "x"}).json()["detail"]
    assert [(e["type"], e["loc"]) for e in detail] == [("int_parsing", ["body", "b"])]
    detail = client.post("/embedded", json={"c": 1}).json()["detail"]
    assert [(e["type"], e["loc"]) for e in detail] == [("missing", ["body", "a"])]


def test_a_form_field_comes_by_either_name():
    assert client.post("/form", data={"username": "ada"}).text == "ada"
    detail = client.post("/form", data={"login": "ada"}).json()["detail"]
    assert [(e["type"], e["loc"]) for e in detail] == [("missing", ["body", "name"])]


def test_a_parameter_model_field_comes_by_either_name():
    assert client.get("/model?max=5").json() == 5
    assert client.get("/model?limit=6&max=5").json() == 6
    assert client.get("/model").json() == 10


def test_an_alias_path_is_not_followed_as_in_fastapi():
    response = client.post("/path-ignored", json={"value": 1, "nested": {"value": 3}})
    assert response.json() == 1


@pytest.mark.parametrize("path, expected", [("/items/4/", 4), ("/legacy/5/", 5)])
def test_a_path_parameter_is_the_choice_its_route_has(path, expected):
    assert client.get(path).json() == expected


def test_the_schema_names_the_first_choice():
    parameters = app.openapi()["paths"]["/query"]["get"]["parameters"]
    assert [p["name"] for p in parameters] == ["first", "item"]


def test_a_validation_alias_of_another_kind_is_refused_when_the_route_is_made():
    with pytest.raises(TypeError, match="validation_alias is a name, AliasChoices or AliasPath"):
        Query(validation_alias=3)  # type: ignore[arg-type]


class Upload(pydantic.BaseModel):
    file: UploadFile
    note: str = ""


other = App()


@other.post("/upload")
def upload(form: Annotated[Upload, Form()]):
    return {"filename": form.file.filename, "note": form.note}


def test_a_form_model_may_have_an_upload_file_field():
    response = TestClient(other).post("/upload", files={"file": ("a.txt", b"hi")},
                                      data={"note": "n"})
    assert response.json() == {"filename": "a.txt", "note": "n"}
    schema = other.openapi()["components"]["schemas"]
    assert any(p.get("format") == "binary"
               for s in schema.values() for p in s.get("properties", {}).values())
