"""Shared helpers: a reference-app server process on an ephemeral port, and a small HTTP
client with timeouts."""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "examples" / "reference.py"


def stop(proc: subprocess.Popen, timeout: float) -> int:
    """SIGTERM `proc` and return its exit status; kill it (and fail) if it outlives `timeout`."""
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


class Server:
    def __init__(self, workers: int = 1) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(REFERENCE), "--addr", "127.0.0.1:0", "--workers", str(workers)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + 30
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise RuntimeError(f"the server ended before listening: {err}")
            match = re.search(r"listening on http://([\d.]+):(\d+)", line)
            if match:
                self.host, self.port = match.group(1), int(match.group(2))
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not announce its address")

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
        timeout: float = 10,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            res = conn.getresponse()
            return res.status, {k.lower(): v for k, v in res.getheaders()}, res.read()
        finally:
            conn.close()

    def get(self, path: str, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
        return self.request("GET", path, timeout=timeout)

    def stop(self, timeout: float = 30) -> int:
        return stop(self.proc, timeout)


@pytest.fixture
def server_factory():
    started: list[Server] = []

    def start(workers: int = 1) -> Server:
        server = Server(workers)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


APPS = HERE / "apps"


class Served:
    """`vireo serve SPEC ARGS...` (or any command printing a `listening on` line) in a
    subprocess, on an ephemeral port; its log (stderr) goes to a file read with `log()`."""

    def __init__(self, spec: str, *args: str, command: list[str] | None = None,
                 cwd: Path = APPS, port_args: tuple[str, ...] = ("--port", "0")) -> None:
        import tempfile

        self.errfile = tempfile.TemporaryFile(mode="w+")
        cmd = command or [sys.executable, "-m", "vireo", "serve", spec, *port_args, *args]
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=self.errfile, text=True,
            # One hash seed, so apps that build a header from a set (Allow) build it alike
            # in every server process.
            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"},
        )
        assert self.proc.stdout is not None
        self.address = ""
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the server ended before listening: {self.log()}")
            match = re.search(r"listening on (?:https?://)?(\S+)", line)
            if match:
                self.address = match.group(1)
                break
        host, _, port = self.address.rpartition(":")
        self.host, self.port = host, int(port) if port.isdigit() else 0

    def log(self) -> str:
        self.errfile.seek(0)
        return self.errfile.read()

    def raw_get(self, path: str, extra: str = "") -> bytes:
        """The raw bytes of a response read to its end, on a connection the client then
        closes; `extra` is more header lines, each ending in CRLF."""
        with socket.create_connection((self.host, self.port), timeout=10) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n"
                         .encode())
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        return data

    def connection(self, timeout: float = 10) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method: str, path: str, body=None, headers: dict | None = None,
                timeout: float = 10, chunked: bool = False):
        """(status, [(name, value)...] as received, body)."""
        conn = self.connection(timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {}, encode_chunked=chunked)
            res = conn.getresponse()
            return res.status, res.getheaders(), res.read()
        finally:
            conn.close()

    def get(self, path: str, **kw):
        return self.request("GET", path, **kw)

    def stop(self, timeout: float = 30) -> int:
        return stop(self.proc, timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.errfile.close()


@pytest.fixture
def serve():
    started: list[Served] = []

    def start(spec: str, *args: str, **kw) -> Served:
        served = Served(spec, *args, **kw)
        started.append(served)
        return served

    yield start
    for served in started:
        served.kill()
