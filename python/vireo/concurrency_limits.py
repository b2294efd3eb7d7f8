"""`Depends(max_concurrency=N)`: at most N calls of one dependency at once, as FastAPI counts
them. A call waits its turn on the event loop, holding no thread; a `yield` dependency holds
its place until its teardown has run.

Each event loop has its own count (under Vireo, each worker thread's loop; under another
server, its loop), as in FastAPI, where each loop and each worker process has its own. Routes
marked `blocking=True` run their dependencies on the blocking pool, where a call waits on one
count shared by the pool's threads.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any


class ConcurrencyLimit:
    """The counts of one `Depends(max_concurrency=...)` object."""

    __slots__ = ("max_concurrency", "_loops", "_threads", "_lock")

    def __init__(self, max_concurrency: int) -> None:
        if type(max_concurrency) is not int or max_concurrency < 1:
            raise ValueError(
                f"max_concurrency must be a positive integer or None, not {max_concurrency!r}")
        self.max_concurrency = max_concurrency
        self._loops: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())
        self._threads: threading.BoundedSemaphore | None = None
        self._lock = threading.Lock()

    def on_loop(self) -> asyncio.Semaphore:
        """The count of the running event loop."""
        loop = asyncio.get_running_loop()
        semaphore = self._loops.get(loop)
        if semaphore is None:
            with self._lock:
                semaphore = self._loops.setdefault(loop, asyncio.Semaphore(self.max_concurrency))
        return semaphore

    def on_threads(self) -> threading.BoundedSemaphore:
        """The count shared by the blocking pool's threads."""
        if self._threads is None:
            with self._lock:
                if self._threads is None:
                    self._threads = threading.BoundedSemaphore(self.max_concurrency)
        return self._threads

    def __repr__(self) -> str:
        return f"ConcurrencyLimit({self.max_concurrency})"


class Release:
    """A place in a count, given back when a request's `yield` dependencies are closed: it
    sits in their exit list just before the generator it was taken for, so it is given back
    once that generator's teardown has run."""

    __slots__ = ("_semaphore",)

    def __init__(self, semaphore: asyncio.Semaphore | threading.BoundedSemaphore) -> None:
        self._semaphore: Any = semaphore

    def release(self) -> None:
        semaphore, self._semaphore = self._semaphore, None
        if semaphore is not None:
            semaphore.release()
