"""The worker loop's task starter: `start(fn, *args)` makes a task for `fn(*args)` in a copy
of the caller's context, and the task takes its first step before `start` returns, except
inside another task's step, where it waits its turn like any task."""

import asyncio
import contextlib
import contextvars
import sys
import threading

import pytest

from vireo import _loop


def _loop_and_starter():
    loop = _loop.new_loop()
    return loop, _loop.make_task_starter(loop)


@contextlib.contextmanager
def _running(loop):
    """The loop as the engine's worker has it between iterations: running on this thread."""
    asyncio.events._set_running_loop(loop)
    loop._thread_id = threading.get_ident()
    try:
        yield
    finally:
        loop._thread_id = None
        asyncio.events._set_running_loop(None)


def test_first_step_runs_before_start_returns_in_its_own_task():
    loop, start = _loop_and_starter()
    seen = []

    async def handler():
        seen.append(asyncio.current_task())
        return "done"

    with _running(loop):
        task = start(handler)
        assert seen == [task]
        assert task.done() and task.result() == "done"
        assert not loop._ready  # nothing left for a loop iteration
    loop.close()


def test_a_task_that_waits_is_resumed_by_the_loop():
    loop, start = _loop_and_starter()
    steps = []

    async def handler():
        steps.append("first")
        await asyncio.sleep(0)
        steps.append(asyncio.current_task())

    with _running(loop):
        task = start(handler)
        assert steps == ["first"] and not task.done()
    loop.run_until_complete(task)
    assert steps == ["first", task]
    loop.close()


def test_the_task_runs_every_step_in_a_copy_of_the_context_it_was_started_in():
    loop, start = _loop_and_starter()
    var = contextvars.ContextVar("var")

    async def handler():
        before = var.get()
        var.set("set in the first step")
        await asyncio.sleep(0)
        return before, var.get()

    context = contextvars.copy_context()
    context.run(var.set, "given")
    with _running(loop):
        task = context.run(start, handler)
    assert loop.run_until_complete(task) == ("given", "set in the first step")
    assert context[var] == "given", "the task's change stays in its copy"
    assert var.get(None) is None  # the caller's own context is untouched
    loop.close()


def test_started_from_inside_a_task_it_starts_as_the_python_version_allows():
    # Python 3.12's eager_start runs the new task's first step at once even inside another
    # task; before 3.12 a task cannot step while another is current, so it waits its turn.
    loop, start = _loop_and_starter()
    order = []

    async def child():
        order.append("child")

    async def parent():
        task = start(child)
        order.append("parent went on")
        await task

    loop.run_until_complete(parent())
    if sys.version_info >= (3, 12):
        assert order == ["child", "parent went on"]
    else:
        assert order == ["parent went on", "child"]
    loop.close()


def test_call_soon_is_unchanged_outside_a_start():
    loop, _ = _loop_and_starter()
    called = []
    handle = loop.call_soon(called.append, 1)
    assert not handle.cancelled() and handle.get_context() is not None
    loop.set_debug(True)
    loop.call_soon(called.append, 2)
    loop.run_until_complete(asyncio.sleep(0))
    assert called == [1, 2]
    loop.close()
    with pytest.raises(RuntimeError, match="closed"):
        loop.call_soon(called.append, 3)


def test_get_debug_follows_set_debug():
    loop, _ = _loop_and_starter()
    assert loop.get_debug() is False
    loop.set_debug(True)
    assert loop.get_debug() is True and loop.create_future().get_loop() is loop
    loop.set_debug(False)
    assert loop.get_debug() is False
    loop.close()


def test_a_close_refused_while_running_keeps_the_native_call_soon():
    loop, _ = _loop_and_starter()
    native = type(loop.call_soon(lambda: None))
    assert native is not asyncio.Handle

    async def close_while_running():
        with pytest.raises(RuntimeError, match="running"):
            loop.close()

    loop.run_until_complete(close_while_running())
    assert type(loop.call_soon(lambda: None)) is native
    loop.close()
    with pytest.raises(RuntimeError, match="closed"):
        loop.call_soon(lambda: None)


