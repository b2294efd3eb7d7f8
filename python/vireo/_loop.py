"""The event loop each worker process keeps, and the glue that lets the engine drive it.

The loop is asyncio's selector loop (not uvloop: uvloop runs only inside its own
`run_forever`, and here the engine's runtime decides when the loop runs). Its selector never
blocks while the engine drives it: the engine waits on the selector's fd, on the earliest
timer and on handler code leaving callbacks ready, then runs one iteration (`step`). An
iteration that only has ready callbacks to run is run by the engine itself, and other threads
hand the loop a callback by waking the engine (`_engine_wake`) instead of the self-pipe.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import selectors
import sys
import threading
from asyncio.base_events import _run_until_complete_cb  # type: ignore[attr-defined]
from typing import Any

from . import _vireo


class DrivenSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """While `driven`, `select` never blocks, and asks the kernel only when the engine saw
    the selector's fd readable (`poll_io`); `events` counts what the last call found."""

    driven = False
    poll_io = True
    events = 0

    def select(self, timeout: float | None = None) -> list[Any]:
        if not self.driven:
            return super().select(timeout)
        if not self.poll_io:
            self.events = 0
            return []
        ready = super().select(0)
        self.events = len(ready)
        return ready


class DrivenLoop(asyncio.SelectorEventLoop):  # type: ignore[misc,valid-type]
    """asyncio's selector loop, able to start a task's first step at once (see
    `make_task_starter`)."""

    # Set while the engine drives the loop: wakes it, from any thread.
    _engine_wake: Any = None

    def __init__(self, selector: selectors.BaseSelector) -> None:
        super().__init__(selector)
        # Found before the class's method: a native handle on `_ready` with no frame of its
        # own, asyncio's own call when the loop is closed or in debug mode.
        self.call_soon = _vireo.CallSoon(self)

    def set_debug(self, enabled: bool) -> None:
        super().set_debug(enabled)
        # Every future and task the loop makes asks this: answered without a frame.
        self.get_debug = bool(enabled).__bool__
        call_soon = self.__dict__.get("call_soon")
        if call_soon is not None:
            call_soon.fast = not enabled and not self.is_closed()

    def close(self) -> None:
        try:
            super().close()
        finally:
            # Closed (asyncio's call_soon then refuses), or refused because it is running.
            self.call_soon.fast = not self.is_closed() and not self.get_debug()

    def call_soon_threadsafe(self, callback: Any, *args: Any, context: Any = None) -> Any:
        wake = self._engine_wake
        if wake is None or self._closed or self._debug:  # type: ignore[attr-defined]
            return super().call_soon_threadsafe(callback, *args, context=context)
        # The engine wakes on this directly; the self-pipe would cost it a selector poll and
        # two reads before the callback could run.
        handle = _vireo.Handle(callback, args, self, context)
        self._ready.append(handle)  # type: ignore[attr-defined]
        wake()
        return handle


def new_loop() -> asyncio.AbstractEventLoop:
    """The process's loop: made once per worker process, never per request."""
    return DrivenLoop(DrivenSelector())


def make_task_starter(loop: DrivenLoop) -> Any:
    """`start(fn, *args)`: a task on `loop` for the coroutine `fn(*args)`, in a copy of the
    caller's context, whose first step runs before `start` returns, as `eager_start` does on
    Python 3.12+, so a coroutine that finishes without waiting never waits for a loop
    iteration. A task factory the app set on the loop makes the task instead, started as that
    factory starts it."""
    copy_context = contextvars.copy_context
    if sys.version_info >= (3, 12):

        def start_eager(fn: Any, *args: Any) -> Any:
            context = copy_context()
            if loop._task_factory is not None:  # type: ignore[attr-defined]
                return loop.create_task(fn(*args), context=context)
            return asyncio.Task(fn(*args), loop=loop, context=context, eager_start=True)

        return start_eager

    current_tasks = asyncio.tasks._current_tasks  # type: ignore[attr-defined]
    if sys.version_info >= (3, 11):
        # Called as new_task(coro, context=...), with no frame of its own.
        new_task: Any = functools.partial(asyncio.Task, loop=loop)
        factory_task: Any = loop.create_task
    else:
        # Python 3.10: a task takes a copy of the context it is made in.

        def new_task(coro: Any, context: Any) -> Any:
            return context.run(asyncio.Task, coro, loop=loop)

        def factory_task(coro: Any, context: Any) -> Any:
            return context.run(loop.create_task, coro)

    def start(fn: Any, *args: Any) -> Any:
        context = copy_context()
        coro = fn(*args)
        if loop._task_factory is not None:  # type: ignore[attr-defined]
            return factory_task(coro, context=context)
        if loop in current_tasks:
            # Called from inside another task's step: this one waits its turn.
            return new_task(coro, context=context)
        call_soon = loop.call_soon
        call_soon.keep_next()
        try:
            task = new_task(coro, context=context)
        finally:
            kept = call_soon.take_kept()
        step, step_context = kept
        step_context.run(step)
        return task

    return start


