"""Constraints on path, query, header and cookie values (`Query(ge=1)`, `Path(max_length=8)`,
`pattern=`): checked in native code before the handler runs, each failure a 422 entry in
pydantic's words, as FastAPI gives it; and shown in the OpenAPI schema."""

from __future__ import annotations

from typing import Annotated, Optional

import pytest

from vireo import App, Cookie, Depends, Header, Path, Query
from vireo.testclient import TestClient

app = App()


@app.get("/numbers")
def numbers(
    a: Annotated[int, Query(ge=1, le=10)] = 5,
    b: Annotated[float, Query(gt=0.5, lt=2)] = 1.0,
    c: Annotated[Optional[int], Query(multiple_of=3)] = None,
    d: Annotated[Optional[float], Query(multiple_of=0.5)] = None,
):
    return [a, b, c, d]


@app.get("/words/{word}")
def words(
    word: Annotated[str, Path(min_length=2, max_length=4, pattern="^[a-zé]+$")],
    q: Annotated[Optional[str], Query(min_length=1)] = None,
    tags: Annotated[list[str], Query(min_length=1, max_length=2)] = ["x"],
    ids: Annotated[list[int], Query(min_length=2)] = [0, 0],
    old: Annotated[str, Query(regex="^v")] = "v1",
):
    return [word, q, tags, ids, old]


@app.get("/fields")
def fields(x_n: Annotated[int, Header(ge=0)] = 0, session: Annotated[str, Cookie(max_length=3)] = ""):
    return [x_n, session]


def paging(limit: Annotated[int, Query(le=100)] = 10):
    return limit


@app.get("/dep")
def dep(limit: Annotated[int, Depends(paging)]):
    return limit


client = TestClient(app)


def error(path: str, **kwargs):
    res = client.get(path, **kwargs)
    assert res.status_code == 422, res.text
    [entry] = res.json()["detail"]
    return entry


@pytest.mark.parametrize(
    "query, entry",
    [
        ("a=0", {"type": "greater_than_equal", "loc": ["query", "a"], "msg": "Input should be greater than or equal to 1", "input": "0", "ctx": {"ge": 1}}),
        ("a=11", {"type": "less_than_equal", "loc": ["query", "a"], "msg": "Input should be less than or equal to 10", "input": "11", "ctx": {"le": 10}}),
        ("b=0.5", {"type": "greater_than", "loc": ["query", "b"], "msg": "Input should be greater than 0.5", "input": "0.5", "ctx": {"gt": 0.5}}),
        # A float value's limits are floats in `ctx`, and written as given in the message.
        ("b=2", {"type": "less_than", "loc": ["query", "b"], "msg": "Input should be less than 2", "input": "2", "ctx": {"lt": 2.0}}),
        ("b=nan", {"type": "less_than", "loc": ["query", "b"], "msg": "Input should be less than 2", "input": "nan", "ctx": {"lt": 2.0}}),
        ("c=4", {"type": "multiple_of", "loc": ["query", "c"], "msg": "Input should be a multiple of 3", "input": "4", "ctx": {"multiple_of": 3}}),
        ("d=1.25", {"type": "multiple_of", "loc": ["query", "d"], "msg": "Input should be a multiple of 0.5", "input": "1.25", "ctx": {"multiple_of": 0.5}}),
        ("a=99999999999999999999999", {"type": "less_than_equal", "loc": ["query", "a"], "msg": "Input should be less than or equal to 10", "input": "99999999999999999999999", "ctx": {"le": 10}}),
    ],
)
def test_number_limits_answer_as_pydantic_does(query, entry):
    got = error(f"/numbers?{query}")
    assert got == entry
    assert list(got) == ["type", "loc", "msg", "input", "ctx"]


def test_values_within_their_limits_reach_the_handler():
    assert client.get("/numbers?a=1&b=1.99&c=-3&d=1.5").json() == [1, 1.99, -3, 1.5]
    assert client.get("/numbers?a=10").json() == [10, 1.0, None, None]
    assert client.get("/words/%C3%A9t%C3%A9?q=a&tags=1&tags=2&ids=1&ids=2&old=v2").json() == [
        "été", "a", ["1", "2"], [1, 2], "v2"
    ]


