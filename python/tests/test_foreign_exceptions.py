"""Starlette's and FastAPI's `HTTPException` and FastAPI's `RequestValidationError`, raised in
a Vireo app (by library code, or code that kept FastAPI's imports), are answered as FastAPI
answers them; exception handlers registered for their classes handle Vireo's own errors too,
as FastAPI's documented `@app.exception_handler(StarletteHTTPException)` does."""

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
import fastapi.exceptions  # noqa: E402
import starlette.exceptions  # noqa: E402
from fastapi.responses import PlainTextResponse  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def routes(app, mod):
    @app.get("/fastapi")
    def from_fastapi():
        raise fastapi.HTTPException(404, "no such thing", headers={"x-why": "gone"})

    @app.get("/starlette")
    def from_starlette():
        raise starlette.exceptions.HTTPException(409)

    @app.get("/validation")
    def validation():
        raise fastapi.exceptions.RequestValidationError(
            [{"type": "value_error", "loc": ["query", "x"], "msg": "bad x", "input": "1"}])

    @app.get("/own/{n}")
    def own(n: int):
        raise mod.HTTPException(418, "teapot")

    @app.get("/blocking", **({"blocking": True} if mod is vireo else {}))
    def blocking():
        raise starlette.exceptions.HTTPException(403, "no")


def answer(client, path):
    response = client.get(path)
    return response.status_code, response.headers.get("x-why"), response.json() \
        if response.headers.get("content-type", "").startswith("application/json") \
        else response.text


PATHS = ["/fastapi", "/starlette", "/validation", "/own/1", "/own/x", "/blocking", "/missing"]


def test_without_handlers_they_are_answered_as_under_fastapi():
    apps = []
    for mod in (fastapi, vireo):
        app = mod.FastAPI()
        routes(app, mod)
        apps.append(app)
    with FastAPIClient(apps[0]) as a, TestClient(apps[1]) as b:
        for path in PATHS:
            assert answer(b, path) == answer(a, path), path


def test_handlers_for_their_classes_handle_every_http_and_validation_error():
    apps = []
    for mod in (fastapi, vireo):
        app = mod.FastAPI()
        routes(app, mod)

        @app.exception_handler(starlette.exceptions.HTTPException)
        def http_error(request, exc):
            return PlainTextResponse(f"http {exc.status_code}: {exc.detail}",
                                     status_code=exc.status_code)

        @app.exception_handler(fastapi.exceptions.RequestValidationError)
        def invalid(request, exc):
            return PlainTextResponse(f"invalid {len(exc.errors())} body={exc.body}",
                                     status_code=400)

        apps.append(app)
    with FastAPIClient(apps[0]) as a, TestClient(apps[1]) as b:
        for path in PATHS:
            assert answer(b, path) == answer(a, path), path
        assert answer(b, "/missing") == (404, None, "http 404: Not Found")


def test_a_validation_errors_body_is_the_body_fastapi_read():
    from pydantic import BaseModel

    from fastapi.encoders import jsonable_encoder

    class Item(BaseModel):
        title: str
        size: int

    apps = []
    for mod in (fastapi, vireo):
        app = mod.FastAPI()

        @app.exception_handler(fastapi.exceptions.RequestValidationError)
        async def invalid(request, exc, mod=mod):
            body = exc.body
            if hasattr(body, "multi_items"):  # a form: its fields
                body = sorted(body.multi_items())
            return mod.responses.JSONResponse(
                jsonable_encoder({"errors": len(exc.errors()), "body": body}), 422)

        @app.post("/items")
        def items(item: Item, n: int = 1):
            return item

        @app.post("/form")
        def form(size: int = mod.Form()):
            return size

        apps.append(app)
    sent = [
        ("/items", {"json": {"title": "t", "size": "XL"}}),
        ("/items?n=x", {"json": {"title": "t", "size": 3}}),
        ("/items", {"content": b"{bad", "headers": {"content-type": "application/json"}}),
        ("/items", {"content": b"{bad"}),
        ("/form", {"data": {"size": "big", "other": "x"}}),
    ]
    with FastAPIClient(apps[0]) as a, TestClient(apps[1]) as b:
        for path, options in sent:
            assert b.post(path, **options).json() == a.post(path, **options).json(), path
