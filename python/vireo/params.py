"""Planning a route once, at registration: where each handler parameter comes from, what type
it converts to, and its default. The engine receives the plan as tuples and does the
conversions per request in native code."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import re
import types
import typing
from typing import Any, Callable

from . import _vireo
from .validation import (
    _pydantic_model,
    body_validator,
    embedded_body_validator,
    is_body_type,
    param_converter,
)

_SCALARS = {str: "str", int: "int", float: "float", bool: "bool"}
PATH_PARAM = re.compile(r"\{(\*?)([A-Za-z_][A-Za-z0-9_]*)(:path)?\}")


# A marker's argument not given (which a pydantic `Field` beside it may give).
_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "unset"})()


class Param:
    """A marker for a parameter's source and default: `q: int = Query(10, alias="n")`, or in
    `Annotated[int, Query(alias="n")]`. The constraints (`gt`, `ge`, `lt`, `le`,
    `multiple_of` for numbers; `min_length`, `max_length` for text and lists; `pattern` for
    text) are checked before the handler runs, a failure being a 422 in pydantic's words; the
    rest (`title`, `description`, `examples`, `example`, `openapi_examples`,
    `json_schema_extra`, `deprecated`, `include_in_schema`) is for the OpenAPI schema.
    `discriminator` (a field's name, or pydantic's `Discriminator(fn)`) tells which model of
    a union a body or form is.
    `validation_alias` is another spelling of `alias`, or pydantic's `AliasChoices` of names
    tried in order (the first the request has is read; the schema, and errors when none is
    there, name the first choice). An `AliasPath` is not followed, as in FastAPI.
    `default_factory` makes a fresh default for each request that lacks the parameter."""

    source = ""

    def __init__(
        self,
        default: Any = ...,
        *,
        alias: str | None = _UNSET,
        title: str | None = _UNSET,
        description: str | None = _UNSET,
        gt: float | None = None,
        ge: float | None = None,
        lt: float | None = None,
        le: float | None = None,
        multiple_of: float | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        pattern: str | None = None,
        regex: str | None = None,
        examples: list[Any] | None = _UNSET,
        example: Any = None,
        openapi_examples: dict[str, Any] | None = None,
        json_schema_extra: dict[str, Any] | None = _UNSET,
        validation_alias: Any = _UNSET,
        serialization_alias: str | None = None,
        deprecated: bool | None = _UNSET,
        include_in_schema: bool = True,
        default_factory: Callable[[], Any] | None = None,
        discriminator: str | None = None,
        strict: bool | None = None,
        allow_inf_nan: bool | None = None,
        max_digits: int | None = None,
        decimal_places: int | None = None,
        union_mode: str | None = None,
        fail_fast: bool | None = None,
        validate_default: bool | None = None,
        alias_priority: int | None = None,
        annotation: Any = None,
    ) -> None:
        del annotation  # FastAPI's own use: the type is the parameter's annotation
        # What was given, even as None: a pydantic `Field` beside the marker fills in the rest.
        described = {"alias": alias, "validation_alias": validation_alias, "title": title,
                     "description": description, "examples": examples,
                     "deprecated": deprecated, "json_schema_extra": json_schema_extra}
        self.given = frozenset(
            [name for name, value in described.items() if value is not _UNSET]
            + [name for name, value in (("default_factory", default_factory),
                                        ("validate_default", validate_default))
               if value is not None])
        alias, validation_alias, title, description, examples, deprecated, json_schema_extra = (
            None if value is _UNSET else value for value in described.values())
        if default_factory is not None:
            if default is not ...:
                raise TypeError(f"{type(self).__name__}(): give a default or a default_factory, "
                                "not both")
            if not callable(default_factory):
                raise TypeError(f"{type(self).__name__}(): default_factory must be callable, "
                                f"not {default_factory!r}")
            default = None
        # The field naming which model of a union a body or form is, as pydantic's.
        if discriminator is not None and not isinstance(discriminator, str) \
                and type(discriminator).__name__ != "Discriminator":
            raise TypeError(f"{type(self).__name__}(): discriminator must be a field's name "
                            f"or a pydantic Discriminator, not {discriminator!r}")
        self.discriminator = discriminator
        # Called for each request the parameter is missing from, for a fresh default.
        self.default_factory = default_factory
        self.default = default
        self._name_by(alias, validation_alias)
        # A value's name when written out; a parameter is only read, so it changes nothing.
        self.serialization_alias = serialization_alias
        # `example` (OpenAPI's older single example) and `openapi_examples` (named examples)
        # go on the parameter; `json_schema_extra` is merged into its schema.
        self.example = example
        self.openapi_examples = openapi_examples
        self.json_schema_extra = json_schema_extra
        self.title = title
        self.description = description
        self.examples = examples
        self.deprecated = deprecated
        self.include_in_schema = include_in_schema
        if regex is not None:  # FastAPI's older name for `pattern`
            if pattern is not None and pattern != regex:
                raise TypeError(f"{self!r}: give `pattern` or `regex`, not both")
            pattern = regex
        bounds = {"gt": gt, "ge": ge, "lt": lt, "le": le, "multiple_of": multiple_of}
        for name, value in bounds.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise TypeError(f"{self!r}: {name} must be a number, not {value!r}")
        if multiple_of is not None and not multiple_of > 0:
            raise TypeError(f"{self!r}: multiple_of must be above 0, not {multiple_of!r}")
        for name, value in (("min_length", min_length), ("max_length", max_length)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise TypeError(f"{self!r}: {name} must be an integer of 0 or more, not {value!r}")
        # A compiled pattern keeps its flags: Python's `re` matches it, through pydantic.
        compiled = pattern if isinstance(pattern, re.Pattern) else None
        if compiled is not None:
            pattern = None
        if pattern is not None and not isinstance(pattern, str):
            raise TypeError(f"{self!r}: pattern must be a string or a compiled pattern, not "
                            f"{pattern!r}")
        self.constraints: dict[str, Any] = {
            name: value
            for name, value in {
                **bounds, "min_length": min_length, "max_length": max_length, "pattern": pattern
            }.items()
            if value is not None
        }
        # pydantic `Field` settings with no native check: a value with any is validated by
        # pydantic with them, as FastAPI validates it.
        self.field_options: dict[str, Any] = {
            name: value
            for name, value in {
                "strict": strict, "allow_inf_nan": allow_inf_nan, "max_digits": max_digits,
                "decimal_places": decimal_places, "union_mode": union_mode,
                "fail_fast": fail_fast, "pattern": compiled,
            }.items()
            if value is not None
        }
        # The default (when the request gives no value) is validated too.
        self.validate_default = bool(validate_default)
        self.alias_priority = alias_priority

    def _name_by(self, alias: str | None, validation_alias: Any) -> None:
        # The name it is read by: pydantic's `validation_alias` when given (over `alias`), as
        # in FastAPI; with `AliasChoices`, each name in turn.
        self.validation_alias = validation_alias
        self.alias_choices = alias_choices(validation_alias, f"{type(self).__name__}()")
        # The `alias` given, which a path parameter none of whose choices is in the path
        # is read by.
        self.given_alias = alias
        if not isinstance(validation_alias, str):
            validation_alias = self.alias_choices[0] if self.alias_choices else None
        self.alias = validation_alias or alias

    def with_field(self, info: Any) -> Param:
        """This marker with what it was not given taken from the pydantic `Field` beside it
        (`Annotated[int, Field(alias="n"), Query()]`), as pydantic merges the two for FastAPI:
        what the marker gives wins, even None, and two `json_schema_extra` dicts merge. The
        `Field`'s `default_factory` and `validate_default` count too."""
        taken = {name: getattr(info, name, None) for name in _FIELD_DESCRIBED
                 if name not in self.given and getattr(info, name, None) is not None}
        if "alias" in self.given and "validation_alias" not in self.given:
            taken.pop("validation_alias", None)  # the marker's own alias names it
        extra, own = info.json_schema_extra, self.json_schema_extra
        if isinstance(extra, dict) and isinstance(own, dict):
            taken["json_schema_extra"] = {**extra, **own}
        factory = getattr(info, "default_factory", None)
        if factory is not None and self.default is ... and "default_factory" not in self.given:
            taken.update(default_factory=factory, default=None)
        if getattr(info, "validate_default", None) and "validate_default" not in self.given:
            taken["validate_default"] = True
        if not taken:
            return self
        merged = copy.copy(self)
        for name, value in taken.items():
            setattr(merged, name, value)
        if "alias" in taken or "validation_alias" in taken:
            merged._name_by(merged.given_alias if "alias" not in taken else taken["alias"],
                            merged.validation_alias)
        return merged

    def __repr__(self) -> str:
        default = "..." if self.default is ... else repr(self.default)
        return f"{type(self).__name__}({default})"


