"""`vireo serve` / `vireo.serve(app)`: an existing ASGI 3 or WSGI application on the engine,
or a Vireo `App`, served natively as `App.run` serves it.

Each worker process keeps one event loop, runs the app's lifespan startup on it, then serves;
on SIGTERM it stops accepting, finishes the requests in flight, and runs the lifespan shutdown.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import inspect
import logging
import os
import signal
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from . import _loop, _vireo, server
from ._lifespan import Lifespan
from .app import App
from ._wsgi import FileWrapper, with_written

logger = logging.getLogger("vireo.error")
access_logger = logging.getLogger("vireo.access")

# A worker that could not start the application (failed lifespan startup) exits with this.
STARTUP_FAILED = server.STARTUP_FAILED

class OptionError(ValueError):
    """An option that cannot be honoured; the command line reports it without a traceback."""


LOG_LEVELS = {
    "critical": logging.CRITICAL,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": 5,
}


@dataclass
class Options:
    host: str = "127.0.0.1"
    port: int = 8000
    uds: str | None = None
    workers: int = 1
    # Blocking-pool threads per worker: 8 for ASGI and WSGI apps, the engine's default for a
    # Vireo App, unless given.
    threads: int | None = None
    # Blocking-pool threads under SCHED_BATCH: on for WSGI apps, unless given.
    batch_threads: bool | None = None
    interface: str = "auto"
    lifespan: str = "auto"
    factory: bool = False
    root_path: str = ""
    proxy_headers: bool = False
    forwarded_allow_ips: list[str] = field(default_factory=lambda: ["127.0.0.1"])
    limit_concurrency: int | None = None
    limit_request_body: int = 100 * 1024 * 1024
    timeout_keep_alive: float = 5.0
    timeout_graceful_shutdown: float | None = None
    log_level: str = "info"
    access_log: bool = True
    ws: str = "auto"
    ws_max_size: int = 16 * 1024 * 1024
    ws_ping_interval: float = 20.0
    ws_ping_timeout: float = 20.0
    ws_per_message_deflate: bool = True
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_keyfile_password: str | None = None
    ssl_ca_certs: str | None = None
    ssl_cert_reqs: int = 0
    ssl_version: int = 17
    ssl_ciphers: str = "TLSv1"
    ssl_crl: str | list[str] | None = None


def import_app(spec: str, factory: bool = False) -> Any:
    """`module:attr` (attr may be dotted) imported; called first if `factory`."""
    module_name, sep, attrs = spec.partition(":")
    if not sep or not module_name or not attrs:
        raise ImportError(f'the app must be given as "module:attribute", not {spec!r}')
    module = importlib.import_module(module_name)
    app: Any = module
    for name in attrs.split("."):
        try:
            app = getattr(app, name)
        except AttributeError:
            raise ImportError(f'attribute "{attrs}" not found in module "{module_name}"') from None
    if factory:
        app = app()
    return app


def detect_interface(app: Any) -> str:
    """ASGI for a coroutine function (or an object whose `__call__` is one) taking
    `(scope, receive, send)`; WSGI for any other callable."""
    if not callable(app):
        raise TypeError(f"the application must be callable, not {type(app).__name__}")
    call = app if inspect.isfunction(app) or inspect.ismethod(app) else getattr(app, "__call__", app)
    while isinstance(call, __import__("functools").partial):
        call = call.func
    if inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(app):
        try:
            params = [
                p for p in inspect.signature(app).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            return "asgi"
        if len(params) not in (3,) and not any(
            p.kind == p.VAR_POSITIONAL for p in inspect.signature(app).parameters.values()
        ):
            raise TypeError(
                f"an async application must take (scope, receive, send); this one takes "
                f"{len(params)} parameters (ASGI 2 applications are not supported)"
            )
        return "asgi"
    return "wsgi"


def configure_logging(level: str) -> None:
    numeric = LOG_LEVELS.get(level.lower())
    if numeric is None:
        raise OptionError(f"unknown log level {level!r}; one of {', '.join(LOG_LEVELS)}")
    root = logging.getLogger("vireo")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)-9s %(message)s"))
        root.addHandler(handler)
        root.propagate = False
    root.setLevel(numeric)


def _log_error(message: str, exc: BaseException | None) -> None:
    if exc is None:
        logger.error(message)
    else:
        logger.error(message, exc_info=(type(exc), exc, exc.__traceback__))


def _access(client: str | None, method: str, path: str, version: str, status: int) -> None:
    access_logger.info('%s - "%s %s HTTP/%s" %d', client or "-", method, path, version, status)


def _helpers(loop: Any) -> dict[str, Any]:
    return {
        "context_run": contextvars.Context.run,
        "send_none": _vireo.send_none,
        "spawn": _loop.make_spawn(loop),
        "bind_loop": lambda: _loop.bind(loop),
        "log_error": _log_error,
        "wsgi_file_wrapper": FileWrapper,
        "wsgi_with_written": with_written,
        "start_app": functools.partial(_loop.make_task_starter(loop), _vireo.run_app),
        "event_loop": loop,
    }


def _threads(options: Options) -> int:
    """The blocking pool of an ASGI or WSGI app's worker (WSGI apps run on it)."""
    return 8 if options.threads is None else options.threads


