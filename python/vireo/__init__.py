"""Vireo for Python: FastAPI-style apps served by the Vireo HTTP engine.

    from vireo import App

    app = App()

    @app.get("/users/{user_id}")
    def user(user_id: int):
        return {"id": user_id}

    app.run("127.0.0.1", 8000, workers=4)
"""

from . import status
from ._vireo import ClientDisconnected, Request, State
from ._serve import serve
from .app import APIRouter, App, BaseHTTPMiddleware, FastAPI
from .exceptions import (
    HTTPException,
    RequestValidationError,
    ResponseValidationError,
    ValidationException,
    WebSocketException,
)
from .background import BackgroundTask, BackgroundTasks
from .connection import HTTPConnection
from .dependencies import Depends, Security
from .forms import File, Form, UploadFile
from .params import Body, Cookie, Header, Path, Query
from .responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from .websockets import WebSocket, WebSocketDisconnect

__all__ = [
    "APIRouter",
    "App",
    "BackgroundTask",
    "BackgroundTasks",
    "BaseHTTPMiddleware",
    "Body",
    "ClientDisconnected",
    "Cookie",
    "Depends",
    "FastAPI",
    "File",
    "FileResponse",
    "Form",
    "HTMLResponse",
    "HTTPConnection",
    "HTTPException",
    "Header",
    "JSONResponse",
    "Path",
    "PlainTextResponse",
    "Query",
    "RedirectResponse",
    "Request",
    "RequestValidationError",
    "ResponseValidationError",
    "Response",
    "Security",
    "State",
    "StreamingResponse",
    "UploadFile",
    "WebSocket",
    "WebSocketDisconnect",
    "ValidationException",
    "WebSocketException",
    "serve",
    "status",
]
