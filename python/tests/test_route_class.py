"""Route classes with their own route handler (FastAPI's `APIRoute.get_route_handler`), and
`Request` subclasses made of the request being answered."""

from __future__ import annotations

import asyncio
import gzip
import time
from typing import Annotated

import pytest

from vireo import APIRouter, App, Body, HTTPException, Request, RequestValidationError
from vireo.responses import JSONResponse
from vireo.routing import APIRoute
from vireo.testclient import TestClient


class GzipRequest(Request):
    async def body(self) -> bytes:
        if not hasattr(self, "_body"):
            body = await super().body()
            if "gzip" in self.headers.getlist("content-encoding"):
                body = gzip.decompress(body)
            self._body = body
        return self._body


class GzipRoute(APIRoute):
    def get_route_handler(self):
        original = super().get_route_handler()

        async def gzip_route_handler(request: Request):
            return await original(GzipRequest(request.scope, request.receive))

        return gzip_route_handler


class ErrorWithBodyRoute(APIRoute):
    def get_route_handler(self):
        original = super().get_route_handler()

        async def logging_route_handler(request: Request):
            try:
                return await original(request)
            except RequestValidationError as exc:
                body = (await request.body()).decode()
                raise HTTPException(422, {"errors": len(exc.errors()), "body": body}) from None

        return logging_route_handler


class TimedRoute(APIRoute):
    def get_route_handler(self):
        original = super().get_route_handler()

        async def timed_route_handler(request: Request):
            started = time.perf_counter()
            response = await original(request)
            response.headers["x-route-time"] = f"{time.perf_counter() - started:.6f}"
            return response

        return timed_route_handler


gzip_app = App()
gzip_app.router.route_class = GzipRoute


@gzip_app.post("/sum")
def sum_numbers(numbers: Annotated[list[int], Body()]):
    return {"sum": sum(numbers)}


@gzip_app.post("/async-sum")
async def async_sum(numbers: Annotated[list[int], Body()]):
    await asyncio.sleep(0.001)
    return {"sum": sum(numbers)}


@gzip_app.post("/blocking-sum", blocking=True)
def blocking_sum(numbers: Annotated[list[int], Body()]):
    return {"sum": sum(numbers)}


@gzip_app.post("/who")
async def who(request: Request):
    return {"class": type(request).__name__, "json": await request.json()}


def test_a_request_subclass_gives_the_handler_its_own_body():
    client = TestClient(gzip_app)
    packed = gzip.compress(b"[1, 2, 3, 4]")
    for path in ("/sum", "/async-sum", "/blocking-sum"):
        res = client.post(path, content=packed, headers={"content-encoding": "gzip",
                                                         "content-type": "application/json"})
        assert (res.status_code, res.json()) == (200, {"sum": 10}), path
        assert client.post(path, json=[5, 6]).json() == {"sum": 11}, path


def test_the_handler_gets_the_subclass_instance_as_its_request():
    client = TestClient(gzip_app)
    res = client.post("/who", content=gzip.compress(b'{"a": 1}'),
                      headers={"content-encoding": "gzip"})
    assert res.json() == {"class": "GzipRequest", "json": {"a": 1}}


def test_a_route_handler_catches_the_validation_error_and_answers_its_own_way():
    app = App()
    app.router.route_class = ErrorWithBodyRoute

    @app.post("/")
    async def total(numbers: Annotated[list[int], Body()]):
        return sum(numbers)

    client = TestClient(app)
    assert client.post("/", json=[1, 2]).json() == 3
    res = client.post("/", json=[1, "x", "y"])
    assert res.status_code == 422
    assert res.json() == {"detail": {"errors": 2, "body": '[1,"x","y"]'}}


def test_a_routers_route_class_applies_to_its_routes_only():
    app = App()
    router = APIRouter(route_class=TimedRoute)

    @app.get("/")
    def plain():
        return {"timed": False}

    @router.get("/timed")
    def timed():
        return {"timed": True}

    app.include_router(router, prefix="/r")
    client = TestClient(app)
    res = client.get("/r/timed")
    assert res.json() == {"timed": True}
    assert float(res.headers["x-route-time"]) >= 0
    assert "x-route-time" not in client.get("/").headers
    assert [type(r).__name__ for r in app.routes if r.path in ("/", "/r/timed")] == [
        "APIRoute", "TimedRoute"]


def test_errors_from_the_route_and_its_handler_reach_the_exception_handlers():
    class Refusing(APIRoute):
        def get_route_handler(self):
            original = super().get_route_handler()

            async def refusing(request: Request):
                if request.headers.get("x-refuse"):
                    raise HTTPException(403, "refused by the route")
                return await original(request)

            return refusing

    app = App()
    app.router.route_class = Refusing

    @app.get("/missing")
    def missing():
        raise HTTPException(404, "no such thing")

    @app.get("/typed/{n}")
    def typed(n: int):
        return n

    client = TestClient(app)
    assert client.get("/missing").json() == {"detail": "no such thing"}
    assert client.get("/missing", headers={"x-refuse": "1"}).json() == {
        "detail": "refused by the route"}
    assert client.get("/typed/x").status_code == 422
    assert client.get("/typed/3").json() == 3

    @app.exception_handler(HTTPException)
    def teapot(request, exc):
        return JSONResponse({"handled": exc.detail}, 418)

    client = TestClient(app)
    res = client.get("/missing", headers={"x-refuse": "1"})
    assert (res.status_code, res.json()) == (418, {"handled": "refused by the route"})


def test_a_request_is_made_of_a_request_being_answered_only():
    app = App()

    @app.post("/")
    async def remade(request: Request):
        request.state.seen = True
        again = Request(request.scope, request.receive)
        first = await request.receive()
        return {"state": getattr(again.state, "seen", False), "same_scope": again.scope is request.scope,
                "first": [first["type"], first["body"].decode(), first["more_body"]],
                "then": (await request.receive())["type"], "path": again.url.path}

    assert TestClient(app).post("/", content=b"hi").json() == {
        "state": True, "same_scope": True, "first": ["http.request", "hi", False],
        "then": "http.disconnect", "path": "/"}
    with pytest.raises(TypeError, match="request.scope, request.receive"):
        Request({"type": "http", "method": "GET", "path": "/"})


def test_a_route_class_must_be_an_api_route():
    with pytest.raises(TypeError, match="route_class takes APIRoute"):
        APIRouter(route_class=dict)
    app = App()
    app.router.route_class = object
    with pytest.raises(TypeError, match="route_class takes APIRoute"):
        app.get("/")(lambda: None)


def test_the_default_route_handler_runs_only_for_its_route():
    handler = APIRoute("/", lambda: None).get_route_handler()
    with pytest.raises(RuntimeError, match="route handler"):
        asyncio.run(handler(None))


def test_a_route_handler_may_answer_through_the_original_twice():
    class Twice(APIRoute):
        def get_route_handler(self):
            original = super().get_route_handler()

            async def twice(request: Request):
                request = GzipRequest(request.scope, request.receive)
                first = await original(request)
                second = await original(request)
                second.headers["x-first"] = str(first.status_code)
                return second

            return twice

    app = App()
    app.router.route_class = Twice

    @app.post("/")
    def total(numbers: Annotated[list[int], Body()]):
        return sum(numbers)

    res = TestClient(app).post("/", content=gzip.compress(b"[2, 3]"), headers={
        "content-encoding": "gzip", "content-type": "application/json"})
    assert (res.json(), res.headers["x-first"]) == (5, "200")
