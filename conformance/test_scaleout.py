"""Scale-out (docs/DEPLOYMENT.md): two reference instances behind nginx under load; one is
restarted gracefully, then the other; no request fails. Each instance has a drain delay, and
its /readyz turns to 503 as soon as SIGTERM arrives, while it still serves, before it drains."""

from __future__ import annotations

import http.client
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from refserver import RefServer

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CLIENTS = 8
DRAIN_DELAY_MS = 1500
NGINX_CONF = """
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream vireo {{
        server 127.0.0.1:{a} max_fails=0;
        server 127.0.0.1:{b} max_fails=0;
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://vireo;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_next_upstream error timeout http_502 http_503;
            proxy_next_upstream_tries 2;
        }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


class Load:
    """Keep-alive clients sending `GET /users/<n>` through nginx, checking every answer."""

    def __init__(self, port: int):
        self.port = port
        self.stop = threading.Event()
        self.sent = 0
        self.failures: list[str] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.client, args=(i,)) for i in range(CLIENTS)]

    def client(self, index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        n = 0
        while not self.stop.is_set():
            n += 1
            user = f"{index}-{n}"
            try:
                conn.request("GET", f"/users/{user}")
                resp = conn.getresponse()
                body = resp.read()
                ok = resp.status == 200 and body == f"User: {user}".encode()
                problem = None if ok else f"{resp.status} {body[:80]!r}"
            except (OSError, http.client.HTTPException) as e:
                problem = f"{type(e).__name__}: {e}"
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            with self.lock:
                self.sent += 1
                if problem:
                    self.failures.append(problem)
        conn.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(15)


@pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed")
def get_status(port: int, path: str) -> int | None:
    """The status of one GET straight to an instance; None if it cannot be reached."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return status
    except OSError:
        return None


def start(port: int) -> RefServer:
    return RefServer(workers=1, port=port, extra_args=["--drain-delay-ms", str(DRAIN_DELAY_MS)])


def test_rolling_graceful_restart_behind_nginx_loses_nothing():
    ports = {"a": free_port(), "b": free_port()}
    instances = {name: start(port) for name, port in ports.items()}
    tmp = tempfile.TemporaryDirectory()
    proxy_port = free_port()
    conf = Path(tmp.name) / "nginx.conf"
    conf.write_text(NGINX_CONF.format(tmp=tmp.name, port=proxy_port, **ports))
    nginx = subprocess.Popen([NGINX, "-p", tmp.name, "-c", str(conf), "-e", f"{tmp.name}/error.log",
                              "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(proxy_port)
        with Load(proxy_port) as load:
            time.sleep(1.0)
            for name in ("a", "b"):
                old = instances[name]
                assert get_status(ports[name], "/readyz") == 200
                old.terminate()
                time.sleep(0.2)
                # Readiness has flipped, and the instance still serves: the drain is yet to come.
                assert get_status(ports[name], "/readyz") == 503
                assert get_status(ports[name], "/") == 200
                code = old.wait(35)
                assert code == 0, f"instance {name} did not shut down cleanly ({code})"
                instances[name] = start(ports[name])
                time.sleep(1.0)
        assert load.sent > 1000, f"too little load to mean anything: {load.sent}"
        assert not load.failures, f"{len(load.failures)} of {load.sent} failed: {load.failures[:5]}"
    finally:
        nginx.send_signal(signal.SIGQUIT)
        try:
            nginx.wait(10)
        except subprocess.TimeoutExpired:
            nginx.kill()
        for server in instances.values():
            server.stop()
        tmp.cleanup()
