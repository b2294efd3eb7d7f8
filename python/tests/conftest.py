"""Shared helpers: a reference-app server process on an ephemeral port, and a small HTTP
client with timeouts."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "examples" / "reference.py"


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
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


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
