"""The schema of an app with the shapes FastAPI's tutorials use, compared whole with FastAPI's
for the same app: `None` defaults left out, a required `Optional` query value, a non-model
response's title, `Enum` tags, a docstring cut at a form feed, a hidden parameter's 422, a
`{p:path}` route's operationId, body examples, described body members, a `Field` beside a
marker, a file's description, `time` and `timedelta` fields and `bytes`, unannotated
parameters and a bare `list`, and a raw stream's media type as FastAPI writes them."""

import datetime
import enum
from collections.abc import Iterable
from typing import Annotated, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field, computed_field

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


# A pydantic `Field` beside a marker gives what the marker does not.
Count = Annotated[int, Field(alias="original", description="From Field", examples=[1],
                             json_schema_extra={"x-source": "field", "x-retained": True})]


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

    @app.get("/untyped/{key}")
    def untyped(key, q=None, tags: Annotated[list, mod.Query()] = []):
        """Read anything.

        - **key**: any text
        \f
        :param key: for the code's readers.
        """
        return {"key": key}

    @app.post("/described")
    def described(
        a: Annotated[int, mod.Body(description="d", examples=[1], deprecated=True,
                                   json_schema_extra={"x-k": 1})],
        n: Annotated[Count, mod.Query(alias="m", json_schema_extra={"x-source": "query"})],
        b: Annotated[str, mod.Body(title="Bee")] = "z",
    ):
        return a

    class PNGStream(mod.responses.StreamingResponse):
        media_type = "image/png"

    @app.get("/image", response_class=PNGStream)
    def image() -> Iterable[bytes]:
        yield b"png"

    return app


def test_the_schema_is_fastapis():
    mine, theirs = build(vireo).openapi(), build(fastapi).openapi()
    assert mine["paths"] == theirs["paths"]
    assert mine["components"] == theirs["components"]
    assert mine == theirs


class Priced(BaseModel):
    net: float

    @computed_field
    @property
    def gross(self) -> float:
        return self.net * 1.2


class Basket(BaseModel):
    items: list[Priced]
    note: Optional[str] = None


class Receipt(BaseModel):
    model_config = ConfigDict(ser_json_bytes="base64")
    scan: bytes


def sides(mod, **options):
    app = mod.FastAPI(**options)

    @app.post("/baskets")
    def basket(basket: Basket) -> Basket:
        return basket

    @app.get("/receipt")
    def receipt() -> Receipt:
        return Receipt(scan=b"x")

    @app.get("/gone", responses={410: {"model": Priced}})
    def gone():
        return {}

    return app


@pytest.mark.parametrize("separate", [True, False])
def test_a_model_that_differs_as_sent_and_as_answered_is_listed_as_fastapi_lists_it(separate):
    options = {} if separate else {"separate_input_output_schemas": False}
    mine = sides(vireo, **options).openapi()
    theirs = sides(fastapi, **options).openapi()
    assert mine == theirs
    schemas = mine["components"]["schemas"]
    # A computed field is only answered, so its model is listed twice either way.
    assert {"Basket-Input", "Basket-Output", "Priced-Input", "Priced-Output"} <= set(schemas)
    assert "gross" in schemas["Priced-Output"]["properties"]
    assert "gross" not in schemas["Priced-Input"]["properties"]
    # Bytes answered as base64 are described so only with the two sides apart.
    encoding = schemas["Receipt"]["properties"]["scan"].get("contentEncoding")
    assert encoding == ("base64" if separate else None)
