"""The native objects that carry an async handler tell the cycle collector what they hold, so
a task caught in a reference cycle (one that never finishes, say) can be collected."""

from __future__ import annotations

import asyncio
import gc

from vireo import App
from vireo.testclient import TestClient

app = App()
behind_middleware = App()


def _kinds(obj) -> list[str]:
    return sorted(type(r).__name__ for r in gc.get_referents(obj))


def _holds_code(obj, code) -> bool:
    return any(getattr(r, "cr_code", None) is code for r in gc.get_referents(obj))


@app.get("/suspended")
async def suspended():
    await asyncio.sleep(0)
    task = asyncio.current_task()
    resume = task.get_coro()
    completion = next(r for r in gc.get_referents(resume) if type(r).__name__ == "Completion")
    return {
        "resume_is_tracked": gc.is_tracked(resume),
        "resume_holds_handler": _holds_code(resume, suspended.__code__),
        "completion_holds_task": any(r is task for r in gc.get_referents(completion)),
    }


@app.get("/inline")
async def inline():
    stand_in = asyncio.current_task()
    return {
        "kind": type(stand_in).__name__,
        "holds_handler": _holds_code(stand_in, inline.__code__),
    }


seen_by_middleware: dict = {}


@behind_middleware.middleware("http")
async def inspect_awaitable(request, call_next):
    awaitable = call_next(request)
    seen_by_middleware["kind"] = type(awaitable).__name__
    seen_by_middleware["referents"] = _kinds(awaitable)
    seen_by_middleware["holds_handler"] = _holds_code(awaitable, slow.__code__)
    return await awaitable


@behind_middleware.get("/slow")
async def slow():
    await asyncio.sleep(0)
    return "done"


def test_a_suspended_handlers_task_and_its_native_coroutine_are_seen_by_the_collector():
    with TestClient(app) as client:
        seen = client.get("/suspended").json()
    assert seen == {
        "resume_is_tracked": True,
        "resume_holds_handler": True,
        "completion_holds_task": True,
    }


def test_the_stand_in_task_of_an_inline_handler_is_seen_by_the_collector():
    with TestClient(app) as client:
        seen = client.get("/inline").json()
    assert seen == {"kind": "InlineTask", "holds_handler": True}


def test_the_awaitable_call_next_gives_for_a_suspended_handler_is_seen_by_the_collector():
    with TestClient(behind_middleware) as client:
        assert client.get("/slow").text == "done"
    assert seen_by_middleware["kind"] == "AwaitHandler"
    assert seen_by_middleware["holds_handler"] is True
    assert "Request" in seen_by_middleware["referents"]
