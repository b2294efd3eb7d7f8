"""The exceptions a handler raises to answer with an HTTP error."""

from __future__ import annotations

import http
import math
import sys
from typing import Any, Mapping


class HTTPException(Exception):
    """Answer with `status_code` and the JSON body `{"detail": detail}`."""

    def __init__(
        self,
        status_code: int,
        detail: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if detail is None:
            try:
                detail = http.HTTPStatus(status_code).phrase
            except ValueError:
                detail = ""
        super().__init__(status_code, detail)
        self.status_code = status_code
        self.detail = detail
        self.headers = dict(headers) if headers else None

    def __repr__(self) -> str:
        return f"HTTPException(status_code={self.status_code!r}, detail={self.detail!r})"


class ValidationException(Exception):
    """A request or response that did not fit what its route declares, as FastAPI's: not a
    `ValueError`, so a handler registered for `ValueError` does not take it."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self._errors = list(errors)

    def errors(self) -> list[dict[str, Any]]:
        return self._errors


class RequestValidationError(ValidationException):
    """The request did not fit the handler's parameters: a 422 listing every error, each
    `{"type", "loc", "msg", "input"}` as FastAPI reports them."""

    def __init__(self, errors: list[dict[str, Any]], *, body: Any = None) -> None:
        super().__init__([_encodable_input(error) for error in errors])
        # What FastAPI's carries: the request body it read, if any.
        self.body = body


def _encodable_input(error: Any) -> Any:
    """`error` with an `input` that JSON cannot carry made so that it can: bytes that are not
    UTF-8 (a body that is not JSON) and lone surrogates (`"\\ud800"` in a JSON body) as text
    with U+FFFD in their place, and a float that is not finite (`1e999`) as `null`, so that
    the 422 can be written."""
    if not isinstance(error, dict) or "input" not in error:
        return error
    value = error["input"]
    encodable = _encodable(value)
    return error if encodable is value else {**error, "input": encodable}


def _encodable(value: Any) -> Any:
    """`value`, or a copy with what JSON cannot carry replaced (see `_encodable_input`)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            bytes(value).decode()
        except UnicodeDecodeError:
            return bytes(value).decode("utf-8", "replace")
        return value
    if isinstance(value, dict):
        items = {key: _encodable(item) for key, item in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if isinstance(value, (list, tuple)):
        items = [_encodable(item) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


class FastAPIError(RuntimeError):
    """FastAPI's name for an error in how an app is written, for code that catches it."""


def http_errors() -> tuple[type, ...]:
    """The exceptions answered as HTTP errors: Vireo's `HTTPException` and, once the app has
    imported them, Starlette's and FastAPI's (a subclass of Starlette's, named so that a
    handler registered for it is found), so library code raising theirs is answered as under
    FastAPI."""
    found = [HTTPException]
    for module in ("starlette.exceptions", "fastapi.exceptions"):
        if module in sys.modules:
            found.append(sys.modules[module].HTTPException)
    return tuple(found)


def validation_errors() -> tuple[type, ...]:
    """The exceptions answered as a 422: Vireo's `RequestValidationError` and, once imported,
    FastAPI's."""
    fastapi = sys.modules.get("fastapi.exceptions")
    return (RequestValidationError,) + (
        (fastapi.RequestValidationError,) if fastapi is not None else ())


class ResponseValidationError(ValidationException):
    """What a handler returned did not fit its route's response model: a 500 (the client
    learns nothing of it), with each error logged as `{"type", "loc", "msg", "input"}`."""

    def __init__(self, errors: list[dict[str, Any]], body: Any = None) -> None:
        super().__init__(errors)
        self.body = body

    def __str__(self) -> str:
        lines = [f"{len(self._errors)} validation error(s) in the response:"]
        for error in self._errors:
            loc = ".".join(str(part) for part in error.get("loc", ()))
            lines.append(f"  {loc}: {error.get('msg')} [type={error.get('type')}] "
                         f"(input: {error.get('input')!r})")
        return "\n".join(lines)


class WebSocketException(Exception):
    """Close a WebSocket with `code` and `reason`, from its handler or a dependency: before
    the handshake is accepted, it is refused (a `403` to the client), as in Starlette."""

    def __init__(self, code: int, reason: str | None = None) -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason or ""

    def __repr__(self) -> str:
        return f"WebSocketException(code={self.code!r}, reason={self.reason!r})"
