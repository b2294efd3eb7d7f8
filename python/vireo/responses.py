"""Response classes, as in Starlette: a handler returns one to choose the status, the media
type or header fields; anything else it returns is rendered by type (str as text, bytes as
is, other values as JSON)."""

from __future__ import annotations

import datetime
import email.utils
import http.cookies
import mimetypes
import os
import sys
import urllib.parse
from typing import Any, AsyncIterable, Iterable, Iterator, Mapping

from . import _vireo
from .datastructures import MutableHeaders
from .encoders import jsonable


def cookie_field(
    key: str,
    value: str = "",
    max_age: int | None = None,
    expires: datetime.datetime | str | int | None = None,
    path: str | None = "/",
    domain: str | None = None,
    secure: bool = False,
    httponly: bool = False,
    samesite: str | None = "lax",
    partitioned: bool = False,
) -> str:
    """The value of a `set-cookie` field, as Starlette's `set_cookie` writes it: `expires` a
    datetime (written as an HTTP date), a date string, or seconds from now."""
    cookie: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
    cookie[key] = value
    morsel = cookie[key]
    if max_age is not None:
        morsel["max-age"] = max_age
    if isinstance(expires, datetime.datetime):
        morsel["expires"] = email.utils.format_datetime(expires, usegmt=True)
    elif expires is not None:
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
        if samesite.lower() not in ("strict", "lax", "none"):
            raise ValueError(f"samesite must be either 'strict', 'lax' or 'none', not {samesite!r}")
        morsel["samesite"] = samesite
    if partitioned:
        if sys.version_info < (3, 14):
            raise ValueError("Partitioned cookies are only supported in Python 3.14 and above.")
        morsel["partitioned"] = True
    return cookie.output(header="").strip()


class Response:
    media_type: str | None = None
    charset = "utf-8"
    # Header fields sent besides `headers`, as (name, value) pairs: repeated names such as
    # the `set-cookie` fields `set_cookie` adds.
    raw_headers: list[tuple[str, str]] | None = None
    # A `BackgroundTask` or `BackgroundTasks` to start once the response is made.
    background: Any = None

    def __init__(
        self,
        content: Any = None,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: Any = None,
    ) -> None:
        self._set_head(status_code, headers, media_type, background)
        self.body = self.render(content)

    def _set_head(
        self,
        status_code: int,
        headers: Mapping[str, str] | None,
        media_type: str | None,
        background: Any = None,
    ) -> None:
        self.status_code = status_code
        if background is not None:
            self.background = background
        if media_type is not None:
            self.media_type = media_type
        self.headers = MutableHeaders(headers) if headers else MutableHeaders()

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
        expires: datetime.datetime | str | int | None = None,
        path: str | None = "/",
        domain: str | None = None,
        secure: bool = False,
        httponly: bool = False,
        samesite: str | None = "lax",
        partitioned: bool = False,
    ) -> None:
        """Add a `set-cookie` field, as Starlette's `Response.set_cookie` does."""
        field = cookie_field(key, value, max_age, expires, path, domain, secure, httponly,
                             samesite, partitioned)
        if self.raw_headers is None:
            self.raw_headers = []
        self.raw_headers.append(("set-cookie", field))

    def delete_cookie(self, key: str, path: str = "/", domain: str | None = None,
                      secure: bool = False, httponly: bool = False,
                      samesite: str | None = "lax") -> None:
        """Add a `set-cookie` field that deletes the cookie, as Starlette's does."""
        self.set_cookie(key, max_age=0, expires=0, path=path, domain=domain, secure=secure,
                        httponly=httponly, samesite=samesite)

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
        background: Any = None,
    ) -> None:
        super().__init__(b"", status_code, headers, background=background)
        self.headers["location"] = str(url)


