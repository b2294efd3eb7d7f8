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
