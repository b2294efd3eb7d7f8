"""Absent, `null` and non-object JSON bodies, for whole and embedded body values with and
without validators of their own: the same app under FastAPI and Vireo gives the same status
and body for each. A type's own validator sees an explicit `null`, as in FastAPI; a body
that is not an object misses every embedded member."""

from typing import Annotated, Optional

import pytest

fastapi = pytest.importorskip("fastapi")

import pydantic  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def double(value):
    if value is None:
        return 0
    return -1 if isinstance(value, (dict, list)) else int(value) * 2


ValidatedInt = Annotated[Optional[int], pydantic.BeforeValidator(double)]


def build(framework):
    app = framework.FastAPI() if framework is fastapi else vireo.App()
    body = framework.Body

    @app.post("/embedded")
    def embedded(value: Annotated[ValidatedInt, body(embed=True)] = 10):
        return value

    @app.post("/embedded-none")
    def embedded_none(value: Annotated[ValidatedInt, body(embed=True)] = None):
        return value

    @app.post("/whole")
    def whole(value: Annotated[ValidatedInt, body()] = 10):
        return value

    @app.post("/plain")
    def plain(value: Annotated[Optional[int], body()] = 10):
        return value

    @app.post("/plain-embedded")
    def plain_embedded(value: Annotated[Optional[int], body(embed=True)] = 10):
        return value

    @app.post("/described")
    def described(value: Annotated[Optional[int], pydantic.Field(description="d"),
                                   body()] = 10):
        return value

    @app.post("/required")
    def required(value: Annotated[int, body(embed=True)]):
        return value

    return app


BODIES = [None, b"null", b"[]", b"5", b"{}", b'{"value": null}', b'{"value": 5}']
PATHS = ["/embedded", "/embedded-none", "/whole", "/plain", "/plain-embedded", "/described",
         "/required"]


@pytest.fixture(scope="module")
def clients():
    with TestClient(build(vireo)) as ours:
        yield ours, FastAPIClient(build(fastapi))


@pytest.mark.parametrize("path", PATHS)
def test_each_body_gets_fastapis_answer(clients, path):
    ours, theirs = clients
    for body in BODIES:
        options = {} if body is None else {
            "content": body, "headers": {"content-type": "application/json"}}
        mine, other = ours.post(path, **options), theirs.post(path, **options)
        assert (mine.status_code, mine.json()) == (other.status_code, other.json()), body


def test_a_validator_sees_an_explicit_null():
    ours = TestClient(build(vireo))
    assert ours.post("/whole", content=b"null",
                     headers={"content-type": "application/json"}).json() == 0
    assert ours.post("/embedded", json={"value": None}).json() == 0
    assert ours.post("/plain-embedded", json={"value": None}).json() is None