# `vireo serve`'s options that only ASGI and WSGI apps take.
_GATEWAY_ONLY = ("interface", "lifespan", "proxy_headers", "limit_concurrency",
                 "batch_threads")


def _serve_native(app: Any, opts: Options, announce: Callable[[str], None] | None) -> int:
    """A Vireo `App`, served as `App.run` serves it, with the options that apply to it."""
    defaults = Options()
    given = [name for name in _GATEWAY_ONLY if getattr(opts, name) != getattr(defaults, name)]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise OptionError(f"{flags}: only for ASGI and WSGI applications; a Vireo App is "
                         "served natively")
    if opts.root_path:
        # Behind a proxy that strips this prefix: the URLs the app makes carry it.
        app.root_path = opts.root_path.rstrip("/")
    app._plan()  # a route that cannot be planned fails here, before anything forks
    listener, announce = _listen(opts, announce)
    worker = functools.partial(
        server.serve_worker,
        keep_alive_timeout=opts.timeout_keep_alive,
        shutdown_timeout=opts.timeout_graceful_shutdown,
        max_body_size=opts.limit_request_body,
        blocking_threads=opts.threads,
        websocket_options={
            "ws": opts.ws != "none", "ws_max_size": opts.ws_max_size,
            "ws_ping_interval": opts.ws_ping_interval, "ws_ping_timeout": opts.ws_ping_timeout,
            "ws_per_message_deflate": opts.ws_per_message_deflate,
        },
    )
    logger.info("Started server process [%d] (Vireo App)", os.getpid())
    if opts.workers <= 1:
        try:
            worker(app, listener, announce)
        except server.StartupFailed as failed:
            _log_error("Application startup failed. Exiting.", failed.__cause__)
            return STARTUP_FAILED
        return 0
    return server._supervise(app, listener, opts.workers, announce, worker=worker,
                             fatal_exit=STARTUP_FAILED)


def _listen(opts: Options, announce: Callable[[str], None] | None) -> tuple[Any, Callable[[str], None]]:
    """The listening socket the options ask for (TLS included), and how to announce it."""
    if opts.uds:
        listener = _vireo.Listener.unix(opts.uds)
    else:
        listener = _vireo.Listener(opts.host, opts.port)
    tls = server.listen_tls(
        listener, opts.ssl_certfile, opts.ssl_keyfile, opts.ssl_keyfile_password,
        opts.ssl_ca_certs, opts.ssl_cert_reqs, opts.ssl_version, opts.ssl_ciphers, opts.ssl_crl,
    )
    return listener, announce or server.announcer(tls)


class _Target:
    """What each worker serves: the app, how to call it, and the options."""

    def __init__(self, app: Any, interface: str, options: Options, listener: Any) -> None:
        self.app = app
        self.interface = interface
        self.options = options
        self.server_addr = None if options.uds else (listener.host, listener.port)


