"""A Vireo App for `vireo serve sse_app:app`: a Server-Sent Events route whose sync generator
sleeps between events, and a plain route to ask meanwhile."""

import time

from vireo import App
from vireo.sse import EventSourceResponse

app = App()


@app.get("/slow-sync", response_class=EventSourceResponse)
def slow_sync():
    yield {"n": 1}
    time.sleep(0.5)
    yield {"n": 2}


@app.get("/other")
def other():
    return {"ok": True}
