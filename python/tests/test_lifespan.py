"""`App(lifespan=...)`, FastAPI's way to set up and tear down: a context manager entered at
startup and left at shutdown; a mapping it yields is in each request's `request.state`."""

from __future__ import annotations

import contextlib

import pytest

from vireo import App, Request
from vireo.testclient import TestClient

events: list[str] = []


@contextlib.asynccontextmanager
async def lifespan(app: App):
    events.append("setup")
    app.state.pool = "pool"
    yield {"client": "db-client"}
    events.append("teardown")


app = App(lifespan=lifespan)


@app.get("/")
def read(request: Request):
    request.state.client += "!"  # a copy per request: the next one sees the original
    return [request.state.client, request.app.state.pool]


def test_setup_runs_before_requests_and_teardown_at_shutdown():
    events.clear()
    with TestClient(app) as client:
        assert events == ["setup"]
        assert client.get("/").json() == ["db-client!", "pool"]
        assert client.get("/").json() == ["db-client!", "pool"]
    assert events == ["setup", "teardown"]


def test_a_sync_context_manager_and_one_that_yields_nothing_work_too():
    seen = []

    @contextlib.contextmanager
    def plain(app):
        seen.append("in")
        yield
        seen.append("out")

    quiet = App(lifespan=plain)
    quiet.get("/")(lambda: "ok")
    with TestClient(quiet) as client:
        assert client.get("/").text == "ok"
    assert seen == ["in", "out"]


def test_a_failing_setup_stops_the_start():
    @contextlib.asynccontextmanager
    async def broken(app):
        raise RuntimeError("no database")
        yield

    failing = App(lifespan=broken)
    with pytest.raises(RuntimeError, match="no database"):
        with TestClient(failing):
            pass


def test_lifespan_and_startup_hooks_are_not_mixed():
    with pytest.raises(TypeError, match="either lifespan or on_startup/on_shutdown"):
        App(lifespan=lifespan, on_startup=[lambda: None])


def test_a_lifespan_must_be_a_context_manager_yielding_a_mapping():
    with pytest.raises(TypeError, match="async context manager"):
        with TestClient(App(lifespan=lambda app: None)):
            pass

    @contextlib.asynccontextmanager
    async def listing(app):
        yield [1]

    with pytest.raises(TypeError, match="a mapping of state or nothing"):
        with TestClient(App(lifespan=listing)):
            pass
