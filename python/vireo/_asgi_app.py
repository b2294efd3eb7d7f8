"""A Vireo `App` as an ASGI 3 application, for the servers and tools that take one:
`uvicorn main:app`, httpx's `ASGITransport`, a Starlette or FastAPI app mounting it.

The app runs as under the `TestClient`: on a thread of its own that serves like a worker,
with the app's own event loop, through the same native routing, conversion and rendering.
The ASGI server's loop only carries the messages: each request's body is read whole, and the
answer comes back as it is produced, a streamed body chunk by chunk with back-pressure.
Startup and shutdown hooks run on the app's loop when the server sends the `lifespan`
events (a server that sends none, as `ASGITransport`, runs no hooks, as with Starlette).
"""

from __future__ import annotations

import asyncio
import threading
import urllib.parse
import weakref
from typing import Any, Callable

from . import _loop, _vireo
from .datastructures import Address

Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]


# The engine's default body limit, which the app's own server applies too.
DEFAULT_MAX_BODY_SIZE = 2 * 1024 * 1024


class AsgiBridge:
    """The app's ASGI side, started on the first lifespan or request event. A request body
    longer than its route's (or the app's) `max_body_size`, or than this `max_body_size`
    where they set none, gets 413 unread."""

    def __init__(self, app: Any, max_body_size: int = DEFAULT_MAX_BODY_SIZE) -> None:
        if not isinstance(max_body_size, int) or max_body_size < 0:
            raise ValueError(f"max_body_size must be a byte count (an int >= 0), "
                             f"not {max_body_size!r}")
        self.app = app
        self.max_body_size = max_body_size
        self._lock = threading.Lock()
        self._loop: Any = None
        self._client: Any = None
        # The native app the client serves, for the body limit of each request's route.
        self._core: Any = None
        self._finalizer: Any = None
        # The dependency overrides the running build was planned with.
        self._built_overrides: dict[Any, Any] = {}

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        else:
            raise ValueError(f"a Vireo app serves ASGI 'http', 'websocket' and 'lifespan' "
                             f"scopes, not {kind!r}")

    def _start(self, scope: Message) -> Any:
        """The app's thread and loop, started once; a first scope with a `root_path` (a mount
        in a Starlette app, `uvicorn --root-path`) gives the app its root path."""
        with self._lock:
            if self._client is None:
                root_path = (scope.get("root_path") or "").rstrip("/")
                if root_path and not self.app.root_path:
                    self.app.root_path = root_path
                    self.app.openapi_schema = None
                loop = _loop.new_loop()
                self._core = self.app._build(loop)
                self._client = _vireo.LocalClient(self._core)
                self._built_overrides = self.app._planned_overrides
                self._loop = loop
                # Never shut down (no lifespan events): stopped at exit, before the
                # interpreter goes, as a test client is.
                self._finalizer = weakref.finalize(self, _loop.release_client, self._client,
                                                   loop)
            elif self.app._changed_since(self._built_overrides):
                # Overrides a test set or cleared since, or routes added: FastAPI reads them
                # on each request.
                self._core = self.app._build(self._loop)
                self._client.replace(self._core)
                self._built_overrides = self.app._planned_overrides
            return self._client

    async def _lifespan(self, scope: Message, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self._start(scope)
                    await _run_on(self._loop, self.app.startup())
                except BaseException as exc:  # noqa: BLE001 - reported to the server
                    await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await self._stop()
                except BaseException as exc:  # noqa: BLE001 - reported to the server
                    await send({"type": "lifespan.shutdown.failed", "message": repr(exc)})
                    return
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _stop(self) -> None:
        """Run the shutdown hooks on the app's loop, then end its thread and close the loop."""
        with self._lock:
            client, loop = self._client, self._loop
            self._client = self._loop = None
        if client is None:
            return
        self._finalizer.detach()
        try:
            await _run_on(loop, self.app.shutdown())
        finally:
            # On a thread with no running loop: ending the app's loop runs it once more.
            await asyncio.get_running_loop().run_in_executor(None, _loop.release_client,
                                                             client, loop)

    async def _http(self, scope: Message, receive: Receive, send: Send) -> None:
        client = self._start(scope)
        path = scope.get("raw_path") or urllib.parse.quote(scope.get("path", "/")).encode()
        limit = self._core.body_limit(scope["method"], path.decode("latin-1"))
        limit = self.max_body_size if limit is None else limit
        try:
            body = await _read_body(receive, limit)
        except _TooLarge:
            # As the native server words it.
            await _refuse(send, 413, f"request body is larger than the limit of {limit} bytes")
            return
        if body is None:
            return  # the client went away before sending it all
        server_loop = asyncio.get_running_loop()
        events: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

        def sink(*event: Any) -> None:
            server_loop.call_soon_threadsafe(events.put_nowait, event)

        try:
            flow = client.stream(_head(scope, len(body)), body,
                                 _peer(scope), scope.get("scheme") in ("https", "wss"), sink)
        except ValueError as exc:
            await _refuse(send, 400, f"Bad Request: {exc}")
            return
        disconnected = server_loop.create_task(_wait_disconnect(receive))
        try:
            while True:
                event = await _next_event(events, disconnected)
                if event is None:
                    return  # the client has gone: the flow is cancelled below
                if event[0] == "start":
                    await send({"type": "http.response.start", "status": event[1],
                                "headers": event[2]})
                elif event[0] == "body":
                    await send({"type": "http.response.body", "body": event[1],
                                "more_body": event[2]})
                    if not event[2]:
                        return
                    flow.grant()
                else:
                    raise RuntimeError(f"the app's response body failed: {event[1]}")
        finally:
            flow.cancel()
            disconnected.cancel()

    async def _websocket(self, scope: Message, receive: Receive, send: Send) -> None:
        """A WebSocket session, run on the app's loop by its WebSocket routes, its messages
        passed between the two loops; or by the mount holding a path none of them takes."""
        self._start(scope)
        scope = without_root(scope, self.app.root_path)
        mounted = websocket_mount(self.app, scope)
        if mounted is not None:
            # An ASGI app of its own: it runs on the server's loop, as any mounted app would.
            app, mounted_scope = mounted
            return await app(mounted_scope, receive, send)
        server_loop = asyncio.get_running_loop()
        endpoint = self.app._websocket_endpoint()
        incoming: asyncio.Queue[Message] = asyncio.Queue()
        app_loop = self._loop

        async def app_receive() -> Message:
            return await _run_on(server_loop, incoming.get())

        async def app_send(message: Message) -> None:
            await _run_on(server_loop, send(message))

        async def pump() -> None:
            while True:
                message = await receive()
                incoming.put_nowait(message)
                if message["type"] == "websocket.disconnect":
                    return

        pumping = server_loop.create_task(pump())
        try:
            await _run_on(app_loop, endpoint(scope, app_receive, app_send))
        finally:
            pumping.cancel()

class _TooLarge(Exception):
    pass


async def _run_on(loop: asyncio.AbstractEventLoop, coro: Any) -> Any:
    """Run `coro` on `loop` (the other side's) and wait for it from the running one."""
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body; None if the client disconnected first. Raises `_TooLarge` as
    soon as it is longer than `limit`."""
    chunks = []
    length = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        length += len(chunk)
        if length > limit:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _next_event(events: asyncio.Queue[tuple[Any, ...]],
                      disconnected: asyncio.Task[None]) -> tuple[Any, ...] | None:
    """The next event of the answer, or None once the client has disconnected."""
    if not events.empty():
        return events.get_nowait()
    getting = asyncio.ensure_future(events.get())
    done, _ = await asyncio.wait({getting, disconnected}, return_when=asyncio.FIRST_COMPLETED)
    if getting in done:
        return getting.result()
    getting.cancel()
    return None


def websocket_mount(app: Any, scope: Message) -> tuple[Any, Message] | None:
    """The mounted app a handshake to `app` (a Vireo App) goes to, and its scope, when none
    of the app's own WebSocket routes takes the path: the first mount holding the path, as
    when the app serves itself. The mounted app's `root_path` ends with the prefix, and its
    `path` is the full one, as Starlette's `Mount` gives them."""
    path = scope.get("path", "/")
    if any(route.pattern.match(path) for route in app._websockets.routes):
        return None
    for prefix, mounted_app, _ in app._mounts:
        if path == prefix or path.startswith(prefix + "/"):
            root = app.root_path.rstrip("/")
            mounted = dict(scope, root_path=root + prefix, path=root + path)
            raw = scope.get("raw_path")
            if isinstance(raw, bytes):
                mounted["raw_path"] = root.encode("latin-1") + raw
            return mounted_app, mounted
    return None


def without_root(scope: Message, root_path: str) -> Message:
    """The scope with `root_path` taken off the front of its path, which the app routes."""
    path = scope.get("path", "/")
    if root_path and (path == root_path or path.startswith(root_path + "/")):
        scope = dict(scope, path=path[len(root_path):] or "/")
        raw = scope.get("raw_path")
        prefix = root_path.encode("latin-1")
        if isinstance(raw, bytes) and raw.startswith(prefix):
            scope["raw_path"] = raw[len(prefix):] or b"/"
    return scope


def _head(scope: Message, body_length: int) -> bytes:
    """The HTTP/1.1 head of the request `scope` describes, its body framed by length (the
    app takes its root path off the path, as when serving)."""
    target = scope.get("raw_path") or urllib.parse.quote(scope.get("path", "/")).encode()
    query = scope.get("query_string") or b""
    if query:
        target += b"?" + query
    lines = [scope["method"].encode("latin-1") + b" " + target + b" HTTP/1.1"]
    has_host = False
    for name, value in scope.get("headers") or ():
        name = bytes(name).lower()
        if name in (b"content-length", b"transfer-encoding"):
            continue  # the body is passed whole: framed by its length below
        has_host = has_host or name == b"host"
        lines.append(name + b": " + bytes(value))
    if not has_host:
        host, port = scope.get("server") or ("localhost", None)
        lines.append(b"host: " + (f"{host}:{port}" if port else str(host)).encode("latin-1"))
    if body_length:
        lines.append(b"content-length: " + str(body_length).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _peer(scope: Message) -> tuple[str, int] | None:
    client = scope.get("client")
    if not client:
        return None
    address = Address(*client)
    return (str(address.host), int(address.port))


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
