"""Async handlers: finished inline when they do not suspend, continued on the worker's one
persistent event loop when they do; no event loop is made per request."""

from __future__ import annotations

import asyncio
import contextvars
import re
import threading

from vireo import App
from vireo.testclient import TestClient

app = App()
background: list[str] = []
var = contextvars.ContextVar("var", default="unset")


@app.get("/inline")
async def inline():
    return {"loop": id(asyncio.get_running_loop()), "thread": threading.get_ident()}


@app.get("/sleep0")
async def sleep0():
    await asyncio.sleep(0)
    return {"loop": id(asyncio.get_running_loop()), "task": asyncio.current_task() is not None}


_thread_seen = threading.local()


def _first_call_on_this_thread():
    first = not getattr(_thread_seen, "seen", False)
    _thread_seen.seen = True
    return first


@app.get("/anyio-thread")
async def anyio_thread():
    import anyio.to_thread

    return {"new_thread": await anyio.to_thread.run_sync(_first_call_on_this_thread)}


@app.get("/sleep")
async def sleep(ms: int = 10):
    await asyncio.sleep(ms / 1000)
    return f"slept {ms}"


@app.get("/gather")
async def gather():
    async def one(n):
        await asyncio.sleep(0.005)
        return n

    return await asyncio.gather(one(1), one(2), one(3))


@app.get("/spawn")
def spawn():
    async def later():
        await asyncio.sleep(0)
        background.append("done")

    asyncio.get_running_loop().create_task(later())
    return "spawned"


@app.get("/background")
def read_background():
    return background


@app.get("/to-thread")
async def to_thread():
    return await asyncio.to_thread(lambda: "from a thread")


@app.get("/cancelled")
async def cancelled():
    task = asyncio.ensure_future(asyncio.sleep(10))
    await asyncio.sleep(0)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return "cancelled"
    return "not cancelled"


@app.get("/cancel-own-task")
async def cancel_own_task(catch: bool = True):
    await asyncio.sleep(0)
    task = asyncio.current_task()
    assert task is not None and asyncio.iscoroutine(task.get_coro())
    task.cancel()
    if not catch:
        await asyncio.sleep(0)
    try:
        # Cancelled while not waiting for a future: the task throws the cancellation in here.
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        return {"caught": True, "cancelling": task.cancelling()}
    return {"caught": False}


@app.get("/task-introspection")
async def task_introspection():
    await asyncio.sleep(0)
    task = asyncio.current_task()
    return {"repr": repr(task), "stack": [f.f_code.co_name for f in task.get_stack()],
            "name": task.get_name()}


finished_task_coros: list = []


@app.get("/keep-task-coro")
async def keep_task_coro():
    await asyncio.sleep(0)
    finished_task_coros.append(asyncio.current_task().get_coro())
    return "kept"


# Every shape of `throw`'s arguments, the refused ones included.
THROWN = [(ValueError,), (ValueError("v"),), (ValueError, "x"), (ValueError, ("a", "b")),
          (ValueError, ValueError("same")), (ValueError(), "x"), (42,), (), (1, 2, 3, 4),
          (ValueError, None, 5)]


@app.get("/throw-into-finished")
async def throw_into_finished():
    async def done():
        return 1

    reference = done()
    try:
        reference.send(None)
    except StopIteration:
        pass
    resume = finished_task_coros.pop()
    seen = []
    for args in THROWN:
        row = []
        for finished in (resume, reference):
            try:
                finished.throw(*args)
                row.append("nothing raised")
            except BaseException as e:  # noqa: BLE001 - what each raises is the point
                row.append(f"{type(e).__name__}: {e}")
        seen.append(row)
    row = []
    for finished in (resume, reference):
        try:
            finished.send(None)
            row.append("nothing raised")
        except BaseException as e:  # noqa: BLE001
            row.append(f"{type(e).__name__}: {e}")
    seen.append(row)
    return seen


@app.get("/timeout")
async def timeout(ms: int):
    await asyncio.sleep(0)
    try:
        async with asyncio.timeout(ms / 1000):
            await asyncio.sleep(10)
    except TimeoutError:
        return "timed out"
    return "finished"


