"""Starlette's path convertors in a route's template (`{id:int}`, `{x:float}`, `{s:str}`,
`{u:uuid}`) are taken: the value is the parameter's, converted by its annotation; the schema
and `url_path_for` show the template as FastAPI does. Checked against FastAPI."""

import uuid

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod):
    app = mod.FastAPI()

    @app.get("/int/{param:int}")
    def as_int(param: int):
        return {"int": param}

    @app.get("/float/{param:float}")
    def as_float(param: float):
        return {"float": param}

    @app.get("/uuid/{param:uuid}")
    def as_uuid(param: uuid.UUID):
        return {"uuid": str(param)}

    @app.get("/items/{name:str}/files/{rest:path}")
    def nested(name: str, rest: str):
        return {"name": name, "rest": rest}

    return app


@pytest.mark.parametrize("path", ["/int/5", "/float/25.5", f"/uuid/{uuid.UUID(int=7)}",
                                  "/items/a/files/b/c.txt"])
def test_a_value_the_convertor_takes_is_the_parameters_as_in_fastapi(path):
    mine, other = TestClient(build(vireo)).get(path), FastAPIClient(build(fastapi)).get(path)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_the_schema_and_url_path_for_show_the_template_as_fastapis():
    ours, theirs = build(vireo), build(fastapi)
    assert sorted(ours.openapi()["paths"]) == sorted(theirs.openapi()["paths"])
    assert ours.url_path_for("as_int", param=5) == theirs.url_path_for("as_int", param=5)
