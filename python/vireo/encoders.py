"""What the native JSON encoder hands back for values it does not know.

The encoder walks dict, list, tuple, str, int, float, bool and None itself; for anything else
it calls `jsonable(obj)` once and encodes what comes back, or, when that is `bytes`, sends it
as finished JSON (pydantic and msgspec models encode themselves).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import pathlib
import uuid
from collections.abc import Mapping
from typing import Any


def jsonable(obj: Any) -> Any:
    dump_json = getattr(obj, "model_dump_json", None)
    if dump_json is not None and hasattr(type(obj), "model_fields"):
        return dump_json(by_alias=True).encode()
    if hasattr(type(obj), "__struct_fields__"):
        import msgspec

        return msgspec.json.encode(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (datetime.datetime, datetime.date, datetime.time)):
        return obj.isoformat()
    if isinstance(obj, datetime.timedelta):
        return obj.total_seconds()
    if isinstance(obj, (uuid.UUID, pathlib.PurePath)):
        return str(obj)
    if isinstance(obj, decimal.Decimal):
        return int(obj) if obj == obj.to_integral_value() else float(obj)
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).decode()
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, (set, frozenset)) or hasattr(obj, "__iter__") and not isinstance(obj, str):
        return list(obj)
    if isinstance(obj, BaseException):
        return str(obj)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