@app.get("/callbacks")
async def callbacks():
    loop = asyncio.get_running_loop()
    ran: list[str] = []
    errors: list[str] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(str(context["exception"])))

    def fail():
        raise ValueError("callback failed")

    def first():
        ran.append("first")
        # Scheduled while the loop runs its ready callbacks: runs in the next iteration.
        loop.call_soon(ran.append, "scheduled by first")

    try:
        loop.call_soon(first)
        loop.call_soon(ran.append, "cancelled").cancel()
        loop.call_soon(fail)
        loop.call_soon(ran.append, "after the failure")
        threading.Thread(target=loop.call_soon_threadsafe, args=(ran.append, "from a thread")).start()
        for _ in range(100):
            await asyncio.sleep(0)
            if "from a thread" in ran and "scheduled by first" in ran:
                break
    finally:
        loop.set_exception_handler(None)
    return {"ran": ran, "errors": errors}


@app.get("/sync-loop")
def sync_loop():
    return id(asyncio.get_running_loop())


def test_the_driven_loop_runs_callbacks_in_order_skips_cancelled_and_reports_failures():
    with TestClient(app) as client:
        seen = client.get("/callbacks").json()
    ran = seen["ran"]
    assert "from a thread" in ran
    assert [r for r in ran if r != "from a thread"] == [
        "first", "after the failure", "scheduled by first"
    ]
    assert seen["errors"] == ["callback failed"]


def test_async_inline():
    with TestClient(app) as client:
        res = client.get("/inline")
        assert res.status_code == 200
        assert res.json()["thread"] != threading.get_ident(), "runs on the worker thread"


def test_async_suspending():
    with TestClient(app) as client:
        body = client.get("/sleep0").json()
        assert body["task"] is True, "a suspended handler continues in a task"
        assert client.get("/sleep?ms=10").text == "slept 10"
        assert client.get("/gather").json() == [1, 2, 3]
        assert client.get("/to-thread").text == "from a thread"
        assert client.get("/cancelled").text == "cancelled"


def test_no_event_loop_per_request(monkeypatch):
    made = []
    original = asyncio.BaseEventLoop.__init__

    def counting_init(self, *args, **kwargs):
        made.append(self)
        original(self, *args, **kwargs)

    with TestClient(app) as client:
        client.get("/inline")  # the client's one loop exists by now
        monkeypatch.setattr(asyncio.BaseEventLoop, "__init__", counting_init)
        loops = set()
        for _ in range(50):
            loops.add(client.get("/inline").json()["loop"])
            loops.add(client.get("/sleep0").json()["loop"])
            loops.add(client.get("/sync-loop").json())
        assert made == [], "no event loop was created while serving"
        assert len(loops) == 1, "every request saw the same running loop"


def test_anyio_worker_threads_outlive_the_request():
    # anyio keeps its worker threads for the life of the loop's root task, which lasts as
    # long as the app is served.
    with TestClient(app) as client:
        seen = [client.get("/anyio-thread").json()["new_thread"] for _ in range(3)]
    assert seen == [True, False, False]


def test_tasks_created_by_a_handler_run_in_the_background():
    with TestClient(app) as client:
        background.clear()
        assert client.get("/spawn").text == "spawned"
        for _ in range(100):
            if client.get("/background").json() == ["done"]:
                break
        assert background == ["done"]


@app.get("/timeouts")
async def timeouts():
    out = {"inline_task": asyncio.current_task() is not None}
    try:
        await asyncio.wait_for(asyncio.sleep(5), 0.02)
    except asyncio.TimeoutError:
        out["wait_for"] = "timed out"
    if hasattr(asyncio, "timeout"):
        try:
            async with asyncio.timeout(0.02):
                await asyncio.sleep(5)
        except TimeoutError:
            out["timeout"] = "timed out"
        async with asyncio.timeout(1):
            out["not_expired"] = await asyncio.sleep(0.001, "fine")
    if hasattr(asyncio, "TaskGroup"):
        async with asyncio.TaskGroup() as group:
            first = group.create_task(asyncio.sleep(0.001, 1))
            second = group.create_task(asyncio.sleep(0.002, 2))
        out["group"] = [first.result(), second.result()]
    return out


