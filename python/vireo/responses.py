"""Response classes, as in Starlette: a handler returns one to choose the status, the media
type or header fields; anything else it returns is rendered by type (str as text, bytes as
is, other values as JSON)."""

from __future__ import annotations

from typing import Any, AsyncIterable, Iterable, Mapping

from . import _vireo
from .encoders import jsonable


class Response:
    media_type: str | None = None
    charset = "utf-8"

    def __init__(
        self,
        content: Any = None,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
    ) -> None:
        self.status_code = status_code
        if media_type is not None:
            self.media_type = media_type
        self.body = self.render(content)
        self.headers: dict[str, str] = dict(headers) if headers else {}

    def render(self, content: Any) -> bytes:
        if content is None:
            return b""
        if isinstance(content, (bytes, bytearray, memoryview)):
            return bytes(content)
        return str(content).encode(self.charset)

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
        self.status_code = status_code
        if media_type is not None:
            self.media_type = media_type
        self.body = None
        self.body_iterator = content
        self.headers = dict(headers) if headers else {}
