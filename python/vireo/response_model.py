"""Response models: what a handler returns is validated against its route's `response_model`
(or its return annotation) and sent as the model's fields only, as FastAPI does, so a returned
object with more fields (a user with a password hash) never leaks them."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import AsyncIterator, Iterator
from typing import Any, Callable

from .exceptions import ResponseValidationError

# `response_model=` left out: the return annotation is the model, as in FastAPI. `None` given
# explicitly means no model at all.
DEFAULT = typing.cast(Any, type("DefaultResponseModel", (), {"__repr__": lambda _: "DEFAULT"})())

# The `response_model_*` options of a route, with FastAPI's defaults.
OPTIONS = {
    "response_model_include": None,
    "response_model_exclude": None,
    "response_model_by_alias": True,
    "response_model_exclude_unset": False,
    "response_model_exclude_defaults": False,
    "response_model_exclude_none": False,
}


def resolve(handler: Callable[..., Any], response_model: Any) -> Any:
    """The route's response model: `response_model` if given, else the handler's return
    annotation unless it names a response class; `None` for none."""
    if response_model is not DEFAULT:
        return response_model
    from .responses import Response

    try:
        target = handler if inspect.isroutine(handler) else type(handler).__call__
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - an unresolvable annotation is not a model
        return None
    tp = hints.get("return")
    if tp is None or tp is type(None):
        return None
    if isinstance(tp, type) and issubclass(tp, Response):
        return None
    return tp


def _has_fields(tp: Any) -> bool:
    """Whether `tp` is, or holds (in a list, a union, a dict's values...), a type of named
    fields: a pydantic model, a dataclass or a TypedDict."""
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp) or typing.is_typeddict(tp):
            return True
        return hasattr(tp, "model_validate") and hasattr(tp, "model_fields")
    return any(_has_fields(arg) for arg in typing.get_args(tp))


def _is_stream(tp: Any) -> bool:
    origin = typing.get_origin(tp) or tp
    return isinstance(origin, type) and issubclass(origin, (Iterator, AsyncIterator))


def filtering(
    handler: Callable[..., Any], response_model: Any, options: dict[str, Any]
) -> Callable[[Any], Any] | None:
    """`filter(value) -> value` for what `handler` returns, validated against its response
    model (see `resolve`) and dumped as JSON-ready data with `options`; `None` where nothing
    is to be checked: no model, a model without fields (`-> str`, `-> dict[str, int]`), a
    streaming handler, or a return annotation without pydantic installed."""
    model = resolve(handler, response_model)
    if model is None or not _has_fields(model) or _is_stream(model):
        return None
    if inspect.isgeneratorfunction(handler) or inspect.isasyncgenfunction(handler):
        return None
    try:
        import pydantic
    except ImportError:
        if response_model is DEFAULT:
            return None
        raise TypeError(
            f"the response model {model!r} needs pydantic to validate and filter what the "
            "handler returns: pip install pydantic, or leave response_model out"
        ) from None
    try:
        adapter = pydantic.TypeAdapter(model)
        # Built now, so a name its fields use that cannot be resolved fails the start.
        if hasattr(adapter, "rebuild"):  # pydantic 2.10 and later
            adapter.rebuild(raise_errors=True)
    except (pydantic.PydanticUserError, pydantic.PydanticUndefinedAnnotation) as exc:
        raise TypeError(f"{model!r} cannot be a response model: {exc}") from None
    from .responses import Response, starlette_response_class

    responses = tuple(c for c in (Response, starlette_response_class()) if c is not None)
    dump = functools.partial(
        adapter.dump_python,
        mode="json",
        include=options["response_model_include"],
        exclude=options["response_model_exclude"],
        by_alias=options["response_model_by_alias"],
        exclude_unset=options["response_model_exclude_unset"],
        exclude_defaults=options["response_model_exclude_defaults"],
        exclude_none=options["response_model_exclude_none"],
    )

    def filter_value(value: Any) -> Any:
        if isinstance(value, responses):
            return value
        try:
            checked = adapter.validate_python(value, from_attributes=True)
        except pydantic.ValidationError as exc:
            errors = []
            for error in exc.errors(include_url=False):
                error["loc"] = ["response", *error["loc"]]
                errors.append(error)
            raise ResponseValidationError(errors, value) from None
        return dump(checked)

    return filter_value


def with_filter(handler: Callable[..., Any], filter_value: Callable[[Any], Any]) -> Any:
    """`handler` with `filter_value` applied to what it returns, keeping its signature (and
    so its parameters) and its kind: sync or `async def`."""
    target = handler if inspect.isroutine(handler) else type(handler).__call__
    if inspect.iscoroutinefunction(target):

        @functools.wraps(handler)
        async def filtered_async(*args: Any, **kwargs: Any) -> Any:
            return filter_value(await handler(*args, **kwargs))

        wrapped: Any = filtered_async
    else:

        @functools.wraps(handler)
        def filtered(*args: Any, **kwargs: Any) -> Any:
            return filter_value(handler(*args, **kwargs))

        wrapped = filtered
    # What the parameters are read from: the handler's signature, and its annotations
    # resolved in its own module (`typing.get_type_hints` follows `__wrapped__`).
    wrapped.__signature__ = inspect.signature(handler)
    wrapped.__wrapped__ = target
    wrapped.__annotations__ = dict(getattr(target, "__annotations__", {}))
    return wrapped
