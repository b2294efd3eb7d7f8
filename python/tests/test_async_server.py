"""Async handlers over a real socket: many suspended at once, and handlers doing socket I/O
on the worker's loop while the worker serves other connections."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent / "apps" / "async_app.py"


@pytest.fixture
def server():
    proc = subprocess.Popen(
        [sys.executable, str(APP), "127.0.0.1:0"], stdout=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline()
    match = re.search(r"listening on http://[\d.]+:(\d+)", line)
    assert match, line
    yield int(match.group(1))
    proc.terminate()
    assert proc.wait(15) == 0


def get(port: int, path: str, timeout: float = 10) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def test_suspended_handlers_overlap(server):
    results = []

    def one():
        results.append(get(server, "/sleep?ms=300"))

    threads = [threading.Thread(target=one) for _ in range(20)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    elapsed = time.monotonic() - started
    assert results == [(200, b"waited 300")] * 20
    assert elapsed < 1.5, f"20 sleeps of 0.3s took {elapsed:.2f}s: they did not overlap"


def test_handler_doing_socket_io_on_the_loop(server):
    assert get(server, f"/fetch?port={server}") == (200, b"200 1048576")
    assert get(server, f"/fetch?port={server}&path=/sleep?ms=50") == (200, b"200 9")


def test_timers_cancel(server):
    assert get(server, "/timeout") == (200, b"timed out")


@pytest.mark.parametrize("pause", ["await", "yield", "sync"])
def test_a_client_leaving_an_event_stream_runs_its_finally(server, pause):
    # As under Starlette: the generator is cancelled where it waits, or closed where it
    # yielded (here, a 16 MiB event the client never reads fills the socket buffers).
    sock = socket.create_connection(("127.0.0.1", server), timeout=10)
    sock.sendall(f"GET /events?pause={pause} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    seen = b""
    while b"data: first" not in seen:
        chunk = sock.recv(4096)
        assert chunk, "the connection closed before the first event"
        seen += chunk
    time.sleep(0.2)
    sock.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        status, body = get(server, "/streams-closed")
        if pause.encode() in body:
            break
        time.sleep(0.02)
    assert json.loads(body) == [pause]


def test_sigterm_waits_for_suspended_handlers():
    proc = subprocess.Popen([sys.executable, str(APP), "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    port = int(re.search(r":(\d+)", proc.stdout.readline().split("http://")[1]).group(1))
    replies = []
    threads = [
        threading.Thread(target=lambda: replies.append(get(port, "/sleep?ms=600")))
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    time.sleep(0.2)
    proc.terminate()
    assert proc.wait(15) == 0
    for t in threads:
        t.join(10)
    assert replies == [(200, b"waited 600")] * 3
