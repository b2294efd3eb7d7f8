"""Pydantic metadata in a parameter's `Annotated` (`AfterValidator`, `Field`, annotated-types'
`Gt`) validates path, query, header and body values as FastAPI applies it, a validator's
`ValueError` answering 422 as FastAPI words it; and an exception handler sees each error's
`loc` as a tuple, as FastAPI gives it."""

from typing import Annotated, Optional

import annotated_types
import pytest
from pydantic import AfterValidator, BeforeValidator

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def prefixed(value: str) -> str:
    if not value.startswith(("isbn-", "imdb-")):
        raise ValueError('it must start with "isbn-" or "imdb-"')
    return value


def build(mod):
    app = mod.FastAPI()

    @app.get("/items/{code}")
    def items(
        code: Annotated[str, AfterValidator(str.upper)],
        id: Annotated[Optional[str], AfterValidator(prefixed)] = None,
        n: Annotated[int, annotated_types.Gt(0)] = 1,
        tags: Annotated[list[str], mod.Query(), AfterValidator(sorted)] = [],
        x_trim: Annotated[str, mod.Header(), BeforeValidator(str.strip)] = "",
    ):
        return {"code": code, "id": id, "n": n, "tags": tags, "trim": x_trim}

    @app.post("/body")
    def body(total: Annotated[int, mod.Body(embed=True), annotated_types.Le(10)]):
        return {"total": total}

    return app


@pytest.mark.parametrize("method, path, options", [
    ("GET", "/items/abc", {}),
    ("GET", "/items/abc?id=isbn-1&n=3&tags=b&tags=a", {"headers": {"x-trim": "  x "}}),
    ("GET", "/items/abc?id=wtf-yes", {}),
    ("GET", "/items/abc?n=0", {}),
    ("POST", "/body", {"json": {"total": 3}}),
    ("POST", "/body", {"json": {"total": 11}}),
])
def test_annotated_metadata_validates_as_fastapi_applies_it(method, path, options):
    mine = TestClient(build(vireo)).request(method, path, **options)
    other = FastAPIClient(build(fastapi)).request(method, path, **options)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_a_validation_error_handler_sees_each_loc_as_a_tuple_as_in_fastapi():
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    seen = []
    for mod, client_class in ((vireo, TestClient), (fastapi, FastAPIClient)):
        app = build(mod)

        @app.exception_handler(RequestValidationError)
        async def handler(request, exc):
            seen.append([error["loc"] for error in exc.errors()])
            return JSONResponse({"n": len(exc.errors())}, 400)

        assert client_class(app).get("/items/abc?n=0").status_code == 400
    assert seen[0] == seen[1] == [("query", "n")]
