"""The schema of an app with the shapes FastAPI's tutorials use, compared whole with FastAPI's
for the same app: `None` defaults left out, a required `Optional` query value, a non-model
response's title, `Enum` tags, a docstring cut at a form feed, a hidden parameter's 422, a
`{p:path}` route's operationId, body examples, a file's description, `time` and `timedelta`
fields and `bytes` as FastAPI writes them."""

import datetime
import enum
from typing import Annotated, Optional

import pytest
from pydantic import BaseModel, ConfigDict

fastapi = pytest.importorskip("fastapi")

import vireo  # noqa: E402


class Item(BaseModel):
    name: str
    description: Optional[str] = None
    price: float
    tax: Optional[float] = None


class Event(BaseModel):
    start: datetime.datetime
    repeat_at: Optional[datetime.time] = None
    process_after: datetime.timedelta
    payload: bytes


class Blob(BaseModel):
    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    data: bytes


class Tags(enum.Enum):
    items = "items"
    users = "users"


def build(mod):
    app = mod.FastAPI()

    @app.post("/items", tags=[Tags.items])
    def create(item: Annotated[Item, mod.Body(examples=[{"name": "Foo", "price": 1.5}])]):
        """Create an item.

        \fFor the code's readers only."""
        return item

    @app.get("/items", tags=[Tags.items, Tags.users])
    def search(q: Annotated[Optional[str], mod.Query(min_length=3)],
               hidden: Annotated[str, mod.Query(include_in_schema=False)] = "") -> list[Item]:
        return []

    @app.get("/hidden-only")
    def hidden_only(h: Annotated[str, mod.Query(include_in_schema=False)] = ""):
        return {}

    @app.get("/files/{file_path:path}")
    def read_file(file_path: str):
        return {"path": file_path}

    @app.post("/upload")
    def upload(file: Annotated[bytes, mod.File(description="A file read as bytes")]):
        return {"size": len(file)}

    @app.put("/events")
    def event(event: Event) -> Event:
        return event

    @app.post("/blobs")
    def blob(blob: Blob) -> Blob:
        return blob

    return app


def test_the_schema_is_fastapis():
    mine, theirs = build(vireo).openapi(), build(fastapi).openapi()
    assert mine["paths"] == theirs["paths"]
    assert mine["components"] == theirs["components"]
    assert mine == theirs
