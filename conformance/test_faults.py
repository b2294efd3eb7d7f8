"""Faults a server meets in the wild: clients that reset mid-request or mid-response, slow
readers, clients that never read, half-closed sockets, and running out of file descriptors.
After every fault the server must still answer `GET /` (the `healthy` fixture checks it)."""

from __future__ import annotations

import os
import resource
import select
import time

import pytest

import rawhttp
from refserver import RefServer

MIB = 1024 * 1024
RSS_GROWTH_LIMIT_KIB = 16 * 1024


def _get_ok(addr, timeout: float = 2.0) -> float:
    """GET / on a fresh connection; returns how long the answer took."""
    start = time.monotonic()
    resp = rawhttp.get(addr, "/", timeout=timeout)
    assert (resp.status, resp.body) == (200, b"Hello, World!")
    return time.monotonic() - start


# ------------------------------------------------------------------------------ resets


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(b"GET / HTTP/1.1\r\nHo", id="inside-head"),
        pytest.param(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 100_000,
                     id="inside-content-length-body"),
        pytest.param(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n4000\r\n" + b"y" * 9000,
                     id="inside-chunk"),
        pytest.param(b"GET /sleep?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n", id="while-blocking-handler-runs"),
        pytest.param(b"GET /async?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n", id="while-async-handler-runs"),
    ],
)
def test_reset_mid_request(healthy, sent):
    conn = rawhttp.connect(healthy.addr)
    conn.send(sent)
    time.sleep(0.05)
    conn.abort()
    time.sleep(0.4)  # let a running handler finish and try to answer a dead socket


