"""What the native JSON encoder hands back for values it does not know.

The encoder walks dict, list, tuple, str, int, float, bool and None itself; for anything else
it calls `jsonable(obj)` once and encodes what comes back, or, when that is `bytes`, sends it
as finished JSON (pydantic and msgspec models encode themselves).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import pathlib
import types
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
        # Its attributes, as FastAPI's `jsonable_encoder` gives an exception: a validator's
        # `ValueError` in a 422's `ctx` is `{}` there.
        return dict(vars(obj))
    if hasattr(obj, "__dict__"):
        # Any other object by its attributes, as FastAPI encodes one.
        return dict(vars(obj))
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def jsonable_encoder(
    obj: Any,
    include: Any = None,
    exclude: Any = None,
    by_alias: bool = True,
    exclude_unset: bool = False,
    exclude_defaults: bool = False,
    exclude_none: bool = False,
    custom_encoder: dict[Any, Any] | None = None,
    sqlalchemy_safe: bool = True,
) -> Any:
    """`obj` as the plain values JSON can hold (dicts, lists, strings, numbers, bools, None),
    as FastAPI's `jsonable_encoder` makes them: models and dataclasses as dicts (shaped by
    the include/exclude/alias options), dates as ISO strings, `Decimal`s as int or float,
    enums as their values, sets, tuples and generators as lists. `custom_encoder` maps a type
    to a function that encodes its values; with `sqlalchemy_safe`, a mapping's keys that start
    with `_sa` (SQLAlchemy's state) are left out. An object none of these fit is a
    ValueError."""

    def again(value: Any, **options: Any) -> Any:
        return jsonable_encoder(value, by_alias=by_alias, exclude_unset=exclude_unset,
                                exclude_defaults=exclude_defaults, exclude_none=exclude_none,
                                custom_encoder=custom_encoder, sqlalchemy_safe=sqlalchemy_safe,
                                **options)

    if custom_encoder:
        encode = custom_encoder.get(type(obj)) or next(
            (fn for kind, fn in custom_encoder.items() if isinstance(obj, kind)), None)
        if encode is not None:
            return encode(obj)
    if hasattr(type(obj), "model_fields") and hasattr(obj, "model_dump"):
        dumped = obj.model_dump(mode="json", include=include, exclude=exclude,
                                by_alias=by_alias, exclude_unset=exclude_unset,
                                exclude_defaults=exclude_defaults, exclude_none=exclude_none)
        # Already shaped by the model: only these options apply again, as in FastAPI.
        return jsonable_encoder(dumped, exclude_none=exclude_none,
                                exclude_defaults=exclude_defaults,
                                sqlalchemy_safe=sqlalchemy_safe)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return again(dataclasses.asdict(obj), include=include, exclude=exclude)
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    if obj is None or isinstance(obj, (str, int, float)):
        return obj
    if isinstance(obj, Mapping):
        keep = set(include) if include is not None else None
        drop = set(exclude or ())
        return {
            again(key): again(value)
            for key, value in obj.items()
            if (keep is None or key in keep) and key not in drop
            and not (exclude_none and value is None)
            and not (sqlalchemy_safe and isinstance(key, str) and key.startswith("_sa"))
        }
    if isinstance(obj, (list, set, frozenset, tuple, collections.deque, types.GeneratorType)):
        return [again(item, include=include, exclude=exclude) for item in obj]
    if isinstance(obj, decimal.Decimal):
        exponent = obj.as_tuple().exponent
        return int(obj) if isinstance(exponent, int) and exponent >= 0 else float(obj)
    if hasattr(type(obj), "__struct_fields__"):
        import msgspec

        return again(msgspec.to_builtins(obj))
    if isinstance(obj, (datetime.date, datetime.time, datetime.timedelta, uuid.UUID,
                        bytes, bytearray)):
        return jsonable(obj)
    try:
        data = dict(obj)
    except Exception as not_a_mapping:  # noqa: BLE001 - tried in turn, as FastAPI does
        try:
            data = vars(obj)
        except TypeError:
            raise ValueError(
                f"cannot encode {type(obj).__name__} as JSON: it is not a mapping, has no "
                f"attributes, and no custom_encoder names its type ({not_a_mapping})"
            ) from None
    return again(data, include=include, exclude=exclude)
