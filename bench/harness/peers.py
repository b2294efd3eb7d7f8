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
}
ALL = frozenset(ROUTES)
ROOT_ONLY = frozenset({"plaintext"})

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
    prepare: object = None        # (port, tmp) -> None, run before start
    keepalive: bool = True
    max_idle: int = 20000         # most idle connections to open against it
    idle_note: str = ""           # why max_idle is lower, if it is

    def command(self, port: int, tmp: Path) -> list:
        if self.prepare:
            self.prepare(port, tmp)
        return [str(a).format(port=port, tmp=tmp) for a in self.argv]


def _nginx_conf(port: int, tmp: Path) -> None:
    # nginx takes no port on its command line, so write its config into the
    # server's temporary directory, every writable path inside that directory.
    conf = (BENCH / "peers" / "nginx" / "nginx.conf").read_text()
    (tmp / "nginx.conf").write_text(conf.replace("@PREFIX@", str(tmp)).replace("@PORT@", str(port)))


# Where the build step keeps Vireo's binaries, one per package and example.
VIREO_BIN = BENCH / ".bin"


def _vireo(package: str, example: str) -> list:
    return [VIREO_BIN / f"{package}-{example}", "--addr", "127.0.0.1:{port}", "--workers", "1"]


ONE_CORE_GO = {"GOMAXPROCS": "1"}

PEERS = [
    Peer("vireo", "Vireo's reference app (crates/vireo/examples/reference.rs), 1 worker",
         "vireo", _vireo("vireo", "reference")),
    Peer("vireo-http", "Vireo's engine alone (crates/vireo-http/examples/engine_hello.rs), 1 worker",
         "vireo-http", _vireo("vireo-http", "engine_hello"), routes=ROOT_ONLY),
    Peer("floor-c", "canned-response epoll loop in C, no parsing: the kernel-cost floor",
         "c", [BENCH / "peers" / "c" / "bin" / "floor", "{port}"], routes=ROOT_ONLY),
    Peer("nginx", "nginx (Debian package), 1 worker process, `return 200`",
         "apt", ["nginx", "-p", "{tmp}", "-e", "{tmp}/error.log", "-c", "{tmp}/nginx.conf",
                 "-g", "daemon off;"], routes=ROOT_ONLY, prepare=_nginx_conf),
    Peer("actix-web", "actix-web 4, 1 worker",
         "rust", [RUST_BIN / "actix-web", "{port}"]),
    Peer("axum", "axum 0.8 on a current_thread tokio runtime, TCP_NODELAY",
         "rust", [RUST_BIN / "axum", "{port}"]),
    Peer("hyper", "hyper 1 + hyper-util on a current_thread tokio runtime, TCP_NODELAY",
         "rust", [RUST_BIN / "hyper", "{port}"]),
    Peer("may_minihttp", "may_minihttp, 1 may worker",
         "rust", [RUST_BIN / "may_minihttp", "{port}"]),
    Peer("rust-book", "the Rust Book ch. 20 server: 4-thread pool, Connection: close",
         "rust", [RUST_BIN / "rust-book", "{port}"], routes=ROOT_ONLY, keepalive=False),
    Peer("go-nethttp", "Go net/http with ServeMux, GOMAXPROCS=1",
         "go", [GO_BIN / "nethttp", "{port}"], env=ONE_CORE_GO),
    Peer("go-fasthttp", "Go fasthttp v1.74.0, GOMAXPROCS=1",
         "go", [GO_BIN / "fasthttp", "{port}"], env=ONE_CORE_GO),
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
    Peer("fastapi", "FastAPI on uvicorn (uvloop + httptools), 1 process",
         "venv", [VENV_PY, PY_DIR / "fastapi_app.py", "{port}"]),
]

BY_NAME = {p.name: p for p in PEERS}
