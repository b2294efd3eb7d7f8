"""A pydantic `Field` beside a parameter marker (`Annotated[int, Field(alias="n"), Query()]`):
what the marker does not give (its name, title, description, examples, `deprecated`,
`json_schema_extra`) is the `Field`'s, and what it gives, even None, is its own, as in FastAPI."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import BeforeValidator, Field

from vireo import App, Body, File, Form, Query
from vireo.testclient import TestClient

Count = Annotated[
    int,
    Field(alias="original", title="Original", description="From Field", examples=[1],
          json_schema_extra={"x-source": "field", "x-retained": True}),
]

app = App()


@app.get("/query")
def read_query(
    preserved: Annotated[Count, Query()],
    replaced: Annotated[Count, Query(alias="replacement", description="From Query",
                                     json_schema_extra={"x-source": "query"})],
    cleared: Annotated[Count, Query(alias=None, title=None, description=None, examples=None,
                                    json_schema_extra=None)],
):
    return {"preserved": preserved, "replaced": replaced, "cleared": cleared}


@app.post("/body")
def read_body(
    preserved: Annotated[Count, Body()],
    replaced: Annotated[Count, Body(alias="replacement")],
    cleared: Annotated[Count, Body(alias=None)],
):
    return {"preserved": preserved, "replaced": replaced, "cleared": cleared}


@app.post("/form")
def read_form(value: Annotated[int, Field(alias="wire"), Form()]):
    return value


@app.post("/file")
def read_file(value: Annotated[bytes, Field(alias="upload"), File()]):
    return len(value)


made = []


def make_five() -> int:
    made.append(5)
    return 5


Doubled = Annotated[Optional[int], BeforeValidator(lambda v: 0 if v is None else int(v) * 2)]


@app.get("/factory")
def read_factory(value: Annotated[int, Field(default_factory=make_five), Query()]):
    return value


@app.get("/validated-default")
def read_validated_default(
    checked: Annotated[Doubled, Field(validate_default=True), Query()] = 10,
    unchecked: Annotated[Doubled, Field(validate_default=True), Query(validate_default=False)] = 10,
):
    return {"checked": checked, "unchecked": unchecked}


client = TestClient(app)


def test_a_query_value_is_read_by_the_field_alias_unless_the_marker_names_it():
    response = client.get("/query", params={"original": "1", "replacement": "2", "cleared": "3"})
    assert response.status_code == 200, response.text
    assert response.json() == {"preserved": 1, "replaced": 2, "cleared": 3}


def test_a_value_missing_is_reported_by_the_name_it_is_read_by():
    response = client.get("/query", params={"original": "1"})
    assert response.status_code == 422
    assert [error["loc"] for error in response.json()["detail"]] == [
        ["query", "replacement"], ["query", "cleared"]]


def test_body_members_are_named_as_query_values_are():
    response = client.post("/body", json={"original": 1, "replacement": 2, "cleared": 3})
    assert response.status_code == 200, response.text
    assert response.json() == {"preserved": 1, "replaced": 2, "cleared": 3}


def test_form_fields_and_files_take_the_field_alias():
    assert client.post("/form", data={"wire": "5"}).json() == 5
    response = client.post("/file", files={"upload": ("a.txt", b"hello")})
    assert response.status_code == 200, response.text
    assert response.json() == 5


def test_the_schema_takes_what_the_marker_does_not_give_from_the_field():
    parameters = client.get("/openapi.json").json()["paths"]["/query"]["get"]["parameters"]
    by_name = {p["name"]: p for p in parameters}
    assert set(by_name) == {"original", "replacement", "cleared"}
    assert by_name["original"]["description"] == "From Field"
    assert by_name["original"]["schema"]["title"] == "Original"
    assert by_name["original"]["schema"]["x-retained"] is True
    assert by_name["replacement"]["description"] == "From Query"
    # Two `json_schema_extra` dicts merge, the marker's winning.
    assert by_name["replacement"]["schema"]["x-source"] == "query"
    assert by_name["replacement"]["schema"]["x-retained"] is True
    # What the marker gives as None is cleared, not taken from the Field.
    assert "description" not in by_name["cleared"]
    assert "x-retained" not in by_name["cleared"]["schema"]
    assert "examples" not in by_name["cleared"]["schema"]


def test_the_field_default_factory_makes_the_default_of_each_request_without_one():
    made.clear()
    assert client.get("/factory").json() == 5
    assert client.get("/factory", params={"value": "10"}).json() == 10
    assert made == [5]


def test_the_field_validate_default_holds_unless_the_marker_says_otherwise():
    assert client.get("/validated-default").json() == {"checked": 20, "unchecked": 10}
