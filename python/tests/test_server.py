"""The reference app over real sockets: every route, blocking handlers not stalling other
connections, graceful shutdown, and worker processes replaced when they die."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path


def test_reference_routes(server_factory):
    server = server_factory()
    assert server.get("/") [0::2] == (200, b"Hello, World!")
    status, headers, body = server.get("/")
    assert headers["content-type"] == "text/plain; charset=utf-8"
    status, headers, body = server.get("/json")
    assert (status, body) == (200, b'{"message":"Hello, World!"}')
    assert headers["content-type"] == "application/json"
    assert server.get("/users/42")[0::2] == (200, b"User: 42")
    status, _, body = server.get("/users/abc")
    assert status == 422
    assert json.loads(body)["detail"][0]["loc"] == ["path", "user_id"]
    assert server.get("/compute")[0::2] == (200, b"332833500")
    assert server.get("/async")[0::2] == (200, b"Hello, World!")
    assert server.get("/async-nowait")[0::2] == (200, b"Hello, World!")
    assert server.get("/sleep?ms=5")[0::2] == (200, b"slept 5")
    status, _, body = server.request(
        "POST", "/items", json.dumps({"name": "pen", "price": 1.5}).encode(),
        {"content-type": "application/json"},
    )
    assert (status, json.loads(body)) == (201, {"name": "pen", "price": 1.5})
    status, _, body = server.request("POST", "/items", b'{"name": 3}', {"content-type": "application/json"})
    assert status == 422
    assert len(json.loads(body)["detail"]) == 2
    status, headers, body = server.get("/stream?chunks=3")
    assert (status, body) == (200, b"chunk 0\nchunk 1\nchunk 2\n")
    assert headers["transfer-encoding"] == "chunked"
    assert server.get("/error")[0] == 500
    assert server.get("/")[0] == 200, "the server goes on after an exception"
    assert server.request("HEAD", "/")[0::2] == (200, b"")
    assert server.get("/missing")[0] == 404
    assert server.stop() == 0


def test_blocking_handler_does_not_stall_other_connections(server_factory):
    server = server_factory(workers=1)
    done = threading.Event()
    slow = {}

    def sleeper():
        slow["reply"] = server.get("/sleep?ms=1500")
        done.set()

    thread = threading.Thread(target=sleeper)
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    for path in ("/", "/async", "/users/1"):
        assert server.get(path, timeout=5)[0] == 200
    elapsed = time.monotonic() - started
    assert elapsed < 0.75, f"other connections waited {elapsed:.2f}s behind a blocking handler"
    assert not done.is_set()
    thread.join(10)
    assert slow["reply"][0::2] == (200, b"slept 1500")
    assert server.stop() == 0


def test_sigterm_drains_in_flight_requests_and_exits_0(server_factory):
    server = server_factory()
    reply = {}

    def in_flight():
        reply["value"] = server.get("/sleep?ms=700")

    thread = threading.Thread(target=in_flight)
    thread.start()
    time.sleep(0.2)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(15) == 0
    thread.join(10)
    assert reply["value"][0::2] == (200, b"slept 700"), "the in-flight request finished"


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(p) for p in text)
    return found


def test_workers_share_the_socket_and_a_killed_worker_is_replaced(server_factory):
    server = server_factory(workers=2)
    workers = _children(server.proc.pid)
    assert len(workers) == 2
    for _ in range(10):
        assert server.get("/")[0] == 200
    victim = sorted(workers)[0]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        now = _children(server.proc.pid)
        if len(now) == 2 and victim not in now:
            break
        time.sleep(0.1)
    now = _children(server.proc.pid)
    assert victim not in now and len(now) == 2, f"workers {workers} became {now}"
    time.sleep(0.3)
    for _ in range(10):
        assert server.get("/")[0] == 200
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(20) == 0
    for pid in now:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_request_bodies_chunked_and_too_large(server_factory):
    server = server_factory()
    import http.client

    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    chunks = iter([b'{"name": "pen", ', b'"price": 2}'])
    conn.request("POST", "/items", body=chunks, headers={"content-type": "application/json"},
                 encode_chunked=True)
    res = conn.getresponse()
    assert (res.status, json.loads(res.read())) == (201, {"name": "pen", "price": 2.0})
    conn.close()
    import socket

    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(b"POST /items HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: 3145728\r\n\r\n")
        assert sock.recv(64).startswith(b"HTTP/1.1 413 ")
    assert server.get("/")[0] == 200
    assert server.stop() == 0


def test_sigint_also_shuts_down_gracefully(server_factory):
    server = server_factory(workers=2)
    assert server.get("/")[0] == 200
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(20) == 0