@pytest.mark.parametrize(
    "path, entry",
    [
        ("/words/a", {"type": "string_too_short", "loc": ["path", "word"], "msg": "String should have at least 2 characters", "input": "a", "ctx": {"min_length": 2}}),
        # Characters, not bytes: five two-byte letters are five.
        ("/words/" + "%C3%A9" * 5, {"type": "string_too_long", "loc": ["path", "word"], "msg": "String should have at most 4 characters", "input": "ééééé", "ctx": {"max_length": 4}}),
        ("/words/AB", {"type": "string_pattern_mismatch", "loc": ["path", "word"], "msg": "String should match pattern '^[a-zé]+$'", "input": "AB", "ctx": {"pattern": "^[a-zé]+$"}}),
        ("/words/ab?q=", {"type": "string_too_short", "loc": ["query", "q"], "msg": "String should have at least 1 character", "input": "", "ctx": {"min_length": 1}}),
        ("/words/ab?old=x", {"type": "string_pattern_mismatch", "loc": ["query", "old"], "msg": "String should match pattern '^v'", "input": "x", "ctx": {"pattern": "^v"}}),
        ("/words/ab?tags=1&tags=2&tags=3", {"type": "too_long", "loc": ["query", "tags"], "msg": "List should have at most 2 items after validation, not 3", "input": ["1", "2", "3"], "ctx": {"field_type": "List", "max_length": 2, "actual_length": 3}}),
        ("/words/ab?ids=1", {"type": "too_short", "loc": ["query", "ids"], "msg": "List should have at least 2 items after validation, not 1", "input": ["1"], "ctx": {"field_type": "List", "min_length": 2, "actual_length": 1}}),
        # An item that does not convert is the one error, as pydantic reports it.
        ("/words/ab?ids=x&ids=1", {"type": "int_parsing", "loc": ["query", "ids", 0], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}),
    ],
)
def test_text_and_list_limits_answer_as_pydantic_does(path, entry):
    assert error(path) == entry


def test_header_cookie_and_dependency_values_are_checked_too():
    assert error("/fields", headers={"x-n": "-1"})["loc"] == ["header", "x-n"]
    assert error("/fields", headers={"cookie": "session=abcd"})["type"] == "string_too_long"
    assert error("/dep?limit=101")["loc"] == ["query", "limit"]
    assert client.get("/dep?limit=100").json() == 100


def test_every_failing_value_is_listed():
    res = client.get("/numbers?a=0&b=3")
    assert [e["loc"] for e in res.json()["detail"]] == [["query", "a"], ["query", "b"]]


@pytest.mark.parametrize(
    "marker, annotation, message",
    [
        (Query(ge=1), str, "ge is for int and float values"),
        (Query(min_length=1), int, "min_length is for str values and lists"),
        (Query(pattern="x"), list[str], "pattern is for str values"),
    ],
)
def test_a_constraint_the_type_cannot_have_is_refused_at_startup(marker, annotation, message):
    bad = App()

    def handler(v=None):
        return v

    handler.__annotations__ = {"v": Annotated[annotation, marker]}
    bad.get("/")(handler)
    with pytest.raises(TypeError, match=message):
        TestClient(bad).get("/")


def test_a_pattern_that_does_not_compile_is_refused_with_the_reason():
    bad = App()

    @bad.get("/")
    def handler(v: Annotated[str, Query(pattern="(")] = ""):
        return v

    with pytest.raises(ValueError, match=r"pattern '\(' is not a valid regular expression"):
        TestClient(bad).get("/")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ge": "1"}, "ge must be a number"),
        ({"le": True}, "le must be a number"),
        ({"multiple_of": 0}, "multiple_of must be above 0"),
        ({"min_length": -1}, "min_length must be an integer of 0 or more"),
        ({"pattern": "a", "regex": "b"}, "give `pattern` or `regex`, not both"),
    ],
)
def test_a_malformed_constraint_is_a_type_error(kwargs, message):
    with pytest.raises(TypeError, match=message):
        Query(**kwargs)


def test_the_schema_shows_limits_and_descriptions_as_fastapi_does():
    schema = App()

    @schema.get("/s/{p}")
    def handler(
        p: Annotated[str, Path(min_length=2, pattern="^[a-z]+$")],
        x_n: Annotated[int, Header(ge=0)] = 0,
        n: Annotated[int, Query(gt=0, le=9, title="N!", description="how many", deprecated=True, examples=[3])] = 1,
        tags: Annotated[list[str], Query(max_length=2)] = [],
        q: Annotated[Optional[str], Query(min_length=1)] = None,
        hidden: Annotated[int, Query(include_in_schema=False)] = 0,
    ):
        return p

    params = TestClient(schema).get("/openapi.json").json()["paths"]["/s/{p}"]["get"]["parameters"]
    assert [(p["in"], p["name"]) for p in params] == [
        ("path", "p"), ("query", "n"), ("query", "tags"), ("query", "q"), ("header", "x-n")
    ]
    by_name = {p["name"]: p for p in params}
    assert by_name["p"]["schema"] == {"type": "string", "minLength": 2, "pattern": "^[a-z]+$", "title": "P"}
    assert by_name["x-n"]["schema"] == {"type": "integer", "minimum": 0, "title": "X-N", "default": 0}
    assert by_name["n"] == {
        "name": "n", "in": "query", "required": False, "description": "how many", "deprecated": True,
        "schema": {"type": "integer", "exclusiveMinimum": 0, "maximum": 9, "title": "N!",
                   "description": "how many", "deprecated": True, "examples": [3], "default": 1},
    }
    assert by_name["tags"]["schema"] == {"type": "array", "items": {"type": "string"}, "maxItems": 2, "title": "Tags", "default": []}
    assert by_name["q"]["schema"] == {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "title": "Q"}