@pytest.mark.parametrize(
    "request_bytes",
    [
        pytest.param(b"GET /stream?chunks=100000 HTTP/1.1\r\nHost: t\r\n\r\n", id="streamed"),
        pytest.param(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n" + os.urandom(2_000_000),
                     id="large-echo"),
        pytest.param(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n" * 2000, id="pipelined-answers"),
    ],
)
def test_reset_mid_response(healthy, request_bytes):
    conn = rawhttp.connect(healthy.addr, rcvbuf=8192)
    conn.sock.setblocking(True)
    conn.send(request_bytes)
    got = 0
    deadline = time.monotonic() + 5
    while got < 20_000 and time.monotonic() < deadline:
        data = conn.sock.recv(4096)
        assert data, "the server closed before the reset"
        got += len(data)
    conn.abort()
    time.sleep(0.2)


def test_many_resets_at_random_points(healthy):
    """200 connections, each reset after a random prefix of a random request."""
    import random

    rng = random.Random(7)
    requests = [
        b"GET /users/abc HTTP/1.1\r\nHost: t\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 50000\r\n\r\n" + b"z" * 50_000,
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        b"GET /stream?chunks=5000 HTTP/1.1\r\nHost: t\r\n\r\n",
        b"GET /sleep?ms=20 HTTP/1.1\r\nHost: t\r\n\r\n",
    ]
    for _ in range(200):
        req = rng.choice(requests)
        conn = rawhttp.connect(healthy.addr)
        conn.send(req[: rng.randint(1, len(req))])
        if rng.random() < 0.5:
            time.sleep(0.002)
        conn.abort()
    time.sleep(0.2)
    assert _get_ok(healthy.addr) < 1.0


# ------------------------------------------------------------------------- slow readers


def test_slow_reader_of_a_large_stream_keeps_memory_bounded(healthy):
    """Three clients read `/stream?chunks=100000` at about 1 KiB/s for 5 s: the server must not
    buffer what they have not read (RSS grows < 16 MiB) and must keep serving others."""
    _get_ok(healthy.addr)
    before = healthy.rss_kib()
    readers = []
    for _ in range(3):
        conn = rawhttp.connect(healthy.addr, rcvbuf=4096)
        conn.send(b"GET /stream?chunks=100000 HTTP/1.1\r\nHost: t\r\n\r\n")
        readers.append(conn)
    peak = before
    received = [0] * len(readers)
    try:
        start = time.monotonic()
        while time.monotonic() - start < 5.0:
            for i, conn in enumerate(readers):
                conn.sock.settimeout(2)
                data = conn.sock.recv(256)  # 4 x 256 B per second per reader: ~1 KiB/s
                assert data, "the server closed a slow reader's connection"
                received[i] += len(data)
            time.sleep(0.25)
            peak = max(peak, healthy.rss_kib())
            assert _get_ok(healthy.addr) < 1.0, "the server stalled while slow readers were connected"
    finally:
        for conn in readers:
            conn.abort()
    assert all(n > 0 for n in received)
    growth = peak - before
    assert growth < RSS_GROWTH_LIMIT_KIB, f"RSS grew by {growth} KiB with slow readers ({before} -> {peak})"


def test_client_that_never_reads_pipelined_answers_keeps_memory_bounded(healthy):
    """A client pipelines requests for 3 s and never reads an answer: the server must stop
    parsing when its output is backed up, not buffer answers without bound."""
    _get_ok(healthy.addr)
    before = healthy.rss_kib()
    conn = rawhttp.connect(healthy.addr, rcvbuf=4096)
    conn.sock.setblocking(False)
    chunk = b"GET /users/never-read HTTP/1.1\r\nHost: t\r\n\r\n" * 1000
    sent = 0
    peak = before
    start = time.monotonic()
    try:
        while time.monotonic() - start < 3.0 and sent < 200 * MIB:
            _, writable, _ = select.select([], [conn.sock], [], 0.1)
            if writable:
                try:
                    sent += conn.sock.send(chunk)
                except BlockingIOError:
                    pass
            peak = max(peak, healthy.rss_kib())
        assert _get_ok(healthy.addr) < 1.0
    finally:
        conn.abort()
    growth = peak - before
    assert growth < RSS_GROWTH_LIMIT_KIB, f"RSS grew by {growth} KiB ({sent} bytes of requests sent)"


# ---------------------------------------------------------------------- half-closed sockets


@pytest.mark.parametrize(
    "request_bytes, expected",
    [
        pytest.param(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n", [b"Hello, World!"], id="get"),
        pytest.param(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", [b"hello"], id="echo"),
        pytest.param(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                     [b"hello"], id="echo-chunked"),
        pytest.param(b"GET /sleep?ms=200 HTTP/1.1\r\nHost: t\r\n\r\n", [b"slept 200"], id="blocking"),
        pytest.param(b"GET /async?ms=200 HTTP/1.1\r\nHost: t\r\n\r\n", [b"waited 200"], id="async"),
        pytest.param(b"GET /stream?chunks=3000 HTTP/1.1\r\nHost: t\r\n\r\n",
                     ["".join(f"chunk {k}\n" for k in range(3000)).encode()], id="stream"),
        pytest.param(b"GET /users/1 HTTP/1.1\r\nHost: t\r\n\r\n" b"GET /users/2 HTTP/1.1\r\nHost: t\r\n\r\n"
                     b"GET /sleep?ms=50 HTTP/1.1\r\nHost: t\r\n\r\n",
                     [b"User: 1", b"User: 2", b"slept 50"], id="pipelined"),
        pytest.param(b"GET / HTTP/1.0\r\n\r\n", [b"Hello, World!"], id="http10"),
    ],
)
def test_half_closed_client_still_gets_its_answers(healthy, request_bytes, expected):
    """RFC 9112 §9.6: a client may half-close after its request; the answers must still come,
    then the server closes."""
    conn = rawhttp.connect(healthy.addr)
    try:
        conn.send(request_bytes)
        conn.shutdown_write()
        for body in expected:
            resp = conn.read_response(timeout=5)
            assert (resp.status, resp.body) == (200, body)
        assert conn.wait_closed(timeout=3) == b""
    finally:
        conn.close()


# -------------------------------------------------------------------------- fd exhaustion

FD_LIMIT = 64
EXTRA_CONNECTIONS = 100


def _limit_fds():
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def _answered(conns: list[rawhttp.Conn], wait: float) -> set[int]:
    """Indexes of the connections whose `GET /` got its answer within `wait` seconds. A
    connection closed without an answer fails the test."""
    done: set[int] = set()
    deadline = time.monotonic() + wait
    while len(done) < len(conns) and time.monotonic() < deadline:
        pending = {conns[i].sock: i for i in range(len(conns)) if i not in done}
        ready, _, _ = select.select(list(pending), [], [], max(0.0, deadline - time.monotonic()))
        for sock in ready:
            i = pending[sock]
            try:
                resp = conns[i].read_response(timeout=2)
            except rawhttp.NoResponse:
                raise AssertionError("a waiting client's connection was closed without an answer") from None
            assert (resp.status, resp.body) == (200, b"Hello, World!")
            done.add(i)
    return done


def _serve_all(conns: list[rawhttp.Conn], timeout: float) -> int:
    """Wait for each connection's answer, closing each as it comes (freeing the server's
    descriptor for the next). Returns how many were never answered."""
    left = list(conns)
    deadline = time.monotonic() + timeout
    while left and time.monotonic() < deadline:
        done = _answered(left, wait=min(1.0, max(0.0, deadline - time.monotonic())))
        for i in done:
            left[i].close()
        left = [c for i, c in enumerate(left) if i not in done]
    return len(left)


def _flood(server: RefServer) -> list[rawhttp.Conn]:
    conns = []
    for _ in range(EXTRA_CONNECTIONS):
        try:
            conn = rawhttp.connect(server.addr)
        except OSError as e:
            time.sleep(0.1)
            raise AssertionError(
                f"connect failed ({e}); server status {server.proc.poll()}; stderr:\n{server.stderr_tail()}"
            ) from None
        conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        conns.append(conn)
    return conns


def test_fd_exhaustion_pauses_accepting_without_spinning_and_recovers():
    """With RLIMIT_NOFILE at 64, 100 clients connect at once to a server that is up and has
    served a request. It serves the ones it has descriptors for, keeps serving them, does not
    busy-loop on accept errors (its CPU time over 2 s stays small), and serves the others once
    descriptors are freed."""
    server = RefServer(preexec_fn=_limit_fds)
    conns: list[rawhttp.Conn] = []
    try:
        # Fully started first: the flood-at-startup case is the next test.
        for _ in range(3):
            _get_ok(server.addr)
        time.sleep(0.5)
        conns = _flood(server)
        served = _answered(conns, wait=2.0)
        waiting = [conns[i] for i in range(len(conns)) if i not in served]
        assert served, "no connection was served"
        assert waiting, f"all {len(conns)} connections were served: the fd limit was not reached"
        assert server.fd_count() <= FD_LIMIT

        # The connections it has keep working.
        for i in served:
            conns[i].send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            resp = conns[i].read_response(timeout=2)
            assert (resp.status, resp.body) == (200, b"Hello, World!")

        # No busy loop while the backlog waits: CPU time over 2 s stays small.
        cpu_before = server.cpu_seconds()
        time.sleep(2.0)
        cpu = server.cpu_seconds() - cpu_before
        assert cpu < 0.2, f"the server used {cpu:.2f} s of CPU in 2 s while out of descriptors"

        # Free the descriptors: every waiting client is served, and new ones too.
        for i in served:
            conns[i].close()
        never = _serve_all(waiting, timeout=15)
        assert never == 0, f"{never} waiting clients were never served"
        assert _get_ok(server.addr) < 1.0
        assert server.alive()
    finally:
        for conn in conns:
            conn.close()
        status = server.stop()
    assert status == 0, f"exit status {status} after SIGTERM; stderr:\n{server.stderr_tail()}"


@pytest.mark.parametrize("attempt", range(5))
def test_fd_flood_right_after_listening(attempt):
    """The same flood, sent as soon as the server prints `listening on` (its documented sign
    that it accepts): it must not die, must serve every client as descriptors free up, and
    must still shut down with status 0."""
    server = RefServer(preexec_fn=_limit_fds)
    conns: list[rawhttp.Conn] = []
    try:
        conns = _flood(server)
        try:
            never = _serve_all(conns, timeout=15)
        finally:
            time.sleep(0.1)
            assert server.alive(), (
                f"the server died (status {server.proc.poll()}); stderr:\n{server.stderr_tail()}"
            )
        assert never == 0, f"{never} clients were never served"
        assert _get_ok(server.addr) < 1.0
    finally:
        for conn in conns:
            conn.close()
        status = server.stop()
    assert status == 0, f"exit status {status} after SIGTERM; stderr:\n{server.stderr_tail()}"
