"""WebSocket routes of an `App`: `@app.websocket("/ws/{room}")` over a `WebSocket` shaped as
Starlette's, served by the engine's WebSocket support (the same one `vireo serve` gives ASGI
apps)."""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Iterator, Mapping
from typing import Any, AsyncIterator, Awaitable, Callable, Sequence

from . import _vireo
from .connection import HTTPConnection
from .datastructures import URL, Address, scope_netloc
from .dependencies import Depends, solver
from .encoders import jsonable
from .exceptions import HTTPException, WebSocketException, http_errors
from .params import PATH_PARAM, is_websocket_type


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
                 send: Callable[[dict[str, Any]], Any], path_params: dict[str, Any],
                 app: Any = None) -> None:
        self.scope = scope
        # The `App` whose route this is, for `url_for`.
        self.app = app
        self._receive = receive
        self._send = send
        self.path_params = path_params
        # Whether the handshake has been answered (accepted, or refused by a close).
        self._answered = False
        self._closed = False

    @property
    def url(self) -> URL:
        """`ws://host/path?query` (or `wss://`), with the `root_path` of the app whose route
        this is, as `Request.url`."""
        query = self.scope.get("query_string", b"").decode("latin-1")
        root = getattr(self.app, "root_path", "")
        scheme = self.scope.get("scheme", "ws")
        return URL(f"{scheme}://{scope_netloc(self.scope)}{root}{self.scope['path']}"
                   + (f"?{query}" if query else ""))

    @property
    def headers(self) -> "Headers":
        """The handshake's header fields, as `Request.headers`: names compared without case."""
        return Headers(self.scope["headers"])

    @property
    def cookies(self) -> dict[str, str]:
        """The cookies the client sent with the handshake, by name."""
        out: dict[str, str] = {}
        for field in self.headers.getlist("cookie"):
            for pair in field.split(";"):
                name, sep, value = pair.partition("=")
                if sep:
                    value = value.strip()
                    if len(value) >= 2 and value[0] == value[-1] == '"':
                        value = value[1:-1]
                    out[name.strip()] = value
        return out

    @property
    def query_params(self) -> _vireo.QueryParams:
        """The handshake's query parameters, as `Request.query_params`: the last value of a
        repeated name, `getlist` for all of them."""
        return _vireo.QueryParams(self.scope.get("query_string", b"").decode("latin-1"))

    @property
    def base_url(self) -> URL:
        """`ws://host/` (or `wss://`), from the handshake's `Host` (else the server's
        address), with the app's `root_path`."""
        root = getattr(self._url_root, "root_path", "")
        return URL(f"{self.scope.get('scheme', 'ws')}://{scope_netloc(self.scope)}{root}/")

    @property
    def _url_root(self) -> Any:
        """The app whose names `url_for` finds: the outermost, as for `Request.url_for`."""
        return getattr(self.app, "_url_root", None) or self.app

    def url_for(self, name: str, /, **path_params: Any) -> URL:
        """The URL of the route named `name` (see `App.url_path_for`) on this connection's
        host, `http(s)://` for an HTTP route and `ws(s)://` for a WebSocket one, as
        Starlette's."""
        if self.app is None:
            raise RuntimeError("this WebSocket was not routed by an App")
        return self._url_root.url_path_for(name, **path_params).make_absolute_url(self.base_url)

    @property
    def client(self) -> Address | None:
        client = self.scope.get("client")
        return Address(*client) if client else None

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
        self._closed = True


