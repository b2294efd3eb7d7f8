"""Response compression with gzip, with the options and the answers of Starlette's (and so
FastAPI's) `GZipMiddleware`, as a Vireo middleware:

    from vireo.middleware.gzip import GZipMiddleware
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=5)

`app.add_middleware` given Starlette's or FastAPI's `GZipMiddleware` uses this one.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection
from typing import Any

# Types that are compressed already, or must not be held back (event streams), as Starlette
# leaves them alone.
DEFAULT_EXCLUDED_CONTENT_TYPES = (
    "application/grpc",
    "application/gzip",
    "application/x-gzip",
    "application/zip",
    "audio/*",
    "font/woff",
    "font/woff2",
    "image/avif",
    "image/gif",
    "image/jpeg",
    "image/png",
    "image/webp",
    "text/event-stream",
    "video/*",
)


def _add_vary(fields: dict[str, str], name: str) -> None:
    vary = fields.get("vary")
    fields["vary"] = f"{vary}, {name}" if vary else name


class GZipMiddleware:
    """Compress response bodies of at least `minimum_size` bytes for clients whose
    `Accept-Encoding` names gzip, at `compresslevel` (1 to 9). Streamed bodies are compressed
    chunk by chunk as they are made, each flushed, unless their `Content-Length` is under
    `minimum_size`. Responses already
    encoded, partial ones (206) and types in `exclude_content_types` are left alone. Every
    response that could have been compressed gets `Vary: Accept-Encoding`."""

    def __init__(
        self,
        app: Any = None,
        minimum_size: int = 500,
        compresslevel: int = 9,
        thread_minimum_size: int = 128 * 1024,
        *,
        exclude_content_types: Collection[str] = DEFAULT_EXCLUDED_CONTENT_TYPES,
    ) -> None:
        if not 0 <= compresslevel <= 9:
            raise ValueError(f"compresslevel is 0 to 9, not {compresslevel!r}")
        self.minimum_size = minimum_size
        self.compresslevel = compresslevel
        # Accepted for Starlette's signature: Starlette compresses large bodies on a thread;
        # here a body held in memory is compressed where the middleware runs.
        self.thread_minimum_size = thread_minimum_size
        self.exclude_content_types = frozenset(
            t.partition(";")[0].strip().lower() for t in exclude_content_types
        )

    def _excluded(self, content_type: str) -> bool:
        media = content_type.partition(";")[0].strip().lower()
        names = {media, media.partition("/")[0] + "/*"}
        if media.startswith("application/grpc+"):
            names.add("application/grpc")
        return not names.isdisjoint(self.exclude_content_types)

    def _compress(self, body: bytes) -> bytes:
        compressor = zlib.compressobj(self.compresslevel, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return compressor.compress(body) + compressor.flush()

    async def dispatch(self, request: Any, call_next: Any) -> Any:
        gzip = "gzip" in request.headers.get("accept-encoding", "")
        response = await call_next(request)
        fields = response.headers
        if (
            "content-encoding" in fields
            or response.status_code == 206
            or self._excluded(fields.get("content-type", ""))
        ):
            return response
        body = response.body
        if body is None:  # streamed
            length = fields.get("content-length", "")
            if length.isdigit() and int(length) < self.minimum_size:
                return response
            _add_vary(fields, "Accept-Encoding")
            if gzip and response.gzip_stream(self.compresslevel):
                fields["content-encoding"] = "gzip"
                fields.pop("content-length", None)
            return response
        if len(body) < self.minimum_size:
            return response
        _add_vary(fields, "Accept-Encoding")
        if gzip:
            response.body = self._compress(body)
            fields["content-encoding"] = "gzip"
            fields["content-length"] = str(len(response.body))
        return response
