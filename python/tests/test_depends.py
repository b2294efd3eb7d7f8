"""Depends: parameters of dependencies, sub-dependencies, caching, sync/async/generator
dependencies with teardown, route/router/app dependencies, and 422s from dependencies."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Annotated, Optional

import pytest
from typing_extensions import TypeAliasType

from vireo import (
    APIRouter,
    App,
    Cookie,
    Depends,
    Header,
    HTTPException,
    PlainTextResponse,
    Query,
    Request,
    Security,
    WebSocket,
)
from vireo.testclient import TestClient


def pager(skip: int = 0, limit: int = 10) -> dict:
    return {"skip": skip, "limit": limit}


def test_query_parameters_of_a_dependency() -> None:
    app = App()

    @app.get("/items")
    def items(page: dict = Depends(pager)) -> dict:
        return page

    with TestClient(app) as client:
        assert client.get("/items").json() == {"skip": 0, "limit": 10}
        assert client.get("/items?skip=5&limit=2").json() == {"skip": 5, "limit": 2}


def test_errors_of_dependencies_and_handler_in_one_422() -> None:
    app = App()

    def token(x_token: str = Header()) -> str:
        return x_token

    @app.get("/items/{item_id}")
    def item(item_id: int, page: Annotated[dict, Depends(pager)], tok: str = Depends(token)):
        return {"id": item_id, **page, "token": tok}

    with TestClient(app) as client:
        res = client.get("/items/abc?limit=x")
        assert res.status_code == 422
        locs = [e["loc"] for e in res.json()["detail"]]
        assert ["path", "item_id"] in locs
        assert ["query", "limit"] in locs
        assert ["header", "x-token"] in locs
        types = {tuple(e["loc"]): e["type"] for e in res.json()["detail"]}
        assert types[("query", "limit")] == "int_parsing"
        assert types[("header", "x-token")] == "missing"
        ok = client.get("/items/3?limit=1", headers={"x-token": "t"})
        assert ok.json() == {"id": 3, "skip": 0, "limit": 1, "token": "t"}


@dataclasses.dataclass
class Item:
    name: str
    price: float


def test_body_cookie_and_request_in_dependencies() -> None:
    app = App()

    def priced(item: Item) -> float:
        return item.price * 2

    def session(request: Request, sid: Optional[str] = Cookie(None)) -> str:
        return f"{request.method}:{sid}"

    @app.post("/items")
    def create(request: Request, doubled: float = Depends(priced), who: str = Depends(session)):
        return {"doubled": doubled, "who": who, "path": request.path}

    with TestClient(app) as client:
        res = client.post(
            "/items", json={"name": "a", "price": 1.5}, headers={"cookie": "sid=s1"}
        )
        assert res.json() == {"doubled": 3.0, "who": "POST:s1", "path": "/items"}
        bad = client.post("/items", json={"name": "a", "price": "cheap"})
        assert bad.status_code == 422
        assert bad.json()["detail"][0]["loc"] == ["body", "price"]


def test_sub_dependencies_are_cached_once_per_request() -> None:
    app = App()
    calls: list[str] = []

    def db() -> dict:
        calls.append("db")
        return {"n": len(calls)}

    def users(conn: dict = Depends(db)) -> dict:
        return conn

    def orders(conn: dict = Depends(db)) -> dict:
        return conn

    def fresh(conn: dict = Depends(db, use_cache=False)) -> dict:
        return conn

    @app.get("/")
    def both(u: dict = Depends(users), o: dict = Depends(orders)) -> bool:
        return {"same": u is o}

    @app.get("/fresh")
    def not_cached(u: dict = Depends(users), f: dict = Depends(fresh)) -> dict:
        return {"same": u is f}

    with TestClient(app) as client:
        assert client.get("/").json() == {"same": True}
        assert calls == ["db"]
        assert client.get("/").json() == {"same": True}
        assert calls == ["db", "db"]  # once per request, not once for ever
        calls.clear()
        assert client.get("/fresh").json() == {"same": False}
        assert calls == ["db", "db"]


class Pager:
    def __init__(self, size: int = 5) -> None:
        self.size = size


def test_async_dependencies_and_class_dependencies() -> None:
    app = App()

    async def slow_user(name: str = "ann") -> str:
        await asyncio.sleep(0)
        return name.upper()

    @app.get("/sync-handler")
    def sync_handler(user: str = Depends(slow_user), pager: Pager = Depends(Pager)):
        return {"user": user, "size": pager.size}

    @app.get("/async-handler")
    async def async_handler(
        user: str = Depends(slow_user), pager: Annotated[Pager, Depends()] = None
    ):
        return {"user": user, "size": pager.size}

    with TestClient(app) as client:
        assert client.get("/sync-handler?name=bo&size=2").json() == {"user": "BO", "size": 2}
        assert client.get("/async-handler").json() == {"user": "ANN", "size": 5}


def test_generator_teardown_runs_after_the_response_is_made_and_on_error() -> None:
    app = App()
    events: list[str] = []

    def resource():
        events.append("open")
        try:
            yield "res"
        except ValueError as exc:
            events.append(f"error:{exc}")
            raise
        finally:
            events.append("close")

    async def aresource():
        events.append("aopen")
        yield "ares"
        events.append("aclose")

    def session():
        state = {"open": True}
        yield state
        state["open"] = False
        events.append("closed session")

    @app.get("/ok")
    def ok(r: str = Depends(resource), s: dict = Depends(session)) -> dict:
        events.append("handler")
        return {"r": r, "session": s}  # encoded before the teardown closes the session

    @app.get("/fail")
    def fail(r: str = Depends(resource)) -> str:
        raise ValueError("boom")

    @app.get("/http")
    async def http(r: str = Depends(resource), a: str = Depends(aresource)) -> str:
        raise HTTPException(409, "taken")

    @app.get("/async")
    async def both(r: str = Depends(resource), a: str = Depends(aresource)) -> str:
        events.append("handler")
        return PlainTextResponse(r + a)

    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/ok").json() == {"r": "res", "session": {"open": True}}
        assert events == ["open", "handler", "closed session", "close"]
        events.clear()
        assert client.get("/fail").status_code == 500
        assert events == ["open", "error:boom", "close"]
        events.clear()
        res = client.get("/http")
        assert (res.status_code, res.json()) == (409, {"detail": "taken"})
        assert events == ["open", "aopen", "close"]  # the async one did not catch and stops
        events.clear()
        assert client.get("/async").text == "resares"
        assert events == ["open", "aopen", "handler", "aclose", "close"]


def swallowing_app(mod, events: list[str]):
    """Routes whose handler raises into a `yield` dependency that catches the exception and
    does not raise it again, under an outer `yield` dependency that records what it sees."""
    app = mod.FastAPI()

    def outer():
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - records what reaches it
            events.append(f"outer saw {type(exc).__name__}")
            raise
        events.append("outer closed")

    def swallows():
        try:
            yield "value"
        except Exception as exc:  # noqa: BLE001 - the mistake this test is about
            events.append(f"swallowed {type(exc).__name__}")

    async def aswallows():
        try:
            yield "value"
        except Exception as exc:  # noqa: BLE001
            events.append(f"swallowed {type(exc).__name__}")

    @app.get("/sync", dependencies=[mod.Depends(outer)])
    def sync_route(v: str = mod.Depends(swallows)):
        raise ValueError("boom")

    @app.get("/async", dependencies=[mod.Depends(outer)])
    async def async_route(v: str = mod.Depends(aswallows)):
        raise mod.HTTPException(404, "gone")

    return app


@pytest.mark.parametrize("path", ["/sync", "/async"])
def test_an_exception_a_yield_dependency_swallows_is_a_500_as_in_fastapi(path) -> None:
    fastapi = pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient as FastAPIClient

    import vireo
    from vireo.exceptions import FastAPIError

    theirs: list[str] = []
    ours: list[str] = []
    other = FastAPIClient(swallowing_app(fastapi, theirs), raise_server_exceptions=False)
    with TestClient(swallowing_app(vireo, ours), raise_server_exceptions=False) as client:
        mine = client.get(path)
    answer = other.get(path)
    assert (mine.status_code, mine.text) == (answer.status_code, answer.text) == (
        500, "Internal Server Error")
    # The dependency outside the one that swallowed sees no exception, as an exit stack's.
    assert ours == theirs
    assert ours[-1] == "outer closed"

    with TestClient(swallowing_app(vireo, [])) as client:
        with pytest.raises(FastAPIError, match="a dependency with yield caught it") as raised:
            client.get(path)
    assert isinstance(raised.value.__cause__, (ValueError, vireo.HTTPException))


def test_a_websocket_sessions_exception_a_yield_dependency_swallows_just_ends_it() -> None:
    # As in FastAPI, where the session's exit stack swallows it and the endpoint returns.
    app = App()
    seen: list[str] = []

    def swallows():
        try:
            yield "hello"
        except Exception as exc:  # noqa: BLE001 - the mistake this test is about
            seen.append(type(exc).__name__)

    @app.websocket("/ws")
    async def talk(websocket: WebSocket, greeting: str = Depends(swallows)):
        await websocket.accept()
        await websocket.send_text(greeting)
        raise ValueError("boom")

    with TestClient(app) as client:
        with client.websocket_connect("/ws") as socket:
            assert socket.receive_text() == "hello"
    assert seen == ["ValueError"]


def test_teardown_error_replaces_the_response() -> None:
    app = App()

    def guard():
        yield
        raise HTTPException(403, "late refusal")

    @app.get("/")
    def index(_: None = Depends(guard)) -> str:
        return "fine"

    with TestClient(app) as client:
        res = client.get("/")
        assert (res.status_code, res.json()) == (403, {"detail": "late refusal"})


def test_route_router_and_app_dependencies_run_in_order() -> None:
    order: list[str] = []

    def mark(name: str):
        def dep() -> None:
            order.append(name)

        dep.__name__ = name
        return dep

    def key(x_key: str = Header()) -> None:
        if x_key != "secret":
            raise HTTPException(401, "bad key")

    app = App(dependencies=[Depends(mark("app"))])
    router = APIRouter(prefix="/r", dependencies=[Depends(mark("router"))])

    @router.get("/x", dependencies=[Depends(mark("route")), Depends(key)])
    def x() -> str:
        order.append("handler")
        return "x"

    app.include_router(router, dependencies=[Depends(mark("include"))])

    @app.get("/plain")
    def plain() -> str:
        return "plain"

    with TestClient(app) as client:
        assert client.get("/r/x", headers={"x-key": "secret"}).text == "x"
        assert order == ["app", "include", "router", "route", "handler"]
        assert client.get("/r/x", headers={"x-key": "nope"}).status_code == 401
        missing = client.get("/r/x")
        assert missing.status_code == 422
        assert missing.json()["detail"][0]["loc"] == ["header", "x-key"]
        order.clear()
        assert client.get("/plain").text == "plain"
        assert order == ["app"]
        # The schema and docs routes do not run the app's dependencies, as in FastAPI.
        assert client.get("/openapi.json").status_code == 200
        assert client.get("/docs").status_code == 200
        assert order == ["app"]


def test_dependencies_behind_middleware_and_blocking_routes() -> None:
    app = App()

    @app.middleware("http")
    async def tag(request, call_next):
        response = await call_next(request)
        response.headers["x-mw"] = "1"
        return response

    def who(request: Request, name: str = "z") -> str:
        return f"{name}@{request.path}"

    @app.get("/b", blocking=True)
    def blocking(w: str = Depends(who)) -> str:
        return w

    with TestClient(app) as client:
        res = client.get("/b?name=q")
        assert (res.text, res.headers["x-mw"]) == ("q@/b", "1")
        assert client.get("/b?name=").text == "@/b"


def test_planning_errors_are_raised_when_the_app_is_built() -> None:
    app = App()

    async def adep() -> int:
        return 1

    @app.get("/", blocking=True)
    def index(v: int = Depends(adep)) -> int:
        return v

    with pytest.raises(TypeError, match="blocking=True"):
        app._plan()
    with pytest.raises(TypeError, match="Depends"):
        App().get("/", dependencies=[pager])(lambda: None)


def test_routes_without_dependencies_are_planned_as_before() -> None:
    app = App()

    @app.get("/plain/{n}")
    def plain(n: int, q: str = "") -> str:
        return q

    (route,) = [r for r in app._plan() if r[1] == "/plain/{n}"]
    assert route[2] is plain  # the handler itself, no solver around it
    assert route[5] == "sync"


def test_dependency_overrides_apply_to_the_next_client() -> None:
    app = App()

    def real_db() -> str:
        return "real"

    def service(db: str = Depends(real_db)) -> str:
        return f"service on {db}"

    @app.get("/")
    def index(s: str = Depends(service)) -> str:
        return s

    with TestClient(app) as client:
        assert client.get("/").text == "service on real"
    app.dependency_overrides[real_db] = lambda: "fake"
    with TestClient(app) as client:
        assert client.get("/").text == "service on fake"
    app.dependency_overrides.clear()
    with TestClient(app) as client:
        assert client.get("/").text == "service on real"


def test_dependency_overrides_changed_while_a_client_is_open_apply_to_its_next_request(
) -> None:
    import asyncio

    import httpx

    app = App()

    def real_db() -> str:
        return "real"

    @app.get("/")
    def index(db: str = Depends(real_db)) -> dict:
        return {"db": db}

    def asgi_get() -> str:
        async def get() -> str:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                         base_url="http://test") as client:
                return (await client.get("/")).json()["db"]

        return asyncio.run(get())

    client = TestClient(app)  # module-level, as FastAPI's testing docs have it
    seen = []
    for overrides in ({}, {real_db: lambda: "fake"}, {}, None, {real_db: lambda: "again"}):
        if overrides is None:
            app.dependency_overrides = None  # as FastAPI's docs reset them
        else:
            app.dependency_overrides = {} if overrides else app.dependency_overrides or {}
            app.dependency_overrides.clear()
            app.dependency_overrides.update(overrides)
        seen.append((client.get("/").json()["db"], asgi_get()))
    client.close()
    assert seen == [("real", "real"), ("fake", "fake"), ("real", "real"), ("real", "real"),
                    ("again", "again")]


def test_a_generator_dependency_that_does_not_yield_is_a_clear_error(caplog) -> None:
    app = App()

    def empty():
        return
        yield  # noqa: unreachable - makes this a generator

    @app.get("/")
    def index(v: None = Depends(empty)) -> str:
        return "x"

    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/").status_code == 500
    assert any("did not yield" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)



def alias_token() -> str:
    return "t"


# Module-level: this file's annotations are strings, resolved in its globals.
Token = TypeAliasType("Token", Annotated[str, Depends(alias_token)])
Limit = TypeAliasType("Limit", Annotated[int, Query(le=10)])


def test_a_type_alias_names_a_dependency_or_a_parameter():
    aliased = App()

    @aliased.get("/")
    def read(t: Token, limit: Limit = 5):
        return {"t": t, "limit": limit}

    client = TestClient(aliased)
    assert client.get("/").json() == {"t": "t", "limit": 5}
    assert client.get("/?limit=11").json()["detail"][0]["type"] == "less_than_equal"


def test_markers_made_alike_are_equal_and_hash_alike_and_a_concurrency_limit_stays_its_own():
    def dep():
        return 1

    assert Depends(dep) == Depends(dep)
    assert hash(Depends(dep)) == hash(Depends(dep))
    assert Depends(dep) != Depends(dep, scope="function")
    assert Depends(dep, scope="function") == Depends(dep, scope="function")
    assert Depends(dep) != Depends(dep, use_cache=False)
    assert Security(dep, scopes=["a"]) == Security(dep, scopes=["a"])
    assert Security(dep, scopes=["a"]) != Security(dep, scopes=["b"])
    assert Security(dep) != Depends(dep)
    assert {Depends(dep): 1}[Depends(dep)] == 1
    # Each `max_concurrency` is a limit of its own, so two such markers are not one.
    limited = Depends(dep, max_concurrency=1)
    assert limited != Depends(dep, max_concurrency=1)
    assert limited == limited.with_dependency(dep)
