"""Path, query, header and cookie values of types the engine does not convert itself (an
Enum, UUID, date, Decimal, Literal, or a list of one): read as text, then made the type by
pydantic as FastAPI makes it, each failure a 422 entry in the same words."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import uuid
from typing import Annotated, Literal, Optional

import pydantic
import pytest

from vireo import App, Cookie, Depends, Header, Query
from vireo.testclient import TestClient
from vireo.validation import _enum_converter


class Model(str, enum.Enum):
    alexnet = "alexnet"
    lenet = "lenet"


class Level(enum.IntEnum):
    low = 1
    high = 2


app = App()


@app.get("/models/{name}")
def model(
    name: Model,
    level: Level = Level.high,
    models: Annotated[list[Model], Query()] = [],
    day: Optional[datetime.date] = None,
    id: Optional[uuid.UUID] = None,
    amount: Annotated[Optional[decimal.Decimal], Query(ge=0)] = None,
    mode: Optional[Literal["a", "b"]] = None,
    x_level: Annotated[Optional[Level], Header()] = None,
):
    assert isinstance(name, Model) and isinstance(level, Level)
    return {
        "name": name, "level": level, "models": models, "day": day, "id": id,
        "amount": amount, "mode": mode, "x_level": x_level,
        "types": [type(v).__name__ for v in (name, level, day, id, amount)],
    }


def page(order: Literal["asc", "desc"] = "asc"):
    return order


@app.get("/sorted")
def sorted_(order: Annotated[str, Depends(page)]):
    return order


client = TestClient(app)


def test_values_arrive_as_their_types():
    res = client.get(
        "/models/lenet?level=1&models=alexnet&models=lenet&day=2024-01-02"
        "&id=12345678-1234-5678-1234-567812345678&amount=1.5&mode=a",
        headers={"x-level": "2"},
    )
    assert res.json() == {
        "name": "lenet", "level": 1, "models": ["alexnet", "lenet"], "day": "2024-01-02",
        "id": "12345678-1234-5678-1234-567812345678", "amount": 1.5, "mode": "a", "x_level": 2,
        "types": ["Model", "Level", "date", "UUID", "Decimal"],
    }


def test_defaults_are_passed_as_they_are():
    body = client.get("/models/alexnet").json()
    assert (body["level"], body["day"], body["types"][1]) == (2, None, "Level")


@pytest.mark.parametrize(
    "url, entry",
    [
        ("/models/x", {"type": "enum", "loc": ["path", "name"], "msg": "Input should be 'alexnet' or 'lenet'", "input": "x", "ctx": {"expected": "'alexnet' or 'lenet'"}}),
        ("/models/lenet?level=3", {"type": "enum", "loc": ["query", "level"], "msg": "Input should be 1 or 2", "input": "3", "ctx": {"expected": "1 or 2"}}),
        ("/models/lenet?models=a&models=lenet", {"type": "enum", "loc": ["query", "models", 0], "msg": "Input should be 'alexnet' or 'lenet'", "input": "a", "ctx": {"expected": "'alexnet' or 'lenet'"}}),
        ("/models/lenet?day=2024-13-01", {"type": "date_from_datetime_parsing", "loc": ["query", "day"], "msg": "Input should be a valid date or datetime, month value is outside expected range of 1-12", "input": "2024-13-01", "ctx": {"error": "month value is outside expected range of 1-12"}}),
        ("/models/lenet?id=zz", {"type": "uuid_parsing", "loc": ["query", "id"], "msg": "Input should be a valid UUID, invalid character: found `z` at 1", "input": "zz", "ctx": {"error": "invalid character: found `z` at 1"}}),
        ("/models/lenet?amount=-1", {"type": "greater_than_equal", "loc": ["query", "amount"], "msg": "Input should be greater than or equal to 0", "input": "-1", "ctx": {"ge": 0}}),
        ("/models/lenet?mode=c", {"type": "literal_error", "loc": ["query", "mode"], "msg": "Input should be 'a' or 'b'", "input": "c", "ctx": {"expected": "'a' or 'b'"}}),
        ("/sorted?order=up", {"type": "literal_error", "loc": ["query", "order"], "msg": "Input should be 'asc' or 'desc'", "input": "up", "ctx": {"expected": "'asc' or 'desc'"}}),
    ],
)
def test_a_value_that_is_not_its_type_is_a_422_in_fastapis_words(url, entry):
    res = client.get(url)
    assert res.status_code == 422
    assert res.json()["detail"] == [entry]


def test_errors_of_every_kind_are_listed_together():
    res = client.get("/models/x?level=x&day=1", headers={"x-level": "5"})
    locs = [e["loc"] for e in res.json()["detail"]]
    assert sorted(map(tuple, locs)) == [("header", "x-level"), ("path", "name"), ("query", "day"), ("query", "level")]


def test_a_type_pydantic_cannot_read_is_refused_at_startup():
    class Opaque:
        pass

    bad = App()

    def handler(v=None):
        return v

    handler.__annotations__ = {"v": Opaque}
    bad.get("/")(handler)
    with pytest.raises(TypeError, match="unsupported type .*Opaque.* for a query value"):
        TestClient(bad).get("/")


def test_without_pydantic_enums_are_still_read():
    convert = _enum_converter(list[Level], {}, "query", "lv", "f(lv)")
    assert convert(["1", "2"]) == (True, [Level.low, Level.high])
    ok, errors = convert(["1", "9"])
    assert not ok
    assert json.loads(errors) == [
        {"type": "enum", "loc": ["query", "lv", 1], "msg": "Input should be 1 or 2", "input": "9", "ctx": {"expected": "1 or 2"}}
    ]
    three = enum.Enum("Three", {"a": "a", "b": "b", "c": "c"})
    _, errors = _enum_converter(three, {}, "path", "p", "f(p)")("d")
    assert json.loads(errors)[0]["msg"] == "Input should be 'a', 'b' or 'c'"
    with pytest.raises(TypeError, match="need pydantic"):
        _enum_converter(uuid.UUID, {}, "query", "u", "f(u)")


def test_the_schema_refers_to_enums_as_components_as_fastapi_does():
    schema = client.get("/openapi.json").json()
    params = {p["name"]: p for p in schema["paths"]["/models/{name}"]["get"]["parameters"]}
    assert params["name"]["schema"] == {"$ref": "#/components/schemas/Model"}
    assert params["level"]["schema"] == {"$ref": "#/components/schemas/Level", "default": 2}
    assert params["x-level"]["schema"] == {
        "anyOf": [{"$ref": "#/components/schemas/Level"}, {"type": "null"}], "title": "X-Level"
    }
    assert params["id"]["schema"] == {
        "anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}], "title": "Id"
    }
    assert params["mode"]["schema"]["anyOf"][-1] == {"type": "null"}
    assert schema["components"]["schemas"]["Model"] == {
        "type": "string", "enum": ["alexnet", "lenet"], "title": "Model"
    }


def test_a_typed_parameter_s_description_deprecation_and_examples_reach_the_schema():
    described = App()

    @described.get("/d")
    def handler(level: Annotated[Level, Query(description="how loud", deprecated=True, examples=[1])] = Level.low):
        return level

    [param] = TestClient(described).get("/openapi.json").json()["paths"]["/d"]["get"]["parameters"]
    assert (param["description"], param["deprecated"]) == ("how loud", True)
    assert param["schema"]["examples"] == [1]
    assert param["schema"]["default"] == 1


TEXTS = ["3", "3.0", "3.00", "-3.0", "3.", ".5", "3.5", "1_000", "+1_0", "_1", "1_", "1__0",
         "1_0.5", " 7 ", "\t7", "1e3", "0x10", "00012", "-0", "nan", "inf", "-inf", "TRUE",
         "true", " true", "True ", "yes", "on", "off", "n", "0", "1", "1.0", "",
         "9" * 30, "9_" * 15 + "9", "9" * 20 + ".0"]


@pytest.mark.parametrize("kind", ["int", "float", "bool"])
def test_numbers_and_booleans_are_read_from_text_as_pydantic_reads_them(kind):
    fastapi = pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient as FastAPIClient

    import vireo

    def build(mod):
        app = mod.FastAPI() if mod is fastapi else mod.App()
        tp = {"int": int, "float": float, "bool": bool}[kind]

        def value(v):
            return {"v": v}

        value.__annotations__ = {"v": tp}  # this module's annotations are strings
        app.get("/value")(value)
        return app

    theirs = FastAPIClient(build(fastapi))
    with TestClient(build(vireo)) as ours:
        for text in TEXTS:
            if kind == "float" and text.strip("+-") in ("nan", "inf"):
                continue  # read alike, but JSON has no such numbers to answer with
            mine = ours.get("/value", params={"v": text})
            other = theirs.get("/value", params={"v": text})
            assert (mine.status_code, mine.text) == (other.status_code, other.text), repr(text)


class _Item(pydantic.BaseModel):
    title: str


def _handler_reading(source: str, annotation: object):
    """`read(value)`, `value` annotated `annotation` and read from `source`."""
    if source == "path":
        def read(value):
            return "never"
    else:
        marker = {"query": Query(), "header": Header(), "cookie": Cookie()}[source]

        def read(value=marker):
            return "never"
    read.__annotations__ = {"value": annotation}
    return read


@pytest.mark.parametrize("source", ["path", "query", "header", "cookie"])
@pytest.mark.parametrize("annotation", [dict, dict[str, int], dict[str, _Item], list[_Item],
                                        tuple[_Item, _Item], Optional[dict]])
def test_a_parameter_that_cannot_come_from_its_source_is_refused_when_the_app_is_built(
        source, annotation):
    app = App()
    app.get("/items/{value}" if source == "path" else "/items")(_handler_reading(source, annotation))
    with pytest.raises(TypeError, match=rf"read\(value\): (a {source} parameter is a value|only "
                                        r"query and header parameters can be lists)"):
        TestClient(app).get("/items")


TwoAtMost = Annotated[set[str], pydantic.Field(max_length=2)]
sets = App()


@sets.get("/set")
def a_set(tags: Annotated[set[str], Query()] = set(),
          pair: Annotated[Optional[tuple[int, int]], Query()] = None,
          few: Annotated[Optional[TwoAtMost], Query()] = None):
    return {"tags": sorted(tags), "tags_type": type(tags).__name__,
            "pair": pair, "pair_type": type(pair).__name__,
            "few": sorted(few) if few is not None else None}


def test_a_set_or_tuple_query_parameter_arrives_as_one_and_nested_metadata_checks_it():
    client = TestClient(sets)
    res = client.get("/set?tags=b&tags=a&tags=b&pair=1&pair=2&few=x&few=y")
    assert res.json() == {"tags": ["a", "b"], "tags_type": "set", "pair": [1, 2],
                          "pair_type": "tuple", "few": ["x", "y"]}
    res = client.get("/set?few=x&few=y&few=z")
    assert res.status_code == 422
    assert res.json()["detail"][0]["type"] == "too_long"
    res = client.get("/set?pair=1")
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"][:2] == ["query", "pair"]
    few = sets.openapi()["paths"]["/set"]["get"]["parameters"][2]["schema"]["anyOf"][0]
    assert (few["type"], few["uniqueItems"], few["maxItems"]) == ("array", True, 2)
