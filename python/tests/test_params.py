"""Path, query and header parameters: converted in native code, every failure a 422 in
FastAPI's shape."""

from __future__ import annotations

from typing import Annotated, Optional

import pytest

from vireo import App, Header, Query, Request
from vireo.testclient import TestClient

app = App()


@app.get("/users/{user_id}")
def user(user_id: int):
    return {"user_id": user_id}


@app.get("/items/{name}/{price}")
def item(name: str, price: float, in_stock: bool = True, q: Optional[str] = None):
    return {"name": name, "price": price, "in_stock": in_stock, "q": q}


@app.get("/search")
def search(term: str, limit: int = 10, tags: list[str] = Query([]), ids: list[int] = Query([])):
    return {"term": term, "limit": limit, "tags": tags, "ids": ids}


@app.get("/optional-alias")
def optional_alias(page_size: Optional[Annotated[int, Query(alias="page-size")]] = None):
    return page_size


@app.get("/alias")
def alias(page_size: Annotated[int, Query(alias="page-size")] = 5):
    return page_size


@app.get("/agent")
def agent(user_agent: str = Header(), x_count: int = Header(0)):
    return {"agent": user_agent, "count": x_count}


@app.get("/files/{path:path}")
def files(path: str):
    return path


@app.get("/kw")
def keyword_only(*, a: int, b: str = "x"):
    return [a, b]


@app.get("/big/{n}")
def big(n: int):
    return str(n + 1)


@app.get("/decode/{word}")
def decode(word: str, request: Request):
    return {"word": word, "q": request.query_params.get("q")}


client = TestClient(app)


def test_path_int():
    res = client.get("/users/42")
    assert res.status_code == 200
    assert res.json() == {"user_id": 42}
    assert res.headers["content-type"] == "application/json"


def test_path_int_invalid_is_422_in_fastapis_shape():
    res = client.get("/users/abc")
    assert res.status_code == 422
    assert res.json() == {
        "detail": [
            {
                "type": "int_parsing",
                "loc": ["path", "user_id"],
                "msg": "Input should be a valid integer, unable to parse string as an integer",
                "input": "abc",
            }
        ]
    }
    # In FastAPI's key order too, as a client comparing bodies as text sees them.
    assert [list(error) for error in res.json()["detail"]] == [["type", "loc", "msg", "input"]]


def test_every_error_is_listed():
    res = client.get("/items/pen/cheap?in_stock=maybe")
    assert res.status_code == 422
    detail = res.json()["detail"]
    assert [(e["type"], e["loc"]) for e in detail] == [
        ("float_parsing", ["path", "price"]),
        ("bool_parsing", ["query", "in_stock"]),
    ]


def test_scalars_defaults_and_optional():
    assert client.get("/items/pen/1.5").json() == {
        "name": "pen", "price": 1.5, "in_stock": True, "q": None,
    }
    res = client.get("/items/pen/2", params={"in_stock": "no", "q": "blue ink"})
    assert res.json() == {"name": "pen", "price": 2.0, "in_stock": False, "q": "blue ink"}


def test_missing_required_query():
    res = client.get("/search")
    assert res.status_code == 422
    assert res.json()["detail"] == [
        {"type": "missing", "loc": ["query", "term"], "msg": "Field required", "input": None}
    ]


def test_query_lists():
    res = client.get("/search?term=a&tags=x&tags=y&ids=1&ids=2&limit=3")
    assert res.json() == {"term": "a", "limit": 3, "tags": ["x", "y"], "ids": [1, 2]}
    res = client.get("/search?term=a&ids=1&ids=z")
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["query", "ids", 1]


def test_alias():
    assert client.get("/alias?page-size=7").json() == 7
    assert client.get("/alias").json() == 5


def test_an_annotated_marker_inside_optional_is_seen():
    # How Python 3.10 reads `Annotated[int, Query(...)] = None`; written out, the same on all.
    assert client.get("/optional-alias?page-size=7").json() == 7
    assert client.get("/optional-alias").json() is None
    assert client.get("/optional-alias?page-size=x").status_code == 422


def test_headers():
    res = client.get("/agent", headers={"User-Agent": "pytest", "X-Count": "3"})
    assert res.json() == {"agent": "pytest", "count": 3}
    # The test client sends Starlette's user agent unless told otherwise.
    assert client.get("/agent", headers={"x-count": "3"}).json() == {
        "agent": "testclient", "count": 3}
    bare = TestClient(app)
    del bare.headers["user-agent"]
    res = bare.get("/agent", headers={"x-count": "3"})
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["header", "user-agent"]


def test_path_converter():
    assert client.get("/files/a/b/c.txt").text == "a/b/c.txt"


def test_keyword_only():
    assert client.get("/kw?a=1").json() == [1, "x"]
    assert client.get("/kw?a=1&b=y").json() == [1, "y"]


def test_big_integer():
    assert client.get("/big/123456789012345678901234567890").text == "123456789012345678901234567891"


def test_an_integer_longer_than_python_converts_is_a_422_not_a_500():
    longest = "1" * 4300
    assert client.get(f"/big/{longest}").text == str(int(longest) + 1)
    res = client.get(f"/big/{longest}9")
    assert res.status_code == 422
    [error] = res.json()["detail"]
    assert (error["type"], error["loc"]) == ("int_parsing_size", ["path", "n"])


def test_percent_decoding():
    res = client.get("/decode/caf%C3%A9?q=a+b%26c")
    assert res.json() == {"word": "café", "q": "a b&c"}


class Opaque:
    """A type neither the engine nor pydantic can make from text."""


def test_unsupported_parameter_type_fails_at_registration():
    bad = App()

    @bad.get("/x")
    def handler(x: Opaque):
        return x

    with pytest.raises(TypeError, match="unsupported type"):
        TestClient(bad).get("/x")


@app.get("/tokens")
def tokens(
    x_token: Annotated[Optional[list[str]], Header()] = None,
    x_n: Annotated[list[int], Header()] = [],
):
    return {"tokens": x_token, "n": x_n}


def test_a_header_list_takes_every_field_of_the_name_as_fastapi_does():
    res = client.get("/tokens", headers=[("X-Token", "a"), ("x-token", "b, c"), ("x-n", "1")])
    assert res.json() == {"tokens": ["a", "b, c"], "n": [1]}
    assert client.get("/tokens").json() == {"tokens": None, "n": []}
    res = client.get("/tokens", headers=[("x-n", "1"), ("x-n", "x")])
    assert res.status_code == 422
    assert [e["loc"] for e in res.json()["detail"]] == [["header", "x-n", 1]]
