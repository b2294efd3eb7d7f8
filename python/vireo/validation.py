"""Request bodies: JSON parsed and validated into the handler's model, with every error
reported in FastAPI's shape. Pydantic v2 models and msgspec Structs validate themselves;
dataclasses are checked here, coercing as pydantic's lax mode does."""

from __future__ import annotations

import copy
import dataclasses
import json
import types
import typing
from typing import Any, Callable

from .exceptions import HTTPException, RequestValidationError

_MISSING = object()

# Defaults that cannot change, given to every request as they are.
_IMMUTABLE = (type(None), bool, int, float, str, bytes)


def fresh_default(value: Any) -> Any:
    """A default as one request gets it: a deep copy of a mutable one (a list, a dict, a
    model), as FastAPI copies defaults, so that what one request does to it no other sees."""
    return value if type(value) in _IMMUTABLE else copy.deepcopy(value)


def _pydantic_model(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "model_validate") and hasattr(tp, "model_fields")


def _msgspec_struct(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "__struct_fields__")


def is_body_type(tp: Any) -> bool:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return True
    if _pydantic_model(tp) or _msgspec_struct(tp):
        return True
    origin = typing.get_origin(tp) or tp
    if origin is typing.Annotated:  # `Annotated[Item, Tag("item")]`, a choice of a union
        return is_body_type(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        # `Item | OtherItem`: a body when every choice but None is one.
        choices = [a for a in typing.get_args(tp) if a is not type(None)]
        return bool(choices) and all(is_body_type(a) for a in choices)
    if origin in (tuple, set, frozenset):
        # `tuple[Point, Point]`: a sequence of bodies is one too (of scalars, a query list).
        return any(is_body_type(a) for a in typing.get_args(tp) if a is not Ellipsis)
    return origin in (dict, list)


def _unparsable() -> HTTPException:
    # A body `json.loads` fails on other than by its grammar (not UTF-8, nested too deep for
    # the parser): a 400, as FastAPI answers it.
    return HTTPException(400, "There was an error parsing the body")


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise RequestValidationError(
            [
                {
                    "type": "json_invalid",
                    "loc": ["body", exc.pos],
                    "msg": "JSON decode error",
                    "input": {},
                    "ctx": {"error": exc.msg},
                }
            ]
        ) from None
    except Exception:
        raise _unparsable() from None


def _value_check(tp: Any, loc: list[Any], constraints: dict[str, Any] | None = None,
                 where: str = "") -> Callable[[Any], Any]:
    """`check(parsed_json) -> value` as `tp` (with `constraints`, `Body(gt=0)`'s), raising
    `RequestValidationError` with each error's location under `loc`. Any type but a msgspec
    Struct is validated by pydantic when it is installed, as FastAPI validates it; without
    pydantic, as its lax mode would."""
    if _pydantic_model(tp) and not constraints:
        return _pydantic_check(tp, loc)
    if _msgspec_struct(tp):
        if constraints:
            raise TypeError(f"{where}: constraints ({', '.join(constraints)}) do not apply to "
                            "a msgspec Struct; put them on its fields")
        return _msgspec_check(tp, loc)
    adapter = _adapter(tp, constraints, where)
    if adapter is not None:
        return _adapter_check(adapter, loc)
    if constraints:
        raise TypeError(f"{where}: constraints ({', '.join(constraints)}) on a body or form "
                        "value need pydantic (pip install pydantic)")

    def check(data: Any) -> Any:
        errors: list[dict[str, Any]] = []
        value = _coerce(data, tp, loc, errors)
        if errors:
            raise RequestValidationError(errors)
        return value

    return check


def body_validator(
    tp: Any, required: bool, default: Any, optional: bool,
    constraints: dict[str, Any] | None = None, where: str = "",
) -> Callable[[bytes, bool], Any]:
    """`validate(body_bytes, is_json) -> value`, raising `RequestValidationError`. A body whose
    content type is not JSON is validated as the bytes it is, as FastAPI does: a `str` or
    `bytes` takes it, a model or dict refuses it."""
    check = _value_check(tp, ["body"], constraints, where)

    def validate(body: bytes, is_json: bool = True) -> Any:
        if not body:
            if not required:
                return fresh_default(default)
            raise RequestValidationError(
                [{"type": "missing", "loc": ["body"], "msg": "Field required", "input": None}]
            )
        data = _parse(body) if is_json else body
        if data is None and optional:
            return None
        return check(data)

    return validate


def embedded_body_validator(
    key: str, tp: Any, required: bool, default: Any, reports_body: bool,
    constraints: dict[str, Any] | None = None, where: str = "",
    choices: tuple[str, ...] | None = None,
) -> Callable[[bytes], Any]:
    """For one of several body parameters of a handler (or one marked `Body(embed=True)`),
    as FastAPI reads them: the body is a JSON object and this parameter is its member `key`,
    or the first of `choices` (pydantic's `AliasChoices`) it has.
    `validate(body_bytes, is_json) -> value`, raising `RequestValidationError`. What is wrong with the
    body as a whole (JSON that does not parse) is reported once, by the parameter with
    `reports_body`; the others then raise with no error of their own."""
    missing = {"type": "missing", "loc": ["body", key], "msg": "Field required", "input": None}
    # Each name's check (`key` alone, or each choice, `key` first), locating errors at the
    # name the value came by.
    checks = {name: _value_check(tp, ["body", name], constraints, where)
              for name in choices or (key,)}

    def validate(body: bytes, is_json: bool = True) -> Any:
        if not body or not is_json:  # a body that is not JSON has none of the members
            if required:
                raise RequestValidationError([dict(missing)])
            return fresh_default(default)
        if reports_body:
            data = _parse(body)
        else:
            try:
                data = json.loads(body)
            except json.JSONDecodeError:
                raise RequestValidationError([]) from None
            except Exception:
                raise _unparsable() from None
        # A body that is not an object (`null` included) has none of the members: each is
        # missing, optional ones too, as FastAPI reports it.
        if not isinstance(data, dict):
            raise RequestValidationError([dict(missing)])
        name = next((n for n in checks if n in data), None)
        if name is None:
            if required:
                raise RequestValidationError([dict(missing)])
            return fresh_default(default)
        return checks[name](data[name])

    return validate


def _pydantic_check(model: Any, loc: list[Any]) -> Callable[[Any], Any]:
    import pydantic

    def check(data: Any) -> Any:
        try:
            return model.model_validate(data, from_attributes=True)
        except pydantic.ValidationError as exc:
            errors = []
            for error in exc.errors(include_url=False):
                error["loc"] = [*loc, *error["loc"]]
                errors.append(error)
            raise RequestValidationError(errors) from None

    return check


def _adapter(tp: Any, constraints: dict[str, Any] | None, where: str) -> Any:
    """A pydantic `TypeAdapter` for `tp` with `constraints`; `None` without pydantic, or for
    a type pydantic has no schema for (then checked here, without constraints)."""
    try:
        import pydantic
    except ImportError:
        return None
    target = typing.Annotated[tp, pydantic.Field(**constraints)] if constraints else tp
    try:
        return pydantic.TypeAdapter(target)
    except pydantic.PydanticSchemaGenerationError:
        if constraints:
            raise TypeError(f"{where}: constraints do not apply to {tp!r}") from None
        return None


def _adapter_check(adapter: Any, loc: list[Any]) -> Callable[[Any], Any]:
    import pydantic

    def check(data: Any) -> Any:
        try:
            return adapter.validate_python(data)
        except pydantic.ValidationError as exc:
            raise RequestValidationError(
                [{**e, "loc": [*loc, *e["loc"]]} for e in exc.errors(include_url=False)]
            ) from None

    return check


def _msgspec_check(struct: Any, loc: list[Any]) -> Callable[[Any], Any]:
    import msgspec

    def check(data: Any) -> Any:
        try:
            return msgspec.convert(data, struct)
        except msgspec.ValidationError as exc:
            raise RequestValidationError(
                [{"type": "value_error", "loc": list(loc), "msg": str(exc), "input": data}]
            ) from None

    return check


def _error(errors: list[dict[str, Any]], kind: str, loc: list[Any], msg: str, value: Any) -> Any:
    errors.append({"type": kind, "loc": list(loc), "msg": msg, "input": value})
    return _MISSING


_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def _coerce(value: Any, tp: Any, loc: list[Any], errors: list[dict[str, Any]]) -> Any:
    """`value` as `tp`, lax as pydantic is; a failure is recorded in `errors`."""
    if tp is Any or tp is object:
        return value
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _coerce(value, typing.get_args(tp)[0], loc, errors)
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        candidates = [a for a in args if a is not type(None)]
        first_errors: list[dict[str, Any]] = []
        for candidate in candidates:
            attempt: list[dict[str, Any]] = []
            result = _coerce(value, candidate, loc, attempt)
            if not attempt:
                return result
            first_errors = first_errors or attempt
        errors.extend(first_errors)
        return _MISSING
    if tp is type(None):
        if value is None:
            return None
        return _error(errors, "none_required", loc, "Input should be None", value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        return _error(errors, "bool_parsing", loc, "Input should be a valid boolean", value)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                return _error(
                    errors,
                    "int_parsing",
                    loc,
                    "Input should be a valid integer, unable to parse string as an integer",
                    value,
                )
        return _error(errors, "int_type", loc, "Input should be a valid integer", value)
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                return _error(
                    errors,
                    "float_parsing",
                    loc,
                    "Input should be a valid number, unable to parse string as a number",
                    value,
                )
        return _error(errors, "float_type", loc, "Input should be a valid number", value)
    if tp is str:
        if isinstance(value, str):
            return value
        if isinstance(value, bytes):  # a body that is not JSON
            try:
                return value.decode()
            except UnicodeDecodeError:
                return _error(errors, "string_unicode", loc, "Input should be a valid string, "
                              "unable to parse raw data as a unicode string", value)
        return _error(errors, "string_type", loc, "Input should be a valid string", value)
    if origin in (list, set, frozenset, tuple) or tp in (list, set, frozenset, tuple):
        if not isinstance(value, list):
            return _error(errors, "list_type", loc, "Input should be a valid list", value)
        args = typing.get_args(tp)
        item = args[0] if args else Any
        items = [_coerce(v, item, [*loc, i], errors) for i, v in enumerate(value)]
        container = origin or tp
        return items if container is list else container(items)
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            return _error(errors, "dict_type", loc, "Input should be a valid dictionary", value)
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        return {k: _coerce(v, item, [*loc, k], errors) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(value, tp, loc, errors)
    if _pydantic_model(tp):
        import pydantic

        try:
            return tp.model_validate(value, from_attributes=True)
        except pydantic.ValidationError as exc:
            for error in exc.errors(include_url=False):
                error["loc"] = [*loc, *error["loc"]]
                errors.append(error)
            return _MISSING
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    if isinstance(tp, type):
        try:
            return tp(value)
        except (TypeError, ValueError) as exc:
            return _error(errors, "value_error", loc, f"Value error, {exc}", value)
    return value



def _dataclass(value: Any, cls: Any, loc: list[Any], errors: list[dict[str, Any]]) -> Any:
    if isinstance(value, cls):
        return value
    if not isinstance(value, dict):
        return _error(
            errors,
            "dataclass_type",
            loc,
            f"Input should be a dictionary or an instance of {cls.__name__}",
            value,
        )
    hints = typing.get_type_hints(cls)
    kwargs = {}
    before = len(errors)
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        if field.name not in value:
            if (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                _error(errors, "missing", [*loc, field.name], "Field required", value)
            continue
        kwargs[field.name] = _coerce(
            value[field.name], hints.get(field.name, Any), [*loc, field.name], errors
        )
    if len(errors) > before:
        return _MISSING
    return cls(**kwargs)


def param_converter(
    tp: Any, constraints: dict[str, Any], source: str, key: str, where: str
) -> Callable[[Any], tuple[bool, Any]]:
    """For a path, query, header or cookie value of a type other than str, int, float and bool
    (an `Enum`, `UUID`, `date`, `Decimal`, `Literal`, or a list of one): `convert(text)`, which
    the engine calls with the value as text (a list of texts for a list) and which returns
    `(True, value)` or `(False, errors)`, the errors as the JSON of FastAPI's entries. The type
    is validated by pydantic, with `constraints`, as FastAPI validates it; without pydantic,
    enums only."""
    try:
        import pydantic
    except ImportError:
        return _enum_converter(tp, constraints, source, key, where)
    target = typing.Annotated[tp, pydantic.Field(**constraints)] if constraints else tp
    try:
        adapter = pydantic.TypeAdapter(target)
    except Exception:  # noqa: BLE001 - any schema failure means the type is unsupported
        raise TypeError(
            f"{where}: unsupported type {tp!r} for a {source} value (use str, int, float, bool, "
            "or a type pydantic makes from text: an Enum, UUID, date, Decimal, Literal...)"
        ) from None
    loc = [source, key]

    def convert(value: Any) -> tuple[bool, Any]:
        try:
            return True, adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            errors = [{**e, "loc": [*loc, *e["loc"]]} for e in exc.errors(include_url=False)]
            return False, _encode_errors(errors)

    return convert


def _encode_errors(errors: list[dict[str, Any]]) -> bytes:
    from .encoders import jsonable

    return json.dumps(errors, default=jsonable, ensure_ascii=False, separators=(",", ":")).encode()


def _enum_converter(
    tp: Any, constraints: dict[str, Any], source: str, key: str, where: str
) -> Callable[[Any], tuple[bool, Any]]:
    """`param_converter` without pydantic: an `Enum` (or a list of one), by value."""
    import enum

    item = typing.get_args(tp)[0] if typing.get_origin(tp) is list else tp
    if not (isinstance(item, type) and issubclass(item, enum.Enum)) or constraints:
        raise TypeError(
            f"{where}: {tp!r} values need pydantic (pip install pydantic); without it a path, "
            "query, header or cookie value is a str, int, float, bool, an Enum, or a list of one"
        )
    by_text = {str(member.value): member for member in item}
    shown = [repr(v) if isinstance(v, str) else str(v) for v in (m.value for m in item)]
    expected = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]

    def member(text: str, loc: list[Any], errors: list[dict[str, Any]]) -> Any:
        found = by_text.get(text)
        if found is None:
            msg = f"Input should be {expected}"
            errors.append({"type": "enum", "loc": loc, "msg": msg, "input": text,
                           "ctx": {"expected": expected}})
        return found

    def convert(value: Any) -> tuple[bool, Any]:
        errors: list[dict[str, Any]] = []
        if isinstance(value, list):
            out: Any = [member(v, [source, key, i], errors) for i, v in enumerate(value)]
        else:
            out = member(value, [source, key], errors)
        return (False, _encode_errors(errors)) if errors else (True, out)

    return convert
