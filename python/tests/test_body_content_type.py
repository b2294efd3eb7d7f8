"""A JSON body is read as JSON only under a JSON content type (`application/json`,
`application/*+json`), and with none only when `strict_content_type=False`, as FastAPI
reads it: otherwise it is validated as the bytes it is (a model refuses them, a `str` takes
them), so a cross-site form or `text/plain` request cannot pass for JSON. The same app
under FastAPI and Vireo, the same answers."""

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from pydantic import BaseModel  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Item(BaseModel):
    name: str


def build(mod, **options):
    app = (mod.FastAPI if mod is fastapi else mod.App)(**options)

    @app.post("/model")
    def model(item: Item):
        return item

    @app.post("/optional")
    def optional(item: Item | None = None):
        return {"item": item}

    @app.post("/members")
    def members(a: int = mod.Body(), b: int = mod.Body()):
        return [a, b]

    @app.post("/dict")
    def mapping(data: dict):
        return data

    @app.post("/text")
    def text(note: str = mod.Body()):
        return {"note": note}

    return app


BODIES = {"/model": b'{"name":"x"}', "/optional": b'{"name":"x"}', "/members": b'{"a":1,"b":2}',
          "/dict": b'{"a":1}', "/text": b'"quoted"'}
TYPES = [None, "text/plain", "application/json; charset=utf-8", "application/vnd.api+json",
         "Application/JSON", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
         "json"]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("path", sorted(BODIES))
def test_the_same_answer_as_fastapi_for_each_content_type(path, strict):
    options = {} if strict else {"strict_content_type": False}
    theirs = FastAPIClient(build(fastapi, **options))
    with TestClient(build(vireo, **options)) as ours:
        for content_type in TYPES:
            headers = {"content-type": content_type} if content_type else {}
            mine = ours.post(path, content=BODIES[path], headers=headers)
            other = theirs.post(path, content=BODIES[path], headers=headers)
            assert (mine.status_code, mine.json()) == (other.status_code, other.json()), (
                content_type)


def test_a_body_without_an_annotation_takes_any_json_as_in_fastapi():
    def build_any(mod):
        app = mod.FastAPI() if mod is fastapi else mod.App()

        @app.post("/any")
        def anything(payload=mod.Body()):
            return {"payload": payload}

        return app

    theirs = FastAPIClient(build_any(fastapi))
    with TestClient(build_any(vireo)) as ours:
        for value in [{"a": 1}, [1, "two"], "text", 3.5, None]:
            mine, other = ours.post("/any", json=value), theirs.post("/any", json=value)
            assert (mine.status_code, mine.json()) == (other.status_code, other.json())
        assert ours.get("/openapi.json").json()["paths"] == theirs.get(
            "/openapi.json").json()["paths"]
