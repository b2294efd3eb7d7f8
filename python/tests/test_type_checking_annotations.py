"""A dependency or handler whose return annotation names what exists only for a type checker
(imported under `TYPE_CHECKING`, with postponed annotations) still runs, as in FastAPI; a
parameter annotation that cannot be resolved is still a clear error when the app is built."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import pytest

from vireo import App, Depends
from vireo.testclient import TestClient

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import AsyncGenerator


class Client:
    name = "client"


async def get_client() -> AsyncGenerator[Client, None]:
    yield Client()


def test_a_dependency_whose_return_annotation_is_for_type_checkers_only_runs():
    app = App()

    @app.get("/")
    async def read(client: Annotated[Client, Depends(get_client)]) -> dict:
        return {"name": client.name}

    assert TestClient(app).get("/").json() == {"name": "client"}


def needs_missing(value: NotImported) -> int:  # noqa: F821 - the name is missing on purpose
    return 1


def test_an_unresolvable_parameter_annotation_is_a_type_error_naming_the_function():
    app = App()
    app.get("/")(needs_missing)
    with pytest.raises(TypeError, match="cannot read the annotations of .*needs_missing"):
        TestClient(app).get("/")
