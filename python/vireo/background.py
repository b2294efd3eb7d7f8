"""Background tasks: work a handler leaves to run once its response is made, without delaying
that response. Async tasks run on the worker's event loop; sync ones on a thread pool of the
process's own, so they never stall the worker. A task that raises is logged on the `vireo`
logger; the worker goes on."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import logging
import os
import threading
from typing import Any, Callable

logger = logging.getLogger("vireo")

# Threads for sync tasks, per process (made after a fork, never inherited).
_THREADS = 4


class BackgroundTask:
    """One call, `func(*args, **kwargs)`, to make after the response: `Response(...,
    background=BackgroundTask(send_email, to))`."""

    def __init__(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)
        )


class BackgroundTasks(BackgroundTask):
    """Tasks in the order added: a handler parameter of this type gets a fresh one per
    request (`tasks.add_task(func, *args, **kwargs)`); or pass one as `background=`."""

    def __init__(self, tasks: list[BackgroundTask] | None = None) -> None:
        self.tasks = list(tasks or ())

    def add_task(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.tasks.append(BackgroundTask(func, *args, **kwargs))


def _log(exc: BaseException, task: BackgroundTask) -> None:
    name = getattr(task.func, "__qualname__", repr(task.func))
    logger.error(
        "Exception in background task %s", name, exc_info=(type(exc), exc, exc.__traceback__)
    )


class Runner:
    """Starts the background tasks of responses, for one app build in one process. `wait()`
    (for the test client) returns once every task started so far has ended."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._async: set[asyncio.Task[None]] = set()

    def _threads(self) -> concurrent.futures.ThreadPoolExecutor:
        pid = os.getpid()
        if self._pool is None or self._pid != pid:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                _THREADS, thread_name_prefix="vireo-background"
            )
            self._pid = pid
        return self._pool

    def _track(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._untrack)

    def _untrack(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def __call__(self, background: BackgroundTask) -> None:
        """Start `background` (a task, or `BackgroundTasks`, whose tasks run one after another
        in the order added)."""
        tasks = background.tasks if isinstance(background, BackgroundTasks) else [background]
        if not tasks:
            return
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._track(done)
        if all(not t.is_async for t in tasks):
            self._threads().submit(self._run_sync, tasks, done)
        else:
            self._loop.call_soon_threadsafe(self._start_async, tasks, done)

    def _run_sync(self, tasks: list[BackgroundTask], done: concurrent.futures.Future[Any]) -> None:
        try:
            for task in tasks:
                try:
                    task.func(*task.args, **task.kwargs)
                except Exception as exc:  # noqa: BLE001 - logged; the next tasks still run
                    _log(exc, task)
        finally:
            done.set_result(None)

    def _start_async(
        self, tasks: list[BackgroundTask], done: concurrent.futures.Future[Any]
    ) -> None:
        task = self._loop.create_task(self._run_async(tasks, done))
        self._async.add(task)
        task.add_done_callback(self._async.discard)

    async def _run_async(
        self, tasks: list[BackgroundTask], done: concurrent.futures.Future[Any]
    ) -> None:
        try:
            for task in tasks:
                try:
                    if task.is_async:
                        await task.func(*task.args, **task.kwargs)
                    else:
                        call = functools.partial(task.func, *task.args, **task.kwargs)
                        await asyncio.wrap_future(self._threads().submit(call))
                except Exception as exc:  # noqa: BLE001 - logged; the next tasks still run
                    _log(exc, task)
        finally:
            done.set_result(None)

    def unfinished_async(self) -> list[asyncio.Task[None]]:
        """The event-loop tasks running async background tasks, for a shutdown to cancel."""
        return [task for task in self._async if not task.done()]

    def pending(self) -> int:
        """How many of the tasks started so far are still running."""
        with self._lock:
            return len(self._pending)

    def wait(self, timeout: float | None = None) -> None:
        """Block until every task started so far has ended (or `timeout` passes)."""
        with self._lock:
            pending = list(self._pending)
        concurrent.futures.wait(pending, timeout=timeout)
