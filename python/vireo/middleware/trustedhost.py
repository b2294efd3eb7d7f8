"""Refuse requests for hosts the app does not serve, with the options and answers of
Starlette's (and so FastAPI's) `TrustedHostMiddleware`, as a Vireo middleware:

    from vireo.middleware import TrustedHostMiddleware
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=["example.com", "*.example.com"])

`app.add_middleware` given Starlette's or FastAPI's `TrustedHostMiddleware` uses this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..responses import PlainTextResponse, RedirectResponse

ENFORCE_DOMAIN_WILDCARD = "Domain wildcard patterns must be like '*.example.com'."


def host_of(netloc: str) -> str:
    """The host of a `Host` value, without its port, in lower case (an IP literal keeps its
    brackets)."""
    if netloc.startswith("["):
        return netloc[: netloc.find("]") + 1].lower()
    name, colon, port = netloc.rpartition(":")
    return (name if colon and port.isdigit() else netloc).lower()


class TrustedHostMiddleware:
    """Answer 400 `Invalid host header` to a request whose `Host` matches none of
    `allowed_hosts` (names, or `*.domain` for its subdomains; `*`, the default, allows any);
    one for `example.com` where only `www.example.com` is allowed is redirected there when
    `www_redirect` is on."""

    def __init__(self, app: Any = None, allowed_hosts: Sequence[str] | None = None,
                 www_redirect: bool = True) -> None:
        if allowed_hosts is None:
            allowed_hosts = ["*"]
        for pattern in allowed_hosts:
            if "*" in pattern[1:] or (pattern.startswith("*") and pattern != "*"
                                      and not pattern.startswith("*.")):
                raise ValueError(f"{ENFORCE_DOMAIN_WILDCARD} Not {pattern!r}.")
        self.allowed_hosts = [pattern.lower() for pattern in allowed_hosts]
        self.allow_any = "*" in allowed_hosts
        self.www_redirect = www_redirect

    async def dispatch(self, request: Any, call_next: Any) -> Any:
        if self.allow_any:
            return await call_next(request)
        netloc = request.headers.get("host", "")
        host = host_of(netloc)
        www_redirect = False
        for pattern in self.allowed_hosts:
            if host == pattern or (pattern.startswith("*") and host.endswith(pattern[1:])):
                return await call_next(request)
            if "www." + host == pattern:
                www_redirect = True
        if www_redirect and self.www_redirect:
            url = request.url
            query = f"?{url.query}" if url.query else ""
            return RedirectResponse(f"{url.scheme}://www.{netloc}{url.path}{query}")
        return PlainTextResponse("Invalid host header", status_code=400)