class Headers(Mapping[str, str]):
    """Header fields as a read-only mapping: names compared without case, the first value of a
    repeated field (`getlist` gives every one)."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._fields = [(n.decode("latin-1").lower(), v.decode("latin-1")) for n, v in raw]

    def __getitem__(self, name: str) -> str:
        key = name.lower()
        for field, value in self._fields:
            if field == key:
                return value
        raise KeyError(name)

    def getlist(self, name: str) -> list[str]:
        key = name.lower()
        return [value for field, value in self._fields if field == key]

    # httpx's name for it, as a test client's response headers are asked.
    get_list = getlist

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(field for field, _ in self._fields))

    def __len__(self) -> int:
        return len(dict.fromkeys(field for field, _ in self._fields))

    def __repr__(self) -> str:
        return f"Headers({dict(self)!r})"


async def _until_disconnect(receive: Callable[[], Awaitable[Any]]) -> AsyncIterator[Any]:
    """What `receive()` gives, message after message, until the client leaves."""
    try:
        while True:
            yield await receive()
    except WebSocketDisconnect:
        pass


# The close code for a handshake whose parameters do not validate (as FastAPI's).
_POLICY_VIOLATION = 1008
# A close frame's reason is at most 123 bytes.
_MAX_REASON = 123


def _socket_param(handler: Callable[..., Any]) -> str | None:
    """The handler's socket parameter: the first annotated `WebSocket` (or `HTTPConnection`),
    else a first parameter with neither annotation nor default."""
    parameters = inspect.signature(handler).parameters
    try:
        hints = typing.get_type_hints(handler)
    except Exception:  # noqa: BLE001 - planning reports unresolvable annotations
        hints = {name: p.annotation for name, p in parameters.items()}
    for name in parameters:
        hint = hints.get(name)
        if hint == "WebSocket" or is_websocket_type(hint):
            return name
    first = next(iter(parameters.values()), None)
    if (first is not None and first.annotation is first.empty and first.default is first.empty
            and first.kind in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD)):
        return first.name
    return None


def _compile(path: str) -> re.Pattern[str]:
    """The path template as a pattern: `{name}` one segment, `{name:path}` and `{*name}` the
    rest of the path (the same grammar HTTP routes use)."""
    pattern, last = "", 0
    for match in PATH_PARAM.finditer(path):
        pattern += re.escape(path[last:match.start()])
        wildcard = bool(match.group(1) or match.group(3))
        pattern += f"(?P<{match.group(2)}>{'.*' if wildcard else '[^/]+'})"
        last = match.end()
    return re.compile(pattern + re.escape(path[last:]) + "$")


class _WsRoute:
    """A registered WebSocket route: its path, handler and own dependencies. An app's route is
    planned when registered, so a parameter the handshake cannot fill is a TypeError then (a
    router's, whose prefix may hold path parameters, when it is included)."""

    def __init__(self, path: str, handler: Callable[..., Any],
                 dependencies: Sequence[Depends] = (), check: bool = True,
                 name: str | None = None) -> None:
        if not path.startswith("/"):
            raise ValueError(f"a route path starts with '/': {path!r}")
        if not inspect.iscoroutinefunction(handler):
            raise TypeError(f"a WebSocket handler must be an async function: {handler!r}")
        self.path = path
        self.handler = handler
        self.name = name or handler.__name__
        self.dependencies = list(dependencies)
        self.pattern = _compile(path)
        self.socket_param = _socket_param(handler)
        if self.socket_param is None:
            raise TypeError(f"WebSocket route {path}: {handler.__qualname__} takes no socket; "
                            "annotate one parameter `websocket: WebSocket`")
        if check:
            self.solve((), None)

    @property
    def endpoint(self) -> Callable[..., Any]:
        """The handler, by FastAPI's name for it."""
        return self.handler

    def solve(self, outer: Sequence[Depends], overrides: dict[Any, Any] | None) -> "_Solved":
        """The route as served: after the `outer` dependencies, with `overrides` applied."""
        solve, _, _, plan = solver(self.handler, [*outer, *self.dependencies], self.path, 200,
                                   False, overrides, websocket=True,
                                   socket_param=self.socket_param)
        return _Solved(self.pattern, solve, plan)


class _Solved:
    """A route ready to serve: its pattern, its call, and how its parameters are converted."""

    def __init__(self, pattern: re.Pattern[str], solve: Callable[..., Any], plan: Any) -> None:
        self.pattern = pattern
        self.solve = solve
        self.names = list(pattern.groupindex)
        self.params = _vireo.HandshakeParams(self.names, plan.leaves)
        # The handler's converted path values, by the solver's keyword.
        self.path_leaves = {leaf[2]: leaf[0] for leaf in plan.leaves if leaf[1] == "path"}

    def path_params(self, raw: dict[str, str], kwargs: dict[str, Any]) -> dict[str, Any]:
        return {name: kwargs[self.path_leaves[name]] if name in self.path_leaves else value
                for name, value in raw.items()}


class WebSocketRoutes:
    """An app's (or router's) WebSocket routes, as registered."""

    def __init__(self) -> None:
        self.routes: list[_WsRoute] = []

    def add(self, path: str, handler: Callable[..., Any],
            dependencies: Sequence[Depends] = (), check: bool = True,
            name: str | None = None) -> "_WsRoute":
        route = _WsRoute(path, handler, dependencies, check, name)
        self.routes.append(route)
        return route

    def endpoint(self, dependencies: Sequence[Depends], overrides: dict[Any, Any] | None,
                 app: Any = None, raise_disconnect: bool = False) -> "WebSocketEndpoint":
        """The routes of `app` as one ASGI app, after its `dependencies`, with `overrides`."""
        return WebSocketEndpoint([route.solve(dependencies, overrides) for route in self.routes],
                                 app, raise_disconnect)


class WebSocketEndpoint:
    """The app's WebSocket routes as one ASGI app for the engine's `websocket` scope: the
    first route whose template matches runs; none matching refuses the handshake (403), and
    so do parameters that do not validate (closed with 1008, as FastAPI does). A
    `WebSocketDisconnect` the handler lets out ends the session quietly, unless
    `raise_disconnect` (the test client's, so a test sees it as under Starlette's client)."""

    def __init__(self, routes: list[_Solved], app: Any = None,
                 raise_disconnect: bool = False) -> None:
        self.routes = routes
        self.app = app
        self.raise_disconnect = raise_disconnect

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"]
        for route in self.routes:
            match = route.pattern.match(path)
            if match is None:
                continue
            websocket = WebSocket(scope, receive, send, {}, self.app)
            raw = match.groupdict()
            try:
                kwargs = route.params.bind(scope, [raw[name] for name in route.names], websocket)
            except _vireo.ValidationFailed as failed:
                await websocket.close(_POLICY_VIOLATION, _invalid_reason(failed.args[0]))
                return
            websocket.path_params = route.path_params(raw, kwargs)
            try:
                await route.solve(**kwargs)
            except WebSocketDisconnect:
                if self.raise_disconnect:
                    raise
            except WebSocketException as refused:
                if not websocket._closed:
                    await websocket.close(refused.code, refused.reason)
            except http_errors() as denied:
                if websocket._answered:
                    raise
                await _deny(send, denied)
                return
            if not websocket._answered:
                await send({"type": "websocket.close", "code": 1000})
            return
        await send({"type": "websocket.close", "code": 1000})


async def _deny(send: Any, exc: HTTPException) -> None:
    """Refuse the handshake with `exc` as an HTTP response, as Starlette does with the
    denial-response extension: its status, headers and `{"detail": ...}`."""
    body = _vireo.dumps({"detail": exc.detail}, jsonable)
    headers = [(b"content-type", b"application/json")]
    headers += [(k.lower().encode("latin-1"), str(v).encode("latin-1"))
                for k, v in (exc.headers or {}).items()]
    await send({"type": "websocket.http.response.start", "status": exc.status_code,
                "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


def _invalid_reason(body: bytes) -> str:
    """The close reason for parameters that did not validate: each error's place and message,
    cut to what a close frame holds."""
    errors = json.loads(body)["detail"]
    text = "; ".join(f"{' '.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
    return text.encode()[:_MAX_REASON].decode(errors="ignore")


HTTPConnection.register(WebSocket)