# What a pydantic `Field` beside a marker may name or describe the value by for it.
_FIELD_DESCRIBED = ("alias", "validation_alias", "title", "description", "examples",
                    "deprecated", "json_schema_extra")


def pydantic_constraints(marker: Any) -> dict[str, Any] | None:
    """What pydantic validates a marker's value with: its constraints and `Field` settings."""
    constraints = getattr(marker, "constraints", None)
    options = getattr(marker, "field_options", None)
    return {**(constraints or {}), **options} if options else constraints


_NUMBER_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of")

# A parameter model with no default of its own.
_NO_DEFAULT: Any = type("NoDefault", (), {"__copy__": lambda self: self,
                                          "__deepcopy__": lambda self, memo: self})()


def native_constraints(
    marker: Any, source: str, kind: str, is_list: bool, where: str
) -> tuple[tuple[str, str, str], ...] | None:
    """A parameter's constraints as the engine checks them: `(name, text, ctx_json)` each, the
    text as the error message quotes the limit and the JSON as its `ctx` gives it (a float
    value's limits as floats, as pydantic reports them). `None` for none; a `TypeError` for a
    constraint its type cannot have."""
    constraints = getattr(marker, "constraints", None)
    if not constraints:
        return None
    out = []
    for name, value in constraints.items():
        if name in _NUMBER_CONSTRAINTS and (is_list or kind not in ("int", "float")):
            raise TypeError(f"{where}: {name} is for int and float values")
        if name in ("min_length", "max_length") and not is_list and kind != "str":
            raise TypeError(f"{where}: {name} is for str values and lists")
        if name == "pattern" and (is_list or kind != "str"):
            raise TypeError(f"{where}: pattern is for str values")
        ctx = float(value) if kind == "float" and name in _NUMBER_CONSTRAINTS else value
        out.append((name, str(value), json.dumps(ctx)))
    return tuple(out)