def _serve_worker(target: _Target, listener: Any, on_ready: Callable[[str], None],
                  handle_signals: bool = True) -> None:
    options = target.options
    loop = _loop.new_loop()
    lifespan = Lifespan(target.app, options.lifespan if target.interface == "asgi" else "off")
    if not loop.run_until_complete(lifespan.startup()):
        loop.close()
        raise SystemExit(STARTUP_FAILED)
    server.freeze_startup_objects()
    access = _access if options.access_log and access_logger.isEnabledFor(logging.INFO) else None
    core = _vireo.AsgiApp(
        target.app,
        target.interface,
        _helpers(loop),
        root_path=options.root_path,
        proxy_headers=options.proxy_headers,
        forwarded_allow_ips=list(options.forwarded_allow_ips),
        limit_concurrency=options.limit_concurrency,
        server=target.server_addr,
        state=lifespan.state,
        access_log=access,
        multiprocess=options.workers > 1,
        multithread=_threads(options) > 1,
        ws=options.ws != "none",
        ws_max_size=options.ws_max_size,
        ws_ping_interval=options.ws_ping_interval,
        ws_ping_timeout=options.ws_ping_timeout,
        ws_per_message_deflate=options.ws_per_message_deflate,
    )
    restore = server.hand_signals_to_engine(handle_signals)
    try:
        listener.serve(
            core, on_ready, handle_signals,
            keep_alive_timeout=options.timeout_keep_alive,
            shutdown_timeout=options.timeout_graceful_shutdown,
            max_body_size=options.limit_request_body,
            blocking_threads=_threads(options),
            batch_threads=options.batch_threads,
        )
    finally:
        for sig, handler in restore.items():
            signal.signal(sig, handler)
        _loop.unbind(loop)
        try:
            _loop.cancel_unfinished(loop, logger)
            loop.run_until_complete(lifespan.shutdown())
        finally:
            loop.close()


def serve(app: Any, announce: Callable[[str], None] | None = None, **options: Any) -> int:
    """Serve an ASGI 3 or WSGI application or a Vireo `App` (or a `"module:attr"` string)
    until SIGTERM or SIGINT; returns the exit status. A Vireo App refuses the ASGI and WSGI
    options (interface, lifespan, root_path, proxy_headers, limit_concurrency,
    batch_threads), has no use for forwarded_allow_ips and access_log, and logs no access
    lines. Options are `vireo serve`'s (see `vireo serve --help`): host, port, uds, workers,
    threads, batch_threads, interface, lifespan, factory, root_path, proxy_headers,
    forwarded_allow_ips, limit_concurrency, limit_request_body, timeout_keep_alive,
    timeout_graceful_shutdown, log_level, access_log, ws, ws_max_size, ws_ping_interval,
    ws_ping_timeout, ws_per_message_deflate, ssl_certfile, ssl_keyfile, ssl_keyfile_password, ssl_ca_certs,
    ssl_cert_reqs, ssl_version, ssl_ciphers, ssl_crl."""
    opts = Options(**options)
    if opts.threads is not None and opts.threads < 1:
        raise OptionError(f"threads must be at least 1, not {opts.threads}")
    configure_logging(opts.log_level)
    if isinstance(app, str):
        app = import_app(app, opts.factory)
    elif opts.factory:
        app = app()
    if opts.ws not in ("auto", "none"):
        raise OptionError(f"unknown ws {opts.ws!r}; one of auto, none")
    if isinstance(app, App):
        return _serve_native(app, opts, announce)
    interface = detect_interface(app) if opts.interface == "auto" else opts.interface
    if interface not in ("asgi", "wsgi"):
        raise OptionError(f"unknown interface {opts.interface!r}; one of auto, asgi, wsgi")
    listener, announce = _listen(opts, announce)
    target = _Target(app, interface, opts, listener)
    logger.info("Started server process [%d] (%s)", os.getpid(), interface.upper())
    if opts.workers <= 1:
        try:
            _serve_worker(target, listener, announce)
        except SystemExit as exit:
            return exit.code if isinstance(exit.code, int) else 1
        return 0
    return server._supervise(
        target, listener, opts.workers, announce, worker=_serve_worker,
        fatal_exit=STARTUP_FAILED,
    )