class _FdCopy:
    """A duplicate of a file descriptor, closed when this object is collected: the engine
    waits on it, whatever becomes of the original."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = os.dup(fd)

    def fileno(self) -> int:
        return self._fd

    def __del__(self) -> None:
        os.close(self._fd)


def bind(loop: asyncio.BaseEventLoop) -> tuple[Any, Any, Any, _FdCopy, Any]:
    """Make `loop` the running loop of the calling thread, the engine's worker, and hand the
    engine what it drives the loop with: `(step, ready, scheduled, selector_fd, loop)`."""
    selector = loop._selector  # type: ignore[attr-defined]
    selector.driven = True
    asyncio.events._set_running_loop(loop)
    loop._thread_id = threading.get_ident()  # type: ignore[attr-defined]
    selector.root = _start_root(loop)
    run_once = loop._run_once  # type: ignore[attr-defined]
    ready = loop._ready  # type: ignore[attr-defined]
    scheduled = loop._scheduled  # type: ignore[attr-defined]
    time = loop.time

    def step(poll_io: bool) -> tuple[float | None, int]:
        selector.poll_io = poll_io
        run_once()
        events = selector.events
        if ready or events:
            return 0.0, events
        if scheduled:
            return scheduled[0]._when - time(), 0
        return None, 0

    return step, ready, scheduled, _FdCopy(selector.fileno()), loop


def cancel_unfinished(loop: asyncio.AbstractEventLoop, log: Any, also: Any = ()) -> None:
    """After serving: cancel the requests' tasks, and the tasks in `also`, that are still
    running (the graceful shutdown's timeout passed first), and give them a second to unwind.
    `log` is the logger that says so."""
    tasks = [
        task for task in asyncio.all_tasks(loop)
        if not task.done() and isinstance(task.get_coro(), _vireo.Resume)
    ]
    tasks += [task for task in also if not task.done()]
    if not tasks:
        return
    log.warning("Cancel %d running task(s), timeout graceful shutdown exceeded", len(tasks))
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.wait(tasks, timeout=CANCEL_GRACE))


# How long cancelled request tasks get to unwind before the loop closes.
CANCEL_GRACE = 1.0


def release_client(client: Any, loop: asyncio.AbstractEventLoop) -> None:
    """Stop an in-process client's thread and close its loop, with nothing left pending."""
    client.close()
    unbind(loop)
    loop.close()


def unbind(loop: asyncio.BaseEventLoop) -> None:
    """After serving: the loop runs normally again (for shutdown hooks on the main thread), and
    its root task has ended, so closing the loop leaves no task pending."""
    selector = loop._selector  # type: ignore[attr-defined]
    selector.driven = False
    loop._thread_id = None  # type: ignore[attr-defined]
    loop._engine_wake = None  # type: ignore[attr-defined]
    root = getattr(selector, "root", None)
    if root is not None:
        selector.root = None
        task, stop = root
        task.remove_done_callback(_run_until_complete_cb)
        if not stop.done():
            stop.set_result(None)
        if not task.done():
            loop.run_until_complete(task)


async def _serving(stop: asyncio.Future[None]) -> None:
    while not stop.done():
        try:
            await asyncio.shield(stop)
        except asyncio.CancelledError:
            pass  # the root task lasts exactly as long as the engine serves


def _start_root(loop: asyncio.AbstractEventLoop) -> tuple[asyncio.Task[None], asyncio.Future[None]]:
    """The loop's root task while the engine drives it, marked as `run_until_complete` marks
    its own. Libraries that tie state to the root task find it at once: anyio keeps its
    worker threads for its life (instead of for one request's) and otherwise searches every
    task on the loop on each `to_thread` call."""
    stop = loop.create_future()
    task = loop.create_task(_serving(stop))
    task.add_done_callback(_run_until_complete_cb)
    return task, stop


def make_spawn(loop: asyncio.AbstractEventLoop) -> Any:
    create_task = loop.create_task

    def spawn(coro: Any, first: Any, completion: Any, context: Any) -> Any:
        resume = _vireo.Resume(coro, first, completion)
        if context is None:
            return create_task(resume)
        if sys.version_info >= (3, 11):
            # On in the context the first step ran in (a token made there still resets).
            return create_task(resume, context=context)
        return context.run(create_task, resume)  # 3.10: a copy of it

    return spawn


async def done(value: Any) -> Any:
    """An awaitable that is ready at once (what `call_next` gives for a sync handler)."""
    return value


async def raised(exc: BaseException) -> Any:
    """An awaitable that raises at once (what `call_next` gives for a handler that raised)."""
    raise exc
