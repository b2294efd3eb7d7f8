"""FastAPI's default exception handlers, for an app's own handler to end with:

    @app.exception_handler(HTTPException)
    async def logged(request, exc):
        log.warning("HTTP error %s", exc.status_code)
        return await http_exception_handler(request, exc)
"""

from __future__ import annotations

import json
from typing import Any

from . import status
from .encoders import jsonable_encoder
from .responses import JSONResponse, Response


async def http_exception_handler(request: Any, exc: Any) -> Response:
    """`{"detail": ...}` with the exception's status and headers; no body for a status
    that has none (1xx, 204, 205, 304)."""
    headers = getattr(exc, "headers", None)
    if exc.status_code < 200 or exc.status_code in (204, 205, 304):
        return Response(status_code=exc.status_code, headers=headers)
    return JSONResponse({"detail": exc.detail}, exc.status_code, headers)


async def request_validation_exception_handler(request: Any, exc: Any) -> JSONResponse:
    """The 422 with every error, as Vireo answers it when no handler is registered."""
    return JSONResponse({"detail": jsonable_encoder(exc.errors())}, 422)


async def websocket_request_validation_exception_handler(websocket: Any, exc: Any) -> None:
    """Close the WebSocket with 1008 (policy violation), the errors as the reason."""
    reason = json.dumps(jsonable_encoder(exc.errors()))
    await websocket.close(code=status.WS_1008_POLICY_VIOLATION, reason=reason)
