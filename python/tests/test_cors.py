"""Vireo's CORSMiddleware answers every request as Starlette's (FastAPI's) does: the same
app under both, the same requests, the same status, body and CORS fields, across the
options. `add_middleware` given Starlette's class uses Vireo's."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.middleware.cors import CORSMiddleware as StarletteCORS  # noqa: E402
from fastapi.testclient import TestClient as StarletteClient  # noqa: E402

from vireo import App, PlainTextResponse  # noqa: E402
from vireo.middleware.cors import CORSMiddleware  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

CONFIGS = [
    {"allow_origins": ["*"]},
    {"allow_origins": ["*"], "allow_credentials": True, "allow_methods": ["*"], "allow_headers": ["*"]},
    {"allow_origins": ["https://a.example"], "allow_methods": ["GET", "POST"], "allow_headers": ["X-Token"],
     "expose_headers": ["X-Total"], "max_age": 60},
    {"allow_origin_regex": r"https://.*\.example\.org", "allow_credentials": True},
    {"allow_origins": ["https://a.example"], "allow_private_network": True},
]

PREFLIGHT = {"access-control-request-method": "POST"}
REQUESTS = [
    ("GET", "/items", {}),
    ("GET", "/items", {"origin": "https://a.example"}),
    ("GET", "/items", {"origin": "https://evil.example"}),
    ("GET", "/items", {"origin": "https://b.example.org", "cookie": "s=1"}),
    ("GET", "/varies", {"origin": "https://a.example"}),
    ("POST", "/items", {"origin": "https://a.example"}),
    ("OPTIONS", "/items", {"origin": "https://a.example", **PREFLIGHT}),
    ("OPTIONS", "/items", {"origin": "https://evil.example", **PREFLIGHT}),
    ("OPTIONS", "/items", {"origin": "https://a.example", "access-control-request-method": "DELETE"}),
    ("OPTIONS", "/items", {"origin": "https://a.example", **PREFLIGHT, "access-control-request-headers": "X-Token, content-type"}),
    ("OPTIONS", "/items", {"origin": "https://a.example", **PREFLIGHT, "access-control-request-headers": "X-Other"}),
    ("OPTIONS", "/items", {"origin": "https://b.example.org", **PREFLIGHT}),
    ("OPTIONS", "/items", {"origin": "https://a.example", **PREFLIGHT, "access-control-request-private-network": "true"}),
    ("OPTIONS", "/missing", {"origin": "https://a.example", **PREFLIGHT}),
    ("GET", "/missing", {"origin": "https://a.example"}),
]


def starlette_app(options):
    app = fastapi.FastAPI()
    app.add_middleware(StarletteCORS, **options)

    @app.get("/items")
    def items():
        return fastapi.responses.PlainTextResponse("items")

    @app.post("/items")
    def add():
        return fastapi.responses.PlainTextResponse("added")

    @app.get("/varies")
    def varies():
        return fastapi.responses.PlainTextResponse("v", headers={"vary": "Accept-Encoding"})

    return app


def vireo_app(options, cls):
    app = App()
    app.add_middleware(cls, **options)
    app.get("/items")(lambda: PlainTextResponse("items"))
    app.post("/items")(lambda: PlainTextResponse("added"))
    app.get("/varies")(lambda: PlainTextResponse("v", headers={"vary": "Accept-Encoding"}))
    return app


def seen(res):
    fields = {k.lower(): v for k, v in res.headers.items()
              if k.lower().startswith("access-control-") or k.lower() == "vary"}
    return res.status_code, res.content, fields


@pytest.mark.parametrize("cls", [CORSMiddleware, StarletteCORS], ids=["vireo's", "starlette's"])
@pytest.mark.parametrize("options", CONFIGS, ids=range(len(CONFIGS)))
def test_every_answer_is_starlette_s(options, cls):
    reference = StarletteClient(starlette_app(options))
    ours = TestClient(vireo_app(options, cls))
    for method, url, headers in REQUESTS:
        expected = seen(reference.request(method, url, headers=headers))
        assert seen(ours.request(method, url, headers=headers)) == expected, (method, url, headers)


def test_asgi_only_middleware_is_refused_with_the_reason():
    class AsgiOnly:
        def __init__(self, app):
            self.app = app

    with pytest.raises(TypeError, match="AsgiOnly is ASGI middleware, which an App does not run"):
        App().add_middleware(AsgiOnly)