def test_a_start_that_fails_leaves_call_soon_as_it_was():
    # A coroutine function that returns no coroutine: the task is never made, and the next
    # callback scheduled is queued as usual rather than kept as a first step.
    loop, start = _loop_and_starter()
    with _running(loop), pytest.raises(TypeError, match="coroutine"):
        start(lambda: "not a coroutine")
    called = []
    loop.call_soon(called.append, "queued")
    loop.run_until_complete(asyncio.sleep(0))
    assert called == ["queued"]
    loop.close()


def test_a_task_factory_the_app_set_makes_the_task():
    loop, start = _loop_and_starter()
    made = []

    def factory(loop, coro, **context):
        task = asyncio.Task(coro, loop=loop, **context)
        made.append(task)
        return task

    async def handler():
        return "done"

    loop.set_task_factory(factory)
    task = start(handler)
    assert made == [task]
    assert loop.run_until_complete(task) == "done"
    loop.close()


def test_call_soon_runs_the_callback_with_its_arguments_in_its_context():
    loop, _ = _loop_and_starter()
    var = contextvars.ContextVar("var", default="unset")
    seen = []

    def callback(a, b):
        seen.append((a, b, var.get()))
        var.set("changed inside")

    token = var.set("outer")
    loop.call_soon(callback, 1, 2)  # a copy of the current context
    given = contextvars.copy_context()
    given.run(var.set, "given")
    loop.call_soon(callback, 3, 4, context=given)
    var.reset(token)
    loop._run_once()
    assert seen == [(1, 2, "outer"), (3, 4, "given")]
    assert var.get() == "unset", "the callback's change stays in its context"
    assert given[var] == "changed inside"
    loop.close()


def test_a_cancelled_handle_does_not_run_and_lets_its_callback_go():
    loop, _ = _loop_and_starter()
    called = []
    handle = loop.call_soon(called.append, 1)
    assert "append" in repr(handle)
    handle.cancel()
    loop._run_once()
    assert called == [] and handle.cancelled() and handle._cancelled
    assert handle._callback is None and handle._args is None
    assert repr(handle) == "<Handle cancelled>"
    loop.close()


def test_a_callback_that_raises_goes_to_the_exception_handler_and_the_next_one_runs():
    loop, _ = _loop_and_starter()
    reported, called = [], []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))

    def broken(x):
        raise ValueError(f"bad {x}")

    handle = loop.call_soon(broken, 7)
    loop.call_soon(called.append, "next")
    loop._run_once()
    assert called == ["next"]
    [context] = reported
    assert context["message"].startswith("Exception in callback") and "broken" in context["message"]
    assert isinstance(context["exception"], ValueError) and str(context["exception"]) == "bad 7"
    assert context["handle"] is handle
    loop.close()


def test_system_exit_and_keyboard_interrupt_in_a_callback_propagate():
    loop, _ = _loop_and_starter()
    for exc in (SystemExit(3), KeyboardInterrupt()):
        def raise_it(exc=exc):
            raise exc
        loop.call_soon(raise_it)
        with pytest.raises(type(exc)):
            loop._run_once()
    loop.close()


def test_call_soon_threadsafe_wakes_the_engine_instead_of_the_self_pipe():
    loop = _loop.new_loop()
    try:
        woken, writes, ran = [], [], []
        loop._write_to_self = lambda: writes.append(True)
        loop._engine_wake = lambda: woken.append(True)
        thread = threading.Thread(target=loop.call_soon_threadsafe, args=(ran.append, 1))
        thread.start()
        thread.join()
        assert (woken, writes) == ([True], [])
        loop._run_once()
        assert ran == [1]
        # Not driven: asyncio's own way.
        loop._engine_wake = None
        loop.call_soon_threadsafe(ran.append, 2)
        assert (woken, writes) == ([True], [True])
        loop._run_once()
        assert ran == [1, 2]
    finally:
        loop.close()
