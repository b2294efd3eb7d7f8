"""`TestClient(app)`: requests in-process, through the same native routing, parameter
conversion, handler calls and rendering as from a socket (without the connection layer:
`content-length` is added where the connection would add it, `date` is not).

Requests are served on a thread of the client's own that acts as the app's worker; the app's
startup hooks run when the client starts and shutdown hooks when it closes
(`with TestClient(app) as client:`, or `close()`). `websocket_connect` opens a WebSocket to
the app's WebSocket routes, run on the same event loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import http
import io
import json as jsonlib
import mimetypes
import pathlib
import queue
import urllib.parse
import weakref
import zlib
from typing import Any, Iterator, Mapping, MutableMapping, Sequence

from . import _loop, _vireo
from ._asgi_app import websocket_mount, without_root
from ._test_cookies import Cookies
from .app import log_exception
from .datastructures import URL, Address
from .websockets import Headers, WebSocketDisconnect


class ClientHeaders(MutableMapping[str, str]):
    """The header fields a client sends with every request (`client.headers["authorization"]
    = ...`), names compared without case, as httpx's `client.headers`."""

    def __init__(self, fields: Mapping[str, str]) -> None:
        self._fields: dict[str, str] = {}
        self.update(fields)

    def __getitem__(self, name: str) -> str:
        return self._fields[name.lower()]

    def __setitem__(self, name: str, value: str) -> None:
        self._fields[name.lower()] = value

    def __delitem__(self, name: str) -> None:
        del self._fields[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return f"ClientHeaders({self._fields!r})"


class TestRequest:
    """The request a `TestResponse` answers, as httpx's `response.request` shows it."""

    def __init__(self, method: str, url: URL, headers: Headers, content: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.content = content

    def __repr__(self) -> str:
        return f"<TestRequest({self.method!r}, {str(self.url)!r})>"


class HTTPStatusError(Exception):
    """What `raise_for_status()` raises for a 4xx or 5xx, as httpx's: its `request` and
    `response`."""

    def __init__(self, message: str, *, request: TestRequest, response: "TestResponse") -> None:
        super().__init__(message)
        self.request = request
        self.response = response


# What the client sends unless told otherwise, as Starlette's (httpx's defaults, its own
# user agent).
DEFAULT_HEADERS = {"accept": "*/*", "accept-encoding": "gzip, deflate",
                   "connection": "keep-alive", "user-agent": "testclient"}


def _decoded(body: bytes, codings: str) -> bytes:
    """`body` with its `content-encoding` (gzip, deflate) undone, as httpx gives it; a coding
    it does not know leaves the body as sent."""
    for coding in reversed([c.strip().lower() for c in codings.split(",") if c.strip()]):
        try:
            if coding in ("gzip", "x-gzip"):
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
            elif coding == "deflate":
                try:
                    body = zlib.decompress(body)
                except zlib.error:  # raw deflate, as some servers send it
                    body = zlib.decompress(body, -zlib.MAX_WBITS)
            elif coding != "identity":
                return body
        except zlib.error as exc:
            raise ValueError(f"the response's {coding} body does not decode: {exc}") from None
    return body


class TestResponse:
    """A response, as httpx's shows it: `status_code`, `headers`, `content`, `text`,
    `json()`, `cookies`, `url`, `request`, the `is_*` checks and `raise_for_status()`."""

    def __init__(self, status: int, headers: list[tuple[str, bytes]], body: bytes,
                 request: TestRequest | None = None) -> None:
        self.status_code = status
        # Names compared without case, `get_list` for every value of one, as httpx's.
        self.headers = Headers([(name.encode("latin-1"), value) for name, value in headers])
        self.raw_headers = headers
        # Decoded as httpx decodes it; `headers` still say how it was sent.
        codings = self.headers.get("content-encoding")
        self.content = _decoded(body, codings) if codings and body else body
        self._request = request

    @property
    def request(self) -> TestRequest:
        if self._request is None:
            raise RuntimeError("this response was not made by a request of the test client")
        return self._request

    @property
    def url(self) -> URL:
        return self.request.url

    @property
    def cookies(self) -> Cookies:
        """The cookies this response sets (an expired one not among them)."""
        jar = Cookies()
        for field in self.headers.get_list("set-cookie"):
            jar.take(field)
        return jar

    @property
    def reason_phrase(self) -> str:
        try:
            return http.HTTPStatus(self.status_code).phrase
        except ValueError:
            return ""

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self) -> Any:
        return jsonlib.loads(self.content)

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The body in pieces of `chunk_size` (the whole body by default): it has been read
        whole already."""
        size = chunk_size or len(self.content) or 1
        for start in range(0, len(self.content), size):
            yield self.content[start:start + size]

    def iter_text(self, chunk_size: int | None = None) -> Iterator[str]:
        for chunk in self.iter_bytes(chunk_size):
            yield chunk.decode()

    def iter_lines(self) -> Iterator[str]:
        yield from self.text.splitlines()

    def read(self) -> bytes:
        return self.content

    @property
    def is_informational(self) -> bool:
        return 100 <= self.status_code < 200

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "location" in self.headers

    @property
    def is_client_error(self) -> bool:
        return 400 <= self.status_code < 500

    @property
    def is_server_error(self) -> bool:
        return 500 <= self.status_code < 600

    @property
    def is_error(self) -> bool:
        return 400 <= self.status_code < 600

    def raise_for_status(self) -> "TestResponse":
        """`HTTPStatusError` for a 4xx or 5xx; the response itself otherwise."""
        if self.is_error:
            kind = "Client error" if self.is_client_error else "Server error"
            raise HTTPStatusError(
                f"{kind} '{self.status_code} {self.reason_phrase}' for url '{self.url}'",
                request=self.request, response=self)
        return self

    def __repr__(self) -> str:
        return f"<TestResponse [{self.status_code}]>"


_BOUNDARY = "vireo-test-boundary-7MA4YWxkTrZu0gW"


def _multipart(data: Mapping[str, Any],
               files: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> tuple[bytes, str]:
    """A `multipart/form-data` body of `data`'s fields and `files`' uploads, made as httpx
    makes it: a file is `(filename, content[, content_type[, headers]])`, or bare content
    (bytes, str or a binary file object) named after the file object's `name`, else `upload`;
    a missing content type is guessed from the filename."""
    out = bytearray()

    def part(name: str, content: bytes, filename: str | None,
             headers: Mapping[str, str]) -> None:
        out.extend(f"--{_BOUNDARY}\r\n".encode())
        disposition = f"form-data; {_form_param('name', name)}"
        if filename:
            disposition += f"; {_form_param('filename', filename)}"
        out.extend(f"content-disposition: {disposition}\r\n".encode())
        for field, value in headers.items():
            out.extend(f"{field}: {value}\r\n".encode())
        out.extend(b"\r\n" + content + b"\r\n")

    for name, value in data.items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            part(name, item if isinstance(item, bytes) else _form_value(item).encode(), None, {})
    # A mapping, or (name, file) pairs, which may repeat a name (as httpx takes them).
    pairs = files.items() if isinstance(files, Mapping) else files
    for name, value in pairs:
        for item in value if isinstance(value, list) else [value]:
            filename, content, headers = _file_field(item)
            part(name, content, filename, headers)
    out.extend(f"--{_BOUNDARY}--\r\n".encode())
    return bytes(out), f"multipart/form-data; boundary={_BOUNDARY}"


def _file_field(value: Any) -> tuple[str | None, bytes, dict[str, str]]:
    """One upload's filename, bytes and part header fields, as httpx reads `files` values."""
    media_type = None
    headers: dict[str, str] = {}
    if isinstance(value, tuple):
        if len(value) == 2:
            filename, content = value
        elif len(value) == 3:
            filename, content, media_type = value
        else:
            filename, content, media_type, headers = value
            headers = dict(headers)
    else:
        filename = pathlib.Path(str(getattr(value, "name", "upload"))).name
        content = value
    if media_type is None and filename:
        media_type = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    if media_type is not None and not any("content-type" in k.lower() for k in headers):
        headers["content-type"] = media_type
    if isinstance(content, io.TextIOBase):
        raise TypeError("multipart file uploads must be opened in binary mode, not text mode")
    if isinstance(content, str):
        content = content.encode()
    elif not isinstance(content, (bytes, bytearray, memoryview)):
        with contextlib.suppress(AttributeError, io.UnsupportedOperation):
            content.seek(0)
        content = content.read()
    return filename, bytes(content), headers


# As browsers (and httpx) escape a form parameter's quotes, backslashes and control bytes.
_FORM_ESCAPES = {'"': "%22", "\\": "\\\\"} | {
    chr(c): f"%{c:02X}" for c in range(0x20) if c != 0x1B
}


def _form_param(name: str, value: str) -> str:
    return f'{name}="' + "".join(_FORM_ESCAPES.get(c, c) for c in value) + '"'


def _urlencode(values: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> str:
    """A query string or form body of `values` (a list value gives a pair per item)."""
    items = values.items() if isinstance(values, Mapping) else values
    return urllib.parse.urlencode([
        (name, item if isinstance(item, bytes) else _form_value(item))
        for name, value in items
        for item in (value if isinstance(value, (list, tuple)) else [value])
    ])


def _form_value(value: Any) -> str:
    """A form field's text, as httpx writes it: booleans in JSON's spelling, `None` empty."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return "" if value is None else str(value)


# What a request target keeps as it is: the URL's delimiters, `%` escapes, unreserved ones.
_URL_SAFE = "/?#[]@!$&'()*+,;=%:~"

_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 20


class TestClient:
    __test__ = False  # not a pytest test class

    def __init__(
        self,
        app: Any,
        base_url: str = "http://testserver",
        raise_server_exceptions: bool = True,
        *,
        cookies: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        follow_redirects: bool = True,
        client: tuple[str, int] = ("testclient", 50000),
        root_path: str = "",
    ) -> None:
        """As Starlette's: requests go to `base_url`'s host; an exception a handler raises
        (and does not turn into a response) is raised in the test when
        `raise_server_exceptions`, else answered 500; `headers` and `cookies` go with every
        request; `client` is `request.client`; with `root_path`, the app is served as
        behind a proxy that strips it (unless it has a root path of its own): a path that
        has it is routed without it, and the URLs the app makes carry it."""
        self.app = app
        self.root_path = root_path
        self.base_url = URL(base_url.rstrip("/"))
        self.raise_server_exceptions = raise_server_exceptions
        # As Starlette's client: a 3xx with a `location` is followed, unless told not to.
        self.follow_redirects = follow_redirects
        # Set by the app's `set-cookie` fields and sent back, as httpx's `client.cookies`.
        self.cookies = Cookies()
        for name, value in (cookies or {}).items():
            self.cookies.set(name, value)
        self.headers = ClientHeaders(DEFAULT_HEADERS)
        self.headers.update(headers or {})
        self._client_address = Address(*client)
        self._raised: list[BaseException] = []
        self._extra_cookies: dict[str, str] = {}
        self._client: Any = None
        self._loop: Any = None
        # The dependency overrides the running build was planned with.
        self._built_overrides: dict[Any, Any] = {}

    @property
    def app_state(self) -> dict[str, Any]:
        """The state the app's lifespan yielded, as Starlette's `client.app_state`."""
        return dict(self.app._lifespan_state or {})

    def __enter__(self) -> "TestClient":
        self._start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _start(self) -> None:
        if self._client is not None:
            self._follow_overrides()
            return
        self._loop = _loop.new_loop()
        try:
            self._loop.run_until_complete(self.app.startup())
        except BaseException:
            self._loop.close()
            raise
        self._client = _vireo.LocalClient(self._build())
        # A client never closed stops its thread and ends its loop at exit, before the
        # interpreter goes away (its shutdown hooks do not run: they run on `close`).
        self._finalizer = weakref.finalize(self, _loop.release_client, self._client,
                                          self._loop)

    def _build(self) -> Any:
        """The app's native build for this client, with its dependency overrides as now."""
        self.app._serve_under(self.root_path)
        core = self.app._build(self._loop, log=self._log,
                               client_without_peer=self._client_address)
        self._built_overrides = self.app._planned_overrides
        self._background = self.app._background
        return core

    def _follow_overrides(self) -> None:
        """Serve with the app's routes and `dependency_overrides` as they are now, as FastAPI
        reads them on each request: a test may set or clear them, or add routes, while the
        client is open."""
        if self.app._changed_since(self._built_overrides):
            self._client.replace(self._build())

    def _log(self, exc: BaseException, context: str) -> None:
        """Keep what a handler raised to raise in the test, or log it as when serving."""
        if self.raise_server_exceptions:
            self._raised.append(exc)
        else:
            log_exception(exc, context)

    def close(self) -> None:
        if self._client is None:
            return
        self._finalizer.detach()
        self._client.close()
        self._client = None
        _loop.unbind(self._loop)
        try:
            self._loop.run_until_complete(self.app.shutdown())
        finally:
            self._loop.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
        json: Any = None,
        content: bytes | str | None = None,
        data: Mapping[str, Any] | None = None,
        files: Mapping[str, Any] | None = None,
        cookies: Mapping[str, str] | None = None,
        follow_redirects: bool | None = None,
        auth: tuple[str, str] | None = None,
        timeout: Any = None,
    ) -> TestResponse:
        """Send a request. `json` sends a JSON body; `data` form fields (a list value is sent
        once per item); `files` uploads, each as httpx takes them (`(filename, content[,
        media_type[, headers]])`, or bytes or a binary file), with `data` as the other
        fields of the `multipart/form-data` body. A redirect is followed (up to 20) unless
        `follow_redirects` (or the client's) is false: a 303, or a 301 or 302 to a POST, as
        a GET without the body, as browsers and httpx do. The client's `cookies` (and `cookies` given here, for this request) are sent unless a
        `cookie` header is given. `auth=(user, password)` sends HTTP Basic credentials;
        `timeout` is accepted for httpx's signature (the app runs in-process)."""
        self._start()
        target = url
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme or self.base_url.scheme
        if not (parts.scheme or parts.netloc or target.startswith("/")):
            target = "/" + target  # `client.get("items")` as httpx joins it to the base URL
        if parts.scheme or parts.netloc:  # an absolute URL: its path and query go
            target = parts.path or "/"
            target += f"?{parts.query}" if parts.query else ""
        # Spaces and characters beyond ASCII percent-encoded, as httpx sends them.
        target = urllib.parse.quote(target, safe=_URL_SAFE)
        if params:
            query = _urlencode(params)
            target += ("&" if "?" in target else "?") + query
        body = b""
        fields = {"host": parts.netloc or self.base_url.netloc}
        for name, value in self.headers.items():
            fields[name] = value
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            fields["authorization"] = f"Basic {token}"
        if json is not None:
            # As httpx encodes it.
            body = jsonlib.dumps(json, ensure_ascii=False, separators=(",", ":"),
                                 allow_nan=False).encode()
            fields["content-type"] = "application/json"
        elif files is not None:
            body, fields["content-type"] = _multipart(data or {}, files)
        elif data is not None:
            body = _urlencode(data).encode()
            fields["content-type"] = "application/x-www-form-urlencoded"
        elif isinstance(content, str):
            body = content.encode()
        elif isinstance(content, (bytes, bytearray, memoryview)):
            body = bytes(content)
        elif content is not None:
            # An iterator of byte chunks, as httpx streams it: sent whole here.
            body = b"".join(bytes(chunk) for chunk in content)
        # A mapping, or (name, value) pairs, which may repeat a name (as httpx takes them).
        pairs = headers.items() if isinstance(headers, Mapping) else (headers or ())
        # The request's fields replace the client's of the same name, as httpx merges them; a
        # name the request gives twice is sent twice.
        repeated: list[tuple[str, str]] = []
        given: set[str] = set()
        for name, value in pairs:
            name = name.lower()
            if name in given and name not in ("host", "content-type"):
                repeated.append((name, value))
            else:
                fields[name] = value
                given.add(name)
        method = method.upper()
        self._extra_cookies = dict(cookies or {})
        response = self._send(method, target, fields, repeated, body, scheme)
        follow = self.follow_redirects if follow_redirects is None else follow_redirects
        for _ in range(_MAX_REDIRECTS):
            location = response.headers.get("location")
            if not follow or response.status_code not in _REDIRECTS or location is None:
                return response
            status = response.status_code
            if status == 303 or (status in (301, 302) and method == "POST"):
                method, body = "GET", b""
                fields.pop("content-type", None)
            # Whatever host it names, the next request goes to the app, as Starlette's does.
            parts = urllib.parse.urlsplit(urllib.parse.urljoin(target, location))
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            scheme = parts.scheme or scheme
            response = self._send(method, target, fields, repeated, body, scheme)
        raise RuntimeError(f"more than {_MAX_REDIRECTS} redirects, the last to {target}")

    def _send(
        self,
        method: str,
        target: str,
        fields: dict[str, str],
        repeated: list[tuple[str, str]],
        body: bytes,
        scheme: str,
    ) -> TestResponse:
        """One request: `fields` (one per name) then the `repeated` ones, over `scheme`."""
        fields = dict(fields)
        if "cookie" not in fields:
            jar = self.cookies.header_for(urllib.parse.urlsplit(target).path)
            extra = "; ".join(f"{k}={v}" for k, v in self._extra_cookies.items())
            cookie = "; ".join(c for c in (jar, extra) if c)
            if cookie:
                fields["cookie"] = cookie
        fields.pop("content-length", None)
        if body:
            fields["content-length"] = str(len(body))
        lines = [*fields.items(), *repeated]
        head = f"{method} {target} HTTP/1.1\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in lines) + "\r\n"
        self._raised.clear()
        status, raw_headers, data, failed = self._client.request(
            head.encode("latin-1"), body, scheme == "https")
        if failed is not None and self.raise_server_exceptions:
            # A streamed body that failed part way: the app's own exception is raised, as by
            # Starlette's client (without it, the response has the body as far as it came).
            if self._raised:
                raised = self._raised[0]
                self._raised.clear()
                raise raised
            raise RuntimeError(f"the response's body failed part way: {failed}")
        if method == "HEAD" or status in (204, 304) or status < 200:
            data = b""  # as on the wire: these answers have no body
        for name, value in raw_headers:
            if name == "set-cookie":
                self.cookies.take(value.decode("latin-1"))
        # As Starlette's client does: the response's background tasks have run on return.
        self._background.wait()
        if self._raised and self.raise_server_exceptions:
            raised = self._raised[0]
            self._raised.clear()
            raise raised
        url = URL(f"{scheme}://{fields['host']}{target}")
        sent = Headers([(name.encode("latin-1"), value.encode("latin-1")) for name, value in lines])
        return TestResponse(status, raw_headers, data, TestRequest(method, url, sent, body))

    def get(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("DELETE", url, **kwargs)

    def head(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("HEAD", url, **kwargs)

    def options(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("OPTIONS", url, **kwargs)

    @contextlib.contextmanager
    def stream(self, method: str, url: str, **kwargs: Any) -> Iterator[TestResponse]:
        """`with client.stream("GET", url) as response:` as httpx's, for `iter_bytes()` and
        the like; the body has been read whole when the block starts."""
        yield self.request(method, url, **kwargs)

    def websocket_connect(self, url: str, subprotocols: Sequence[str] | None = None,
                          headers: Mapping[str, str] | None = None,
                          timeout: float = 10) -> "WebSocketTestSession":
        """Open a WebSocket to one of the app's WebSocket routes (or a mounted app's): `with
        client.websocket_connect("/ws") as ws: ws.send_text("hi")`. It runs on the app's
        event loop, as requests do; `timeout` bounds each wait for the app."""
        self._start()
        path, _, query = url.partition("?")
        fields = [(b"host", b"testserver"), (b"connection", b"upgrade"),
                  (b"upgrade", b"websocket"), (b"sec-websocket-version", b"13"),
                  (b"sec-websocket-key", b"dGVzdGNsaWVudGtleTEyMw==")]
        fields += [(name.lower().encode("latin-1"), value.encode("latin-1"))
                   for name, value in (headers or {}).items()]
        scope = {
            "type": "websocket", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "scheme": "ws", "path": urllib.parse.unquote(path), "raw_path": path.encode(),
            "query_string": query.encode(), "root_path": "", "headers": fields,
            "client": list(self._client_address), "server": ("testserver", 80),
            "subprotocols": list(subprotocols or ()),
        }
        # Routed without the app's root path when the path has it, as when serving.
        scope = without_root(scope, self.app.root_path)
        # A path none of the app's WebSocket routes takes goes to the mount holding it.
        mounted = websocket_mount(self.app, scope)
        if mounted is not None:
            endpoint, scope = mounted
        else:
            endpoint = self.app._websocket_endpoint(raise_disconnect=True)
        return WebSocketTestSession(self._loop, endpoint, scope, timeout)


class WebSocketDenialResponse(TestResponse, WebSocketDisconnect):
    """A handshake the app refused with an HTTP response (an `HTTPException` before accepting):
    its `status_code`, `headers` and body, as Starlette's test client raises it."""

    def __init__(self, status: int, headers: list[tuple[str, bytes]], body: bytes) -> None:
        TestResponse.__init__(self, status, headers, body)
        WebSocketDisconnect.__init__(self, 1000, f"denied with {status}")


class WebSocketTestSession:
    """One WebSocket connection to the app's WebSocket routes, from a test (as Starlette's
    `client.websocket_connect(...)` gives): `send_text`, `send_bytes`, `send_json`,
    `receive_text`, `receive_bytes`, `receive_json`, `close`. A close from the app raises
    `WebSocketDisconnect` in `receive_*`, a refused handshake raises it on connecting
    (`WebSocketDenialResponse` if refused with an HTTP response), and an exception the handler
    raised is raised again in the test."""

    __test__ = False

    def __init__(self, loop: Any, app: Any, scope: dict[str, Any], timeout: float) -> None:
        self._loop = loop
        self._timeout = timeout
        self._to_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._from_app: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._closed = False

        async def receive() -> dict[str, Any]:
            return await self._to_app.get()

        async def send(message: dict[str, Any]) -> None:
            self._from_app.put(message)

        async def run() -> None:
            try:
                await app(scope, receive, send)
            finally:
                self._from_app.put(None)  # the handler has ended

        self._task = asyncio.run_coroutine_threadsafe(run(), loop)
        self._put({"type": "websocket.connect"})
        answer = self._next()
        if answer["type"] == "websocket.close":
            self._closed = True
            self._task.result(self._timeout)
            raise WebSocketDisconnect(answer.get("code", 1000), answer.get("reason"))
        if answer["type"] == "websocket.http.response.start":
            self._closed = True
            raise self._denial(answer)
        self.accepted_subprotocol = answer.get("subprotocol")
        self.extra_headers = answer.get("headers") or []

    def _denial(self, start: dict[str, Any]) -> WebSocketDenialResponse:
        body = b""
        while True:
            message = self._next()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self._task.result(self._timeout)
        headers = [(name.decode("latin-1"), value) for name, value in start.get("headers", [])]
        return WebSocketDenialResponse(start["status"], headers, body)

    def __enter__(self) -> "WebSocketTestSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
        self._task.result(self._timeout)

    def _put(self, message: dict[str, Any]) -> None:
        self._loop.call_soon_threadsafe(self._to_app.put_nowait, message)

    def _next(self) -> dict[str, Any]:
        try:
            message = self._from_app.get(timeout=self._timeout)
        except queue.Empty:
            raise TimeoutError(f"the app sent nothing within {self._timeout} s") from None
        if message is None:
            self._closed = True
            self._task.result(self._timeout)  # raises what the handler raised
            raise WebSocketDisconnect(1000, "the handler returned")
        return message

    def send_text(self, data: str) -> None:
        self._put({"type": "websocket.receive", "text": data})

    def send_bytes(self, data: bytes) -> None:
        self._put({"type": "websocket.receive", "bytes": data})

    def send_json(self, data: Any) -> None:
        self.send_text(jsonlib.dumps(data))

    def receive(self) -> dict[str, Any]:
        """The app's next message (`websocket.send` or `websocket.close`), as it sent it."""
        return self._next()

    def _receive_data(self) -> dict[str, Any]:
        message = self._next()
        if message["type"] == "websocket.close":
            self._closed = True
            raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
        return message

    def receive_text(self) -> str:
        return self._receive_data()["text"]

    def receive_bytes(self) -> bytes:
        return self._receive_data()["bytes"]

    def receive_json(self) -> Any:
        message = self._receive_data()
        return jsonlib.loads(message.get("text") or message.get("bytes"))

    def close(self, code: int = 1000, reason: str | None = None) -> None:
        """Leave, as a client's close frame: the handler's `receive` raises
        `WebSocketDisconnect`."""
        if not self._closed:
            self._closed = True
            self._put({"type": "websocket.disconnect", "code": code, "reason": reason or ""})
