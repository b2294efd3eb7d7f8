"""The Request object: headers, query, path parameters, body, state, app; and app hooks."""

from __future__ import annotations

import subprocess
import sys

from vireo import App, Request
from vireo.testclient import TestClient

events: list[str] = []
app = App()
app.state.greeting = "hi"


@app.on_event("startup")
async def started():
    events.append("startup")


@app.on_event("shutdown")
def stopped():
    events.append("shutdown")


@app.post("/echo/{name}")
async def echo(name: str, request: Request):
    body = await request.body()
    data = await request.json()
    return {
        "method": request.method,
        "path": request.path,
        "path_params": request.path_params,
        "query": dict(request.query_params.items()),
        "all_x": request.query_params.getlist("x"),
        "content_type": request.headers["content-type"],
        "has_missing": "x-missing" in request.headers,
        "length": len(body),
        "data": data,
        "greeting": request.app.state.greeting,
        "url": str(request.url),
    }


def test_request_fields():
    with TestClient(app) as client:
        res = client.post("/echo/bob?x=1&x=2&y=z", json={"a": 1})
        assert res.status_code == 200
        assert res.json() == {
            "method": "POST",
            "path": "/echo/bob",
            "path_params": {"name": "bob"},
            "query": {"x": "2", "y": "z"},
            "all_x": ["1", "2"],
            "content_type": "application/json",
            "has_missing": False,
            "length": len(b'{"a":1}'),  # compact, as httpx encodes JSON
            "data": {"a": 1},
            "greeting": "hi",
            "url": "http://testserver/echo/bob?x=1&x=2&y=z",
        }


def test_startup_and_shutdown_hooks():
    events.clear()
    with TestClient(app) as client:
        assert events == ["startup"]
        client.post("/echo/x", json={})
    assert events == ["startup", "shutdown"]


def test_a_client_never_closed_leaves_nothing_pending_at_exit():
    script = (
        "from vireo import App\n"
        "from vireo.testclient import TestClient\n"
        "app = App()\n"
        "app.get('/')(lambda: 'hi')\n"
        "client = TestClient(app)\n"
        "assert client.get('/').text == 'hi'\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
