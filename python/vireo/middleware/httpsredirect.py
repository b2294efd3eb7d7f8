"""Send plain-HTTP requests to HTTPS, as Starlette's (and so FastAPI's)
`HTTPSRedirectMiddleware` does, as a Vireo middleware:

    from vireo.middleware import HTTPSRedirectMiddleware
    app.add_middleware(HTTPSRedirectMiddleware)

`app.add_middleware` given Starlette's or FastAPI's `HTTPSRedirectMiddleware` uses this one.
"""

from __future__ import annotations

from typing import Any

from ..responses import PlainTextResponse, RedirectResponse
from .trustedhost import host_of


class HTTPSRedirectMiddleware:
    """Answer a request that came in the clear with a 307 to the same URL over `https`
    (without the port when it is 80 or 443); one without a `Host` gets a 400."""

    def __init__(self, app: Any = None) -> None:
        self.app = app

    async def dispatch(self, request: Any, call_next: Any) -> Any:
        url = request.url
        if url.scheme != "http":
            return await call_next(request)
        netloc = url.netloc
        if not netloc:
            return PlainTextResponse("Invalid host header", status_code=400)
        _, colon, port = netloc.rpartition(":")
        if colon and port in ("80", "443") and not netloc.endswith("]"):
            netloc = host_of(netloc)
        query = f"?{url.query}" if url.query else ""
        return RedirectResponse(f"https://{netloc}{url.path}{query}", status_code=307)
