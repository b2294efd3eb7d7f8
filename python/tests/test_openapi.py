"""The OpenAPI schema: operations, parameters with types and defaults, request bodies from
dataclasses, pydantic models and msgspec Structs, responses, and the served routes."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Optional

import msgspec
import pydantic

from vireo import APIRouter, App, Cookie, Depends, Header, Query
from vireo.testclient import TestClient


@dataclasses.dataclass
class Item:
    name: str
    price: float
    tags: list[str] = dataclasses.field(default_factory=list)
    note: Optional[str] = None


class User(pydantic.BaseModel):
    name: str
    age: int = 0


class Order(msgspec.Struct):
    id: int
    items: list[str]


def pager(skip: int = 0, limit: int = 10) -> dict:
    return {"skip": skip, "limit": limit}


def make_app() -> App:
    app = App(title="Shop", version="2.1.0", description="A shop.")
    router = APIRouter(prefix="/v1", tags=["v1"])

    @app.get("/items/{item_id}", tags=["items"])
    def read_item(
        item_id: int,
        q: Optional[str] = None,
        flags: list[int] = Query([]),
        x_trace: str = Header(),
        session: str = Cookie("none"),
        page: dict = Depends(pager),
    ) -> Item:
        """Read one item.

        Looks it up by id."""
        return Item("a", 1.0)

    @app.post("/items", status_code=201, summary="Make an item")
    def create_item(item: Item) -> Item:
        return item

    @app.put("/users", response_model=User)
    def put_user(user: User):
        return user

    @router.post("/orders", deprecated=True)
    def order(o: Order) -> dict:
        return {}

    @app.get("/hidden", include_in_schema=False)
    def hidden() -> str:
        return "x"

    @app.get("/files/{rest:path}")
    def files(rest: str) -> str:
        return rest

    @app.get("/plain")
    def plain():
        return "x"

    app.include_router(router)
    return app


def test_document_info_and_paths() -> None:
    schema = make_app().openapi()
    assert schema["openapi"] == "3.1.0"
    assert schema["info"] == {"title": "Shop", "version": "2.1.0", "description": "A shop."}
    assert sorted(schema["paths"]) == [
        "/files/{rest}",
        "/items",
        "/items/{item_id}",
        "/plain",
        "/users",
        "/v1/orders",
    ]
    assert set(schema["paths"]["/items/{item_id}"]) == {"get"}


def test_parameters_of_handler_and_dependencies() -> None:
    op = make_app().openapi()["paths"]["/items/{item_id}"]["get"]
    assert op["tags"] == ["items"]
    assert op["summary"] == "Read Item"
    assert op["description"] == "Read one item.\n\nLooks it up by id."
    assert op["operationId"] == "read_item_items__item_id__get"
    params = {(p["in"], p["name"]): p for p in op["parameters"]}
    assert params[("path", "item_id")] == {
        "name": "item_id",
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "title": "Item Id"},
    }
    assert params[("query", "q")]["required"] is False
    # A default of None goes unsaid, as FastAPI leaves it.
    assert params[("query", "q")]["schema"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "title": "Q",
    }
    assert params[("query", "flags")]["schema"]["type"] == "array"
    assert params[("query", "flags")]["schema"]["items"] == {"type": "integer"}
    assert params[("header", "x-trace")]["required"] is True
    assert params[("cookie", "session")]["schema"]["default"] == "none"
    # The dependency's query parameters are the route's.
    limit = params[("query", "limit")]["schema"]
    assert limit == {"type": "integer", "title": "Limit", "default": 10}
    assert ("query", "skip") in params
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Item"
    }
    assert op["responses"]["422"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/HTTPValidationError"
    }


def test_request_bodies_and_components() -> None:
    schema = make_app().openapi()
    create = schema["paths"]["/items"]["post"]
    assert create["summary"] == "Make an item"
    assert create["requestBody"] == {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}},
        "required": True,
    }
    assert set(create["responses"]) == {"201", "422"}
    components = schema["components"]["schemas"]
    item = components["Item"]
    assert item["type"] == "object"
    assert item["required"] == ["name", "price"]
    assert item["properties"]["price"] == {"type": "number", "title": "Price"}
    tags = item["properties"]["tags"]
    assert tags == {"type": "array", "items": {"type": "string"}, "title": "Tags"}
    # A `None` default is left out, as FastAPI serves the schema.
    assert "default" not in item["properties"]["note"]

    put = schema["paths"]["/users"]["put"]
    assert put["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/User"
    }
    assert put["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/User"
    }
    age = components["User"]["properties"]["age"]
    assert age == {"default": 0, "title": "Age", "type": "integer"}
    assert components["User"]["required"] == ["name"]

    order = schema["paths"]["/v1/orders"]["post"]
    assert order["tags"] == ["v1"]
    assert order["deprecated"] is True
    assert order["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Order"
    }
    assert components["Order"]["required"] == ["id", "items"]
    assert components["Order"]["properties"]["id"] == {"type": "integer"}

    assert components["ValidationError"]["required"] == ["loc", "msg", "type"]
    assert components["HTTPValidationError"]["properties"]["detail"]["items"] == {
        "$ref": "#/components/schemas/ValidationError"
    }


def test_routes_without_parameters_have_no_422() -> None:
    op = make_app().openapi()["paths"]["/plain"]["get"]
    assert "parameters" not in op and "requestBody" not in op
    assert op["responses"] == {
        "200": {
            "description": "Successful Response",
            "content": {"application/json": {"schema": {}}},
        }
    }


def test_served_schema_and_docs_page() -> None:
    app = make_app()
    with TestClient(app) as client:
        res = client.get("/openapi.json")
        assert res.status_code == 200
        assert res.headers["content-type"] == "application/json"
        assert res.json() == app.openapi()
        docs = client.get("/docs")
        assert docs.headers["content-type"] == "text/html; charset=utf-8"
        assert "swagger-ui-bundle.js" in docs.text
        assert 'url: "/openapi.json"' in docs.text
        assert "<title>Shop - Swagger UI</title>" in docs.text
    assert "/openapi.json" not in app.openapi()["paths"]


def test_urls_are_configurable_and_can_be_turned_off() -> None:
    moved = App(openapi_url="/api/schema.json", docs_url="/api/docs")
    off = App(openapi_url=None)
    no_docs = App(docs_url=None)
    for app in (moved, off, no_docs):

        @app.get("/")
        def index() -> str:
            return "i"

    with TestClient(moved) as client:
        assert client.get("/api/schema.json").json()["paths"]["/"]["get"]["summary"] == "Index"
        assert 'url: "/api/schema.json"' in client.get("/api/docs").text
        assert client.get("/openapi.json").status_code == 404
    with TestClient(off) as client:
        assert client.get("/openapi.json").status_code == 404
        assert client.get("/docs").status_code == 404
    with TestClient(no_docs) as client:
        assert client.get("/openapi.json").status_code == 200
        assert client.get("/docs").status_code == 404


def test_a_route_of_the_app_at_the_docs_path_wins() -> None:
    app = App()

    @app.get("/docs")
    def my_docs() -> str:
        return "mine"

    with TestClient(app) as client:
        assert client.get("/docs").text == "mine"
        assert client.get("/openapi.json").status_code == 200


def test_annotated_markers_in_the_schema() -> None:
    app = App()

    @app.get("/search")
    def search(n: Annotated[int, Query(alias="count")] = 3) -> list[int]:
        return [n]

    op = app.openapi()["paths"]["/search"]["get"]
    assert op["parameters"] == [
        {
            "name": "count",
            "in": "query",
            "required": False,
            "schema": {"type": "integer", "title": "Count", "default": 3},
        }
    ]
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "type": "array",
        "items": {"type": "integer"},
        "title": "Response Search Search Get",
    }
