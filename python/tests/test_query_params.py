"""`QueryParams`, what `request.query_params` and `websocket.query_params` give, against
Starlette's: made from the same shapes, and read, printed and compared alike."""

from __future__ import annotations

import pytest
from starlette.datastructures import QueryParams as StarletteQueryParams

from vireo import App, Request
from vireo.datastructures import QueryParams
from vireo.testclient import TestClient

QUERIES = [
    "",
    "a=1",
    "x=1&x=2&y=3",
    "a+b=c+d&e=%26%3D&f",
    "caf%C3%A9=th%C3%A9&empty=&&k=v",
    "star=*&tilde=~&slash=/&quote='",
    "%FF=bad",
]


def views(params) -> tuple:
    """What a reader sees of a QueryParams, in plain Python values."""
    return (
        str(params),
        repr(params).split("(", 1)[1],
        list(params.keys()),
        list(params.values()),
        list(params.items()),
        params.multi_items(),
        len(params),
        list(params),
        {k: params.getlist(k) for k in params},
        "x" in params,
        params.get("x"),
        params.get("missing", "default"),
    )


@pytest.mark.parametrize("query", QUERIES)
def test_a_query_string_reads_as_starlettes(query):
    assert views(QueryParams(query)) == views(StarletteQueryParams(query))
    assert views(QueryParams(query.encode("latin-1"))) == views(
        StarletteQueryParams(query.encode("latin-1"))
    )


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((), {}),
        (([("a", "1"), ("a", "2"), ("b", 3)],), {}),
        (({"a": "1", "b": 2},), {}),
        (([("a", "1")],), {"c": "z z"}),
        ((), {"only": "kw"}),
    ],
)
def test_pairs_mappings_and_keywords_make_the_same_params(args, kwargs):
    assert views(QueryParams(*args, **kwargs)) == views(StarletteQueryParams(*args, **kwargs))


def test_another_query_params_is_copied():
    original = QueryParams("x=1&x=2")
    copy = QueryParams(original)
    assert copy == original and copy is not original
    assert copy.getlist("x") == ["1", "2"]


def test_equality_ignores_order_and_nothing_else():
    assert QueryParams("a=1&b=2") == QueryParams("b=2&a=1")
    assert QueryParams("a=1&a=2") != QueryParams("a=1")
    assert QueryParams("a=1") != {"a": "1"}
    assert QueryParams("a=1") != "a=1"


def test_it_is_unhashable_as_starlettes_is():
    with pytest.raises(TypeError):
        hash(QueryParams("a=1"))
    with pytest.raises(TypeError):
        hash(StarletteQueryParams("a=1"))


def test_bad_arguments_are_type_errors():
    with pytest.raises(TypeError, match="at most 1 positional argument"):
        QueryParams("a=1", "b=2")
    with pytest.raises(TypeError):
        QueryParams(5)
    with pytest.raises((TypeError, ValueError)):
        QueryParams([("a", "1", "extra")])


def test_a_requests_params_print_as_starlettes():
    app = App()

    @app.get("/")
    def show(request: Request):
        params = request.query_params
        return {"str": str(params), "repr": repr(params), "values": list(params.values())}

    raw = "q=a+b&tag=x&tag=y&sym=%2A%7E"
    expected = StarletteQueryParams(raw)
    with TestClient(app) as client:
        body = client.get("/?" + raw).json()
    assert body == {
        "str": str(expected),
        "repr": repr(expected),
        "values": list(expected.values()),
    }
