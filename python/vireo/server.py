"""Serving: one process per core, each running the engine with one worker thread.

The parent binds the listening socket once and forks the workers, which inherit it; it then
supervises them: a worker that dies is replaced, and SIGTERM or SIGINT is passed on to every
worker, which stops accepting, finishes the requests it has, runs the shutdown hooks and
exits; the parent exits 0 after them. SIGHUP reloads the TLS certificate, in the parent (for
workers forked later) and in every worker. With one worker the app is served in-process.
"""

from __future__ import annotations

import gc
import logging
import os
import select
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable

from . import _loop, _vireo

logger = logging.getLogger("vireo")

# A worker that dies sooner than this after starting is restarted only after this long,
# so a worker that cannot start does not fork in a tight loop.
_RESTART_BACKOFF = 1.0

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

# A worker that could not start the application exits with this, and the supervisor then
# stops the others instead of starting it again.
STARTUP_FAILED = 3


class StartupFailed(Exception):
    """The app's startup hooks raised (the exception is the cause): nothing was served."""


def announcer(tls: bool) -> Callable[[str], None]:
    """The default `listening on` line: the address with the scheme clients use (a Unix
    socket's `unix:PATH` as it is)."""
    scheme = "https://" if tls else "http://"

    def announce(address: str) -> None:
        prefix = "" if address.startswith("unix:") else scheme
        print(f"vireo: listening on {prefix}{address}", flush=True)

    return announce


# Python's `ssl.PROTOCOL_*` numbers (uvicorn's --ssl-version) and the TLS versions each allows.
_SSL_VERSIONS = {
    2: ["1.2", "1.3"],   # PROTOCOL_TLS (PROTOCOL_SSLv23)
    17: ["1.2", "1.3"],  # PROTOCOL_TLS_SERVER, uvicorn's default
    5: ["1.2"],          # PROTOCOL_TLSv1_2
}
# uvicorn's default --ssl-ciphers: every suite the server has, as the defaults here.
_DEFAULT_CIPHERS = "TLSv1"


def _tls_versions(ssl_version: int) -> list[str]:
    """The TLS versions an `ssl.PROTOCOL_*` number allows; a ValueError for one not offered."""
    try:
        return _SSL_VERSIONS[int(ssl_version)]
    except KeyError:
        raise ValueError(
            f"ssl_version {ssl_version} is not offered: the server speaks TLS 1.2 and 1.3 only; "
            "use 17 (ssl.PROTOCOL_TLS_SERVER, both) or 5 (ssl.PROTOCOL_TLSv1_2, TLS 1.2 only)"
        ) from None


def _cipher_names(ciphers: str) -> list[str]:
    if ciphers.strip() in ("", _DEFAULT_CIPHERS):
        return []
    return [name for name in ciphers.replace(",", ":").split(":") if name.strip()]


def listen_tls(
    listener: Any,
    certfile: str | None,
    keyfile: str | None,
    keyfile_password: str | None = None,
    ca_certs: str | None = None,
    cert_reqs: int = 0,
    ssl_version: int = 17,
    ciphers: str = _DEFAULT_CIPHERS,
    crl: str | list[str] | None = None,
) -> bool:
    """Serve HTTPS (and HTTP/2 by ALPN) on `listener` when both files are given; whether it
    does. `cert_reqs` (0 none, 1 optional, 2 required, as `ssl.CERT_*`) asks clients for a
    certificate signed by an authority in `ca_certs` and not revoked by the lists in the `crl`
    file(s). `ssl_version` is an `ssl.PROTOCOL_*` number; `ciphers` names cipher suites,
    separated by colons. On SIGHUP each worker reads the files again."""
    crls = [crl] if isinstance(crl, (str, bytes, os.PathLike)) else list(crl or [])
    versions = _tls_versions(17 if ssl_version is None else ssl_version)
    suites = _cipher_names(ciphers or _DEFAULT_CIPHERS)
    if certfile is None and keyfile is None:
        given = [name for name, value in (
            ("ssl_keyfile_password", keyfile_password is not None),
            ("ssl_ca_certs", ca_certs is not None), ("ssl_cert_reqs", bool(cert_reqs)),
            ("ssl_crl", bool(crls)), ("ssl_version", versions != _tls_versions(17)),
            ("ssl_ciphers", bool(suites)),
        ) if value]
        if given:
            raise ValueError(f"{', '.join(given)} need ssl_certfile and ssl_keyfile")
        return False
    if certfile is None or keyfile is None:
        raise ValueError("HTTPS needs both a certificate chain file and a private key file")
    listener.use_tls(
        os.fspath(certfile),
        os.fspath(keyfile),
        keyfile_password,
        None if ca_certs is None else os.fspath(ca_certs),
        int(cert_reqs),
        crls=[os.fsdecode(path) for path in crls],
        versions=versions,
        ciphers=suites,
    )
    return True


def freeze_startup_objects() -> None:
    """Once the app is imported and started: what exists now (modules, routes, models, the
    app's state) lives as long as the process, so the cycle collector stops rescanning it on
    each full collection. Garbage is collected first; later objects are collected as usual."""
    gc.collect()
    gc.freeze()


def hand_signals_to_engine(handle_signals: bool) -> dict[int, Any]:
    """Before the engine serves: it turns SIGTERM and SIGINT into a graceful shutdown (Python's
    own SIGINT handler would raise KeyboardInterrupt afterwards) and, with TLS, SIGHUP into a
    certificate reload; without TLS, SIGHUP is ignored. The handlers to restore afterwards."""
    restore: dict[int, Any] = {}
    if handle_signals and threading.current_thread() is threading.main_thread():
        for sig in _STOP_SIGNALS:
            restore[sig] = signal.signal(sig, signal.SIG_DFL)
        restore[signal.SIGHUP] = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    return restore


