"""The `vireo` command: `vireo serve MODULE:ATTR [options]` runs an existing ASGI 3 or WSGI
application, or a Vireo App, on the Vireo engine, with the options uvicorn and Granian users
know."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from ._serve import LOG_LEVELS


_BOOLEANS = {"true": True, "1": True, "yes": True, "y": True, "on": True,
             "false": False, "0": False, "no": False, "n": False, "off": False}


def _boolean(text: str) -> bool:
    """A true/false option value, spelled as uvicorn's command line accepts it."""
    try:
        return _BOOLEANS[text.strip().lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid boolean") from None


def _positive(text: str) -> int:
    """A count that must be at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def _ssl_version(text: str) -> int:
    """An `ssl.PROTOCOL_*` number the server can honour."""
    from .server import _tls_versions

    try:
        _tls_versions(int(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return int(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vireo", description="Vireo: serve Python web apps.")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser(
        "serve", help="serve an ASGI 3 or WSGI application, or a Vireo App",
        description="Serve an ASGI 3 or WSGI application, or a Vireo App (natively, without "
                    "the ASGI and WSGI options), given as MODULE:ATTR.",
    )
    p.add_argument("app", metavar="MODULE:ATTR", help="the application, e.g. main:app")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    p.add_argument("--uds", metavar="PATH", help="bind a Unix domain socket instead")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--threads", "--blocking-threads", dest="threads", type=_positive, default=None,
                   help="threads per worker that WSGI apps and blocking handlers run on "
                        "(default 8; for a Vireo App, the engine's 64)")
    p.add_argument("--batch-threads", action=argparse.BooleanOptionalAction, default=None,
                   help="run the --threads threads under Linux's SCHED_BATCH policy, so that "
                        "waking one does not preempt the worker: fewer context switches, for "
                        "a longer tail latency under saturation (default: on for WSGI apps)")
    p.add_argument("--interface", choices=("auto", "asgi", "wsgi"), default="auto")
    p.add_argument("--lifespan", choices=("auto", "on", "off"), default="auto",
                   help="the ASGI lifespan protocol (default auto)")
    p.add_argument("--factory", action="store_true",
                   help="MODULE:ATTR is a function that returns the application")
    p.add_argument("--app-dir", default=".", help="directory added to sys.path (default .)")
    p.add_argument("--root-path", default="", help="the path the app is mounted under")
    p.add_argument("--proxy-headers", action="store_true",
                   help="take the client address and scheme from X-Forwarded-For/-Proto")
    p.add_argument("--forwarded-allow-ips", default=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
                   help="comma-separated proxy addresses trusted with --proxy-headers, or *")
    p.add_argument("--limit-concurrency", type=int, default=None,
                   help="answer 503 beyond this many requests in flight per worker")
    p.add_argument("--limit-request-body", type=int, default=100 * 1024 * 1024, metavar="BYTES",
                   help="answer 413 to a larger request body (default 100 MiB)")
    p.add_argument("--timeout-keep-alive", type=float, default=5.0,
                   help="seconds an idle keep-alive connection is kept (default 5)")
    p.add_argument("--timeout-graceful-shutdown", type=float, default=None,
                   help="seconds to wait for requests in flight on shutdown (default 30)")
    p.add_argument("--log-level", choices=tuple(LOG_LEVELS), default="info")
    p.add_argument("--access-log", dest="access_log", action="store_true", default=True)
    p.add_argument("--no-access-log", dest="access_log", action="store_false")
    p.add_argument("--ws", choices=("auto", "none"), default="auto",
                   help="WebSockets for ASGI apps; none serves an upgrade as plain HTTP (default auto)")
    p.add_argument("--ws-max-size", type=int, default=16 * 1024 * 1024, metavar="BYTES",
                   help="the largest WebSocket message (default 16 MiB)")
    p.add_argument("--ws-ping-interval", type=float, default=20.0, metavar="SECONDS",
                   help="ping a WebSocket client silent this long (default 20)")
    p.add_argument("--ws-ping-timeout", type=float, default=20.0, metavar="SECONDS",
                   help="close a WebSocket whose client does not answer the ping within this (default 20)")
    p.add_argument("--ws-per-message-deflate", type=_boolean, default=True, metavar="BOOLEAN",
                   help="accept WebSocket per-message compression when a client offers it "
                        "(default true)")
    p.add_argument("--ssl-certfile", "--ssl-certificate", dest="ssl_certfile", metavar="PATH",
                   help="serve HTTPS (and HTTP/2 by ALPN) with this PEM certificate chain")
    p.add_argument("--ssl-keyfile", metavar="PATH", help="the PEM private key for --ssl-certfile")
    p.add_argument("--ssl-keyfile-password", metavar="TEXT",
                   help="the password of an encrypted (PKCS#8) --ssl-keyfile")
    p.add_argument("--ssl-ca-certs", metavar="PATH",
                   help="PEM certificate authorities that sign the client certificates accepted")
    p.add_argument("--ssl-cert-reqs", type=int, choices=(0, 1, 2), default=0, metavar="{0,1,2}",
                   help="client certificates: 0 not asked for, 1 optional, 2 required, "
                        "checked against --ssl-ca-certs (default 0)")
    p.add_argument("--ssl-version", type=_ssl_version, default=17, metavar="INT",
                   help="an ssl.PROTOCOL_* number: 17 (TLS_SERVER) TLS 1.2 and 1.3, "
                        "5 (TLSv1_2) TLS 1.2 only (default 17)")
    p.add_argument("--ssl-ciphers", default="TLSv1", metavar="NAMES",
                   help="cipher suites offered, colon-separated IANA or OpenSSL names "
                        "(default TLSv1: every suite the server has)")
    p.add_argument("--ssl-crl", action="append", default=None, metavar="PATH",
                   help="PEM certificate revocation list for client certificates (repeatable)")
    p.add_argument("--reload", action="store_true",
                   help="development: restart when a .py file under --reload-dir changes")
    p.add_argument("--reload-dir", action="append", default=None,
                   help="directory to watch with --reload (default: --app-dir)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    app_dir = str(Path(args.app_dir).resolve())
    if app_dir not in sys.path:
        sys.path.insert(0, app_dir)
    if args.reload:
        return _reload(args, list(sys.argv[1:] if argv is None else argv))
    from ._serve import OptionError, serve

    try:
        return _serve(serve, args)
    except OptionError as error:
        print(f"vireo serve: error: {error}", file=sys.stderr)
        return 2


def _serve(serve: Any, args: Any) -> int:
    return serve(
        args.app,
        host=args.host,
        port=args.port,
        uds=args.uds,
        workers=args.workers,
        threads=args.threads,
        batch_threads=args.batch_threads,
        interface=args.interface,
        lifespan=args.lifespan,
        factory=args.factory,
        root_path=args.root_path,
        proxy_headers=args.proxy_headers,
        forwarded_allow_ips=[ip for ip in args.forwarded_allow_ips.split(",") if ip.strip()],
        limit_concurrency=args.limit_concurrency,
        limit_request_body=args.limit_request_body,
        timeout_keep_alive=args.timeout_keep_alive,
        timeout_graceful_shutdown=args.timeout_graceful_shutdown,
        log_level=args.log_level,
        access_log=args.access_log,
        ws=args.ws,
        ws_max_size=args.ws_max_size,
        ws_ping_interval=args.ws_ping_interval,
        ws_ping_timeout=args.ws_ping_timeout,
        ws_per_message_deflate=args.ws_per_message_deflate,
        ssl_certfile=args.ssl_certfile,
        ssl_keyfile=args.ssl_keyfile,
        ssl_keyfile_password=args.ssl_keyfile_password,
        ssl_ca_certs=args.ssl_ca_certs,
        ssl_cert_reqs=args.ssl_cert_reqs,
        ssl_version=args.ssl_version,
        ssl_ciphers=args.ssl_ciphers,
        ssl_crl=args.ssl_crl,
    )


def _snapshot(dirs: list[str]) -> dict[str, float]:
    seen = {}
    for root in dirs:
        for path in Path(root).rglob("*.py"):
            if ".venv" in path.parts or "__pycache__" in path.parts:
                continue
            try:
                seen[str(path)] = path.stat().st_mtime
            except OSError:
                pass
    return seen


def _reload(args: Any, argv: list[str]) -> int:
    """Run the server in a child process and restart it when a watched .py file changes.
    A polling watcher (every half second): simple, and enough for development."""
    dirs = args.reload_dir or [args.app_dir]
    child_argv = [a for a in argv if a != "--reload"]
    command = [sys.executable, "-m", "vireo", *child_argv]
    stopping = False

    def stop(_signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while True:
            before = _snapshot(dirs)
            child = subprocess.Popen(command)
            while not stopping and child.poll() is None:
                time.sleep(0.5)
                if _snapshot(dirs) != before:
                    print("vireo: a file changed; reloading", file=sys.stderr, flush=True)
                    break
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                child.wait()
            if stopping:
                return 0
            if child.returncode not in (0, -signal.SIGTERM, None):
                # It failed to start: wait for a change before trying again.
                while not stopping and _snapshot(dirs) == before:
                    time.sleep(0.5)
                if stopping:
                    return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