class Query(Param):
    source = "query"


class Path(Param):
    source = "path"


class Header(Param):
    """A header field; `user_agent: str = Header()` reads `user-agent`."""

    source = "header"

    def __init__(self, default: Any = ..., *, convert_underscores: bool = True, **options: Any) -> None:
        super().__init__(default, **options)
        self.convert_underscores = convert_underscores


class Cookie(Param):
    """A cookie the client sent, by the parameter's name (or `alias`)."""

    source = "cookie"


class Body(Param):
    """A JSON body value. Several of them on one handler (or one with `embed=True`) are the
    members of one JSON object, each by its name (or `alias`), as in FastAPI."""

    source = "body"

    def __init__(self, default: Any = ..., *, embed: bool = False,
                 media_type: str = "application/json", **options: Any) -> None:
        super().__init__(default, **options)
        self.embed = embed
        # The body's media type in the schema; JSON is read whatever it says.
        self.media_type = media_type


def path_names(path: str) -> list[str]:
    return [match.group(2) for match in PATH_PARAM.finditer(path)]


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0], True
    return tp, False


def alias_choices(alias: Any, where: str) -> tuple[str, ...] | None:
    """The names pydantic's `AliasChoices` of `alias` tries in order; `None` for a plain name,
    no alias, or an `AliasPath` (alone or among the choices), which FastAPI does not follow
    into a request's values: the parameter is then read by its `alias` or name."""
    if alias is None or isinstance(alias, str):
        return None
    kind = type(alias).__name__
    if kind == "AliasPath":
        return None
    if kind == "AliasChoices" and alias.choices:
        if all(isinstance(choice, str) for choice in alias.choices):
            return tuple(alias.choices)
        return None
    raise TypeError(f"{where}: validation_alias is a name, AliasChoices or AliasPath, not "
                    f"{alias!r}")


