"""`app.routes`, and `include_router(..., include_in_schema=..., deprecated=...)` (and the
same on `APIRouter`), as FastAPI's: the same app built against FastAPI and Vireo lists what
FastAPI lists (its included routes flattened) and gives the same schema entries; and
`app.add_route`, `app.router`, `app.exception_handlers` as FastAPI's."""

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
import fastapi.routing  # noqa: E402
import starlette.routing  # noqa: E402
from fastapi.staticfiles import StaticFiles  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod, static_dir):
    app = mod.FastAPI()
    public = mod.APIRouter(prefix="/public")
    hidden = mod.APIRouter(prefix="/hidden", include_in_schema=False)
    old = mod.APIRouter(prefix="/old", deprecated=True)

    @app.get("/", name="home")
    def root():
        return {}

    @app.api_route("/both", methods=["GET", "POST"])
    def both():
        return {}

    @public.get("/a")
    def a():
        return {}

    @public.get("/secret", include_in_schema=False)
    def secret():
        return {}

    @hidden.get("/b")
    def b():
        return {}

    @old.get("/c")
    def c():
        return {}

    @app.websocket("/ws")
    async def ws(websocket: mod.WebSocket):
        await websocket.close()

    app.include_router(public)
    app.include_router(hidden)
    app.include_router(old)
    app.include_router(public, prefix="/v2", include_in_schema=False)
    app.include_router(public, prefix="/v3", deprecated=True)
    app.mount("/static", StaticFiles(directory=static_dir), name="static")
    return app


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    static_dir = str(tmp_path_factory.mktemp("static"))
    return build(fastapi, static_dir), build(vireo, static_dir)


def entry(route, kind):
    if kind == "http":
        return ("http", route.path, route.name, tuple(sorted(route.methods)),
                route.endpoint.__name__)
    if kind == "ws":
        return ("ws", route.path, route.name, route.endpoint.__name__)
    return ("mount", route.path, route.name)


def fastapi_listing(app):
    kinds = [(fastapi.routing.APIRoute, "http"), (fastapi.routing.APIWebSocketRoute, "ws"),
             (starlette.routing.Mount, "mount")]
    return sorted(entry(route, kind) for route in app.routes
                  for cls, kind in kinds if isinstance(route, cls))


def vireo_listing(app):
    def kind(route):
        if hasattr(route, "app"):
            return "mount"
        return "http" if hasattr(route, "methods") else "ws"

    return sorted(entry(route, kind(route)) for route in app.routes)


def test_routes_are_listed_as_fastapi_lists_them(apps):
    theirs, ours = apps
    listed = vireo_listing(ours)
    # FastAPI 0.165 lists an included router as one entry of its own kind; what it lists
    # directly is here alike, and the included routes follow with their full paths.
    assert set(fastapi_listing(theirs)) <= set(listed)
    assert ("http", "/both", "both", ("GET", "POST"), "both") in listed
    included = [e for e in listed if e[1].startswith(("/public", "/hidden", "/old", "/v"))]
    assert [e[1] for e in included] == sorted(
        ["/hidden/b", "/old/c", "/public/a", "/public/secret", "/v2/public/a",
         "/v2/public/secret", "/v3/public/a", "/v3/public/secret"])


# FastAPI warns that the two methods of /both share an operation id; so they do here.
@pytest.mark.filterwarnings("ignore:Duplicate Operation ID")
def test_schema_hides_and_deprecates_as_fastapi_does(apps):
    theirs, ours = apps
    expected = {path: {method: op.get("deprecated", False) for method, op in item.items()}
                for path, item in theirs.openapi()["paths"].items()}
    got = {path: {method: op.get("deprecated", False) for method, op in item.items()}
           for path, item in ours.openapi()["paths"].items()}
    assert got == expected
    assert "/hidden/b" not in got and "/v2/public/a" not in got
    assert got["/v3/public/a"]["get"] is True and got["/old/c"]["get"] is True


def starlette_style(mod):
    app = mod.FastAPI() if mod is fastapi else mod.App()

    async def homepage(request):
        return mod.responses.PlainTextResponse(
            f"home {request.method} {request.query_params.get('q')}")

    def sync_page(request):
        return mod.responses.JSONResponse({"path": request.url.path})

    async def teapot(request, exc):
        return mod.responses.JSONResponse({"teapot": str(exc)}, 418)

    app.add_route("/home", homepage, methods=["GET", "POST"])
    app.add_route("/sync", sync_page)
    app.exception_handlers[KeyError] = teapot
    app.router.add_api_route("/via-router", lambda: {"via": "router"})

    @app.get("/key")
    def key():
        raise KeyError("k")

    return app


def test_add_route_router_and_exception_handlers_as_in_fastapi():
    theirs = FastAPIClient(starlette_style(fastapi))
    with TestClient(starlette_style(vireo)) as ours:
        for method, path in [("GET", "/home?q=1"), ("POST", "/home"), ("GET", "/sync"),
                             ("GET", "/key"), ("GET", "/via-router")]:
            mine, other = ours.request(method, path), theirs.request(method, path)
            assert (mine.status_code, mine.content) == (other.status_code, other.content)
        # Starlette-style routes are left out of the schema, as FastAPI leaves them.
        assert ours.get("/openapi.json").json()["paths"].keys() == theirs.get(
            "/openapi.json").json()["paths"].keys() == {"/key", "/via-router"}
