"""WebSocket routes of an `App`: `@app.websocket("/ws/{room}")` over a `WebSocket` shaped as
Starlette's, served by the engine's WebSocket support (the same one `vireo serve` gives ASGI
apps)."""

from __future__ import annotations

import inspect
import json
import re
from typing import Any, AsyncIterator, Awaitable, Callable
from urllib.parse import parse_qsl


class WebSocketDisconnect(Exception):
    """The client closed the connection (or it was lost): `code` and `reason` as it sent them."""

    def __init__(self, code: int = 1000, reason: str | None = None) -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason or ""


class WebSocket:
    """One WebSocket connection, as a handler sees it. `accept()` it first (a handler that
    returns without accepting refuses the handshake with 403); then `receive_text()`,
    `receive_bytes()`, `receive_json()` and the `send_*` counterparts, or `iter_text()` and
    friends; `close()` ends it. A receive after the client has gone raises
    `WebSocketDisconnect`."""

    def __init__(self, scope: dict[str, Any], receive: Callable[[], Any],
                 send: Callable[[dict[str, Any]], Any], path_params: dict[str, Any]) -> None:
        self.scope = scope
        self._receive = receive
        self._send = send
        self.path_params = path_params
        # Whether the handshake has been answered (accepted, or refused by a close).
        self._answered = False

    @property
    def url(self) -> str:
        query = self.scope.get("query_string", b"").decode("latin-1")
        return self.scope["path"] + (f"?{query}" if query else "")

    @property
    def headers(self) -> dict[str, str]:
        """The handshake's header fields, lower-case names (repeated ones joined by commas)."""
        out: dict[str, str] = {}
        for name, value in self.scope["headers"]:
            key, text = name.decode("latin-1"), value.decode("latin-1")
            out[key] = f"{out[key]},{text}" if key in out else text
        return out

    @property
    def query_params(self) -> dict[str, str]:
        return dict(parse_qsl(self.scope.get("query_string", b"").decode("latin-1")))

    @property
    def client(self) -> tuple[str, int] | None:
        client = self.scope.get("client")
        return tuple(client) if client else None  # type: ignore[return-value]

    async def accept(self, subprotocol: str | None = None,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
        message = await self._receive()
        if message["type"] != "websocket.connect":
            raise RuntimeError(f"expected websocket.connect, got {message['type']}")
        await self._send({"type": "websocket.accept", "subprotocol": subprotocol,
                          "headers": list(headers or [])})
        self._answered = True

    async def receive(self) -> dict[str, Any]:
        """The next message, as an ASGI `websocket.receive` dict; `WebSocketDisconnect` when
        the client has gone."""
        message = await self._receive()
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
        return message

    async def receive_text(self) -> str:
        message = await self.receive()
        if message.get("text") is None:
            raise TypeError("expected a text message, got a binary one")
        return message["text"]

    async def receive_bytes(self) -> bytes:
        message = await self.receive()
        if message.get("bytes") is None:
            raise TypeError("expected a binary message, got a text one")
        return message["bytes"]

    async def receive_json(self) -> Any:
        message = await self.receive()
        data = message["text"] if message.get("text") is not None else message["bytes"]
        return json.loads(data)

    async def send_text(self, data: str) -> None:
        await self._send({"type": "websocket.send", "text": data})

    async def send_bytes(self, data: bytes) -> None:
        await self._send({"type": "websocket.send", "bytes": data})

    async def send_json(self, data: Any) -> None:
        await self.send_text(json.dumps(data, separators=(",", ":")))

    def iter_text(self) -> AsyncIterator[str]:
        return _until_disconnect(self.receive_text)

    def iter_bytes(self) -> AsyncIterator[bytes]:
        return _until_disconnect(self.receive_bytes)

    def iter_json(self) -> AsyncIterator[Any]:
        return _until_disconnect(self.receive_json)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        await self._send({"type": "websocket.close", "code": code, "reason": reason or ""})
        self._answered = True


async def _until_disconnect(receive: Callable[[], Awaitable[Any]]) -> AsyncIterator[Any]:
    """What `receive()` gives, message after message, until the client leaves."""
    try:
        while True:
            yield await receive()
    except WebSocketDisconnect:
        pass


# Path parameter annotations that are converted, as written or as strings (postponed
# annotations).
_CONVERTERS: dict[Any, Callable[[str], Any]] = {int: int, "int": int, float: float,
                                               "float": float}

_PARAM = re.compile(r"{([A-Za-z_][A-Za-z0-9_]*)(?::path)?}")


class _WsRoute:
    """A path template compiled to a pattern, and the handler's parameter conversions."""

    def __init__(self, path: str, handler: Callable[..., Any]) -> None:
        if not path.startswith("/"):
            raise ValueError(f"a route path starts with '/': {path!r}")
        if not inspect.iscoroutinefunction(handler):
            raise TypeError(f"a WebSocket handler must be an async function: {handler!r}")
        pattern, last = "", 0
        for match in _PARAM.finditer(path):
            pattern += re.escape(path[last:match.start()])
            wildcard = match.group(0).endswith(":path}")
            pattern += f"(?P<{match.group(1)}>{'.*' if wildcard else '[^/]+'})"
            last = match.end()
        self.pattern = re.compile(pattern + re.escape(path[last:]) + "$")
        self.path = path
        self.handler = handler
        signature = inspect.signature(handler)
        self.socket_arg = next((name for name, p in signature.parameters.items()
                                if p.annotation in (WebSocket, "WebSocket")), None)
        _check_parameters(path, handler, signature, self.socket_arg,
                          set(self.pattern.groupindex))
        self.converters = {name: _CONVERTERS[p.annotation]
                           for name, p in signature.parameters.items()
                           if p.annotation in _CONVERTERS}

    def call(self, websocket: WebSocket, params: dict[str, str]) -> Any:
        """Start the handler with the converted path parameters (a ValueError if one does
        not convert)."""
        kwargs: dict[str, Any] = {
            name: self.converters[name](value) if name in self.converters else value
            for name, value in params.items()
        }
        websocket.path_params = dict(kwargs)
        if self.socket_arg:
            kwargs[self.socket_arg] = websocket
            return self.handler(**kwargs)
        return self.handler(websocket, **kwargs)


def _check_parameters(path: str, handler: Callable[..., Any], signature: inspect.Signature,
                      socket_arg: str | None, path_params: set[str]) -> None:
    """A TypeError at registration for a parameter the route cannot fill: one that is neither
    the socket (the first parameter, or the one annotated `WebSocket`) nor a path parameter,
    unless it has a plain default."""
    from .dependencies import Depends
    from .params import Param

    names = list(signature.parameters)
    socket = socket_arg or (names[0] if names else None)
    for name, parameter in signature.parameters.items():
        if name == socket or name in path_params:
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is parameter.empty or isinstance(parameter.default, (Param, Depends)):
            raise TypeError(
                f"WebSocket route {path!r}: parameter {name!r} of {handler.__name__} is neither "
                "the WebSocket nor a path parameter; read query and header values from the "
                "WebSocket (websocket.query_params, websocket.headers)")


class WebSocketRoutes:
    """An app's WebSocket routes as one ASGI app for the engine's `websocket` scope: the first
    route whose template matches runs; none matching refuses the handshake (403)."""

    def __init__(self) -> None:
        self.routes: list[_WsRoute] = []

    def add(self, path: str, handler: Callable[..., Any]) -> None:
        self.routes.append(_WsRoute(path, handler))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"]
        for route in self.routes:
            match = route.pattern.match(path)
            if match is None:
                continue
            websocket = WebSocket(scope, receive, send, {})
            try:
                converted = route.call(websocket, match.groupdict())
            except ValueError:
                break  # a parameter of the wrong type: no such route
            try:
                await converted
            except WebSocketDisconnect:
                pass
            if not websocket._answered:
                await send({"type": "websocket.close", "code": 1000})
            return
        await send({"type": "websocket.close", "code": 1000})
