"""A Vireo App for `vireo serve native_app:app` (or `:failing` for one whose startup raises):
typed parameters, JSON, a body, a blocking handler, a background task, and its startup and
shutdown hooks."""

from __future__ import annotations

import asyncio
import os
import threading

from vireo import App, BackgroundTasks, Request

app = App()
started: list[int] = []


@app.on_event("startup")
def startup():
    started.append(os.getpid())


@app.on_event("shutdown")
def shutdown():
    print("native: shutdown", flush=True)


@app.get("/users/{user_id}")
def user(user_id: int, q: str | None = None):
    return {"id": user_id, "q": q, "started": started == [os.getpid()]}


@app.get("/client")
def client(request: Request):
    return {"host": request.client.host, "port": request.client.port,
            "tuple": list(request.client)}


@app.post("/size")
async def size(request: Request):
    return {"size": len(await request.body())}


@app.get("/blocking", blocking=True)
def blocking():
    return {"main_thread": threading.current_thread() is threading.main_thread()}


async def _later(seconds: float) -> None:
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        print("native: background task cancelled", flush=True)
        raise
    print("native: background task done", flush=True)


@app.get("/later")
def later(tasks: BackgroundTasks, seconds: float = 0.5):
    tasks.add_task(_later, seconds)
    return "answered"


failing = App()


@failing.on_event("startup")
def refuse():
    raise RuntimeError("the database is not there")
