"""Response classes, as in Starlette: a handler returns one to choose the status, the media
type or header fields; anything else it returns is rendered by type (str as text, bytes as
is, other values as JSON)."""

from __future__ import annotations

import datetime
import email.utils
import hashlib
import http.cookies
import mimetypes
import os
import secrets
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


class EventSourceResponse(StreamingResponse):
    """`text/event-stream`: as a route's `response_class`, the items its handler yields are
    sent as Server-Sent Events (see `vireo.sse`)."""

    media_type = "text/event-stream"

    def __init__(self, content: Iterable[bytes | str] | AsyncIterable[bytes | str],
                 status_code: int = 200, headers: Mapping[str, str] | None = None,
                 media_type: str | None = None, background: Any = None) -> None:
        super().__init__(content, status_code, headers, media_type or self.media_type,
                         background)


class FileResponse(StreamingResponse):
    """A file sent in chunks (never read whole into memory), with `content-length`,
    `accept-ranges`, `last-modified` and an `etag`, as Starlette's. The media type is guessed
    from the file name unless given; with `filename`, a `content-disposition` field offers it
    as a download of that name (`content_disposition_type="inline"` to show it in place). A
    `GET` or `HEAD` with a `Range` field (and an `If-Range` that still holds) gets that part
    (206) or parts (206, `multipart/byteranges`), a range past the end 416 and a malformed
    one 400, as from Starlette. The file is opened when the response is sent: if it is missing
    then, the request fails with `RuntimeError` (a 500, logged)."""

    chunk_size = 64 * 1024
    # More ranges than this in one request are answered with the whole file.
    max_ranges = 100

    def __init__(
        self,
        path: str | os.PathLike[str],
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: Any = None,
        filename: str | None = None,
        stat_result: os.stat_result | None = None,
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
        # The part of the file sent: all of it, or what a `Range` field asked for.
        self._parts: _Parts | None = None
        self.headers.setdefault("accept-ranges", "bytes")
        if filename is not None:
            quoted = urllib.parse.quote(filename)
            if quoted != filename:
                value = f"{content_disposition_type}; filename*=utf-8''{quoted}"
            else:
                value = f'{content_disposition_type}; filename="{filename}"'
            self.headers.setdefault("content-disposition", value)
        self.stat_result = stat_result
        if stat_result is not None:
            self._set_stat_headers(stat_result)

    def _set_stat_headers(self, stat_result: os.stat_result) -> None:
        # As Starlette makes them, so a cache sees the same validators from either.
        self.headers.setdefault("last-modified",
                                email.utils.formatdate(stat_result.st_mtime, usegmt=True))
        tag = f"{stat_result.st_mtime}-{stat_result.st_size}".encode()
        self.headers.setdefault("etag", f'"{hashlib.md5(tag, usedforsecurity=False).hexdigest()}"')

    def _open(self) -> None:
        if self._file is not None:
            return
        try:
            file = open(self.path, "rb")  # noqa: SIM115 - closed by the chunk iterator
        except FileNotFoundError:
            raise RuntimeError(f"File at path {self.path} does not exist.") from None
        except IsADirectoryError:
            raise RuntimeError(f"File at path {self.path} is not a file.") from None
        stat_result = self.stat_result or os.fstat(file.fileno())
        if self.stat_result is None:
            self._set_stat_headers(stat_result)
        self._size = stat_result.st_size
        self._file = file

    @property
    def content_length(self) -> int | None:  # type: ignore[override]
        self._open()
        return self._size if self._parts is None else self._parts.length

    @property
    def body_iterator(self) -> Iterator[bytes]:  # type: ignore[override]
        self._open()
        if self._parts is None:
            return self._chunks(self._file, self._size or 0)
        return self._parts.chunks(self)

    def _chunks(self, file: Any, size: int, start: int = 0, close: bool = True) -> Iterator[bytes]:
        # Exactly `size` bytes from `start`: the length promised in `content-length`.
        try:
            file.seek(start)
            left = size
            while left > 0:
                chunk = file.read(min(self.chunk_size, left))
                if not chunk:
                    raise RuntimeError(f"File at path {self.path} shrank while being sent.")
                left -= len(chunk)
                yield chunk
        finally:
            if close:
                file.close()

    def _for_range(self, method: str, range_field: str, if_range: str | None) -> Response:
        """The response to a request with this `Range` field: this one whole, this one narrowed
        to the ranges asked for, or the 400 or 416 Starlette answers with."""
        if self.status_code != 200 or method not in ("GET", "HEAD"):
            return self
        self._open()
        if if_range is not None and not self._if_range_holds(if_range):
            return self
        size = self._size or 0
        try:
            ranges = _parse_ranges(range_field, size, self.max_ranges)
        except _MalformedRange as e:
            return PlainTextResponse(str(e), 400)
        except _Unsatisfiable:
            return PlainTextResponse(status_code=416, headers={"content-range": f"bytes */{size}"})
        if not ranges:
            return self
        self.status_code = 206
        if len(ranges) == 1:
            start, end = ranges[0]
            self.headers["content-range"] = f"bytes {start}-{end - 1}/{size}"
            self._parts = _Parts(ranges, end - start)
            return self
        boundary = secrets.token_hex(13)
        content_type = self.headers.get("content-type") or self._content_type()
        parts = _Parts(ranges, 0, boundary, content_type, size)
        self.headers["content-type"] = f"multipart/byteranges; boundary={boundary}"
        self._parts = parts
        return self

    def _if_range_holds(self, if_range: str) -> bool:
        # A weak validator never matches (RFC 9110 §13.1.5).
        if if_range.startswith("W/"):
            return False
        return if_range in (self.headers.get("last-modified"), self.headers.get("etag"))

    def _content_type(self) -> str:
        media_type = self.media_type or "application/octet-stream"
        if media_type.startswith("text/") and "charset" not in media_type:
            return f"{media_type}; charset={self.charset}"
        return media_type


class _MalformedRange(Exception):
    pass


class _Unsatisfiable(Exception):
    pass


def _parse_ranges(field: str, size: int, max_ranges: int) -> list[tuple[int, int]]:
    """The `(start, end)` byte ranges (end exclusive) a `Range` field asks of a file of `size`
    bytes, overlapping ones merged, read as Starlette reads them: an empty list means the
    whole file."""
    units, sep, spec = field.partition("=")
    if not sep:
        raise _MalformedRange("Malformed range header.")
    if units.strip().lower() != "bytes":
        raise _MalformedRange("Only support bytes range")
    if spec.count(",") + 1 > max_ranges:
        return []
    ranges = []
    for part in spec.split(","):
        part = part.strip()
        if not part or part == "-" or "-" not in part:
            continue
        first, _, last = (text.strip() for text in part.partition("-"))
        try:
            start = int(first) if first else max(size - int(last), 0)
            end = int(last) + 1 if first and last and int(last) < size else size
        except ValueError:
            continue
        ranges.append((start, end))
    if not ranges:
        raise _MalformedRange("Range header: range must be requested")
    if any(not 0 <= start < size for start, _ in ranges):
        raise _Unsatisfiable
    if any(start >= end for start, end in ranges):
        raise _MalformedRange("Range header: start must be less than end")
    if len(ranges) == 1:
        return ranges
    ordered = sorted(ranges)
    merged = [ordered[0]]
    for start, end in ordered[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


class _Parts:
    """The ranges of a file a 206 sends: one as it is, several as `multipart/byteranges`
    parts, each with its own `content-type` and `content-range`, between `boundary` lines."""

    def __init__(self, ranges: list[tuple[int, int]], length: int, boundary: str = "",
                 content_type: str = "", size: int = 0) -> None:
        self.ranges = ranges
        self.boundary = boundary
        self.length = length
        self.heads: list[bytes] = []
        if boundary:
            self.heads = [
                (f"--{boundary}\r\nContent-Type: {content_type}\r\n"
                 f"Content-Range: bytes {start}-{end - 1}/{size}\r\n\r\n").encode("latin-1")
                for start, end in ranges
            ]
            # Each part: its head, its bytes and a CRLF; then the closing `--boundary--`.
            self.length = sum(len(head) + (end - start) + 2
                              for head, (start, end) in zip(self.heads, ranges))
            self.length += len(boundary) + 4

    def chunks(self, response: FileResponse) -> Iterator[bytes]:
        file = response._file
        if not self.boundary:
            start, end = self.ranges[0]
            yield from response._chunks(file, end - start, start)
            return
        with file:
            for head, (start, end) in zip(self.heads, self.ranges):
                yield head
                yield from response._chunks(file, end - start, start, close=False)
                yield b"\r\n"
            yield f"--{self.boundary}--".encode("latin-1")


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
        # Its fields as they are, so those a file response adds itself are not doubled.
        response = FileResponse(obj.path, obj.status_code, media_type=obj.media_type,
                                stat_result=obj.stat_result)
        response.media_type = None
        response.headers = MutableHeaders()
        for name, value in fields:
            response.headers.append(name, value)
        response.background = obj.background
        return response
    if isinstance(obj, StarletteStreaming):
        response = StreamingResponse(obj.body_iterator, obj.status_code)
    else:
        response = Response(obj.body, obj.status_code)
    response.media_type = None  # the content-type field is among `fields`
    response.raw_headers = fields
    response.background = obj.background
    return response