def serve_worker(
    app: Any,
    listener: Any,
    on_ready: Callable[[str], None],
    handle_signals: bool = True,
    websocket_options: dict[str, Any] | None = None,
    **engine: Any,
) -> None:
    """Serve `app` on `listener` in this process until a graceful shutdown. `engine` holds
    the engine settings `Listener.serve` takes (timeouts, body limit, blocking pool);
    `websocket_options` those of `App._build`."""
    loop = _loop.new_loop()
    try:
        loop.run_until_complete(app.startup())
    except Exception as exc:
        loop.close()
        raise StartupFailed(f"the application's startup failed: {exc!r}") from exc
    core = app._build(loop, websocket_options)
    freeze_startup_objects()
    restore = hand_signals_to_engine(handle_signals)
    try:
        listener.serve(core, on_ready, handle_signals, **engine)
    finally:
        for sig, handler in restore.items():
            signal.signal(sig, handler)
        _loop.unbind(loop)
        try:
            background = app._background
            _loop.cancel_unfinished(
                loop, logger, background.unfinished_async() if background else ()
            )
            loop.run_until_complete(app.shutdown())
        finally:
            loop.close()


def run(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    announce: Callable[[str], None] | None = None,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    ssl_keyfile_password: str | None = None,
    ssl_ca_certs: str | None = None,
    ssl_cert_reqs: int = 0,
    ssl_version: int = 17,
    ssl_ciphers: str = _DEFAULT_CIPHERS,
    ssl_crl: str | list[str] | None = None,
) -> int:
    app._plan()  # a route that cannot be planned fails here, before anything forks
    listener = _vireo.Listener(host, port)
    tls = listen_tls(
        listener, ssl_certfile, ssl_keyfile, ssl_keyfile_password, ssl_ca_certs, ssl_cert_reqs,
        ssl_version, ssl_ciphers, ssl_crl,
    )
    announce = announce or announcer(tls)
    if workers <= 1:
        try:
            serve_worker(app, listener, announce)
        except StartupFailed as failed:
            raise failed.__cause__ from None  # the app's own exception, as its caller knows it
        return 0
    return _supervise(app, listener, workers, announce, fatal_exit=STARTUP_FAILED)


def _exit_with_parent(parent: int) -> None:
    """Linux: SIGTERM this worker (a graceful stop) if its supervisor dies, even by SIGKILL,
    so that no worker goes on serving without one."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)  # the supervisor died before the request took effect


def _child(app: Any, listener: Any, ready_fd: int, mask: Any, worker: Callable[..., None],
           parent: int) -> None:
    code = 1
    try:
        _exit_with_parent(parent)
        for sig in _STOP_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        # Until the engine listens for SIGHUP (with TLS, once it serves), a SIGHUP passed on
        # reloads the certificate here; without TLS it does nothing.
        signal.signal(signal.SIGHUP, lambda _signum, _frame: listener.reload_tls())
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        worker(app, listener, lambda _addr: os.write(ready_fd, b"r"))
        code = 0
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    except StartupFailed as failed:
        cause = failed.__cause__
        logger.error("Application startup failed. Exiting.",
                     exc_info=(type(cause), cause, cause.__traceback__) if cause else None)
        code = STARTUP_FAILED
    except BaseException:  # noqa: BLE001 - report whatever ended the worker
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _supervise(
    app: Any,
    listener: Any,
    workers: int,
    announce: Callable[[str], None],
    worker: Callable[..., None] = serve_worker,
    fatal_exit: int | None = None,
) -> int:
    """Fork `workers` processes running `worker(app, listener, on_ready)` and keep them up.
    A worker exiting with `fatal_exit` (it could not start the app) stops them all. SIGHUP
    reloads the TLS certificate here, for workers forked later, and is passed on to every
    worker, which reloads its own (without TLS it changes nothing)."""
    ready_r, ready_w = os.pipe()
    supervisor = os.getpid()
    children: dict[int, float] = {}
    stopping = False

    def spawn() -> None:
        # Signals wait until the child has dropped the parent's handlers.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, (*_STOP_SIGNALS, signal.SIGHUP))
        try:
            pid = os.fork()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            raise
        if pid == 0:
            os.close(ready_r)
            _child(app, listener, ready_w, blocked, worker, supervisor)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        children[pid] = time.monotonic()

    def pass_on(signum: int) -> None:
        for pid in list(children):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    def on_signal(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        pass_on(signal.SIGTERM)

    def on_hangup(signum: int, _frame: Any) -> None:
        listener.reload_tls()
        pass_on(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in _STOP_SIGNALS}
    previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, on_hangup)
    try:
        for _ in range(workers):
            spawn()
        ready = 0
        announced = False
        failed = 0
        while children:
            readable, _, _ = select.select([ready_r], [], [], 0.2)
            if readable:
                ready += len(os.read(ready_r, 64))
                if not announced and ready >= workers:
                    announce(f"{listener.host}:{listener.port}")
                    announced = True
            while children:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    children.clear()
                    break
                if pid == 0:
                    break
                born = children.pop(pid, None)
                if born is None or stopping:
                    continue
                if fatal_exit is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == fatal_exit:
                    logger.error("worker %d could not start the application; stopping", pid)
                    failed = fatal_exit
                    on_signal(signal.SIGTERM, None)
                    continue
                logger.error(
                    "worker %d exited (%s); starting another", pid, _describe(status)
                )
                if time.monotonic() - born < _RESTART_BACKOFF:
                    time.sleep(_RESTART_BACKOFF)
                if not stopping:
                    spawn()
        return failed
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(ready_r)
        os.close(ready_w)
        listener.close()


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"status {os.WEXITSTATUS(status)}"