def test_timeouts_and_task_groups_before_the_first_suspension():
    with TestClient(app) as client:
        body = client.get("/timeouts").json()
    assert body["inline_task"] is True
    assert body["wait_for"] == "timed out"
    if hasattr(asyncio, "timeout"):
        assert body["timeout"] == "timed out"
        assert body["not_expired"] == "fine"
    if hasattr(asyncio, "TaskGroup"):
        assert body["group"] == [1, 2]


request_id = contextvars.ContextVar("request_id", default=None)


@app.get("/ctx/set")
def ctx_set(value: str):
    request_id.set(value)
    return "set"


@app.get("/ctx/get")
def ctx_get():
    return {"value": request_id.get()}


@app.get("/ctx/async")
async def ctx_async(value: str = ""):
    before = request_id.get()
    if value:
        request_id.set(value)
    await asyncio.sleep(0.001)
    return {"before": before, "after": request_id.get()}


def test_each_request_has_its_own_context():
    with TestClient(app) as client:
        assert client.get("/ctx/set?value=a").text == "set"
        assert client.get("/ctx/get").json() == {"value": None}, "a value set by one request leaked"
        assert client.get("/ctx/async?value=b").json() == {"before": None, "after": "b"}
        assert client.get("/ctx/async").json() == {"before": None, "after": None}
        assert client.get("/ctx/get").json() == {"value": None}


made_by_factory: list[asyncio.Task] = []


@app.get("/task-factory")
async def with_task_factory():
    loop = asyncio.get_running_loop()

    def factory(loop, coro, **kwargs):
        task = asyncio.Task(coro, loop=loop, **kwargs)
        made_by_factory.append(task)
        return task

    loop.set_task_factory(factory)
    try:
        await asyncio.sleep(0)
        return {"by_factory": asyncio.current_task() in made_by_factory}
    finally:
        loop.set_task_factory(None)


def test_a_task_factory_makes_the_task_a_suspended_handler_goes_on_in():
    with TestClient(app) as client:
        assert client.get("/task-factory").json() == {"by_factory": True}
        assert client.get("/ctx/async?value=c").json() == {"before": None, "after": "c"}


def test_a_suspended_handler_can_catch_its_own_tasks_cancellation():
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/cancel-own-task").json() == {"caught": True, "cancelling": 1}
        # Uncaught, the cancellation is the handler's failure, and the worker serves on.
        assert client.get("/cancel-own-task?catch=false").status_code == 500
        assert client.get("/timeout?ms=5").text == "timed out"
        assert client.get("/sleep0").json()["task"] is True


def test_a_suspended_handlers_task_shows_the_coroutine_it_carries_on():
    with TestClient(app) as client:
        seen = client.get("/task-introspection").json()
        again = client.get("/task-introspection").json()["name"]
    # The Task's repr names the handler it carries on, and its stack is the handler's frame.
    assert "task_introspection" in seen["repr"]
    assert seen["stack"] == ["task_introspection"]
    # Named natively, and numbered as handlers suspend.
    first = int(re.fullmatch(r"vireo-handler-(\d+)", seen["name"])[1])
    assert int(re.fullmatch(r"vireo-handler-(\d+)", again)[1]) > first


def test_the_coroutine_a_finished_task_ran_takes_a_throw_as_a_coroutine_does():
    # Thrown into or sent to after it finished, the native coroutine a suspended handler's
    # Task runs raises what a finished Python coroutine raises, refusals of bad arguments
    # included.
    with TestClient(app) as client:
        assert client.get("/keep-task-coro").text == "kept"
        seen = client.get("/throw-into-finished").json()
    assert len(seen) == len(THROWN) + 1
    for what, (resume, reference) in zip([*THROWN, "send(None)"], seen):
        assert resume == reference, what
