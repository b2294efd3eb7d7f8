"""A Vireo App for `vireo serve native_app:app` (or `:failing` for one whose startup raises):
typed parameters, JSON, a body, a blocking handler, and its startup and shutdown hooks."""

from __future__ import annotations

import os
import threading

from vireo import App, Request

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


@app.post("/size")
async def size(request: Request):
    return {"size": len(await request.body())}


@app.get("/blocking", blocking=True)
def blocking():
    return {"main_thread": threading.current_thread() is threading.main_thread()}


failing = App()


@failing.on_event("startup")
def refuse():
    raise RuntimeError("the database is not there")
