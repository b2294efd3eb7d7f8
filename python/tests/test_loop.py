"""The worker loop's task starter: a request's task takes its first step before `start`
returns, except inside another task's step, where it waits its turn like any task."""

import asyncio
import contextvars

import pytest

from vireo import _loop


def _loop_and_starter():
    loop = _loop.new_loop()
    return loop, _loop.make_task_starter(loop)


def test_first_step_runs_before_start_returns_in_its_own_task():
    loop, start = _loop_and_starter()
    seen = []

    async def handler():
        seen.append(asyncio.current_task())
        return "done"

    try:
        asyncio.events._set_running_loop(loop)
        task = start(handler(), contextvars.copy_context())
        assert seen == [task]
        assert task.done() and task.result() == "done"
        assert not loop._ready  # nothing left for a loop iteration
    finally:
        asyncio.events._set_running_loop(None)
        loop.close()


def test_a_task_that_waits_is_resumed_by_the_loop():
    loop, start = _loop_and_starter()
    steps = []

    async def handler():
        steps.append("first")
        await asyncio.sleep(0)
        steps.append(asyncio.current_task())

    try:
        asyncio.events._set_running_loop(loop)
        task = start(handler(), contextvars.copy_context())
        assert steps == ["first"] and not task.done()
    finally:
        asyncio.events._set_running_loop(None)
    loop.run_until_complete(task)
    assert steps == ["first", task]
    loop.close()


def test_started_from_inside_a_task_it_waits_for_the_loop():
    loop, start = _loop_and_starter()
    order = []

    async def child():
        order.append("child")

    async def parent():
        task = start(child(), contextvars.copy_context())
        order.append("parent went on")
        await task

    loop.run_until_complete(parent())
    assert order == ["parent went on", "child"]
    loop.close()


def test_call_soon_is_unchanged_outside_a_start():
    loop, _ = _loop_and_starter()
    called = []
    handle = loop.call_soon(called.append, 1)
    assert isinstance(handle, asyncio.Handle)
    loop.set_debug(True)
    loop.call_soon(called.append, 2)
    loop.run_until_complete(asyncio.sleep(0))
    assert called == [1, 2]
    loop.close()
    with pytest.raises(RuntimeError, match="closed"):
        loop.call_soon(called.append, 3)


def test_a_task_factory_the_app_set_makes_the_task():
    loop, start = _loop_and_starter()
    made = []

    def factory(loop, coro, context=None):
        task = asyncio.Task(coro, loop=loop, context=context)
        made.append(task)
        return task

    async def handler():
        return "done"

    loop.set_task_factory(factory)
    task = start(handler(), contextvars.copy_context())
    assert made == [task]
    assert loop.run_until_complete(task) == "done"
    loop.close()
