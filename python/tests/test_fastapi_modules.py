"""FastAPI's module paths, so an app whose imports say `vireo` where they said `fastapi` runs:
`middleware.trustedhost`/`httpsredirect`, `exception_handlers`, `exceptions.FastAPIError`,
`openapi.docs` (docs pages of an app's own) and `openapi.utils.get_openapi` (a custom
schema). Each is checked against FastAPI's on the same app."""

import importlib

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


@pytest.mark.parametrize("module, names", [
    ("middleware.trustedhost", ["TrustedHostMiddleware"]),
    ("middleware.httpsredirect", ["HTTPSRedirectMiddleware"]),
    ("middleware.cors", ["CORSMiddleware"]),
    ("middleware.gzip", ["GZipMiddleware"]),
    ("exception_handlers", ["http_exception_handler", "request_validation_exception_handler",
                            "websocket_request_validation_exception_handler"]),
    ("exceptions", ["FastAPIError", "HTTPException", "RequestValidationError"]),
    ("openapi.docs", ["get_swagger_ui_html", "get_redoc_html",
                      "get_swagger_ui_oauth2_redirect_html"]),
    ("openapi.utils", ["get_openapi"]),
])
def test_fastapis_module_paths_have_its_names(module, names):
    ours = importlib.import_module(f"vireo.{module}")
    theirs = importlib.import_module(f"fastapi.{module}")
    for name in names:
        assert hasattr(theirs, name), name  # the name is FastAPI's
        assert hasattr(ours, name), name


def handlers_app(mod):
    handlers = importlib.import_module(f"{mod.__name__}.exception_handlers")
    exceptions = importlib.import_module(f"{mod.__name__}.exceptions")
    app = mod.FastAPI()
    seen = []

    @app.exception_handler(exceptions.HTTPException)
    async def http_error(request, exc):
        seen.append(exc.status_code)
        return await handlers.http_exception_handler(request, exc)

    @app.exception_handler(exceptions.RequestValidationError)
    async def invalid(request, exc):
        seen.append("invalid")
        return await handlers.request_validation_exception_handler(request, exc)

    @app.get("/items/{n}")
    def item(n: int):
        if n == 0:
            raise exceptions.HTTPException(418, "teapot", headers={"x-why": "zero"})
        if n == 1:
            raise exceptions.HTTPException(304)
        return {"n": n}

    return app, seen


@pytest.mark.parametrize("path", ["/items/0", "/items/1", "/items/x", "/items/5"])
def test_the_default_handlers_answer_as_fastapis(path):
    (ours, our_seen), (theirs, their_seen) = handlers_app(vireo), handlers_app(fastapi)
    mine, other = TestClient(ours).get(path), FastAPIClient(theirs).get(path)
    assert (mine.status_code, mine.content) == (other.status_code, other.content)
    assert mine.headers.get("x-why") == other.headers.get("x-why")
    assert our_seen == their_seen


def docs_app(mod):
    docs = importlib.import_module(f"{mod.__name__}.openapi.docs")
    app = mod.FastAPI(docs_url=None, redoc_url=None)

    @app.get("/docs", include_in_schema=False)
    def swagger():
        return docs.get_swagger_ui_html(
            openapi_url=app.openapi_url, title="Shop - Swagger UI",
            oauth2_redirect_url="/docs/oauth2-redirect",
            swagger_js_url="/static/swagger-ui-bundle.js",
            swagger_css_url="/static/swagger-ui.css", init_oauth={"clientId": "shop"})

    @app.get("/redoc", include_in_schema=False)
    def redoc():
        return docs.get_redoc_html(openapi_url=app.openapi_url, title="Shop - ReDoc",
                                   redoc_js_url="/static/redoc.standalone.js")

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def redirect():
        return docs.get_swagger_ui_oauth2_redirect_html()

    return app


def test_self_hosted_docs_pages_load_what_they_are_given():
    for client in (TestClient(docs_app(vireo)), FastAPIClient(docs_app(fastapi))):
        page = client.get("/docs")
        assert page.headers["content-type"].startswith("text/html")
        for part in ('src="/static/swagger-ui-bundle.js"', 'href="/static/swagger-ui.css"',
                     "<title>Shop - Swagger UI</title>", "/openapi.json",
                     "/docs/oauth2-redirect", '"clientId": "shop"'):
            assert part in page.text, (client, part)
        redoc = client.get("/redoc").text
        assert '/static/redoc.standalone.js' in redoc and "<title>Shop - ReDoc</title>" in redoc
        assert client.get("/docs/oauth2-redirect").status_code == 200


def test_the_default_docs_page_has_an_oauth2_redirect_page_as_fastapis():
    for client in (TestClient(vireo.App(title="Shop")),
                   FastAPIClient(fastapi.FastAPI(title="Shop"))):
        page = client.get("/docs").text
        assert "<title>Shop - Swagger UI</title>" in page
        assert "oauth2RedirectUrl" in page
        assert client.get("/docs/oauth2-redirect").status_code == 200
    plain = TestClient(vireo.App(swagger_ui_oauth2_redirect_url=None))
    assert plain.get("/docs/oauth2-redirect").status_code == 404
    assert "oauth2RedirectUrl" not in plain.get("/docs").text


def custom_schema_app(mod):
    utils = importlib.import_module(f"{mod.__name__}.openapi.utils")
    app = mod.FastAPI()

    @app.get("/items/{item_id}", tags=["items"])
    def read_item(item_id: int, q: str = ""):
        return {"item_id": item_id}

    def custom_openapi():
        if app.openapi_schema:
            return app.openapi_schema
        schema = utils.get_openapi(title="Custom title", version="2.5.0",
                                   summary="A summary", description="Described",
                                   routes=app.routes, servers=[{"url": "/api"}],
                                   tags=[{"name": "items"}])
        schema["info"]["x-logo"] = {"url": "logo.png"}
        app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = custom_openapi
    return app


def test_a_custom_schema_from_get_openapi_is_served_as_fastapis():
    mine = TestClient(custom_schema_app(vireo)).get("/openapi.json").json()
    other = FastAPIClient(custom_schema_app(fastapi)).get("/openapi.json").json()
    assert mine == other
    assert mine["info"]["x-logo"] == {"url": "logo.png"}


def test_the_fastapi_name_is_the_app_with_fastapis_default_title():
    assert isinstance(vireo.FastAPI(), vireo.App)
    assert vireo.FastAPI().openapi()["info"] == fastapi.FastAPI().openapi()["info"]
    assert vireo.FastAPI(title="Shop", version="2").openapi()["info"] == {
        "title": "Shop", "version": "2"}
    assert vireo.App().title == "Vireo"


@pytest.mark.parametrize("options", [
    {"init_oauth": {"appName": "Evil</script><script>alert(1)</script>"}},
    {"swagger_ui_parameters": {"customKey": "<img src=x onerror=alert(1)>"}},
])
def test_docs_page_settings_cannot_end_its_script(options):
    docs = importlib.import_module("vireo.openapi.docs")
    page = docs.get_swagger_ui_html(openapi_url="/openapi.json", title="T", **options)
    body = page.body.decode() if isinstance(page.body, bytes) else page.body
    assert "</script><script>" not in body and "<img src=x" not in body
    assert "\\u003c" in body
    app = vireo.App(swagger_ui_init_oauth=options.get("init_oauth"),
                    swagger_ui_parameters=options.get("swagger_ui_parameters"))
    served = TestClient(app).get("/docs").text
    assert "</script><script>" not in served and "<img src=x" not in served
