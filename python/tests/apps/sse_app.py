"""A Vireo App for `vireo serve sse_app:app`: a Server-Sent Events route whose sync generator
blocks until another request (`/release`) is served, which only a free worker can serve."""

import threading

from vireo import App
from vireo.sse import EventSourceResponse

app = App()
released = threading.Event()


@app.get("/waiting", response_class=EventSourceResponse)
def waiting():
    yield {"n": 1}
    yield {"released": released.wait(10)}


@app.get("/release")
def release():
    released.set()
    return {"ok": True}
