"""The `vireo serve` command: start-up, interface detection, workers, Unix sockets, SIGTERM
drain, reload, and errors for a bad app."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import APPS

import vireo
from vireo._serve import detect_interface


def test_console_script_and_module_both_serve(serve):
    script = Path(sys.executable).with_name("vireo")
    assert script.exists(), "pyproject.toml installs the vireo command"
    served = serve("", command=[str(script), "serve", "asgi_no_lifespan:app", "--port", "0"])
    assert served.get("/")[0::2] == (200, b"no lifespan")
    assert served.stop() == 0


def test_interface_detection():
    async def asgi(scope, receive, send):
        pass

    class AsgiObject:
        async def __call__(self, scope, receive, send):
            pass

    def wsgi(environ, start_response):
        return []

    assert detect_interface(asgi) == "asgi"
    assert detect_interface(AsgiObject()) == "asgi"
    assert detect_interface(wsgi) == "wsgi"

    async def asgi2(scope):
        pass

    with pytest.raises(TypeError, match="ASGI 2"):
        detect_interface(asgi2)
    with pytest.raises(TypeError, match="callable"):
        detect_interface(3)


def test_explicit_interface(serve):
    served = serve("wsgi_raw:app", "--interface", "wsgi")
    assert served.get("/write")[0::2] == (200, b"written,returned")


@pytest.mark.parametrize("spec, message", [
    ("nomodule_here:app", "No module named"),
    ("asgi_raw:missing", 'attribute "missing" not found'),
    ("asgi_raw", "module:attribute"),
])
def test_bad_app_spec_fails_readably(spec, message):
    proc = subprocess.run([sys.executable, "-m", "vireo", "serve", spec, "--port", "0"],
                          cwd=APPS, capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert message in proc.stderr


def test_sigterm_drains_in_flight_requests(serve):
    served = serve("asgi_raw:app")
    reply = {}
    thread = threading.Thread(target=lambda: reply.setdefault("r", served.get("/slow")))
    thread.start()
    time.sleep(0.2)
    assert served.stop() == 0
    thread.join(10)
    assert reply["r"][0::2] == (200, b'{"slow": true}')


def test_workers_share_the_port(serve):
    served = serve("asgi_raw:app", "--workers", "2")
    pids = set()
    for _ in range(20):
        scope = json.loads(served.get("/scope")[2])
        assert scope["type"] == "http"
    assert served.stop() == 0
    assert served.proc.stdout.read().count("app: lifespan shutdown") == 2


def test_a_vireo_app_is_served_natively(serve):
    served = serve("native_app:app", "--workers", "2", "--limit-request-body", "1000",
                   "--threads", "2")
    for _ in range(4):
        status, _, body = served.get("/users/7?q=x")
        assert (status, json.loads(body)) == (200, {"id": 7, "q": "x", "started": True})
    assert served.get("/users/nope")[0] == 422
    assert json.loads(served.get("/blocking")[2]) == {"main_thread": False}
    status, _, body = served.request("POST", "/size", body=b"x" * 1000)
    assert (status, json.loads(body)) == (200, {"size": 1000})
    assert served.request("POST", "/size", body=b"x" * 1001)[0] == 413
    assert served.stop() == 0
    assert served.proc.stdout.read().count("native: shutdown") == 2


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_vireo_app_whose_startup_fails_stops_the_server(workers):
    proc = subprocess.run(
        [sys.executable, "-m", "vireo", "serve", "native_app:failing", "--port", "0",
         "--workers", workers],
        cwd=APPS, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 3, proc.stderr
    assert "the database is not there" in proc.stderr


@pytest.mark.parametrize("workers, status", [(1, 1), (2, 3)])
def test_app_run_whose_startup_fails_raises_or_exits(workers, status):
    # One worker: the app's own exception reaches app.run's caller. Several: each worker logs
    # it and the script exits 3, without starting workers again.
    script = f"from native_app import failing; failing.run('127.0.0.1', 0, workers={workers})"
    proc = subprocess.run([sys.executable, "-c", script], cwd=APPS, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == status, proc.stderr
    assert "RuntimeError: the database is not there" in proc.stderr
    assert "StartupFailed" not in proc.stderr


@pytest.mark.parametrize("flag", [["--interface", "asgi"],
                                  ["--proxy-headers"], ["--limit-concurrency", "10"],
                                  ["--batch-threads"]])
def test_asgi_only_options_are_refused_for_a_vireo_app(flag):
    proc = subprocess.run(
        [sys.executable, "-m", "vireo", "serve", "native_app:app", "--port", "0", *flag],
        cwd=APPS, capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert f"{flag[0]}: only for ASGI and WSGI applications" in proc.stderr


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie waiting to be reaped)."""
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux's")
def test_workers_stop_when_the_supervisor_is_killed(serve):
    served = serve("asgi_raw:app", "--workers", "2")
    pid = served.proc.pid
    workers = [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    assert len(workers) == 2 and all(_running(w) for w in workers)
    served.proc.kill()  # SIGKILL: the supervisor cannot pass anything on
    served.proc.wait()
    deadline = time.monotonic() + 15
    while any(_running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(w) for w in workers), "a worker outlived its supervisor"


def test_unix_socket(serve, tmp_path):
    path = tmp_path / "app.sock"
    served = serve("asgi_no_lifespan:app", "--uds", str(path), port_args=())
    assert served.address == f"unix:{path}"
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(10)
    sock.connect(str(path))
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    assert data.startswith(b"HTTP/1.1 200 OK")
    assert data.endswith(b"no lifespan")
    assert served.stop() == 0


def test_reload_restarts_on_change(serve, tmp_path):
    app = tmp_path / "reloaded.py"
    app.write_text(
        "async def app(scope, receive, send):\n"
        "    assert scope['type'] == 'http'\n"
        "    await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
        "    await send({'type': 'http.response.body', 'body': b'v1'})\n"
    )
    served = serve("reloaded:app", "--reload", "--app-dir", str(tmp_path), "--port", "18391",
                   port_args=(), cwd=tmp_path)
    assert served.get("/")[2] == b"v1"
    time.sleep(1.1)  # a new mtime, whatever the filesystem's resolution
    app.write_text(app.read_text().replace("v1", "v2"))
    deadline = time.monotonic() + 20
    body = b""
    while time.monotonic() < deadline:
        try:
            body = served.get("/", timeout=2)[2]
        except OSError:
            body = b""
        if body == b"v2":
            break
        time.sleep(0.2)
    assert body == b"v2"
    assert served.stop() == 0


def test_serve_from_python_runs_the_same_server(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(APPS)!r})\n"
        "import vireo, asgi_no_lifespan\n"
        "sys.exit(vireo.serve(asgi_no_lifespan.app, port=0, access_log=False))\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "listening on http://" in line
        host, port = line.rsplit("http://", 1)[1].strip().rsplit(":", 1)
        import http.client
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"no lifespan"
        conn.close()
        proc.terminate()
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert callable(vireo.serve)


