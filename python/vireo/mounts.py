"""ASGI apps mounted in an App (`App.mount`): an HTTP error a mounted app raises (Starlette's
`StaticFiles` raises `HTTPException(404)` for a missing file) is answered as FastAPI's
exception middleware, which a mount sits behind there, answers it, and handed to the app's
exception handlers when it has some."""

from __future__ import annotations

import json
from typing import Any, Callable

# The scope key of the list an HTTP error is added to for the app's exception handlers, when
# the app has some (the server's `vireo.raised`).
RAISED = "vireo.raised"


def answering_http_errors(app: Callable[..., Any]) -> Callable[..., Any]:
    """`app`, with an exception that has an int `status_code` and a `detail`, raised before
    the response starts, answered `{"detail": ...}` with its status and headers (empty for
    204 and 304), and added to the scope's `RAISED` list if it has one."""

    async def mounted(scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await app(scope, receive, tracked)
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            if started or scope["type"] != "http" or not isinstance(status, int) or not hasattr(
                exc, "detail"
            ):
                raise
            if RAISED in scope:
                scope[RAISED].append(exc)
            headers = [
                (name.lower().encode("latin-1"), value.encode("latin-1"))
                for name, value in (getattr(exc, "headers", None) or {}).items()
            ]
            body = b""
            if status not in (204, 304):
                body = json.dumps(
                    {"detail": exc.detail}, ensure_ascii=False, separators=(",", ":")
                ).encode()
                headers += [
                    (b"content-length", str(len(body)).encode()),
                    (b"content-type", b"application/json"),
                ]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})

    return mounted
