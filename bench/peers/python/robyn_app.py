"""Robyn peer: one process, one worker. Run: python robyn_app.py PORT
(Robyn reads its own flags from the command line too: --processes 1 --workers 1 are passed)."""
import asyncio
import os
import signal
import sys

from robyn import Response, Robyn

app = Robyn(__file__)


# The app-wide middleware marks the request; /users/:id checks the mark.
@app.before_request()
def tag(request):
    request.headers.set("x-bench-tag", "middleware")
    return request


@app.get("/")
def hello():
    return "Hello, World!"


@app.get("/json")
def json_():
    return {"message": "Hello, World!"}


@app.get("/users/:id")
def user(request):
    if request.headers.get("x-bench-tag") != "middleware":
        return Response(status_code=500, headers={}, description="")
    try:
        user_id = int(request.path_params["id"])
    except ValueError:
        return Response(status_code=422, headers={}, description="id is not an integer")
    return f"User: {user_id}"


@app.get("/favicon.ico")
def favicon():
    return Response(status_code=204, headers={}, description="")


@app.get("/compute")
def compute():
    return str(sum(i * i for i in range(1000)))


@app.get("/async")
async def wait(request):
    ms = int(request.query_params.get("ms", "0"))
    await asyncio.sleep(ms / 1000)
    return f"waited {ms}"


if __name__ == "__main__":
    port = int(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].isdigit() else os.environ.get("PORT", 8080))
    # With one process Robyn serves from this one and installs no SIGTERM handler, and its
    # Rust server's own handler does not end the process: exit here instead.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    app.start(host="127.0.0.1", port=port)
