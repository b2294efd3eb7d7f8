"""A router's `on_event` hooks and `lifespan` run in the app that includes it (through any
router between), as FastAPI runs them: hooks after the app's, lifespans entered inside the
app's and left before it, their states merged with the app's winning; a bare generator works
as a lifespan. Checked against FastAPI: the order of events and the state a request sees.
(A router's hooks run even when the app has a lifespan, where FastAPI skips them.)"""

import contextlib

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod, log):
    @contextlib.asynccontextmanager
    async def app_lifespan(app):
        log.append("app in")
        yield {"app": 1, "shared": "app"}
        log.append("app out")

    def router_lifespan(app):  # a bare generator function
        log.append("router in")
        yield {"router": 2, "shared": "router"}
        log.append("router out")

    @contextlib.asynccontextmanager
    async def sub_lifespan(app):
        log.append("sub in")
        yield {"sub": 3}
        log.append("sub out")

    sub = mod.APIRouter(lifespan=sub_lifespan)
    router = mod.APIRouter(lifespan=router_lifespan)
    router.include_router(sub)

    @router.get("/state")
    def state(request: mod.Request):
        return {k: getattr(request.state, k, None) for k in ("app", "router", "sub", "shared")}

    app = mod.FastAPI(lifespan=app_lifespan)
    app.include_router(router)
    return app


def test_router_hooks_and_lifespans_run_as_under_fastapi():
    ours, theirs = [], []
    runs = []
    for client_class, mod, log in ((TestClient, vireo, ours), (FastAPIClient, fastapi, theirs)):
        with client_class(build(mod, log)) as client:
            runs.append((client.get("/state").json(), client.app_state))
    assert runs[0] == runs[1]
    assert runs[0][0] == {"app": 1, "router": 2, "sub": 3, "shared": "app"}
    assert ours == theirs


def hooks(mod, log):
    sub = mod.APIRouter()
    sub.on_event("startup")(lambda: log.append("sub up"))
    sub.on_event("shutdown")(lambda: log.append("sub down"))
    router = mod.APIRouter()
    router.on_event("startup")(lambda: log.append("router up"))
    router.include_router(sub)
    app = mod.FastAPI()
    app.on_event("startup")(lambda: log.append("app up"))
    app.on_event("shutdown")(lambda: log.append("app down"))
    app.include_router(router)
    return app


def test_router_hooks_run_once_each_in_the_app():
    # FastAPI 0.165 runs a nested router's hooks once per level of inclusion; each runs once
    # here, in FastAPI's order otherwise.
    ours = []
    with TestClient(hooks(vireo, ours)):
        ours.append("serving")
    assert ours == ["app up", "router up", "sub up", "serving", "app down", "sub down"]