def _field_alias_choices(extras: tuple[Any, ...], where: str) -> tuple[str, ...] | None:
    """`alias_choices` of a pydantic `Field(validation_alias=...)` in `Annotated` metadata."""
    info = _field_info(extras)
    return None if info is None else alias_choices(info.validation_alias, where)


def _field_alias(extras: tuple[Any, ...]) -> str | None:
    """The name a pydantic `Field(alias=...)` (or `validation_alias=`) in a parameter's
    `Annotated` metadata reads it by, as FastAPI reads it."""
    for extra in extras:
        if type(extra).__name__ == "FieldInfo":
            choices = alias_choices(extra.validation_alias, "Field()")
            name = extra.validation_alias if isinstance(extra.validation_alias, str) \
                else choices[0] if choices else extra.alias
            if name:
                return name  # type: ignore[no-any-return]
    return None


# What a pydantic `Field` beside a parameter's type names it by, marks it as or defaults it
# with, which pydantic warns of when it validates the value alone (the parameter reads them
# itself).
_NAMING = ("alias", "validation_alias", "serialization_alias", "alias_priority", "deprecated",
           "exclude", "validate_default", "default_factory")


def _checks_only(extra: Any) -> Any:
    """`extra`, or for a pydantic `FieldInfo` a copy without what names the value (see
    `_NAMING`), to validate the value by."""
    if type(extra).__name__ != "FieldInfo" or not any(
            getattr(extra, name, None) is not None for name in _NAMING):
        return extra
    checks = copy.copy(extra)
    for name in _NAMING:
        setattr(checks, name, None)
    attributes = getattr(extra, "_attributes_set", None)
    if isinstance(attributes, dict):
        checks._attributes_set = {k: v for k, v in attributes.items() if k not in _NAMING}
    return checks


def _inferred_default_marker(info: Any, tp: Any) -> Param | None:
    """The marker of a parameter with no marker whose pydantic `Field` beside its type has a
    `default_factory`: a `Query` (a `Body` for a model) with that factory and the field's
    schema text; `None` without one."""
    factory = getattr(info, "default_factory", None)
    if factory is None:
        return None
    kind = Body if is_body_type(_unwrap_optional(tp)[0]) else Query
    return kind(default_factory=factory, title=info.title, description=info.description)


def _field_info(extras: tuple[Any, ...]) -> Any:
    """The pydantic `FieldInfo` in a parameter's `Annotated` metadata, if any."""
    return next((extra for extra in extras if type(extra).__name__ == "FieldInfo"), None)


