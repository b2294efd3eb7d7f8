"""pydantic `Field` settings on a parameter marker (`strict`, `allow_inf_nan`, `max_digits`,
`decimal_places`, `union_mode`, `validate_default`), applied as FastAPI applies them."""

from __future__ import annotations

import decimal
import re
from typing import Annotated, Optional, Union

import pydantic

from vireo import App, Body, Form, Header, Query
from vireo.testclient import TestClient

app = App()


@app.get("/numbers")
def numbers(n: Annotated[int, Query(strict=True)] = 0,
            f: Annotated[float, Query(allow_inf_nan=False)] = 0.0,
            d: Annotated[Optional[decimal.Decimal], Query(max_digits=4, decimal_places=2)] = None):
    return {"n": n, "f": f, "d": str(d)}


@app.get("/defaults")
def defaults(n: Annotated[int, Query(validate_default=True, ge=0)] = -1):
    return {"n": n}


@app.get("/made-defaults")
def made_defaults(n: Annotated[int, Query(validate_default=True)] = "5",
                  x_count: Annotated[int, Header(validate_default=True)] = "7"):
    return {"n": n, "x_count": x_count}


@app.post("/union")
def union(x: Annotated[Union[int, str], Form(union_mode="left_to_right")]):
    return {"x": x, "type": type(x).__name__}


@app.post("/body")
def body(price: Annotated[decimal.Decimal, Body(embed=True, decimal_places=1)]):
    return {"price": str(price)}


client = TestClient(app)


def error_of(res):
    assert res.status_code == 422, res.text
    [error] = res.json()["detail"]
    return error["type"], error["loc"]


def test_settings_pydantic_checks_reach_a_query_value():
    assert error_of(client.get("/numbers?n=3")) == ("int_type", ["query", "n"])
    assert error_of(client.get("/numbers?f=inf")) == ("finite_number", ["query", "f"])
    assert error_of(client.get("/numbers?d=12.345")) == ("decimal_max_digits", ["query", "d"])
    assert client.get("/numbers?f=2.5&d=1.5").json() == {"n": 0, "f": 2.5, "d": "1.5"}


def test_a_default_is_validated_when_asked_and_only_when_used():
    assert error_of(client.get("/defaults")) == ("greater_than_equal", ["query", "n"])
    assert client.get("/defaults?n=3").json() == {"n": 3}
    assert client.get("/made-defaults").json() == {"n": 5, "x_count": 7}


def test_union_mode_and_body_settings():
    assert client.post("/union", data={"x": "5"}).json() == {"x": 5, "type": "int"}
    assert client.post("/union", data={"x": "five"}).json() == {"x": "five", "type": "str"}
    assert error_of(client.post("/body", json={"price": "1.25"})) == (
        "decimal_max_places", ["body", "price"])
    assert client.post("/body", json={"price": "1.5"}).json() == {"price": "1.5"}


def test_fastapis_other_marker_arguments_are_taken():
    marker = Query(annotation=int, alias_priority=2, fail_fast=True)
    assert (marker.alias_priority, marker.field_options) == (2, {"fail_fast": True})


def _doubled(value):
    return 0 if value is None else int(value) * 2


Doubled = Annotated[Optional[int], pydantic.BeforeValidator(_doubled)]


class ByValidationAlias(pydantic.BaseModel):
    p: str = pydantic.Field(alias="p_alias", validation_alias="p_val_alias")


extra = App()


@extra.get("/doubled")
def doubled(value: Annotated[Doubled, Query(validate_default=True)] = 10):
    return value


@extra.get("/made")
def made(value: Annotated[Doubled, Query(default_factory=lambda: 1)]):
    return value


@extra.get("/model")
def by_validation_alias(q: Annotated[ByValidationAlias, Query()]):
    return q.p


@extra.get("/compiled")
def compiled(code: Annotated[str, Query(pattern=re.compile("^abc$", re.IGNORECASE))]):
    return code


def test_a_validated_default_goes_through_the_metadata_beside_the_marker():
    client = TestClient(extra)
    assert client.get("/doubled").json() == 20
    assert client.get("/doubled?value=3").json() == 6
    # A default factory's parameter keeps its metadata for a given value too.
    assert client.get("/made?value=3").json() == 6
    assert client.get("/made").json() == 1


def test_a_model_field_is_read_by_its_validation_alias():
    client = TestClient(extra)
    assert client.get("/model?p_val_alias=hi").text == "hi"
    res = client.get("/model?p_alias=hi")
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["query", "p_val_alias"]
    [param] = extra.openapi()["paths"]["/model"]["get"]["parameters"]
    assert (param["name"], param["schema"]["title"]) == ("p_val_alias", "P Val Alias")


def test_a_compiled_pattern_keeps_its_flags():
    client = TestClient(extra)
    assert client.get("/compiled?code=ABC").text == "ABC"
    assert error_of(client.get("/compiled?code=abd")) == (
        "string_pattern_mismatch", ["query", "code"])
    [param] = extra.openapi()["paths"]["/compiled"]["get"]["parameters"]
    assert param["schema"]["pattern"] == "^abc$"


def test_a_field_default_factory_with_no_marker_is_the_query_default_as_in_fastapi():
    inferred = App()

    @inferred.get("/inferred")
    @inferred.get("/inferred/{item_id}")
    def read(item_id: Annotated[int, pydantic.Field(default_factory=lambda: 5)]):
        return {"item_id": item_id}

    client = TestClient(inferred)
    assert client.get("/inferred/1").json() == {"item_id": 1}
    assert client.get("/inferred?item_id=2").json() == {"item_id": 2}
    assert client.get("/inferred").json() == {"item_id": 5}


def test_a_field_that_names_the_value_validates_it_without_a_pydantic_warning():
    import warnings

    named = App()

    @named.get("/count")
    def count(n: Annotated[int, pydantic.Field(alias="count", gt=0, deprecated=True)] = 1):
        return {"n": n}

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # pydantic's warnings of unused fields
        client = TestClient(named)
        assert client.get("/count?count=3").json() == {"n": 3}
    assert client.get("/count?count=0").json()["detail"][0]["type"] == "greater_than"