class StreamingResponse(Response):
    """A body sent chunk by chunk (chunked encoding) from a sync or async iterator of `bytes`
    or `str`; each chunk is written when it is made. A sync iterator is pulled on the worker,
    or on the blocking pool when the route is `blocking=True`."""

    # The body's length when known in advance (sent as `content-length`, not chunked).
    content_length: int | None = None

    def __init__(
        self,
        content: Iterable[bytes | str] | AsyncIterable[bytes | str],
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: Any = None,
    ) -> None:
        self._set_head(status_code, headers, media_type, background)
        self.body = None
        self.body_iterator = content


class FileResponse(StreamingResponse):
    """A file sent in chunks (never read whole into memory), with `content-length`. The media
    type is guessed from the file name unless given; with `filename`, a `content-disposition`
    field offers it as a download of that name (`content_disposition_type="inline"` to show
    it in place). The file is opened when the response is
    sent: if it is missing then, the request fails with `RuntimeError` (a 500, logged)."""

    chunk_size = 64 * 1024

    def __init__(
        self,
        path: str | os.PathLike[str],
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: Any = None,
        filename: str | None = None,
        content_disposition_type: str = "attachment",
    ) -> None:
        self.path = os.fspath(path)
        self.filename = filename
        if media_type is None:
            guessed, _ = mimetypes.guess_type(filename or self.path)
            media_type = guessed or "application/octet-stream"
        self._set_head(status_code, headers, media_type, background)
        self.body = None
        self._file: Any = None
        self._size: int | None = None
        if filename is not None:
            quoted = urllib.parse.quote(filename)
            if quoted != filename:
                value = f"{content_disposition_type}; filename*=utf-8''{quoted}"
            else:
                value = f'{content_disposition_type}; filename="{filename}"'
            self.headers.setdefault("content-disposition", value)

    def _open(self) -> None:
        if self._file is not None:
            return
        try:
            file = open(self.path, "rb")  # noqa: SIM115 - closed by the chunk iterator
        except FileNotFoundError:
            raise RuntimeError(f"File at path {self.path} does not exist.") from None
        except IsADirectoryError:
            raise RuntimeError(f"File at path {self.path} is not a file.") from None
        self._size = os.fstat(file.fileno()).st_size
        self._file = file

    @property
    def content_length(self) -> int | None:  # type: ignore[override]
        self._open()
        return self._size

    @property
    def body_iterator(self) -> Iterator[bytes]:  # type: ignore[override]
        self._open()
        return self._chunks(self._file, self._size or 0)

    def _chunks(self, file: Any, size: int) -> Iterator[bytes]:
        # Exactly `size` bytes: the length promised in `content-length`.
        with file:
            left = size
            while left > 0:
                chunk = file.read(min(self.chunk_size, left))
                if not chunk:
                    raise RuntimeError(f"File at path {self.path} shrank while being sent.")
                left -= len(chunk)
                yield chunk


def starlette_response_class() -> type | None:
    """Starlette's `Response` (FastAPI's response classes are Starlette's), when the app has
    imported it: a handler may return one, as in a FastAPI app."""
    module = sys.modules.get("starlette.responses")
    return getattr(module, "Response", None)


def from_starlette(obj: Any) -> Response:
    """The Vireo response a Starlette (or FastAPI) response returned by a handler stands for:
    its status, header fields (each as it was, repeated ones too), body or body iterator,
    file and background task."""
    from starlette.responses import FileResponse as StarletteFile
    from starlette.responses import StreamingResponse as StarletteStreaming

    # The engine frames the body itself.
    fields = [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, value in obj.raw_headers
        if name.lower() != b"content-length"
    ]
    response: Response
    if isinstance(obj, StarletteFile):
        response = FileResponse(obj.path, obj.status_code, media_type=obj.media_type)
        response.headers.pop("content-type", None)
    elif isinstance(obj, StarletteStreaming):
        response = StreamingResponse(obj.body_iterator, obj.status_code)
    else:
        response = Response(obj.body, obj.status_code)
    response.media_type = None  # the content-type field is among `fields`
    response.raw_headers = fields
    response.background = obj.background
    return response
