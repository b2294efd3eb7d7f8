"""Errors: HTTPException, any other exception (500, logged, the app goes on), 404, 405, and
bodies that do not fit their model."""

from __future__ import annotations

import dataclasses
import logging
from typing import Annotated, Optional

import msgspec
import pydantic

from vireo import App, Body, HTTPException, RequestValidationError
from vireo.testclient import TestClient

app = App()


@dataclasses.dataclass
class Item:
    name: str
    price: float
    tags: list[str] = dataclasses.field(default_factory=list)


class Model(pydantic.BaseModel):
    name: str
    price: float


class Struct(msgspec.Struct):
    name: str
    price: float


class OneError(RequestValidationError):
    """Reports its error as a single object rather than a list."""

    def errors(self):
        return {"type": "custom", "loc": ["query", "q"], "msg": "not this one"}


@app.get("/one-error")
def one_error():
    raise OneError([])


@app.get("/teapot")
def teapot():
    raise HTTPException(418, "I'm a teapot", headers={"x-reason": "tea"})


@app.get("/forbidden")
def forbidden():
    raise HTTPException(403)


@app.get("/boom")
def boom():
    raise ValueError("boom")


@app.get("/aboom")
async def aboom():
    import asyncio

    await asyncio.sleep(0.001)
    raise ValueError("async boom")


@app.post("/dc", status_code=201)
def dc(item: Item):
    return item


@app.post("/pd")
def pd(item: Model):
    return item


@app.post("/ms")
def ms(item: Struct):
    return item


@app.post("/opt")
def opt(item: Optional[Item] = None):
    return {"item": item}


@app.post("/mixed/{n}")
def mixed(n: int, item: Item):
    return n


class Counted(pydantic.BaseModel):
    count: int


@app.post("/count")
def count(item: Counted):
    return item


@app.post("/text")
def text(body: Annotated[str, Body()]):
    return {"body": body}


@app.post("/pair")
def pair(a: Annotated[int, Body(embed=True)], b: Annotated[int, Body(embed=True)]):
    return a + b


client = TestClient(app, raise_server_exceptions=False)


def test_http_exception():
    res = client.get("/teapot")
    assert res.status_code == 418
    assert res.json() == {"detail": "I'm a teapot"}
    assert res.headers["x-reason"] == "tea"
    res = client.get("/forbidden")
    assert (res.status_code, res.json()) == (403, {"detail": "Forbidden"})


def test_exception_is_500_logged_and_the_app_goes_on(caplog):
    with caplog.at_level(logging.ERROR, logger="vireo"):
        res = client.get("/boom")
    assert res.status_code == 500
    assert res.text == "Internal Server Error"
    assert any("boom" in (r.exc_text or "") or r.exc_info for r in caplog.records)
    assert client.get("/aboom").status_code == 500
    assert client.get("/teapot").status_code == 418


def test_not_found_and_method_not_allowed():
    res = client.get("/nope")
    assert (res.status_code, res.json()) == (404, {"detail": "Not Found"})
    res = client.delete("/teapot")
    assert (res.status_code, res.json()) == (405, {"detail": "Method Not Allowed"})
    assert res.headers["allow"] == "GET"


def test_dataclass_body():
    res = client.post("/dc", json={"name": "pen", "price": "1.5", "tags": ["a"]})
    assert res.status_code == 201
    assert res.json() == {"name": "pen", "price": 1.5, "tags": ["a"]}


def test_dataclass_body_errors_are_all_listed():
    res = client.post("/dc", json={"price": "cheap", "tags": [1]})
    assert res.status_code == 422
    detail = res.json()["detail"]
    assert [(e["type"], e["loc"]) for e in detail] == [
        ("missing", ["body", "name"]),
        ("float_parsing", ["body", "price"]),
        ("string_type", ["body", "tags", 0]),
    ]


def test_pydantic_body():
    assert client.post("/pd", json={"name": "a", "price": 2}).json() == {"name": "a", "price": 2.0}
    res = client.post("/pd", json={"name": "a"})
    assert res.status_code == 422
    error = res.json()["detail"][0]
    assert (error["type"], error["loc"], error["msg"]) == (
        "missing", ["body", "price"], "Field required",
    )


def test_a_pydantic_body_that_is_no_object_is_refused_in_fastapis_words():
    res = client.post("/pd", json=[1, 2])
    assert res.json()["detail"] == [
        {
            "type": "model_attributes_type",
            "loc": ["body"],
            "msg": "Input should be a valid dictionary or object to extract fields from",
            "input": [1, 2],
        }
    ]


def test_msgspec_body():
    assert client.post("/ms", json={"name": "a", "price": 2.5}).json() == {"name": "a", "price": 2.5}
    res = client.post("/ms", json={"name": "a", "price": "x"})
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["body"]


def test_invalid_and_missing_body():
    res = client.post("/dc", content=b"{not json", headers={"content-type": "application/json"})
    assert res.status_code == 422
    error = res.json()["detail"][0]
    assert (error["type"], error["loc"][0], error["msg"]) == ("json_invalid", "body", "JSON decode error")
    res = client.post("/dc")
    assert res.status_code == 422
    assert res.json()["detail"] == [
        {"type": "missing", "loc": ["body"], "msg": "Field required", "input": None}
    ]


def test_a_json_body_that_cannot_be_decoded_is_a_400_not_a_500():
    # Not UTF-8, and nested deeper than the parser goes: refused as FastAPI refuses them.
    for body in (b'{"name": "\xff", "price": 1}', b"[" * 100_000):
        for path in ("/dc", "/pd", "/pair"):
            res = client.post(path, content=body, headers={"content-type": "application/json"})
            assert (res.status_code, res.json()) == (
                400, {"detail": "There was an error parsing the body"}), (path, body[:20])


def test_a_text_body_that_is_not_utf8_is_a_422_whose_input_is_readable():
    res = client.post("/text", content=b"caf\xe9", headers={"content-type": "text/plain"})
    assert res.status_code == 422
    [error] = res.json()["detail"]
    assert (error["type"], error["loc"], error["input"]) == ("string_unicode", ["body"], "caf\ufffd")
    assert client.post("/text", content=b"caf\xc3\xa9",
                       headers={"content-type": "text/plain"}).json() == {"body": "caf\u00e9"}


def test_optional_body():
    assert client.post("/opt").json() == {"item": None}


def test_path_and_body_errors_together():
    res = client.post("/mixed/x", json={"name": 1})
    assert [e["loc"] for e in res.json()["detail"]] == [
        ["path", "n"], ["body", "name"], ["body", "price"],
    ]


def test_a_validation_error_that_reports_one_object_is_listed_as_one_error():
    res = client.get("/one-error")
    assert res.status_code == 422
    assert res.json() == {"detail": [{"type": "custom", "loc": ["query", "q"], "msg": "not this one"}]}


def test_a_422_is_written_even_when_the_input_is_not_json_text():
    # Infinity, NaN and a lone surrogate parse (Python's parser takes them) but cannot be
    # written back as JSON: the 422 gives null and U+FFFD in their place.
    for body, shown in ((b'{"count": 1e999}', None), (b'{"count": NaN}', None),
                        (b'{"count": "\\ud800"}', "\ufffd")):
        res = client.post("/count", content=body, headers={"content-type": "application/json"})
        assert res.status_code == 422, body
        [error] = res.json()["detail"]
        assert (error["loc"], error["input"]) == (["body", "count"], shown), body
