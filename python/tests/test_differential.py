"""The same apps (FastAPI, Starlette with middleware, Flask, and one Django project as ASGI and
as WSGI) under `vireo serve` and under a reference server (uvicorn for ASGI, the standard
library's wsgiref for WSGI), sent the same requests: status, headers and body bytes must
match.

What is compared, and what is not (each exclusion is about the server, not the app):
- `date` and `server` are the server's own fields.
- Framing is the server's choice and hop-by-hop: `transfer-encoding`, `connection` and
  `keep-alive` are not compared, and `content-length` only when both servers sent one (wsgiref
  closes the connection after a streamed body where vireo sends it chunked). The body bytes are
  compared exactly, so a wrong length cannot pass.
- Header names are compared without case, and the order of fields of different names is not
  compared (it carries no meaning); the order of same-name fields (set-cookie) is.
- wsgiref cannot read a chunked request body (it reads CONTENT_LENGTH bytes), so chunked
  uploads are compared only for the ASGI apps; and wsgiref makes up `CONTENT_TYPE:
  text/plain` for a request without one (PEP 3333 leaves it empty or absent), so the WSGI
  requests that reach an app reading the content type carry one.
- Every server process gets the same PYTHONHASHSEED (conftest), since Starlette and Flask
  build `allow` from a set.
"""

from __future__ import annotations

import http.client
import json
import sys
from dataclasses import dataclass, field

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from conftest import APPS

HOST = {"Host": "example.test"}
BIG = bytes(range(256)) * 4096  # 1 MiB


@dataclass
class Req:
    method: str
    path: str
    headers: dict = field(default_factory=dict)
    body: bytes | None = None
    chunked: bool = False

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.headers or ''}{' chunked' if self.chunked else ''}"


def chunks_of(data: bytes, size: int = 65536):
    return lambda: (data[i:i + size] for i in range(0, len(data), size))


def send(served, req: Req):
    conn = http.client.HTTPConnection(served.host, served.port, timeout=15)
    try:
        body = req.body
        if req.chunked:
            body = chunks_of(req.body or b"")()
        conn.request(req.method, req.path, body=body, headers={**HOST, **req.headers},
                     encode_chunked=req.chunked)
        res = conn.getresponse()
        return res.status, res.getheaders(), res.read()
    finally:
        conn.close()


SKIP = {"date", "server", "transfer-encoding", "connection", "keep-alive"}


def comparable(headers, other):
    names = {n.lower() for n, _ in other}
    out = []
    for name, value in headers:
        name = name.lower()
        if name in SKIP:
            continue
        if name == "content-length" and "content-length" not in names:
            continue
        out.append((name, value))
    # Fields of different names may come in any order (RFC 9110 §5.3); the engine writes its
    # framing field first. The order of fields of one name is kept by the stable sort.
    out.sort(key=lambda field: field[0])
    return out


def differences(vireo, reference, corpus):
    found = []
    for req in corpus:
        a, b = send(vireo, req), send(reference, req)
        if a[0] != b[0]:
            found.append(f"{req}: status {a[0]} (vireo) != {b[0]} (reference)")
        ha, hb = comparable(a[1], b[1]), comparable(b[1], a[1])
        if ha != hb:
            found.append(f"{req}: headers\n  vireo:     {ha}\n  reference: {hb}")
        if a[2] != b[2]:
            found.append(f"{req}: body\n  vireo:     {a[2][:300]!r}\n  reference: {b[2][:300]!r}")
    return found


COMMON = [
    Req("GET", "/missing"),
    Req("GET", "/missing?x=%ZZ&y"),
    Req("OPTIONS", "/"),
]

