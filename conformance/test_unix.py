"""The reference app on a Unix domain socket (`--unix PATH`), as a proxy reaches an upstream."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import tempfile
import time

from refserver import reference_bin


def _request(path: str, raw: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(path)
        sock.sendall(raw)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
        return reply


def test_reference_app_serves_on_a_unix_socket_and_removes_it_on_sigterm():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vireo.sock")
        proc = subprocess.Popen(
            [reference_bin(), "--unix", path, "--workers", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        try:
            out = b""
            deadline = time.monotonic() + 10
            while b"listening on" not in out and time.monotonic() < deadline:
                ready, _, _ = select.select([proc.stdout], [], [], 0.5)
                if ready:
                    out += os.read(proc.stdout.fileno(), 4096)
            assert f"listening on unix:{path}".encode() in out, out

            hello = _request(path, b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            assert hello.startswith(b"HTTP/1.1 200 OK\r\n"), hello
            assert hello.endswith(b"\r\n\r\nHello, World!"), hello

            user = _request(path, b"GET /users/7 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            assert user.endswith(b"User: 7"), user

            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
            assert not os.path.exists(path), "the socket file is removed on shutdown"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
