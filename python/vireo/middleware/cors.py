"""Cross-origin resource sharing: answering browsers' preflight requests and marking the
responses other origins may read, with the options and the answers of Starlette's (and so
FastAPI's) `CORSMiddleware`, as a Vireo middleware:

    from vireo.middleware.cors import CORSMiddleware
    app.add_middleware(CORSMiddleware, allow_origins=["https://example.com"], allow_methods=["*"])

`app.add_middleware` given Starlette's or FastAPI's `CORSMiddleware` uses this one.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from ..responses import PlainTextResponse

# What `allow_methods=["*"]` stands for.
EVERY_METHOD = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY")
# Request header fields a preflight may always name (the Fetch standard's CORS-safelisted).
SAFELISTED_HEADERS = ("Accept", "Accept-Language", "Content-Language", "Content-Type")
# A preflight's answer varies with every field the preflight is made of.
PREFLIGHT_VARY = (
    "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, "
    "Access-Control-Request-Private-Network"
)


class CORSMiddleware:
    """Allow the origins in `allow_origins` (`"*"` for any) or matching `allow_origin_regex`
    to call the app with `allow_methods` and `allow_headers`, with credentials if
    `allow_credentials`, reading `expose_headers`; browsers keep a preflight's answer for
    `max_age` seconds. A preflight (`OPTIONS` with `Origin` and
    `Access-Control-Request-Method`) is answered here, 200 or 400 with the reasons; any other
    request goes on to the app, and its response gets the fields that let the origin read it."""

    def __init__(
        self,
        app: Any = None,
        allow_origins: Collection[str] = (),
        allow_methods: Collection[str] = ("GET",),
        allow_headers: Collection[str] = (),
        allow_credentials: bool = False,
        allow_origin_regex: str | None = None,
        allow_private_network: bool = False,
        expose_headers: Collection[str] = (),
        max_age: int = 600,
    ) -> None:
        self.methods = EVERY_METHOD if "*" in allow_methods else tuple(allow_methods)
        self.any_origin = "*" in allow_origins
        self.origins = frozenset(allow_origins)
        self.origin_pattern = re.compile(allow_origin_regex) if allow_origin_regex else None
        self.any_header = "*" in allow_headers
        listed = sorted(set(SAFELISTED_HEADERS) | set(allow_headers))
        self.headers = {name.lower() for name in listed}
        self.credentials = allow_credentials
        self.private_network = allow_private_network
        # With credentials a browser refuses `*`: the origin is named instead.
        self.names_origin = not self.any_origin or allow_credentials

        self.response_fields: dict[str, str] = {}
        if self.any_origin:
            self.response_fields["access-control-allow-origin"] = "*"
        if allow_credentials:
            self.response_fields["access-control-allow-credentials"] = "true"
        if expose_headers:
            self.response_fields["access-control-expose-headers"] = ", ".join(expose_headers)

        preflight: dict[str, str] = {"vary": PREFLIGHT_VARY}
        if not self.names_origin:
            preflight["access-control-allow-origin"] = "*"
        preflight["access-control-allow-methods"] = ", ".join(self.methods)
        preflight["access-control-max-age"] = str(max_age)
        if not self.any_header:
            preflight["access-control-allow-headers"] = ", ".join(listed)
        if allow_credentials:
            preflight["access-control-allow-credentials"] = "true"
        self.preflight_fields = preflight

    def allows(self, origin: str) -> bool:
        """Whether `origin` may call the app."""
        if self.any_origin or origin in self.origins:
            return True
        return self.origin_pattern is not None and self.origin_pattern.fullmatch(origin) is not None

    async def dispatch(self, request: Any, call_next: Any) -> Any:
        origin = request.headers.get("origin")
        if (
            origin is not None
            and request.method == "OPTIONS"
            and request.headers.get("access-control-request-method") is not None
        ):
            return self.preflight(request.headers, origin)
        response = await call_next(request)
        fields = response.headers
        if origin is not None:
            fields.update(self.response_fields)
            if (self.any_origin and self.credentials) or (
                not self.any_origin and self.allows(origin)
            ):
                fields["access-control-allow-origin"] = origin
        # Whether the origin may read it depends on `Origin`: caches must tell them apart.
        vary = fields.get("vary")
        fields["vary"] = f"{vary}, Origin" if vary else "Origin"
        return response

    def preflight(self, headers: Any, origin: str) -> PlainTextResponse:
        """The answer to a preflight: 200, or 400 naming what is not allowed."""
        fields = dict(self.preflight_fields)
        refused = []
        if not self.allows(origin):
            refused.append("origin")
        elif self.names_origin:
            fields["access-control-allow-origin"] = origin
        if headers.get("access-control-request-method") not in self.methods:
            refused.append("method")
        requested = headers.get("access-control-request-headers")
        if requested is not None:
            if self.any_header:
                fields["access-control-allow-headers"] = requested
            elif any(name.strip().lower() not in self.headers for name in requested.split(",")):
                refused.append("headers")
        if headers.get("access-control-request-private-network") is not None:
            if self.private_network:
                fields["access-control-allow-private-network"] = "true"
            else:
                refused.append("private-network")
        if refused:
            return PlainTextResponse(
                "Disallowed CORS " + ", ".join(refused), status_code=400, headers=fields
            )
        return PlainTextResponse("OK", status_code=200, headers=fields)