FASTAPI = COMMON + [
    Req("GET", "/items/42"),
    Req("GET", "/items/42?q=a&q=b&q=%C3%A9%20x&q=a%2Bb"),
    Req("GET", "/items/abc"),
    Req("HEAD", "/items/7"),
    Req("POST", "/items", {"Content-Type": "application/json"},
        json.dumps({"name": "pen", "price": 1.5, "tags": ["a", "b"]}).encode()),
    Req("POST", "/items", {"Content-Type": "application/json"}, b'{"name": 3}'),
    Req("POST", "/items", {"Content-Type": "application/json"}, b"{not json"),
    Req("POST", "/items", {"Content-Type": "application/json"},
        json.dumps({"name": "big", "price": 2.0, "tags": ["t"] * 100000}).encode(), chunked=True),
    Req("PUT", "/items/3", {"Content-Type": "application/json"}, b'{"name": "x", "price": 1}'),
    Req("PATCH", "/items/3"),
    Req("DELETE", "/items/3"),
    Req("GET", "/search?tag=a&tag=b&tag=&name=%E2%9C%93+ok"),
    Req("GET", "/private"),
    Req("GET", "/private", {"X-Token": "secret"}),
    Req("POST", "/bg?name=job"),
    Req("GET", "/stream?n=5"),
    Req("GET", "/astream?n=4"),
    Req("GET", "/file"),
    Req("HEAD", "/file"),
    Req("GET", "/file", {"Range": "bytes=10-99"}),
    Req("GET", "/redirect"),
    Req("GET", "/items/1/"),
    Req("GET", "/cookies", {"Cookie": "z=26; a=first; sess=abc%20def"}),
    Req("GET", "/error"),
    Req("GET", "/teapot"),
    Req("POST", "/raw", body=BIG),
    Req("POST", "/raw", body=BIG, chunked=True),
    Req("POST", "/raw", body=b""),
    Req("GET", "/headers", {"X-Multi": "one", "x-multi": "two", "X-Empty": "",
                            "X-Long": "v" * 6000, "X-Odd": "a\tb  c;=,\"q\""}),
    Req("GET", "/docs"),
    Req("GET", "/openapi.json"),
]

STARLETTE = COMMON + [
    Req("GET", "/"),
    Req("GET", "/?who=%F0%9F%90%A6"),
    Req("HEAD", "/"),
    Req("POST", "/echo", {"Content-Type": "text/plain"}, b"hello"),
    Req("PUT", "/echo", {"Content-Type": "application/octet-stream"}, BIG),
    Req("DELETE", "/echo", {"Content-Type": "application/octet-stream"}, BIG, chunked=True),
    Req("GET", "/echo"),
    Req("GET", "/p/a/b%2Fc/d?k=1&k=2&j=%26"),
    Req("GET", "/numbers?n=6"),
    Req("GET", "/fail"),
    Req("GET", "/static/site.css"),
    Req("GET", "/static/data.bin"),
    Req("HEAD", "/static/data.bin"),
    Req("GET", "/static/data.bin", {"Range": "bytes=100-"}),
    Req("GET", "/static/"),
    Req("GET", "/static"),
    Req("GET", "/static/nope.txt"),
    Req("GET", "/static/../diff_starlette.py"),
    Req("GET", "/", {"Origin": "https://example.org"}),
    Req("OPTIONS", "/echo", {"Origin": "https://example.org", "Access-Control-Request-Method": "PUT",
                             "Access-Control-Request-Headers": "x-custom"}),
    Req("OPTIONS", "/echo", {"Origin": "https://evil.example", "Access-Control-Request-Method": "PUT"}),
]

FLASK = COMMON + [
    Req("GET", "/"),
    Req("HEAD", "/"),
    Req("GET", "/json?a=1&a=2&b=%C3%A9&c=%2B+x&empty="),
    Req("POST", "/echo", {"Content-Type": "application/octet-stream"}, BIG),
    Req("PUT", "/echo", {"Content-Type": "text/plain"}, b"put body"),
    Req("PATCH", "/echo", {"Content-Type": "text/plain"}, b""),
    Req("DELETE", "/echo", {"Content-Type": "text/plain"}),
    Req("POST", "/form", {"Content-Type": "application/x-www-form-urlencoded"},
        b"a=1&a=2&b=%C3%A9+x"),
    Req("GET", "/redirect"),
    Req("GET", "/cookies", {"Cookie": "z=26; a=first"}),
    Req("GET", "/error"),
    Req("GET", "/abort"),
    Req("GET", "/stream"),
    Req("GET", "/download"),
    Req("HEAD", "/download"),
    Req("GET", "/static/site.css"),
    Req("GET", "/static/missing.css"),
    Req("GET", "/headers", {"X-Multi": "one", "x-multi": "two", "X-Empty": ""}),
    Req("POST", "/"),
]


