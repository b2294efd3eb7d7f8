"""A route's `response_class` (or an app's or router's `default_response_class`), as in
FastAPI: what a handler returns, unless it is a response already, becomes
`response_class(content, status_code=...)`, so `@app.get("/", response_class=HTMLResponse)`
over `return "<h1>Hi</h1>"` sends HTML."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from .encoders import jsonable_encoder

# `response_class=` left out: the router's, then the app's default applies.
DEFAULT: Any = type("DefaultResponseClass", (), {"__repr__": lambda _: "DEFAULT"})()


def resolve(*choices: Any) -> Any:
    """The first choice that is not DEFAULT (a route's own, then its routers', then the
    app's), or None for the app's native JSON."""
    for choice in choices:
        if choice is not DEFAULT:
            return choice
    return None


def is_json(cls: Any) -> bool:
    """Whether `cls` is a plain JSONResponse (Vireo's, or Starlette's as FastAPI re-exports
    it), which is what the native path sends anyway."""
    return cls is None or (
        getattr(cls, "__name__", "") == "JSONResponse"
        and getattr(cls, "__module__", "").startswith(("vireo.", "starlette.", "fastapi."))
    )


def default_status(cls: Any) -> int:
    """The status `cls` answers with when none is given (307 for a redirect)."""
    try:
        parameter = inspect.signature(cls.__init__).parameters.get("status_code")
    except (TypeError, ValueError):
        return 200
    if parameter is not None and isinstance(parameter.default, int):
        return parameter.default
    return 200


def rendering(cls: Any, status_code: int) -> Callable[[Any], Any] | None:
    """What turns a handler's value into a `cls` response, or None when `cls` is the
    default JSON. A route's `status_code` is passed on unless it is the default 200, so a
    `RedirectResponse` keeps its own 307 (where FastAPI tells a 200 given from one left out).
    The content goes through `jsonable_encoder` first, as in FastAPI."""
    if is_json(cls):
        return None
    if not callable(cls):
        raise TypeError(f"response_class must be a response class, not {cls!r}")
    from .responses import Response, starlette_response_class

    given = tuple(c for c in (Response, starlette_response_class()) if c is not None)
    options = {} if status_code == 200 else {"status_code": status_code}

    def render(value: Any) -> Any:
        if isinstance(value, given):
            return value
        response = cls(jsonable_encoder(value), **options)
        # Made for the handler's value, so what dependencies set on their `Response` is
        # added to it, as to a default response (see `dependencies._merged`).
        try:
            response.takes_sub_response = True
        except AttributeError:  # a class with slots of its own
            pass
        return response

    return render
