"""`response_class=`, `default_response_class=` and `responses=`, as FastAPI's: the same app
built against FastAPI and Vireo, the same requests, the same status, content type, location
and body, and the same OpenAPI entries."""

import pytest

pytest.importorskip("fastapi")
pydantic = pytest.importorskip("pydantic")

import fastapi  # noqa: E402
import fastapi.responses  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
import vireo.responses  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Message(pydantic.BaseModel):
    message: str


def build(mod, responses, text_file):
    app = mod.FastAPI(responses={500: {"description": "It broke"}})
    router = mod.APIRouter(prefix="/r", default_response_class=responses.PlainTextResponse,
                           responses={418: {"description": "Teapot"}})

    @app.get("/page", response_class=responses.HTMLResponse)
    def page():
        return "<h1>hi</h1>"

    @app.get("/text", response_class=responses.PlainTextResponse)
    def text():
        return "plain"

    @app.get("/go", response_class=responses.RedirectResponse)
    def go():
        return "/page"

    @app.get("/moved", response_class=responses.RedirectResponse, status_code=301)
    def moved():
        return "/text"

    @app.get("/file", response_class=responses.FileResponse)
    def file():
        return text_file

    @app.get("/given", response_class=responses.HTMLResponse)
    def given():
        return responses.JSONResponse({"a": 1}, status_code=202)

    @app.post("/created", response_class=responses.HTMLResponse, status_code=201)
    def created():
        return "<p>made</p>"

    @app.get("/json", responses={404: {"model": Message, "description": "Not there"},
                                 "4XX": {"description": "Client side"}})
    def json_route():
        return {"a": [1, 2]}

    @router.get("/plain")
    def plain():
        return "from the router"

    @router.get("/html", response_class=responses.HTMLResponse)
    def html():
        return "<b>own</b>"

    app.include_router(router, responses={409: {"description": "Clash"}})
    return app


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    text_file = tmp_path_factory.mktemp("files") / "note.txt"
    text_file.write_text("a note\n")
    return (build(fastapi, fastapi.responses, str(text_file)),
            build(vireo, vireo.responses, str(text_file)))


def answer(client, method, path):
    response = client.request(method, path, follow_redirects=False)
    return (response.status_code, response.headers.get("content-type"),
            response.headers.get("location"), response.content)


PATHS = [("GET", "/page"), ("GET", "/text"), ("GET", "/go"), ("GET", "/moved"),
         ("GET", "/file"), ("GET", "/given"), ("POST", "/created"), ("GET", "/json"),
         ("GET", "/r/plain"), ("GET", "/r/html")]


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_answers_are_fastapis(apps, method, path):
    theirs, ours = apps
    with FastAPIClient(theirs) as a, TestClient(ours) as b:
        assert answer(b, method, path) == answer(a, method, path)


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_openapi_responses_are_fastapis(apps, method, path):
    theirs, ours = apps
    expected = theirs.openapi()["paths"][path][method.lower()]["responses"]
    assert ours.openapi()["paths"][path][method.lower()]["responses"] == expected


def test_model_of_a_response_is_in_the_components(apps):
    theirs, ours = apps
    assert ours.openapi()["components"]["schemas"]["Message"] == (
        theirs.openapi()["components"]["schemas"]["Message"])


def test_an_app_default_response_class_and_starlettes_classes():
    apps = []
    for mod in (fastapi, vireo):
        app = mod.FastAPI(default_response_class=fastapi.responses.HTMLResponse)

        @app.get("/")
        def root():
            return "<i>default</i>"

        @app.get("/data", response_class=fastapi.responses.JSONResponse)
        def data():
            return {"x": 1}

        apps.append(app)
    with FastAPIClient(apps[0]) as a, TestClient(apps[1]) as b:
        for path in ("/", "/data"):
            assert answer(b, "GET", path) == answer(a, "GET", path)


def test_a_response_class_that_is_not_a_class_is_refused_at_start_up():
    app = vireo.App()
    app.add_api_route("/", lambda: "x", response_class="text/html")
    with pytest.raises(TypeError, match="response_class must be a response class"):
        TestClient(app).get("/")


def layered(mod, responses):
    """Response classes at every level, and dependencies that set headers on their
    `Response`, at the app and on routes."""

    class Level0(responses.JSONResponse):
        media_type = "application/x-level-0"

    class Level1(responses.JSONResponse):
        media_type = "application/x-level-1"

    class Level2(responses.JSONResponse):
        media_type = "application/x-level-2"

    def marks(name):
        def dependency(response: mod.Response):
            response.headers[f"x-{name}"] = "yes"
            response.status_code = 203 if name == "route" else None

        return dependency

    app = mod.FastAPI(dependencies=[mod.Depends(marks("app"))], default_response_class=Level0)
    router = mod.APIRouter(prefix="/router", default_response_class=Level2)

    @router.get("/default")
    def router_default():
        return "router"

    @router.get("/own", response_class=Level1, dependencies=[mod.Depends(marks("route"))])
    def router_own():
        return "own"

    plain = mod.APIRouter(prefix="/plain")

    @plain.get("/default")
    def plain_default():
        return "plain"

    app.include_router(router, prefix="/in", default_response_class=Level1)
    app.include_router(plain, prefix="/in", default_response_class=Level1)

    @app.get("/app")
    def app_default():
        return "app"

    return app


@pytest.mark.parametrize(
    "path", ["/app", "/in/router/default", "/in/router/own", "/in/plain/default"])
def test_response_classes_and_dependency_headers_at_every_level_are_fastapis(path):
    theirs = FastAPIClient(layered(fastapi, fastapi.responses)).get(path)
    with TestClient(layered(vireo, vireo.responses)) as client:
        ours = client.get(path)
    assert ours.status_code == theirs.status_code
    assert ours.json() == theirs.json()
    for name in ("content-type", "x-app", "x-route"):
        assert ours.headers.get(name) == theirs.headers.get(name), name
