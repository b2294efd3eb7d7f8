"""A route's form fields in the OpenAPI schema, as FastAPI writes them: a `Body_` component
named by the operation id, files as `contentMediaType`, optional fields as `anyOf` with
null."""

from typing import Annotated

import pytest

import vireo

fastapi = pytest.importorskip("fastapi")


def test_form_schemas_are_as_fastapi_writes_them() -> None:
    def build(mod):
        app = mod.FastAPI()

        @app.post("/login")
        def login(username: Annotated[str, mod.Form()], password: str = mod.Form(),
                  remember: bool = mod.Form(False)):
            return {}

        @app.post("/upload", operation_id="send")
        def upload(a: bytes = mod.File(), b: list[mod.UploadFile] = mod.File(),
                   c: mod.UploadFile | None = None, note: str | None = mod.Form(None)):
            return {}

        return app

    ours, theirs = build(vireo).openapi(), build(fastapi).openapi()
    for path in ("/login", "/upload"):
        assert ours["paths"][path]["post"]["requestBody"] == (
            theirs["paths"][path]["post"]["requestBody"])
    assert ours["components"]["schemas"] == theirs["components"]["schemas"]


@pytest.mark.parametrize(("first", "second"), [
    ("application/x-www-form-urlencoded", "multipart/form-data"),
    ("application/x-www-form-urlencoded; charset=utf-8",
     "application/x-www-form-urlencoded; charset=utf-8"),
    ("application/x-www-form-urlencoded; charset=utf-8", "application/x-www-form-urlencoded"),
])
def test_a_form_fields_media_type_is_the_bodys_as_fastapi_names_it(first, second) -> None:
    def build(mod):
        app = mod.FastAPI()

        @app.post("/")
        def submit(name: Annotated[str, mod.Form(media_type=first)],
                   token: Annotated[str, mod.Form(media_type=second)]):
            return {"name": name}

        @app.post("/embedded")
        def embedded(a: int = mod.Body(media_type="application/vnd.api+json", embed=True)):
            return a

        return app

    mine, theirs = build(vireo).openapi(), build(fastapi).openapi()
    assert mine["paths"] == theirs["paths"]
    content = mine["paths"]["/"]["post"]["requestBody"]["content"]
    assert list(content) == [second if first == second or "multipart" in second
                             else "application/x-www-form-urlencoded"]
