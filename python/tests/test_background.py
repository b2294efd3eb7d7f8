"""Background tasks: a `BackgroundTasks` parameter (also in dependencies) and `background=` on
responses; sync tasks off the worker, async ones on its loop, errors logged."""

from __future__ import annotations

import asyncio
import logging
import threading

from vireo import (
    App,
    BackgroundTask,
    BackgroundTasks,
    Depends,
    JSONResponse,
    StreamingResponse,
)
from vireo.testclient import TestClient


def test_tasks_run_after_the_handler_in_order_added() -> None:
    app = App()
    log: list[str] = []
    threads: list[str] = []

    def write(line: str) -> None:
        threads.append(threading.current_thread().name)
        log.append(line)

    async def awrite(line: str, *, suffix: str = "") -> None:
        await asyncio.sleep(0)
        log.append(line + suffix)

    @app.post("/sync", status_code=201)
    def sync_route(name: str, tasks: BackgroundTasks) -> dict:
        tasks.add_task(write, f"hello {name}")
        tasks.add_task(write, "second")
        log.append("handler")
        return {"queued": name}

    @app.post("/async")
    async def async_route(tasks: BackgroundTasks) -> str:
        tasks.add_task(awrite, "a", suffix="!")
        tasks.add_task(write, "then sync")
        log.append("handler")
        return "ok"

    with TestClient(app) as client:
        res = client.post("/sync?name=ann")
        # The route's status and JSON body are kept though the response was made early.
        assert (res.status_code, res.json()) == (201, {"queued": "ann"})
        assert res.headers["content-type"] == "application/json"
        assert log == ["handler", "hello ann", "second"]
        assert all(name.startswith("vireo-background") for name in threads)
        log.clear()
        assert client.post("/async").text == "ok"
        assert log == ["handler", "a!", "then sync"]


def test_tasks_from_dependencies_share_the_request_s_tasks() -> None:
    app = App()
    log: list[str] = []

    def audit(tasks: BackgroundTasks, user: str = "anon") -> str:
        tasks.add_task(log.append, f"audit {user}")
        return user

    @app.get("/")
    def index(tasks: BackgroundTasks, user: str = Depends(audit)) -> str:
        tasks.add_task(log.append, "index")
        return user

    with TestClient(app) as client:
        assert client.get("/?user=bo").text == "bo"
        assert log == ["audit bo", "index"]


def test_background_on_responses() -> None:
    app = App()
    log: list[str] = []

    @app.get("/one")
    def one() -> JSONResponse:
        return JSONResponse({"a": 1}, background=BackgroundTask(log.append, "one"))

    @app.get("/stream")
    def stream() -> StreamingResponse:
        tasks = BackgroundTasks()
        tasks.add_task(log.append, "streamed")
        return StreamingResponse(iter([b"x", b"y"]), background=tasks)

    @app.get("/own")
    def own(tasks: BackgroundTasks) -> JSONResponse:
        # A response with its own background keeps it; the parameter's tasks are not added.
        tasks.add_task(log.append, "param")
        return JSONResponse(1, background=BackgroundTask(log.append, "own"))

    with TestClient(app) as client:
        assert client.get("/one").json() == {"a": 1}
        assert client.get("/stream").content == b"xy"
        assert client.get("/own").json() == 1
        assert log == ["one", "streamed", "own"]


def test_a_failing_task_is_logged_and_the_worker_goes_on(caplog) -> None:
    app = App()
    log: list[str] = []

    def broken() -> None:
        raise RuntimeError("task broke")

    async def abroken() -> None:
        raise RuntimeError("async task broke")

    @app.get("/")
    def index(tasks: BackgroundTasks) -> str:
        tasks.add_task(broken)
        tasks.add_task(abroken)
        tasks.add_task(log.append, "after")
        return "fine"

    with caplog.at_level(logging.ERROR, logger="vireo"), TestClient(app) as client:
        assert client.get("/").text == "fine"
        assert client.get("/").text == "fine"
    assert log == ["after", "after"]
    messages = [r.getMessage() for r in caplog.records]
    broken_name = f"{test_a_failing_task_is_logged_and_the_worker_goes_on.__name__}.<locals>.broken"
    assert messages.count(f"Exception in background task {broken_name}") == 2
    assert any(r.exc_info and "async task broke" in str(r.exc_info[1]) for r in caplog.records)


def test_a_sync_task_does_not_stall_the_worker() -> None:
    app = App()
    release = threading.Event()
    finished: list[str] = []

    def wait_for_release() -> None:
        assert release.wait(30)
        finished.append("task")

    @app.get("/start")
    def start() -> JSONResponse:
        return JSONResponse("started", background=BackgroundTask(wait_for_release))

    @app.get("/release")
    def release_it() -> str:
        release.set()
        return "released"

    with TestClient(app) as client:
        # The task blocks until the next request releases it: that request is served by the
        # same worker while the task waits, so the worker is not held by the task.
        runner = client._background
        runner.wait = lambda timeout=None: None  # do not wait between requests
        assert client.get("/start").json() == "started"
        assert client.get("/release").text == "released"
        type(runner).wait(runner, 30)
    assert finished == ["task"]
