"""The peers: every server the benchmark compares, how to start each one, and
which routes it serves. Build steps live in build.py, keyed by `build`."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .util import BENCH, REPO, VENV_PY

# Every route a scenario can load: key -> (path, expected status, expected body).
ROUTES = {
    "plaintext": ("/", 200, "Hello, World!"),
    "json": ("/json", 200, '{"message":"Hello, World!"}'),
    "users": ("/users/42", 200, "User: 42"),
    "favicon": ("/favicon.ico", 204, ""),
    "compute": ("/compute", 200, "332833500"),
    "async": ("/async?ms=0", 200, "waited 0"),
    "async-nowait": ("/async-nowait", 200, "Hello, World!"),
    # A WebSocket echo: checked by the WebSocket client itself, not by a plain GET.
    "ws": ("/ws", 101, ""),
}
# The routes every full peer serves; `async-nowait` is Vireo for Python's alone, `ws` is
# served by the peers that speak WebSocket.
ALL = frozenset(ROUTES) - {"async-nowait", "ws"}
ROOT_ONLY = frozenset({"plaintext"})
WS_ONLY = frozenset({"ws"})

# Protocols a peer can be asked for beyond cleartext HTTP/1.1 (its capability set), each
# needing the server started in one of the modes below:
#   h2c    HTTP/2 with prior knowledge on a cleartext port   (mode "h2c")
#   h2     HTTP/2 over TLS, chosen by ALPN                    (mode "tls")
#   https  HTTP/1.1 over TLS                                  (mode "tls")
# A peer's `modes` gives the extra arguments each mode takes; "plain" is its plain argv.
PROTOCOL_MODE = {None: "plain", "h2c": "h2c", "h2": "tls", "https": "tls"}

# The one self-signed certificate every TLS peer serves (made by the build step `certs`).
CERT_DIR = BENCH / ".certs"
CERT = CERT_DIR / "cert.pem"
KEY = CERT_DIR / "key.pem"

RUST_BIN = BENCH / "peers" / "rust" / "target" / "release"
GO_BIN = BENCH / "peers" / "go" / "bin"
NODE_DIR = BENCH / "peers" / "node"
PY_DIR = BENCH / "peers" / "python"


def vireo_target() -> Path:
    # Vireo is built by its own workspace; honour CARGO_TARGET_DIR as cargo does.
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))


@dataclass
class Peer:
    name: str
    about: str
    build: str                    # build step in build.py that produces it
    argv: list                    # {port} and {tmp} (a fresh temp dir) are filled in at start
    routes: frozenset = ALL
    env: dict = field(default_factory=dict)
    prepare: object = None        # (port, tmp, mode) -> None, run before start
    keepalive: bool = True
    max_idle: int = 20000         # most idle connections to open against it
    idle_note: str = ""           # why max_idle is lower, if it is
    paths: dict = field(default_factory=dict)   # route key -> (path, status, body) where it differs
    quick: bool = True            # run by `--quick` when no --peers are named
    protocols: frozenset = frozenset()   # capability set: h2c, h2, https (see PROTOCOL_MODE)
    modes: dict = field(default_factory=dict)   # mode -> arguments added to argv in that mode

    def route(self, key: str) -> tuple:
        """(path, expected status, expected body) of a route on this peer."""
        return self.paths.get(key) or ROUTES[key]

    def command(self, port: int, tmp: Path, mode: str = "plain") -> list:
        """The argv that starts it in `mode` ("plain", "h2c" or "tls"); {port}, {tmp},
        {cert} and {key} are filled in."""
        if self.prepare:
            self.prepare(port, tmp, mode)
        argv = self.argv + self.modes.get(mode, [])
        return [str(a).format(port=port, tmp=tmp, cert=CERT, key=KEY) for a in argv]


# nginx 1.22 (Debian bookworm) turns HTTP/2 on per `listen`; without `ssl` that port speaks
# h2c with prior knowledge only.
_NGINX_LISTEN = {"plain": "", "h2c": " http2", "tls": " ssl http2"}


def _nginx_conf(port: int, tmp: Path, mode: str = "plain") -> None:
    # nginx takes no port on its command line, so write its config into the
    # server's temporary directory, every writable path inside that directory.
    conf = (BENCH / "peers" / "nginx" / "nginx.conf").read_text()
    tls = (f"ssl_certificate {CERT};\n        ssl_certificate_key {KEY};" if mode == "tls"
           else "# cleartext")
    (tmp / "nginx.conf").write_text(
        conf.replace("@PREFIX@", str(tmp)).replace("@PORT@", str(port))
        .replace("@LISTEN@", _NGINX_LISTEN[mode]).replace("@TLS@", tls))


# Where the build step keeps Vireo's binaries, one per package and example.
VIREO_BIN = BENCH / ".bin"


def _vireo(package: str, example: str) -> list:
    return [VIREO_BIN / f"{package}-{example}", "--addr", "127.0.0.1:{port}", "--workers", "1"]


ONE_CORE_GO = {"GOMAXPROCS": "1"}
VENV_BIN = VENV_PY.parent


def _granian(interface: str, target: str, ws: bool = False) -> list:
    # One worker process with one runtime thread, uvloop as uvicorn has it, HTTP/1 only,
    # WebSockets only where the app serves them.
    # Granian serves at most `--backpressure` connections at once (default 1,024) and leaves
    # the rest unanswered: lifted so the idle scenarios can open theirs; no load scenario
    # comes near it.
    # A WSGI app runs on as many Python threads as `vireo serve` gives it (its `--threads`
    # default): left unset, Granian derives them from `--backpressure`, and thousands of threads
    # stall it at 400 connections.
    threads = ["--blocking-threads", "8"] if interface == "wsgi" else []
    return [VENV_BIN / "granian", "--interface", interface, "--host", "127.0.0.1",
            "--port", "{port}", "--workers", "1", "--runtime-threads", "1", "--runtime-mode", "st",
            "--loop", "uvloop", "--http", "1", "--ws" if ws else "--no-ws",
            "--backpressure", "32768", *threads,
            "--log-level", "warning", "--working-dir", PY_DIR, target]


def _vireo_serve(target: str) -> list:
    # `vireo serve`, one worker process, no access log (as the other servers here run).
    return [VENV_BIN / "vireo", "serve", target, "--host", "127.0.0.1", "--port", "{port}",
            "--workers", "1", "--app-dir", PY_DIR, "--no-access-log", "--log-level", "warning"]


def _uvicorn(target: str) -> list:
    # uvicorn picks uvloop and httptools up from the venv, as in a production install.
    return [VENV_BIN / "uvicorn", target, "--host", "127.0.0.1", "--port", "{port}",
            "--workers", "1", "--app-dir", PY_DIR, "--no-access-log", "--log-level", "warning"]


# The Python group: Vireo for Python and the Python servers it is set against.
PYTHON_GROUP = ["vireo-python", "fastapi", "fastapi-async", "granian-rsgi", "granian-asgi", "robyn",
                "vireo-serve-asgi", "uvicorn-asgi", "granian-asgi-hello", "vireo-serve-fastapi",
                "vireo-serve-flask", "granian-wsgi", "gunicorn-flask"]

# The arguments that make a Rust or Go peer serve TLS with the bench certificate.
TLS_ARGS = ["--tls", "{cert}", "{key}"]
ALL_PROTOCOLS = frozenset({"h2c", "h2", "https"})

PEERS = [
    Peer("vireo", "Vireo's reference app (crates/vireo/examples/reference.rs), 1 worker, "
         "without its metrics recording (`--no-metrics`), as no peer records metrics",
         "vireo", _vireo("vireo", "reference") + ["--no-metrics"],
         routes=ALL | WS_ONLY, protocols=ALL_PROTOCOLS,
         modes={"tls": ["--tls-cert", "{cert}", "--tls-key", "{key}"]}),
    Peer("vireo-http", "Vireo's engine alone (crates/vireo-http/examples/engine_hello.rs), 1 worker",
         "vireo-http", _vireo("vireo-http", "engine_hello"), routes=ROOT_ONLY,
         protocols=frozenset({"h2c"})),
    Peer("floor-c", "canned-response epoll loop in C, no parsing: the kernel-cost floor",
         "c", [BENCH / "peers" / "c" / "bin" / "floor", "{port}"], routes=ROOT_ONLY),
    Peer("nginx", "nginx (Debian package), 1 worker process, `return 200`",
         "apt", ["nginx", "-p", "{tmp}", "-e", "{tmp}/error.log", "-c", "{tmp}/nginx.conf",
                 "-g", "daemon off;"], routes=ROOT_ONLY | {"json"}, prepare=_nginx_conf,
         protocols=ALL_PROTOCOLS),
    Peer("actix-web", "actix-web 4, 1 worker",
         "rust", [RUST_BIN / "actix-web", "{port}"]),
    Peer("axum", "axum 0.8 on a current_thread tokio runtime, TCP_NODELAY; HTTPS with tokio-rustls",
         "rust", [RUST_BIN / "axum", "{port}"],
         protocols=frozenset({"https"}), modes={"tls": TLS_ARGS}),
    Peer("hyper", "hyper 1 + hyper-util on a current_thread tokio runtime, TCP_NODELAY; "
         "HTTP/2 by hyper-util's auto builder, TLS with tokio-rustls",
         "rust", [RUST_BIN / "hyper", "{port}"],
         protocols=ALL_PROTOCOLS, modes={"h2c": ["--h2c"], "tls": TLS_ARGS}),
    Peer("may_minihttp", "may_minihttp, 1 may worker",
         "rust", [RUST_BIN / "may_minihttp", "{port}"]),
    Peer("rust-book", "the Rust Book ch. 20 server: 4-thread pool, Connection: close",
         "rust", [RUST_BIN / "rust-book", "{port}"], routes=ROOT_ONLY, keepalive=False),
    Peer("go-nethttp", "Go net/http with ServeMux, GOMAXPROCS=1; h2c by `http.Protocols`, "
         "TLS by ListenAndServeTLS",
         "go", [GO_BIN / "nethttp", "{port}"], env=ONE_CORE_GO,
         protocols=ALL_PROTOCOLS, modes={"h2c": ["--h2c"], "tls": TLS_ARGS}),
    Peer("go-fasthttp", "Go fasthttp v1.74.0, GOMAXPROCS=1",
         "go", [GO_BIN / "fasthttp", "{port}"], env=ONE_CORE_GO),
    Peer("ws-tungstenite", "tokio-tungstenite WebSocket echo on a current_thread tokio runtime",
         "rust", [RUST_BIN / "ws-tungstenite", "{port}"], routes=WS_ONLY),
    Peer("go-ws", "Go gorilla/websocket echo on net/http, GOMAXPROCS=1",
         "go", [GO_BIN / "ws", "{port}"], env=ONE_CORE_GO, routes=WS_ONLY),
    Peer("node-ws", "Node `ws` WebSocket echo",
         "node", ["node", NODE_DIR / "ws.js", "{port}"], routes=WS_ONLY),
    Peer("node-http", "Node node:http, hand-written routing",
         "node", ["node", NODE_DIR / "node-http.js", "{port}"]),
    Peer("express", "Express 5 on Node",
         "node", ["node", NODE_DIR / "express.js", "{port}"]),
    Peer("polka", "polka on Node",
         "node", ["node", NODE_DIR / "polka.js", "{port}"]),
    Peer("python-http", "Python http.server ThreadingHTTPServer (thread per connection)",
         "venv", [VENV_PY, PY_DIR / "http_server.py", "{port}"],
         routes=ALL - {"async"}, max_idle=5000,
         idle_note="one thread per connection; 20,000 threads would crowd the machine's pid_max"),
    Peer("vireo-python", "Vireo for Python's reference app (python/examples/reference.py), 1 worker",
         "vireo-python", [VENV_PY, REPO / "python" / "examples" / "reference.py",
                          "--addr", "127.0.0.1:{port}", "--workers", "1"],
         routes=frozenset({"plaintext", "json", "users", "compute", "async", "async-nowait"}),
         # Its /async awaits asyncio.sleep(0) and takes no ?ms=.
         paths={"async": ("/async", 200, "Hello, World!")}),
    Peer("fastapi", "FastAPI on uvicorn (uvloop + httptools), `def` handlers, 1 process",
         "venv", [VENV_PY, PY_DIR / "fastapi_app.py", "{port}"]),
    Peer("fastapi-async", "FastAPI on uvicorn (uvloop + httptools), `async def` handlers, 1 process",
         "venv", [VENV_PY, PY_DIR / "fastapi_app.py", "{port}"], env={"BENCH_FASTAPI_ASYNC": "1"},
         quick=False),
    Peer("granian-rsgi", "Granian, RSGI interface, a raw hello app (no framework), 1 worker",
         "venv", _granian("rsgi", "granian_rsgi:app"), routes=ROOT_ONLY, quick=False),
    Peer("granian-asgi", "Granian, ASGI interface, the fastapi peer's app (`def` handlers), 1 worker",
         "venv", _granian("asgi", "fastapi_app:app"), quick=False),
    # Existing ASGI/WSGI apps under `vireo serve` and the servers they usually run on.
    Peer("vireo-serve-asgi", "vireo serve, a raw ASGI hello app (no framework) with a WebSocket echo, 1 worker",
         "vireo-python", _vireo_serve("asgi_hello:app"), routes=ROOT_ONLY | WS_ONLY, quick=False),
    Peer("uvicorn-asgi", "uvicorn (uvloop + httptools, websockets), the raw ASGI hello app, 1 process",
         "venv", _uvicorn("asgi_hello:app"), routes=ROOT_ONLY | WS_ONLY, quick=False),
    Peer("granian-asgi-hello", "Granian, ASGI interface, the raw ASGI hello app, 1 worker",
         "venv", _granian("asgi", "asgi_hello:app", ws=True),
         routes=ROOT_ONLY | WS_ONLY, quick=False),
    Peer("vireo-serve-fastapi", "vireo serve, the fastapi peer's app (`def` handlers), 1 worker",
         "vireo-python", _vireo_serve("fastapi_app:app"), quick=False),
    Peer("vireo-serve-flask", "vireo serve, a Flask hello app (WSGI), 1 worker",
         "vireo-python", _vireo_serve("flask_hello:app"), routes=ROOT_ONLY, quick=False),
    Peer("granian-wsgi", "Granian, WSGI interface, the Flask hello app, 1 worker",
         "venv", _granian("wsgi", "flask_hello:app"), routes=ROOT_ONLY, quick=False),
    Peer("gunicorn-flask", "gunicorn (sync worker), the Flask hello app, 1 process",
         "venv", [VENV_BIN / "gunicorn", "--bind", "127.0.0.1:{port}", "--workers", "1",
                  "--chdir", PY_DIR, "--log-level", "warning", "flask_hello:app"],
         # The sync worker closes every connection.
         routes=ROOT_ONLY, quick=False, keepalive=False),
    Peer("robyn", "Robyn, 1 process, 1 worker",
         "venv", [VENV_PY, PY_DIR / "robyn_app.py", "{port}", "--processes", "1", "--workers", "1",
                  "--disable-openapi", "--log-level", "WARNING"], quick=False),
]

BY_NAME = {p.name: p for p in PEERS}
