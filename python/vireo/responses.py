"""Response classes, as in Starlette: a handler returns one to choose the status, the media
type or header fields; anything else it returns is rendered by type (str as text, bytes as
is, other values as JSON)."""

from __future__ import annotations

import http.cookies
from typing import Any, AsyncIterable, Iterable, Mapping

from . import _vireo
from .encoders import jsonable


class Response:
    media_type: str | None = None
    charset = "utf-8"
    # Header fields sent besides `headers`, as (name, value) pairs: repeated names such as
    # the `set-cookie` fields `set_cookie` adds.
    raw_headers: list[tuple[str, str]] | None = None

    def __init__(
        self,
        content: Any = None,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
    ) -> None:
        self._set_head(status_code, headers, media_type)
        self.body = self.render(content)

    def _set_head(
        self, status_code: int, headers: Mapping[str, str] | None, media_type: str | None
    ) -> None:
        self.status_code = status_code
        if media_type is not None:
            self.media_type = media_type
        self.headers: dict[str, str] = dict(headers) if headers else {}

    def render(self, content: Any) -> bytes:
        if content is None:
            return b""
        if isinstance(content, (bytes, bytearray, memoryview)):
            return bytes(content)
        return str(content).encode(self.charset)

    def set_cookie(
        self,
        key: str,
        value: str = "",
        max_age: int | None = None,
        expires: int | None = None,
        path: str | None = "/",
        domain: str | None = None,
        secure: bool = False,
        httponly: bool = False,
        samesite: str | None = "lax",
    ) -> None:
        """Add a `set-cookie` field, as Starlette's `Response.set_cookie` does."""
        cookie: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
        cookie[key] = value
        morsel = cookie[key]
        if max_age is not None:
            morsel["max-age"] = max_age
        if expires is not None:
            morsel["expires"] = expires
        if path is not None:
            morsel["path"] = path
        if domain is not None:
            morsel["domain"] = domain
        if secure:
            morsel["secure"] = True
        if httponly:
            morsel["httponly"] = True
        if samesite is not None:
            morsel["samesite"] = samesite
        if self.raw_headers is None:
            self.raw_headers = []
        self.raw_headers.append(("set-cookie", cookie.output(header="").strip()))

    def delete_cookie(self, key: str, path: str = "/", domain: str | None = None) -> None:
        self.set_cookie(key, max_age=0, expires=0, path=path, domain=domain)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.status_code}>"


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return _vireo.dumps(content, jsonable)


class HTMLResponse(Response):
    media_type = "text/html"


class PlainTextResponse(Response):
    media_type = "text/plain"


class RedirectResponse(Response):
    def __init__(
        self,
        url: str,
        status_code: int = 307,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(b"", status_code, headers)
        self.headers["location"] = str(url)


class StreamingResponse(Response):
    """A body sent chunk by chunk (chunked encoding) from a sync or async iterator of `bytes`
    or `str`; each chunk is written when it is made."""

    def __init__(
        self,
        content: Iterable[bytes | str] | AsyncIterable[bytes | str],
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
    ) -> None:
        self._set_head(status_code, headers, media_type)
        self.body = None
        self.body_iterator = content