def _annotated_parts(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """A parameter's type and its `Annotated` metadata, also when the `Annotated` is inside
    `Optional` (as Python 3.10's `get_type_hints` puts a parameter that defaults to None),
    and through a type alias (`type UserDep = Annotated[User, Depends(get_user)]`)."""
    while type(tp).__name__ == "TypeAliasType":  # typing's (3.12+) or typing_extensions'
        tp = tp.__value__
    if typing.get_origin(tp) is typing.Annotated:
        return typing.get_args(tp)[0], tp.__metadata__
    inner, optional = _unwrap_optional(tp)
    if optional and typing.get_origin(inner) is typing.Annotated:
        return typing.Optional[typing.get_args(inner)[0]], inner.__metadata__
    return tp, ()


def _is_scalar(tp: Any) -> bool:
    """Whether the engine converts values of `tp` itself (str, int, float, bool)."""
    return tp is inspect.Parameter.empty or tp is Any or tp in _SCALARS


def _scalar_kind(tp: Any, where: str) -> str:
    if tp is inspect.Parameter.empty or tp is Any:
        return "str"
    kind = _SCALARS.get(tp)
    if kind is None:
        raise TypeError(f"{where}: unsupported type {tp!r} (use str, int, float or bool)")
    return kind


def _list_item(tp: Any) -> Any | None:
    origin = typing.get_origin(tp)
    if origin in (list, typing.List, tuple, set, frozenset) or tp in (list, typing.List):
        args = typing.get_args(tp)
        return args[0] if args else str
    return None


def _scalar_list(tp: Any) -> bool:
    """`list[int]` and the like: a query parameter given once per value."""
    item = _list_item(tp)
    if item is None:
        return False
    item, _ = _unwrap_optional(item)
    return item in _SCALARS or item is Any


def is_request_type(tp: Any) -> bool:
    """`Request`, or `HTTPConnection` (which on an HTTP route is the request)."""
    from .connection import HTTPConnection

    return isinstance(tp, type) and (issubclass(tp, _vireo.Request) or tp is HTTPConnection)


class Planned:
    """One parameter of a handler or dependency, as planned: a value the engine converts
    (`tuple` is its plan tuple), a sub-dependency (`depends`), a form field (`field`), or the
    `BackgroundTasks`."""

    __slots__ = (
        "name",
        "tag",
        "tuple",
        "annotation",
        "depends",
        "positional_only",
        "marker",
        "field",
        "body",
        "embedded",
        "alias_choices",
    )

    def __init__(
        self,
        name: str,
        tag: str,
        plan_tuple: tuple[Any, ...] | None = None,
        annotation: Any = None,
        depends: Any = None,
        positional_only: bool = False,
        marker: Any = None,
    ) -> None:
        self.name = name
        self.tag = tag
        self.tuple = plan_tuple
        self.annotation = annotation
        self.depends = depends
        self.positional_only = positional_only
        self.marker = marker
        # For a form field (tag "form"): its `vireo.forms.FormField`.
        self.field: Any = None
        # For a JSON body value: `(key, type, required, default)`, and whether it is a member
        # of an object body (`embedded`) rather than the whole body.
        self.body: tuple[str, Any, bool, Any] | None = None
        self.embedded = False
        # The names an object body's member is read by, in turn (`AliasChoices`).
        self.alias_choices: tuple[str, ...] | None = None


def parameter_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations of `fn`'s parameters. The return annotation is not needed to
    call it, so one naming what exists only for a type checker (an import under
    `TYPE_CHECKING`) is left out, as FastAPI leaves it."""
    target = signature_target(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - unresolvable annotations are the user's to fix
        failed = exc
    annotations = dict(getattr(target, "__annotations__", None) or {})
    if annotations.pop("return", None) is not None:
        holder = types.SimpleNamespace(__annotations__=annotations)
        module_names = getattr(inspect.unwrap(target), "__globals__", None)
        try:
            return typing.get_type_hints(holder, module_names, include_extras=True)
        except Exception as exc:  # noqa: BLE001 - as above
            failed = exc
    raise TypeError(f"cannot read the annotations of {fn!r}: {failed}") from failed


def signature_target(fn: Callable[..., Any]) -> Any:
    """What holds the annotations of `fn`: itself, a class's `__init__`, or `__call__`."""
    if inspect.isclass(fn):
        return fn.__init__
    if inspect.isroutine(fn):
        return fn
    return type(fn).__call__


def _is_response_type(tp: Any) -> bool:
    """`Response` (Vireo's, or Starlette's as FastAPI code imports it): the one whose status
    and header fields the answer gets, as in FastAPI."""
    from .responses import Response

    if not isinstance(tp, type):
        return False
    return issubclass(tp, Response) or any(
        cls.__name__ == "Response" and cls.__module__ == "starlette.responses"
        for cls in tp.__mro__)


def is_websocket_type(tp: Any) -> bool:
    """`WebSocket`, or `HTTPConnection` (which on a WebSocket route is the socket), also inside
    `Optional` (as Python 3.10's `get_type_hints` puts a parameter that defaults to None)."""
    from .connection import HTTPConnection
    from .websockets import WebSocket

    tp = _unwrap_optional(tp)[0]
    return isinstance(tp, type) and (issubclass(tp, WebSocket) or tp is HTTPConnection)


def analyse(
    path: str, handler: Callable[..., Any], websocket: bool = False, socket_param: str | None = None
) -> list[Planned]:
    """Every parameter of `handler` (a route's handler or a dependency) on `path`. On a
    WebSocket route (`websocket`), a parameter annotated `WebSocket`, or the one named
    `socket_param`, is the socket (planned as the `request` source), and nothing reads a body.
    """
    from .background import BackgroundTasks
    from .dependencies import Depends, SecurityScopes
    from .form_unions import FormUnion, union_models
    from .forms import Form, FormField, is_upload_type

    in_path = set(path_names(path))
    signature = inspect.signature(handler)
    hints = parameter_hints(handler)
    planned: list[Planned] = []
    where_name = getattr(handler, "__qualname__", repr(handler))
    for name, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        where = f"{where_name}({name})"
        tp, extras = _annotated_parts(hints.get(name, param.annotation))
        marker: Any = None
        for extra in extras:
            if isinstance(extra, (Param, Depends)):
                marker = extra
        # Other metadata (pydantic's `AfterValidator`, `Field`, annotated-types' `Gt`): the
        # value is validated by pydantic with it, as FastAPI does.
        validators = tuple(_checks_only(e) for e in extras
                           if not isinstance(e, (Param, Depends, str))
                           and type(e).__name__ != "Doc")
        # `Json[T]`: the value is one text, parsed as JSON into T.
        json_markers = tuple(v for v in validators if is_json_marker(v))
        default = param.default
        if isinstance(default, (Param, Depends)):
            marker, default = default, getattr(default, "default", ...)
        elif isinstance(marker, Param) and default is inspect.Parameter.empty:
            default = marker.default
        elif marker is None and default is inspect.Parameter.empty and name not in in_path:
            # `Annotated[int, Field(default_factory=...)]` with no marker: a query value
            # (or body) whose default that factory makes, as FastAPI infers it.
            marker = _inferred_default_marker(_field_info(extras), tp)
        if isinstance(marker, Param) and (info := _field_info(extras)) is not None:
            merged = marker.with_field(info)
            if default is ... and merged.default is not ...:  # the `Field`'s default_factory
                default = merged.default
            marker = merged
        positional_only = param.kind == param.POSITIONAL_ONLY
        if isinstance(marker, Depends):
            dependency = marker.dependency
            if dependency is None:
                dependency, _ = _unwrap_optional(tp)
            if not callable(dependency):
                raise TypeError(f"{where}: Depends() needs a callable or a class annotation")
            planned.append(
                Planned(
                    name, "depends", None, tp, marker.with_dependency(dependency), positional_only
                )
            )
            continue
        bare = _unwrap_optional(tp)[0]
        has_default = default is not inspect.Parameter.empty and default is not ...
        if isinstance(marker, Param) and (marker.default_factory is not None
                                          or marker.validate_default and has_default):
            from .param_models import defaulting

            reader = defaulting(name, tp, marker, default, where, validators)
            planned.append(Planned(name, "depends", None, tp, Depends(reader), positional_only))
            continue
        if isinstance(marker, (Query, Header, Cookie, Form)) and _pydantic_model(bare) \
                and not json_markers:
            from .param_models import parameter_model

            # `Annotated[Filters | None, Query()] = None`: None when no field is given.
            absent = _NO_DEFAULT
            optional_type = _unwrap_optional(tp)[1]
            has_default = default is not inspect.Parameter.empty and default is not ...
            if optional_type and has_default:
                absent = default
            # `Annotated[Filters | None, Query()]` with no default: some field is required.
            reader = parameter_model(bare, marker, where, absent,
                                     required_group=optional_type and not has_default)
            planned.append(Planned(name, "depends", None, tp, Depends(reader), positional_only))
            continue
        if websocket and (name == socket_param or is_websocket_type(bare)):
            plan_tuple = (name, "request", name, "str", False, True, None, None, True, None)
            planned.append(Planned(name, "leaf", plan_tuple, tp, None, positional_only))
            continue
        if websocket and (
            is_request_type(bare) or (isinstance(bare, type) and issubclass(bare, BackgroundTasks))
        ):
            raise TypeError(
                f"WebSocket route {path}: {where} takes {getattr(bare, '__name__', bare)}, "
                "which a WebSocket route has not; take the WebSocket (a dependency shared with "
                "HTTP routes can take an HTTPConnection)"
            )
        if isinstance(bare, type) and issubclass(bare, SecurityScopes):
            planned.append(Planned(name, "scopes", None, tp, None, positional_only))
            continue
        if isinstance(tp, type) and issubclass(tp, BackgroundTasks):
            planned.append(Planned(name, "background", None, tp, None, positional_only))
            continue
        if marker is None and _is_response_type(bare):
            if websocket:
                raise TypeError(f"WebSocket route {path}: {where}: a WebSocket has no response")
            planned.append(Planned(name, "response", None, tp, None, positional_only))
            continue
        required = default is inspect.Parameter.empty or default is ...
        if required:
            default = None
        keyword_only = param.kind == param.KEYWORD_ONLY
        inner, optional = _unwrap_optional(tp)
        if marker is not None:
            alias, choices = marker.alias, marker.alias_choices
        else:
            alias, choices = _field_alias(extras), _field_alias_choices(extras, where)
        if websocket and (isinstance(marker, Form) or is_upload_type(tp)):
            raise TypeError(f"WebSocket route {path}: {where}: a handshake has no form to read")
        if isinstance(marker, Form) or (marker is None and is_upload_type(tp)):
            union = FormUnion(tp, marker.discriminator, where) \
                if isinstance(marker, Form) and union_models(tp) else None
            form = Planned(name, "form", None, tp, None, positional_only, marker)
            form.field = FormField(alias or name,
                                   typing.Annotated[(tp, *json_markers)] if json_markers else tp,
                                   required, default,
                                   getattr(marker, "form_model", None),
                                   None if union else pydantic_constraints(marker),
                                   where, getattr(marker, "description", None),
                                   getattr(marker, "json_schema_extra", None))
            form.field.union = union
            if choices is not None:
                form.field.alternates = choices[1:]
            if isinstance(marker, Form):
                form.field.media_type = marker.media_type
            planned.append(form)
            continue
        if is_request_type(inner):
            planned.append(
                Planned(
                    name,
                    "leaf",
                    (name, "request", name, "str", False, True, None, None, keyword_only, None),
                    inner,
                    None,
                    positional_only,
                )
            )
            continue
        source = marker.source if marker is not None else ""
        if not source:
            if name in in_path:
                source = "path"
            elif is_body_type(inner) and not _scalar_list(inner):
                source = "body"
            else:
                source = "query"
        if source == "path" and choices is not None:
            # The choice the route's path has, as FastAPI reads it.
            alias = next((n for n in choices if n in in_path), getattr(marker, "given_alias",
                                                                        None))
            choices = None
        if source == "path" and (alias or name) not in in_path:
            raise TypeError(f"{where}: {alias or name} is not a parameter of the path {path}")
        if websocket and source in ("body", "form"):
            raise TypeError(
                f"WebSocket route {path}: {where}: a handshake has no body; {tp!r} is not a "
                "path, query, header or cookie value"
            )
        if source == "body":
            if inner is inspect.Parameter.empty:  # `payload=Body()`: any JSON value
                inner = Any
            # The type's own validators (`BeforeValidator`...) see an explicit `null` too, as
            # in FastAPI: they validate the type with its `None`.
            validates_null = optional and bool(validators)
            if getattr(marker, "discriminator", None) is not None:
                import pydantic

                validators = (*validators, pydantic.Field(discriminator=marker.discriminator))
            whole = tp if validates_null else inner
            checked = typing.Annotated[(whole, *validators)] if validators else inner
            validator = body_validator(checked, required, default,
                                       optional and not validates_null,
                                       pydantic_constraints(marker), where)
            plan_tuple = (
                name, "body", name, "str", False, required, default, validator, keyword_only, None
            )
            body = Planned(name, "leaf", plan_tuple, tp, None, positional_only, marker)
            # As a member of an object body, `null` is a value when the type allows it.
            body.body = (alias or name,
                         typing.Optional[checked] if optional and not validates_null
                         else checked, required, default)
            body.alias_choices = choices
            planned.append(body)
            continue
        key = alias or name
        if source == "header" and alias is None and getattr(marker, "convert_underscores", True):
            key = name.replace("_", "-")
        # Each name tried in order (the engine takes a tuple of them), the first named in errors.
        keys: Any = choices if choices is not None and len(choices) > 1 else key
        nested: tuple[Any, ...] = ()
        if typing.get_origin(inner) is typing.Annotated and _list_item(inner.__origin__) \
                is not None and not any(is_json_marker(m) for m in inner.__metadata__):
            # `Annotated[set[str], Field(max_length=3)] | None`: a list of values, the
            # metadata checking the whole.
            inner, nested = inner.__origin__, tuple(inner.__metadata__)
        item = None if json_markers else _list_item(inner)
        if item is not None:
            if source not in ("query", "header"):
                raise TypeError(f"{where}: only query and header parameters can be lists")
            item, _ = _unwrap_optional(item)
            target, is_list = item, True
        else:
            target, is_list = inner, False
        if is_body_type(target) and not json_markers:
            values = "a value or a list of values" if source in ("query", "header") else "a value"
            hint = "" if source == "path" else (
                f"; a model's fields read as {source} values are Annotated[Model, "
                f"{source.title()}()]")
            raise TypeError(f"{where}: a {source} parameter is {values}, not {tp!r}{hint}")
        converter = None
        validators += nested
        # A `set[str]` or `tuple[int, ...]` is given to the handler as one, made by pydantic.
        keeps_container = is_list and (typing.get_origin(inner) or inner) in (
            set, frozenset, tuple)
        if _is_scalar(target) and not validators and not keeps_container \
                and not getattr(marker, "field_options", None):
            kind = _scalar_kind(target, where)
            constraints = native_constraints(marker, source, kind, is_list, where)
        else:
            # Read as text, then made the type (an Enum, UUID, date...) as pydantic makes it.
            kind, constraints = "str", None
            whole = inner if keeps_container else list[target] if is_list else target
            if validators:
                whole = typing.Annotated[(whole, *validators)]
            checks = pydantic_constraints(marker) or {}
            converter = param_converter(whole, checks, source, key, where)
        plan_tuple = (
            name, source, keys, kind, is_list, required, default, converter, keyword_only,
            constraints,
        )
        if json_markers:  # described as JSON text, as pydantic describes `Json[T]`
            described = typing.Annotated[(inner, *json_markers)]
            tp = typing.Optional[described] if optional else described
        # Without a marker, a pydantic `Field(description=...)` beside the type describes
        # the value in the schema, as in FastAPI.
        described_by = marker if marker is not None else _field_info(extras)
        planned.append(Planned(name, "leaf", plan_tuple, tp, None, positional_only, described_by))
    _embed_bodies(planned)
    return planned


def is_json_marker(metadata: Any) -> bool:
    """`pydantic.Json[T]`'s marker in `Annotated[T, Json]`: the value is one text, parsed as
    JSON into T."""
    kind = metadata if isinstance(metadata, type) else type(metadata)
    return kind.__name__ == "Json" and kind.__module__.startswith("pydantic")


def _embed_bodies(planned: list[Planned]) -> None:
    """Several JSON body values (or one marked `Body(embed=True)`) are the members of one
    object body: each reads its own member."""
    bodies = [p for p in planned if p.body is not None]
    if len(bodies) < 2 and not any(getattr(p.marker, "embed", False) for p in bodies):
        return
    for index, body in enumerate(bodies):
        key, tp, required, default = body.body  # type: ignore[misc]
        validator = embedded_body_validator(key, tp, required, default, reports_body=index == 0,
                                            constraints=pydantic_constraints(body.marker),
                                            where=key, choices=body.alias_choices)
        fields = list(body.tuple)  # type: ignore[arg-type]
        fields[7] = validator
        body.tuple = tuple(fields)
        body.embedded = True


def plan(path: str, handler: Callable[..., Any]) -> list[tuple[Any, ...]]:
    """The plan of `handler` on `path` (one without dependencies): one tuple per parameter,
    `(name, source, key, kind, is_list, required, default, validator, keyword_only,
    constraints)`."""
    planned = analyse(path, handler)
    for p in planned:
        if p.tag != "leaf":
            raise TypeError(f"{p.name}: dependencies are planned by vireo.dependencies")
    return [p.tuple for p in planned]


def call_kind(handler: Callable[..., Any], blocking: bool) -> str:
    is_async = inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)
    )
    if is_async:
        if blocking:
            raise TypeError("blocking=True is for `def` handlers; an `async def` must not block")
        return "async"
    return "blocking" if blocking else "sync"


__all__ = ["Query", "Path", "Header", "Cookie", "Body", "plan", "call_kind", "dataclasses"]
