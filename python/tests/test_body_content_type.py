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


def nested(framework, app_strict):
    """An app, an outer router, inner routers that set `strict_content_type` or not, and a
    route that sets its own."""
    app = framework.FastAPI(strict_content_type=app_strict) if framework is fastapi \
        else vireo.App(strict_content_type=app_strict)
    outer = framework.APIRouter(prefix="/outer")
    strict = framework.APIRouter(prefix="/strict", strict_content_type=True)
    lax = framework.APIRouter(prefix="/lax", strict_content_type=False)
    default = framework.APIRouter(prefix="/default")

    for router in (strict, lax, default):
        @router.post("/items")
        def items(data: dict):
            return data

    def own(data: dict):
        return data

    default.add_api_route("/own", own, methods=["POST"], strict_content_type=not app_strict)

    for router in (strict, lax, default):
        outer.include_router(router)
    app.include_router(outer)
    return app


@pytest.mark.parametrize("app_strict", [True, False])
def test_a_router_or_route_sets_strict_content_type_for_its_routes_as_in_fastapi(app_strict):
    theirs = FastAPIClient(nested(fastapi, app_strict))
    ours = TestClient(nested(vireo, app_strict))
    answers = []
    for path in ("/outer/strict/items", "/outer/lax/items", "/outer/default/items",
                 "/outer/default/own"):
        mine = ours.post(path, content=b'{"key": 1}')
        other = theirs.post(path, content=b'{"key": 1}')
        assert (mine.status_code, mine.json()) == (other.status_code, other.json()), path
        answers.append(mine.status_code)
    assert answers == ([422, 200, 422, 200] if app_strict else [422, 200, 200, 422])


def test_strict_content_type_is_a_bool_or_none():
    with pytest.raises(TypeError, match="strict_content_type is True, False or None"):
        vireo.APIRouter(strict_content_type="yes")
