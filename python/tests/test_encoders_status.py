"""`vireo.encoders.jsonable_encoder` and `vireo.status`, as FastAPI's: the same values
encoded by both encoders must come out equal, and every status name FastAPI has must be
here with the same code."""

import collections
import dataclasses
import datetime
import decimal
import enum
import pathlib
import uuid
import warnings

import pytest

pytest.importorskip("fastapi")
pydantic = pytest.importorskip("pydantic")

import fastapi.encoders  # noqa: E402
import starlette.status  # noqa: E402

from vireo import status  # noqa: E402
from vireo.encoders import jsonable_encoder  # noqa: E402


class Colour(enum.Enum):
    RED = "red"
    BLUE = 2


@dataclasses.dataclass
class Point:
    x: int
    when: datetime.date
    tags: tuple = ()


class Item(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(populate_by_name=True)
    name: str = pydantic.Field(alias="itemName")
    price: decimal.Decimal = decimal.Decimal("1.50")
    note: str | None = None
    made: datetime.datetime | None = None


class Plain:
    def __init__(self) -> None:
        self.a = 1
        self.when = datetime.time(12, 30)


VALUES = [
    {"when": datetime.datetime(2026, 12, 2, 5, 30, 1, 250, tzinfo=datetime.timezone.utc),
     "day": datetime.date(2026, 1, 31), "at": datetime.time(23, 59, 59),
     "took": datetime.timedelta(minutes=3, microseconds=5)},
    {"id": uuid.UUID(int=7), "path": pathlib.PurePosixPath("/srv/a.txt"), "raw": b"bytes"},
    [decimal.Decimal("10"), decimal.Decimal("1.0"), decimal.Decimal("1.5"),
     decimal.Decimal("1E+2")],
    {"colours": [Colour.RED, Colour.BLUE], Colour.RED: "as a key", 3: "int key"},
    {"set": {3}, "frozen": frozenset({"a"}), "tuple": (1, (2, 3)),
     "deque": collections.deque([1, 2]), "gen": (i * i for i in range(3))},
    Point(1, datetime.date(2026, 2, 3), (Colour.BLUE,)),
    Item(name="pen", made=datetime.datetime(2026, 3, 4, 5, 6)),
    [Item(name="a", note="n"), {"nested": Item(name="b")}],
    Plain(),
    {"keep": 1, "none": None, "_sa_instance_state": "x"},
    None, True, 1.5, "text", Colour.RED,
]

OPTIONS = [
    {},
    {"by_alias": False},
    {"exclude_none": True},
    {"exclude_unset": True},
    {"exclude_defaults": True},
    {"include": {"name", "keep"}},
    {"exclude": {"price", "none"}},
    {"sqlalchemy_safe": False},
]


def copy_of(value):
    """The value again, with a fresh generator (a generator is used up once encoded)."""
    if isinstance(value, dict) and "gen" in value:
        return {**value, "gen": (i * i for i in range(3))}
    return value


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "defaults")
@pytest.mark.parametrize("value", range(len(VALUES)))
def test_jsonable_encoder_gives_what_fastapis_gives(value, options):
    expected = fastapi.encoders.jsonable_encoder(copy_of(VALUES[value]), **options)
    assert jsonable_encoder(copy_of(VALUES[value]), **options) == expected


def test_a_custom_encoder_is_used_for_its_type_and_subtypes():
    class Money(decimal.Decimal):
        pass

    encoders = {decimal.Decimal: lambda d: f"${d}"}
    value = {"price": Money("2.5"), "plain": decimal.Decimal("1")}
    assert jsonable_encoder(value, custom_encoder=encoders) == fastapi.encoders.jsonable_encoder(
        value, custom_encoder=encoders)
    assert jsonable_encoder(value, custom_encoder=encoders) == {"price": "$2.5", "plain": "$1"}


def test_what_cannot_be_encoded_is_a_value_error_naming_its_type():
    with pytest.raises(ValueError, match="cannot encode object"):
        jsonable_encoder(object())
    with pytest.raises(ValueError):
        fastapi.encoders.jsonable_encoder(object())


def test_every_status_name_fastapi_has_is_here_with_its_code():
    names = list(starlette.status.__all__) + list(starlette.status.__deprecated__)
    assert len(names) > 80
    with warnings.catch_warnings():  # Starlette warns on its older names
        warnings.simplefilter("ignore")
        for name in names:
            assert getattr(status, name) == getattr(starlette.status, name), name
    assert status.HTTP_422_UNPROCESSABLE_ENTITY == status.HTTP_422_UNPROCESSABLE_CONTENT == 422
