"""`TestClient(app)`: requests in-process, through the same native routing, parameter
conversion, handler calls and rendering as from a socket (without the connection layer, so
the engine's own headers such as `date` and `content-length` are not added).

Requests are served on a thread of the client's own that acts as the app's worker; the app's
startup hooks run when the client starts and shutdown hooks when it closes
(`with TestClient(app) as client:`, or `close()`).
"""

from __future__ import annotations

import json as jsonlib
import urllib.parse
import weakref
from typing import Any, Mapping

from . import _loop, _vireo


class TestResponse:
    def __init__(self, status: int, headers: list[tuple[str, bytes]], body: bytes) -> None:
        self.status_code = status
        self.headers = {name: value.decode("latin-1") for name, value in headers}
        self.raw_headers = headers
        self.content = body

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self) -> Any:
        return jsonlib.loads(self.content)

    def __repr__(self) -> str:
        return f"<TestResponse [{self.status_code}]>"


_BOUNDARY = "vireo-test-boundary-7MA4YWxkTrZu0gW"


def _multipart(data: Mapping[str, Any], files: Mapping[str, Any]) -> tuple[bytes, str]:
    """A `multipart/form-data` body of `data`'s fields and `files`' uploads."""
    out = bytearray()

    def part(name: str, content: bytes, filename: str | None, media_type: str | None) -> None:
        out.extend(f"--{_BOUNDARY}\r\n".encode())
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        out.extend(f"content-disposition: {disposition}\r\n".encode())
        if media_type is not None:
            out.extend(f"content-type: {media_type}\r\n".encode())
        out.extend(b"\r\n" + content + b"\r\n")

    for name, value in data.items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            part(name, str(item).encode(), None, None)
    for name, value in files.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (bytes, str)):
                item = (name, item)
            filename, content, *rest = item
            content = content.encode() if isinstance(content, str) else bytes(content)
            part(name, content, filename, rest[0] if rest else "application/octet-stream")
    out.extend(f"--{_BOUNDARY}--\r\n".encode())
    return bytes(out), f"multipart/form-data; boundary={_BOUNDARY}"


class TestClient:
    __test__ = False  # not a pytest test class

    def __init__(self, app: Any) -> None:
        self.app = app
        self._client: Any = None
        self._loop: Any = None

    def __enter__(self) -> "TestClient":
        self._start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _start(self) -> None:
        if self._client is not None:
            return
        self._loop = _loop.new_loop()
        self._loop.run_until_complete(self.app.startup())
        self._client = _vireo.LocalClient(self.app._build(self._loop))
        self._background = self.app._background
        # A client never closed stops its thread at exit, before the interpreter goes away.
        self._finalizer = weakref.finalize(self, self._client.close)

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
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        content: bytes | str | None = None,
        data: Mapping[str, Any] | None = None,
        files: Mapping[str, Any] | None = None,
    ) -> TestResponse:
        """Send a request. `json` sends a JSON body; `data` form fields (a list value is sent
        once per item); `files` uploads, each `bytes` or `(filename, content[, media_type])`,
        with `data` as the other fields of the `multipart/form-data` body."""
        self._start()
        target = url
        if params:
            query = urllib.parse.urlencode(params, doseq=True)
            target += ("&" if "?" in target else "?") + query
        body = b""
        fields = {"host": "testserver"}
        if json is not None:
            body = jsonlib.dumps(json).encode()
            fields["content-type"] = "application/json"
        elif files is not None:
            body, fields["content-type"] = _multipart(data or {}, files)
        elif data is not None:
            body = urllib.parse.urlencode(data, doseq=True).encode()
            fields["content-type"] = "application/x-www-form-urlencoded"
        elif content is not None:
            body = content.encode() if isinstance(content, str) else bytes(content)
        for name, value in (headers or {}).items():
            fields[name.lower()] = value
        if body:
            fields["content-length"] = str(len(body))
        head = f"{method.upper()} {target} HTTP/1.1\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in fields.items()) + "\r\n"
        status, raw_headers, data = self._client.request(head.encode("latin-1"), body)
        # As Starlette's client does: the response's background tasks have run on return.
        self._background.wait()
        return TestResponse(status, raw_headers, data)

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