DJANGO = COMMON + [
    Req("GET", "/"),
    Req("GET", "/?who=%C3%A9"),
    Req("HEAD", "/"),
    Req("GET", "/query/?a=1&a=2&b=%C3%A9+x&c=%2B"),
    Req("GET", "/query"),
    Req("POST", "/echo/", {"Content-Type": "application/octet-stream"}, BIG),
    Req("PUT", "/echo/", {"Content-Type": "text/plain"}, b"put body"),
    Req("DELETE", "/echo/", {"Content-Type": "text/plain"}),
    Req("GET", "/cookies/", {"Cookie": "z=26; a=first"}),
    Req("GET", "/stream/"),
    Req("GET", "/redirect/"),
    Req("GET", "/fail/"),
    Req("GET", "/meta/", {"X-Multi": "one"}),
    Req("GET", "/", {"Host": "not-allowed.test"}),
]


def reference(serve, kind, spec):
    return serve("", command=[sys.executable, str(APPS / "reference_server.py"), kind, spec])


@pytest.mark.parametrize("spec, kind, corpus", [
    ("diff_fastapi:app", "uvicorn", FASTAPI),
    ("diff_starlette:app", "uvicorn", STARLETTE),
    ("diff_flask:app", "wsgiref", FLASK),
    ("diff_django:asgi_app", "uvicorn", DJANGO),
    ("diff_django:wsgi_app", "wsgiref", DJANGO),
], ids=["fastapi", "starlette", "flask", "django-asgi", "django-wsgi"])
def test_same_responses_as_the_reference_server(serve, spec, kind, corpus):
    vireo = serve(spec, "--no-access-log")
    ref = reference(serve, kind, spec)
    found = differences(vireo, ref, corpus)
    assert not found, "\n".join(found)


@dataclass
class Talk:
    """A WebSocket conversation: open `path`, send each item, note each answer or the close."""
    path: str
    sends: list = field(default_factory=list)
    subprotocols: list | None = None
    headers: dict = field(default_factory=dict)


def talk(served, conv: Talk):
    out = []
    try:
        # No compression offered: permessage-deflate is the server's choice, not the app's.
        with connect(f"ws://{served.host}:{served.port}{conv.path}", open_timeout=10,
                     compression=None, subprotocols=conv.subprotocols,
                     additional_headers=conv.headers) as ws:
            fields = [(n.lower(), v) for n, v in ws.response.headers.raw_items()
                      if n.lower() not in SKIP | {"sec-websocket-accept"}]
            out.append(("open", ws.response.status_code, ws.subprotocol, sorted(fields)))
            for item in conv.sends:
                ws.send(item)
                out.append(("received", ws.recv(timeout=10)))
    except InvalidStatus as refused:
        out.append(("refused", refused.response.status_code, refused.response.body))
    except ConnectionClosed as closed:
        out.append(("closed", closed.rcvd and closed.rcvd.code, closed.rcvd and closed.rcvd.reason))
    return out


STARLETTE_WS = [
    Talk("/ws?room=a%20b", ["hi", b"\x01\x02\x03", "json", "close"], ["x", "echo"]),
    Talk("/ws", ["json"], headers={"Cookie": "k=v"}),
    Talk("/ws", ["é" * 70000, b"\0" * 70000]),
    Talk("/ws-deny"),
    Talk("/ws-fail"),
    Talk("/missing-ws"),
]

FASTAPI_WS = [
    Talk("/ws/lobby?token=secret", ["one", "two"]),
    Talk("/ws/lobby?token=wrong", ["one"]),
    Talk("/ws/lobby"),
]


@pytest.mark.parametrize("spec, conversations", [
    ("diff_starlette:app", STARLETTE_WS),
    ("diff_fastapi:app", FASTAPI_WS),
], ids=["starlette", "fastapi"])
def test_same_websocket_conversations_as_uvicorn(serve, spec, conversations):
    vireo = serve(spec, "--no-access-log")
    ref = reference(serve, "uvicorn", spec)
    found = []
    for conv in conversations:
        a, b = talk(vireo, conv), talk(ref, conv)
        if a != b:
            found.append(f"{conv.path}:\n  vireo:     {a!r:.600}\n  reference: {b!r:.600}")
    assert not found, "\n".join(found)
