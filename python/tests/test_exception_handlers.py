"""Exception handlers: by class along the MRO, by status code, for validation errors, sync or
async, inside the app's middleware."""

from __future__ import annotations

from vireo import App, HTTPException, JSONResponse, PlainTextResponse, RequestValidationError
from vireo.testclient import TestClient


class Overdrawn(ValueError):
    pass


app = App()
seen: list[str] = []


@app.middleware("http")
async def outer(request, call_next):
    response = await call_next(request)
    seen.append(f"{request.url.path} {response.status_code}")
    return response


@app.exception_handler(ValueError)
async def value_error(request, exc):
    return JSONResponse({"error": type(exc).__name__, "msg": str(exc)}, status_code=400)


@app.exception_handler(404)
def not_found(request, exc):
    return PlainTextResponse(f"nothing at {request.url.path}: {exc.detail}", status_code=404)


@app.exception_handler(RequestValidationError)
def invalid(request, exc):
    return JSONResponse({"invalid": [e["loc"] for e in exc.errors()]}, status_code=400)


@app.get("/overdrawn")
def overdrawn():
    raise Overdrawn("balance below zero")


@app.get("/missing")
async def missing():
    raise HTTPException(404, "gone")


@app.get("/forbidden")
def forbidden():
    raise HTTPException(403, "no")


@app.get("/items/{n}")
def item(n: int):
    return n


@app.get("/crash")
def crash():
    raise RuntimeError("no handler for this")


def test_handlers():
    with TestClient(app, raise_server_exceptions=False) as client:
        res = client.get("/overdrawn")
        assert (res.status_code, res.json()) == (400, {"error": "Overdrawn", "msg": "balance below zero"})
        res = client.get("/missing")
        assert (res.status_code, res.text) == (404, "nothing at /missing: gone")
        res = client.get("/forbidden")
        assert (res.status_code, res.json()) == (403, {"detail": "no"})
        res = client.get("/items/x")
        assert (res.status_code, res.json()) == (400, {"invalid": [["path", "n"]]})
        assert client.get("/items/2").json() == 2
        assert client.get("/crash").status_code == 500
    assert "/overdrawn 400" in seen, "the middleware saw the handler's response"


def test_a_value_error_handler_does_not_take_a_validation_error():
    from vireo import RequestValidationError, ResponseValidationError, ValidationException

    app = App()

    @app.exception_handler(ValueError)
    def refused(request, exc):
        return JSONResponse({"refused": str(exc)}, status_code=418)

    @app.get("/items/{item_id}")
    def item(item_id: int):
        if item_id == 0:
            raise ValueError("zero")
        return item_id

    client = TestClient(app)
    assert client.get("/items/x").status_code == 422
    assert client.get("/items/0").status_code == 418
    assert issubclass(RequestValidationError, ValidationException)
    assert issubclass(ResponseValidationError, ValidationException)
    assert not issubclass(RequestValidationError, ValueError)


def test_a_server_error_handler_answers_and_the_error_is_still_logged_and_raised(caplog):
    import logging

    import pytest

    for key in (Exception, 500):
        server = App()

        @server.exception_handler(key)
        def server_error(request, exc):
            return JSONResponse({"error": "server", "kind": type(exc).__name__}, 500)

        @server.exception_handler(ValueError)
        def value_error(request, exc):
            return JSONResponse({"error": "value"}, 400)

        @server.get("/boom")
        def boom():
            raise RuntimeError("oops")

        @server.get("/value")
        def value():
            raise ValueError("v")

        @server.get("/http")
        def http():
            raise HTTPException(500, "said so")

        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="vireo"):
            client = TestClient(server, raise_server_exceptions=False)
            res = client.get("/boom")
            assert (res.status_code, res.json()) == (500, {"error": "server",
                                                           "kind": "RuntimeError"}), key
            assert [r.exc_info[1].args for r in caplog.records if r.exc_info] == [("oops",)]
            # A handled class is not an error to log; an HTTPException(500) keeps its answer.
            assert client.get("/value").json() == {"error": "value"}
            assert client.get("/http").json() == {"detail": "said so"}
            assert len([r for r in caplog.records if r.exc_info]) == 1
        with pytest.raises(RuntimeError, match="oops"):
            TestClient(server).get("/boom")
