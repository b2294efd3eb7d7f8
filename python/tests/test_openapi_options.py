"""The app's schema and docs options, as FastAPI's: `summary`, `terms_of_service`, `contact`,
`license_info`, `servers`, `openapi_tags`, `openapi_external_docs`, `include_in_schema`,
`deprecated`, `redoc_url`, `swagger_ui_parameters` (and `debug`,
accepted): the same app under FastAPI and Vireo serves the same `/openapi.json`, and docs
pages that read it."""

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

OPTIONS = {
    "title": "Shop",
    "version": "2.1.0",
    "summary": "Things to buy",
    "description": "The **shop** API.",
    "terms_of_service": "https://example.test/terms",
    "contact": {"name": "Ada", "email": "ada@example.test"},
    "license_info": {"name": "MIT", "identifier": "MIT"},
    "servers": [{"url": "https://api.example.test", "description": "production"}],
    "openapi_tags": [{"name": "items", "description": "What is for sale"}],
    "openapi_external_docs": {"description": "The guide", "url": "https://example.test/guide"},
    "swagger_ui_parameters": {"deepLinking": False, "defaultModelsExpandDepth": -1},
    "debug": False,
}


def build(mod, **extra):
    app = mod.FastAPI(**OPTIONS, **extra)

    @app.get("/items/{item_id}", tags=["items"])
    def item(item_id: int):
        return {"id": item_id}

    return app


def test_the_schema_is_fastapis():
    with FastAPIClient(build(fastapi)) as theirs, TestClient(build(vireo)) as ours:
        expected = theirs.get("/openapi.json").json()
        got = ours.get("/openapi.json").json()
    for key in ("info", "servers", "tags", "externalDocs"):
        assert got[key] == expected[key], key
    assert got["paths"] == expected["paths"]


@pytest.mark.parametrize("setting", [{"deprecated": True}, {"include_in_schema": False}])
def test_app_wide_route_settings_are_fastapis(setting):
    def with_router(mod):
        app = build(mod, **setting)
        router = mod.APIRouter()

        @router.get("/included")
        def included():
            return 1

        app.include_router(router)
        return app

    with FastAPIClient(with_router(fastapi)) as theirs, \
            TestClient(with_router(vireo)) as ours:
        expected = theirs.get("/openapi.json").json()["paths"]
        got = ours.get("/openapi.json").json()["paths"]
        assert ours.get("/included").json() == 1
    assert got == expected
    assert got == {} if "include_in_schema" in setting else len(got) == 2


def test_the_docs_pages_read_the_schema_with_their_settings():
    with TestClient(build(vireo)) as client:
        swagger = client.get("/docs").text
        redoc = client.get("/redoc").text
    assert 'url: "/openapi.json"' in swagger
    assert '"deepLinking": false' in swagger and '"defaultModelsExpandDepth": -1' in swagger
    assert '<redoc spec-url="/openapi.json">' in redoc


def test_docs_pages_switched_off_are_not_served():
    with TestClient(build(vireo, docs_url=None, redoc_url=None)) as client:
        assert client.get("/docs").status_code == 404
        assert client.get("/redoc").status_code == 404
        assert client.get("/openapi.json").status_code == 200
