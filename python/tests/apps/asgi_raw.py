"""A raw ASGI 3 app for the server tests: it echoes its scope, streams, and misbehaves on
purpose, one path per case."""

import asyncio
import contextvars
import json
import threading

listener_saw = []
events = {}
_thread_seen = threading.local()
request_var = contextvars.ContextVar("request_var", default="unset")
# What `/hold-in-context` found once its request was done.
context_release: dict = {}
made_by_factory = []


def _task_factory(loop, coro, **kwargs):
    task = asyncio.Task(coro, loop=loop, **kwargs)
    made_by_factory.append(task)
    return task


def _first_call_on_this_thread():
    first = not getattr(_thread_seen, "seen", False)
    _thread_seen.seen = True
    return first


def _jsonable(value):
    if isinstance(value, bytes):
        return {"bytes": list(value)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


async def _json(send, value, status=200):
    body = json.dumps(value).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _read_all(receive):
    chunks = []
    while True:
        message = await receive()
        assert message["type"] == "http.request", message
        chunks.append(message["body"])
        if not message.get("more_body", False):
            return chunks


async def lifespan(scope, receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            scope["state"]["started"] = True
            scope["state"]["shared"] = []
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            print("app: lifespan shutdown", flush=True)
            await send({"type": "lifespan.shutdown.complete"})
            return


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        return await lifespan(scope, receive, send)
    path = scope["path"]
    if path.endswith("/scope") or path.startswith("/scope"):
        # Each request's state is a shallow copy: a key added here is not seen by the next.
        scope["state"]["added_by_request"] = True
        scope["state"]["shared"].append(1)
        seen = _jsonable(dict(scope))
        # Changed after it is read: the next request's scope must not see any of this.
        scope["asgi"]["spec_version"] = "changed"
        scope["method"] = "CHANGED"
        scope["http_version"] = "changed"
        return await _json(send, seen)
    if path == "/to-thread":
        import anyio.to_thread

        first = await anyio.to_thread.run_sync(_first_call_on_this_thread)
        return await _json(send, {"new_thread": first})
    if path == "/one-task":
        import anyio

        # A cancel scope entered before the first suspension and left after several, one of
        # them cut short by the scope: all of it in the task the request started in.
        first = asyncio.current_task()
        with anyio.move_on_after(0.05) as deadline:
            await asyncio.sleep(0)
            await asyncio.sleep(10)
        return await _json(send, {"same_task": asyncio.current_task() is first,
                                  "is_task": isinstance(first, asyncio.Task),
                                  "cut_short": deadline.cancelled_caught})
    if path == "/context":
        # Each request starts in a copy of the server's context, as a task of its own.
        seen = request_var.get()
        request_var.set("set by an earlier request")
        task = asyncio.current_task()
        return await _json(send, {"seen": seen, "is_task": isinstance(task, asyncio.Task),
                                  "by_factory": task in made_by_factory,
                                  "name": task.get_name()})
    if path == "/hold-in-context":
        # An object only this request's context holds: once the request is done, nothing
        # should keep it. Checked a little later, on the loop, after the task has gone.
        import gc
        import weakref

        class Held:
            pass

        held = Held()
        request_var.set(held)
        ref = weakref.ref(held)
        del held

        def check():
            gc.collect()
            context_release["freed"] = ref() is None

        # In an empty context: by default the timer would keep a copy of this one.
        asyncio.get_running_loop().call_later(0.2, check, context=contextvars.Context())
        return await _json(send, {})
    if path == "/context-released":
        return await _json(send, context_release)
    if path == "/set-task-factory":
        asyncio.get_running_loop().set_task_factory(_task_factory)
        return await _json(send, {})
    if path == "/driven-by-hand":
        # What `send` returns is an awaitable a generic driver can step with `send(None)`.
        steps = []
        for message in ({"type": "http.response.start", "status": 200, "headers": []},
                        {"type": "http.response.body", "body": b"by hand"}):
            it = send(message).__await__()
            try:
                it.send(None)
                steps.append("yielded")
            except StopIteration as stop:
                steps.append(stop.value)
        assert steps == [None, None], steps
        return None
    if path == "/start-then-read":
        # Starts the response, then reads the body (streamed when `stream`), and echoes it.
        streamed = scope["query_string"] == b"stream"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain")]})
        if streamed:
            await send({"type": "http.response.body", "body": b"first,", "more_body": True})
            await asyncio.sleep(0.05)  # the response is on its way before the body is asked for
        body = b"".join(await _read_all(receive))
        return await send({"type": "http.response.body", "body": body})
    if path == "/receive-after-cancel":
        # Waits for each message with a short timeout, as polling `is_disconnected()` does: a
        # receive() cancelled while it waits loses nothing and leaves receive() usable.
        body, timeouts = b"", 0
        while timeouts < 200:
            try:
                message = await asyncio.wait_for(receive(), 0.02)
            except asyncio.TimeoutError:
                timeouts += 1
                continue
            body += message["body"]
            if not message.get("more_body", False):
                break
        return await _json(send, {"body": body.decode(), "timed_out": timeouts > 0})
    if path == "/fields":
        # A response field for each `name=value` of the query string.
        pairs = [p.split(b"=", 1) for p in scope["query_string"].split(b"&") if b"=" in p]
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(n, v) for n, v in pairs] + [(b"content-length", b"2")]})
        return await send({"type": "http.response.body", "body": b"ok"})
    if path == "/echo":
        chunks = await _read_all(receive)
        body = b"".join(chunks)
        return await _json(send, {"messages": len(chunks), "length": len(body),
                                  "sum": sum(body) % 65521})
    if path == "/echo-stream":
        # Answers before reading the body; the server reads the rest for it.
        first = await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": first["body"], "more_body": True})
        more = first.get("more_body", False)
        while more:
            message = await receive()
            await send({"type": "http.response.body", "body": message["body"], "more_body": True})
            more = message.get("more_body", False)
        await send({"type": "http.response.body", "body": b""})
        return
    if path == "/stream":
        qs = dict(p.split("=") for p in scope["query_string"].decode().split("&") if p)
        n = int(qs.get("n", "3"))
        size = int(qs.get("size", "10"))

        async def listen():
            # As Starlette's StreamingResponse does: wait for the disconnect while streaming.
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    listener_saw.append("http.disconnect")
                    return

        task = asyncio.get_running_loop().create_task(listen())
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain"), (b"x-chunks", str(n).encode())]})
        for i in range(n):
            await send({"type": "http.response.body", "body": bytes([65 + i % 26]) * size,
                        "more_body": True})
            await asyncio.sleep(0)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        await task
        return
    if path == "/listener":
        return await _json(send, listener_saw)
    if path == "/raise-after-disconnect":
        await receive()
        await receive()  # http.disconnect, once the client has left
        raise RuntimeError("raised after the client left")
    if path == "/wait-for-disconnect":
        first = await receive()
        while first["type"] == "http.request" and first["more_body"]:
            first = await receive()  # the rest of a body sent in more than one chunk
        second = await receive()  # nothing is sent: this waits until the client leaves
        events["wait-for-disconnect"] = [first["type"], second["type"]]
        return
    if path == "/stream-until-disconnect":
        # As Starlette's streaming responses do: stop sending once the client has left.
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        message = await receive()
        while message["type"] != "http.disconnect":
            message = await receive()
        events["stream-until-disconnect"] = message["type"]
        return
    if path == "/head-then-wait":
        # A head with no body to follow until the client leaves (a quiet event stream).
        await send({"type": "http.response.start", "status": 200, "headers": [(b"x-head", b"alone")]})
        message = await receive()
        while message["type"] != "http.disconnect":
            message = await receive()
        return
    if path == "/events":
        return await _json(send, events)
    if path == "/raise-before":
        raise ValueError("boom before start")
    if path == "/raise-after":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        await asyncio.sleep(0.01)
        raise ValueError("boom after start")
    if path == "/body-before-start":
        await send({"type": "http.response.body", "body": b"oops"})
        return
    if path == "/double-start":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.start", "status": 200, "headers": []})
        return
    if path == "/invalid-header":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"bad name", b"x")]})
        await send({"type": "http.response.body", "body": b"no"})
        return
    if path == "/invalid-value":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"x-bad", b"a\r\nb: c")]})
        await send({"type": "http.response.body", "body": b"no"})
        return
    if path == "/no-response":
        return
    if path == "/incomplete":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"half", "more_body": True})
        await asyncio.sleep(0.01)
        return
    if path == "/complete-then-raise":
        # As Starlette's error middleware does: answer 500, then re-raise for the server log.
        await send({"type": "http.response.start", "status": 500, "headers": []})
        await send({"type": "http.response.body", "body": b"handled"})
        raise RuntimeError("re-raised after the response")
    if path == "/after":
        # Answers, then works on after the response, as a background task does; prints when
        # done, or when cancelled.
        seconds = float(scope["query_string"] or b"0.5")
        await _json(send, {"answered": True})
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            print("app: work after the response cancelled", flush=True)
            raise
        print("app: work after the response done", flush=True)
        return None
    if path == "/block":
        event = events.setdefault("block", asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), 5)
        except asyncio.TimeoutError:
            pass
        return await _json(send, {"blocked": True})
    if path == "/release":
        events.setdefault("block", asyncio.Event()).set()
        events.pop("block")
        return await _json(send, {"released": True})
    if path == "/slow":
        await asyncio.sleep(0.5)
        return await _json(send, {"slow": True})
    if path == "/big":
        chunk = b"x" * 65536
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(64):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    if path == "/pathsend":
        assert "http.response.pathsend" in scope["extensions"]
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/x-python")]})
        await send({"type": "http.response.pathsend", "path": __file__})
        return
    if path == "/pathsend-missing":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.pathsend", "path": __file__ + ".missing"})
        return
    if path == "/head-length":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"1234")]})
        await send({"type": "http.response.body", "body": b""})
        return
    if path in ("/trailers", "/trailers-missing", "/trailers-missing-late"):
        assert "http.response.trailers" in scope["extensions"]
        await send({"type": "http.response.start", "status": 200, "trailers": True,
                    "headers": [(b"content-type", b"text/plain"), (b"trailer", b"x-sum")]})
        await send({"type": "http.response.body", "body": b"abc", "more_body": True})
        if path == "/trailers-missing-late":
            await asyncio.sleep(0.05)  # the response goes out as a stream meanwhile
        await send({"type": "http.response.body", "body": b"def"})
        if path.startswith("/trailers-missing"):
            return
        await send({"type": "http.response.trailers", "headers": [(b"x-sum", b"597")],
                    "more_trailers": True})
        await send({"type": "http.response.trailers", "headers": [(b"x-count", b"6")]})
        return
    if path == "/trailers-unpromised":
        await send({"type": "http.response.start", "status": 200})
        await send({"type": "http.response.body", "body": b"plain"})
        try:
            await send({"type": "http.response.trailers", "headers": []})
        except RuntimeError as e:
            events["trailers-unpromised"] = str(e)
        return
    await _json(send, {"path": path}, status=404)


class _AppCall:
    """An awaitable that is not a coroutine: awaiting it awaits the app's coroutine."""

    def __init__(self, coro):
        self.coro = coro

    def __await__(self):
        return self.coro.__await__()


class _CallReturningAwaitable:
    """An ASGI app whose `__call__` is a plain method returning an awaitable."""

    def __call__(self, scope, receive, send):
        return _AppCall(app(scope, receive, send))


awaitable_app = _CallReturningAwaitable()
