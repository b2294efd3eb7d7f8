"""Async handlers over a real socket: many suspended at once, and handlers doing socket I/O
on the worker's loop while the worker serves other connections."""

from __future__ import annotations

import http.client
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


def test_a_timer_of_nan_seconds_runs_at_once_and_the_loop_goes_on(server):
    assert get(server, "/sleep-for?seconds=nan") == (200, b"slept nan")
    assert get(server, "/sleep-for?seconds=0.01") == (200, b"slept 0.01")
    assert get(server, "/sleep?ms=10") == (200, b"waited 10")


def test_handler_doing_socket_io_on_the_loop(server):
    assert get(server, f"/fetch?port={server}") == (200, b"200 1048576")
    assert get(server, f"/fetch?port={server}&path=/sleep?ms=50") == (200, b"200 9")


def test_timers_cancel(server):
    assert get(server, "/timeout") == (200, b"timed out")


def wait_for_file(path: Path, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.02)
    return False


def leave_after(port: int, path: str, until: bytes | None = None, delay: float = 0.1) -> None:
    """Send a GET, read until `until` arrives (if given), then close the connection."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    seen = b""
    while until is not None and until not in seen:
        chunk = sock.recv(4096)
        assert chunk, "the connection closed too early"
        seen += chunk
    time.sleep(delay)
    sock.close()


@pytest.mark.parametrize("pause", ["await", "yield", "sync"])
def test_a_client_leaving_an_event_stream_runs_its_finally(server, tmp_path, pause):
    # As under Starlette: the generator is cancelled where it waits, or closed where it
    # yielded (here, a 16 MiB event the client never reads fills the socket buffers). No other
    # request comes to wake the worker's loop.
    marker = tmp_path / "closed"
    leave_after(server, f"/events?pause={pause}&marker={marker}", until=b"data: first")
    assert wait_for_file(marker), "the stream's finally never ran"


def test_a_blocking_routes_stream_is_pulled_off_the_worker(server):
    # Each chunk sleeps 0.4 s: pulled on the worker, the other requests would wait for them.
    slow = {}
    thread = threading.Thread(
        target=lambda: slow.update(reply=get(server, "/blocking-events?pause_ms=400")))
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    for _ in range(3):
        assert get(server, "/sleep?ms=1", timeout=5) == (200, b"waited 1")
    elapsed = time.monotonic() - started
    thread.join(10)
    assert slow["reply"] == (200, b"chunk 0\nchunk 1\nchunk 2\n")
    assert elapsed < 0.3, f"other requests waited {elapsed:.2f}s behind a blocking stream"


def test_a_client_leaving_a_blocking_routes_stream_runs_its_finally(server, tmp_path):
    marker = tmp_path / "closed"
    leave_after(server, f"/blocking-events?marker={marker}", until=b"chunk 2")
    assert wait_for_file(marker), "the stream's finally never ran"
    assert get(server, "/sleep?ms=1") == (200, b"waited 1")


def test_a_handler_sees_its_client_leave(server, tmp_path):
    marker = tmp_path / "left"
    assert get(server, f"/until-disconnected?marker={marker}&ms=100") == (200, b"stayed")
    leave_after(server, f"/until-disconnected?marker={marker}")
    assert wait_for_file(marker), "request.is_disconnected() never turned true"


@pytest.mark.parametrize("fail", [False, True])
def test_a_handler_whose_client_left_still_runs_its_background_task_or_logs(tmp_path, fail):
    proc = subprocess.Popen([sys.executable, str(APP), "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(re.search(r":(\d+)", proc.stdout.readline()).group(1))
    marker = tmp_path / "ran"
    leave_after(port, f"/slow-then-background?marker={marker}&fail={fail}")
    if not fail:
        assert wait_for_file(marker), "the background task never ran"
    time.sleep(0.5)
    proc.terminate()
    assert proc.wait(15) == 0
    log = proc.stderr.read()
    assert ("failed after the client left" in log) == fail, log


def test_a_handler_that_can_never_finish_is_collected_and_its_request_answered(server, tmp_path):
    # Its task, the native coroutine carrying it and the event it waits on hold each other and
    # nothing else holds them: the cycle collector frees them, and the request gets its 500.
    marker = tmp_path / "collected"
    waiting = []
    thread = threading.Thread(
        target=lambda: waiting.append(get(server, f"/wait-forever?marker={marker}")))
    thread.start()
    time.sleep(0.3)
    assert get(server, "/collect") == (200, b"collected")
    assert wait_for_file(marker), "the handler's frame was never collected"
    thread.join(10)
    assert waiting and waiting[0][0] == 500, waiting


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