def test_graceful_shutdown_timeout_drops_what_is_left(serve):
    served = serve("asgi_raw:app", "--timeout-graceful-shutdown", "0.2")
    reply = {}

    def in_flight():
        try:
            reply["r"] = served.get("/block")  # takes 5 s
        except OSError as e:
            reply["error"] = e

    thread = threading.Thread(target=in_flight)
    thread.start()
    time.sleep(0.3)
    assert served.stop() == 0
    thread.join(10)
    assert "error" in reply, f"the request outlived the shutdown timeout: {reply}"


def test_keep_alive_timeout_closes_idle_connections(serve):
    served = serve("asgi_no_lifespan:app", "--timeout-keep-alive", "0.5")
    sock = socket.create_connection((served.host, served.port), timeout=10)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while not data.endswith(b"no lifespan"):
        data += sock.recv(65536)
    # Idle past the timeout: the server closes (recv gives end of stream), well before
    # `vireo serve`'s default of 5 s would.
    sock.settimeout(3)
    assert sock.recv(65536) == b""
    sock.close()


# Apps that answer and then work on: the spec, the path (given the seconds the work takes),
# what the app prints once that work is done or cancelled, and its shutdown hook's line.
WORK_AFTER_THE_RESPONSE = [
    pytest.param("asgi_raw:app", "/after?{}", "app: work after the response",
                 "app: lifespan shutdown", id="asgi-task"),
    pytest.param("native_app:app", "/later?seconds={}", "native: background task",
                 "native: shutdown", id="vireo-app-background-task"),
]


@pytest.mark.parametrize("spec, path, work, shutdown_hook", WORK_AFTER_THE_RESPONSE)
def test_graceful_shutdown_waits_for_work_after_the_response(serve, spec, path, work,
                                                             shutdown_hook):
    served = serve(spec)
    assert served.get(path.format(0.5))[0] == 200
    assert served.stop() == 0
    out = served.proc.stdout.read()
    assert f"{work} done" in out
    assert out.index(f"{work} done") < out.index(shutdown_hook)


@pytest.mark.parametrize("spec, path, work, shutdown_hook", WORK_AFTER_THE_RESPONSE)
def test_work_after_the_response_is_cancelled_at_the_shutdown_timeout(serve, spec, path, work,
                                                                      shutdown_hook):
    served = serve(spec, "--timeout-graceful-shutdown", "0.3")
    assert served.get(path.format(30))[0] == 200
    assert served.stop() == 0
    assert f"{work} cancelled" in served.proc.stdout.read()
    assert "Cancel 1 running task(s), timeout graceful shutdown exceeded" in served.log()
    assert "Task was destroyed" not in served.log()
