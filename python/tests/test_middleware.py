"""Middleware: `async def mw(request, call_next)`, the state it sets, the response it can
change, exceptions through it."""

from __future__ import annotations

import asyncio
import contextvars
import time

from vireo import App, BaseHTTPMiddleware, HTTPException, Request, Response
from vireo.testclient import TestClient

app = App()
order: list[str] = []


@app.middleware("http")
async def inner(request: Request, call_next):
    order.append("added first")
    request.state.user = "alice"
    response = await call_next(request)
    response.headers["x-outer"] = "1"
    return response


class Timing(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        order.append("added last")
        start = time.perf_counter()
        response = await call_next(request)
        response.headers["x-time"] = f"{time.perf_counter() - start:.6f}"
        if request.url.path == "/teapot-ish":
            response.status_code = 418
        return response


app.add_middleware(Timing)


@app.get("/whoami")
def whoami(request: Request):
    return {"user": request.state.user, "path": request.url.path}


@app.get("/users/{user_id}")
def user(user_id: int, request: Request):
    return f"User: {user_id} ({request.state.user})"


@app.get("/async")
async def async_handler(request: Request):
    await asyncio.sleep(0.001)
    return {"user": request.state.user}


@app.get("/blocking", blocking=True)
def blocking(request: Request):
    time.sleep(0.01)
    return {"user": request.state.user}


@app.get("/two-cookies")
def two_cookies():
    res = Response("set")
    res.set_cookie("a", "1")
    res.set_cookie("b", "2")
    return res


@app.get("/teapot-ish")
def teapot_ish():
    return "changed by middleware"


@app.get("/http-error")
def http_error():
    raise HTTPException(404, "no such thing")


@app.get("/crash")
def crash():
    raise RuntimeError("crash")


client = TestClient(app, raise_server_exceptions=False)


def test_state_and_order():
    order.clear()
    res = client.get("/whoami")
    assert res.json() == {"user": "alice", "path": "/whoami"}
    # The last added runs first (outermost), as in Starlette.
    assert order == ["added last", "added first"]
    assert res.headers["x-outer"] == "1"
    assert "x-time" in res.headers
    assert res.headers["content-type"] == "application/json"


def test_path_params_and_validation_behind_middleware():
    assert client.get("/users/7").text == "User: 7 (alice)"
    res = client.get("/users/x")
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["path", "user_id"]
    assert res.headers["x-outer"] == "1", "the 422 passes back through the middleware"


def test_async_and_blocking_behind_middleware():
    assert client.get("/async").json() == {"user": "alice"}
    assert client.get("/blocking").json() == {"user": "alice"}


def test_middleware_changes_status():
    res = client.get("/teapot-ish")
    assert (res.status_code, res.text) == (418, "changed by middleware")


def test_errors_behind_middleware():
    res = client.get("/http-error")
    assert (res.status_code, res.json()) == (404, {"detail": "no such thing"})
    assert client.get("/crash").status_code == 500
    assert client.get("/whoami").status_code == 200


def test_middleware_may_answer_itself():
    short = App()

    @short.middleware("http")
    async def deny(request, call_next):
        if request.headers.get("x-token") != "secret":
            return Response("denied", status_code=401)
        return await call_next(request)

    @short.get("/")
    def index():
        return "ok"

    with TestClient(short) as c:
        assert (c.get("/").status_code, c.get("/").text) == (401, "denied")
        assert c.get("/", headers={"X-Token": "secret"}).text == "ok"


def test_a_failing_middleware_is_500_and_the_app_goes_on():
    broken = App()
    calls = []

    @broken.middleware("http")
    async def fails(request, call_next):
        calls.append(request.url.path)
        if request.url.path == "/bad":
            raise KeyError("middleware bug")
        return await call_next(request)

    @broken.get("/bad")
    def bad():
        return "unreachable"

    @broken.get("/good")
    def good():
        return "fine"

    with TestClient(broken, raise_server_exceptions=False) as c:
        assert c.get("/bad").status_code == 500
        assert c.get("/good").text == "fine"
    assert calls == ["/bad", "/good"]


def test_middleware_sees_handler_exceptions():
    seen = App()

    @seen.middleware("http")
    async def catch(request, call_next):
        try:
            return await call_next(request)
        except ZeroDivisionError:
            return Response("recovered", status_code=503)

    @seen.get("/divide")
    def divide():
        return 1 / 0

    with TestClient(seen) as c:
        res = c.get("/divide")
        assert (res.status_code, res.text) == (503, "recovered")


def test_async_handlers_behind_middleware_end_every_way_before_and_after_suspending():
    ways = App()
    order_seen: list[str] = []

    @ways.middleware("http")
    async def catch(request, call_next):
        pending = call_next(request)
        order_seen.append("called")
        try:
            response = await pending
        except ZeroDivisionError:
            return Response("recovered", status_code=503)
        response.headers["x-through"] = "middleware"
        return response

    @ways.get("/end/{how}")
    async def end(how: str, suspend: bool = False):
        if suspend:
            await asyncio.sleep(0)
        if how == "http-error":
            raise HTTPException(404, "no such thing")
        if how == "crash":
            return 1 / 0
        if how == "cancelled":
            asyncio.current_task().cancel()
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                return {"how": "caught the cancellation"}
        return {"how": how}

    with TestClient(ways) as c:
        for suspend in ("false", "true"):
            res = c.get(f"/end/value?suspend={suspend}")
            assert (res.status_code, res.json()) == (200, {"how": "value"})
            assert res.headers["x-through"] == "middleware"
            res = c.get(f"/end/http-error?suspend={suspend}")
            assert (res.status_code, res.json()) == (404, {"detail": "no such thing"})
            res = c.get(f"/end/crash?suspend={suspend}")
            assert (res.status_code, res.text) == (503, "recovered")
            res = c.get(f"/end/cancelled?suspend={suspend}")
            assert res.json() == {"how": "caught the cancellation"}
    # call_next itself never raised: each request got past it to the await.
    assert order_seen == ["called"] * 8


def test_middleware_that_touches_headers_keeps_every_value_of_a_repeated_field():
    # Both middlewares read and set `response.headers`; the handler's two cookies stay two.
    res = client.get("/two-cookies")
    cookies = [v.decode() for n, v in res.raw_headers if n == "set-cookie"]
    assert [c.split(";")[0] for c in cookies] == ["a=1", "b=2"]
    assert res.headers["x-outer"] == "1" and "x-time" in res.headers


_request_id = contextvars.ContextVar("request_id")


def test_a_context_variable_set_by_middleware_resets_after_the_handler_suspends():
    # The common request-id pattern: set, call the rest, reset with the token.
    app = App()
    reset = []

    @app.middleware("http")
    async def request_id(request, call_next):
        token = _request_id.set(request.headers.get("x-request-id", "none"))
        try:
            return await call_next(request)
        finally:
            _request_id.reset(token)
            reset.append(_request_id.get("unset"))

    @app.get("/suspends")
    async def suspends():
        await asyncio.sleep(0.001)
        return {"id": _request_id.get()}

    @app.get("/sync")
    def sync():
        return {"id": _request_id.get()}

    client = TestClient(app)
    for path in ("/suspends", "/sync"):
        res = client.get(path, headers={"x-request-id": "r-1"})
        assert (res.status_code, res.json()) == (200, {"id": "r-1"}), path
    assert reset == ["unset", "unset"]


def test_a_context_variable_set_before_an_await_resets_after_it_without_middleware():
    app = App()

    @app.get("/")
    async def sets_and_resets():
        token = _request_id.set("inside")
        await asyncio.sleep(0.001)
        seen = _request_id.get()
        _request_id.reset(token)
        return {"seen": seen, "after": _request_id.get("unset")}

    assert TestClient(app).get("/").json() == {"seen": "inside", "after": "unset"}
