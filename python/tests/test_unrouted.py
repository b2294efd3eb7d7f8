"""A request no route takes, in an app with middleware or exception handlers, runs through
them as in Starlette: middleware sees its 404 or 405, and a handler for 404 answers it."""

from __future__ import annotations

from vireo import App, JSONResponse, Request
from vireo.testclient import TestClient

seen: list[tuple[str, str, int]] = []

app = App()


@app.middleware("http")
async def record(request: Request, call_next):
    response = await call_next(request)
    seen.append((request.method, request.url.path, response.status_code))
    response.headers["x-through"] = "middleware"
    return response


@app.get("/items")
def items():
    return []


client = TestClient(app)


def test_middleware_sees_a_404_and_a_405():
    seen.clear()
    res = client.get("/missing")
    assert (res.status_code, res.json(), res.headers["x-through"]) == (
        404, {"detail": "Not Found"}, "middleware"
    )
    res = client.delete("/items")
    assert (res.status_code, res.json()) == (405, {"detail": "Method Not Allowed"})
    assert res.headers["allow"] == "GET"
    assert res.headers["x-through"] == "middleware"
    assert seen == [("GET", "/missing", 404), ("DELETE", "/items", 405)]


def test_an_exception_handler_for_404_answers_unknown_paths():
    custom = App()

    @custom.exception_handler(404)
    async def not_found(request: Request, exc):
        return JSONResponse({"no such page": request.url.path}, status_code=404)

    custom.get("/here")(lambda: "here")
    with TestClient(custom) as c:
        assert c.get("/there").json() == {"no such page": "/there"}
        assert c.get("/here").text == "here"


def test_without_middleware_the_router_answers_at_once():
    bare = App()
    bare.get("/items")(lambda: [])
    c = TestClient(bare)
    assert (c.get("/missing").status_code, c.get("/missing").json()) == (404, {"detail": "Not Found"})
    assert c.put("/items").headers["allow"] == "GET"
