"""A raw WSGI app for the server tests."""

import json
import sys
import threading
import time
from urllib.parse import parse_qs

closed = []
_thread_seen = threading.local()
# Requests in /overlap now, and the most there have been at once.
_overlap = {"active": 0, "peak": 0}
_overlap_changed = threading.Condition()


class Tracked:
    """A result iterable with close(), counted when closed."""

    def __init__(self, chunks, name, fail_at=None):
        self.chunks = chunks
        self.name = name
        self.fail_at = fail_at

    def __iter__(self):
        for i, chunk in enumerate(self.chunks):
            if i == self.fail_at:
                raise ValueError("boom while iterating")
            yield chunk

    def close(self):
        closed.append(self.name)


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path.startswith("/environ"):
        body = json.dumps({k: v for k, v in environ.items() if isinstance(v, (str, bool, int, tuple))}
                          | {"input_type": type(environ["wsgi.input"]).__name__,
                             "errors_is_stderr": environ["wsgi.errors"] is sys.stderr}).encode()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]
    if path == "/scribble":
        # An app may change its environ: the next request's must not show it.
        environ.update({"REQUEST_METHOD": "SCRIBBLED", "SERVER_PROTOCOL": "HTTP/9",
                        "wsgi.url_scheme": "gopher", "HTTP_X_LEFT": "behind"})
        start_response("204 No Content", [])
        return []
    if path == "/thread-local":
        # A pool thread keeps its thread state, and so its thread-local values, between requests.
        first = not getattr(_thread_seen, "seen", False)
        _thread_seen.seen = True
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"new" if first else b"seen"]
    if path == "/policy":
        # The scheduling policy of the pool thread running the app: field 41 of its stat line
        # (0 SCHED_OTHER, 3 SCHED_BATCH); the fields after the command name start past its `)`.
        with open("/proc/thread-self/stat") as f:
            stat = f.read()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [stat[stat.rindex(")") + 2:].split()[41 - 3].encode()]
    if path == "/echo":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        data = environ["wsgi.input"].read(length) if length else environ["wsgi.input"].read()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [str(len(data)).encode(), b":", str(sum(data) % 65521).encode()]
    if path == "/lines":
        stream = environ["wsgi.input"]
        first = stream.readline()
        rest = list(stream)
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"first": first.decode(), "rest": len(rest),
                            "last": rest[-1].decode() if rest else None,
                            "after_eof": stream.read().decode()}).encode()]
    if path == "/partial":
        head = environ["wsgi.input"].read(10)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [head]
    if path == "/gen":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return Tracked([b"one,", b"", b"two,", b"three"], "gen")
    if path == "/gen-fails":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return Tracked([b"one,", b"two,", b"three"], "gen-fails", fail_at=2)
    if path.startswith("/sized"):
        # A declared length and an iterable result, as Flask and Django answer.
        fail_at = 1 if path == "/sized-fails-at-end" else None
        more = {"/sized-overlong": [b"ef"], "/sized-fails-at-end": [b""]}.get(path, [])
        chunks = [b"abcd", *more]
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "4")])
        return Tracked(chunks, path[1:], fail_at=fail_at)
    if path == "/exc-before":
        start_response("200 OK", [("Content-Type", "text/plain")])
        try:
            raise KeyError("caught")
        except KeyError:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")], sys.exc_info())
        return Tracked([b"recovered"], "exc-before")
    if path == "/exc-after":
        def gen():
            yield b"first"
            try:
                raise KeyError("late")
            except KeyError:
                start_response("500 Internal Server Error", [], sys.exc_info())
            yield b"never"
        start_response("200 OK", [("Content-Type", "text/plain")])
        return gen()
    if path == "/twice":
        start_response("200 OK", [])
        start_response("200 OK", [])
        return [b"no"]
    if path == "/raise":
        raise RuntimeError("wsgi boom")
    if path == "/closed":
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(closed).encode()]
    if path == "/file":
        start_response("200 OK", [("Content-Type", "text/x-python")])
        return environ["wsgi.file_wrapper"](open(__file__, "rb"), 1024)
    if path == "/write":
        write = start_response("200 OK", [("Content-Type", "text/plain")])
        write(b"written,")
        return [b"returned"]
    if path == "/write-while-iterating":
        def gen():
            write(b"written,")
            yield b"yielded,"
            write(b"written again,")
            yield b"last"
        write = start_response("200 OK", [("Content-Type", "text/plain")])
        return gen()
    if path == "/write-then-exc-info":
        # A non-empty write() sent the head: exc_info now re-raises, the status cannot change.
        write = start_response("200 OK", [("Content-Type", "text/plain")])
        write(b"partial")
        try:
            raise KeyError("after write")
        except KeyError:
            start_response("500 Internal Server Error", [], sys.exc_info())
        return [b"never"]
    if path == "/bad-status-streamed":
        start_response("abc", [("Content-Type", "text/plain")])
        return Tracked([b"one", b"two"], "bad-status-streamed")
    if path == "/int-chunk":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [5]
    if path == "/latin1-header":
        start_response("200 OK", [("Content-Type", "text/plain"), ("X-Name", "caf\xe9")])
        return [b"ok"]
    if path == "/wide-header":
        start_response("200 OK", [("Content-Type", "text/plain"), ("X-Name", "\u20ac")])
        return [b"ok"]
    if path == "/read-after-return":
        # Reads the body only while its response streams, after the app returned.
        stream = environ["wsgi.input"]

        def gen():
            yield b"start,"
            yield str(len(stream.read())).encode()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return gen()
    if path == "/overlap":
        # Waits (up to `wait` seconds) until `n` requests are in here at once; answers the
        # most that were.
        query = {k: v[0] for k, v in parse_qs(environ["QUERY_STRING"]).items()}
        wanted, wait = int(query["n"]), float(query["wait"])
        with _overlap_changed:
            _overlap["active"] += 1
            _overlap["peak"] = max(_overlap["peak"], _overlap["active"])
            _overlap_changed.notify_all()
            _overlap_changed.wait_for(lambda: _overlap["active"] >= wanted, timeout=wait)
            peak = _overlap["peak"]
            _overlap["active"] -= 1
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [str(peak).encode()]
    if path == "/list-pair-bytearray":
        # A header pair may be any two-item sequence; a body chunk any bytes-like object.
        start_response("200 OK", [["Content-Type", "text/plain"], ("X-Pair", "list")])
        return [bytearray(b"from "), memoryview(b"buffers")]
    if path == "/three-item-header":
        start_response("200 OK", [("Content-Type", "text/plain", "extra")])
        return [b"never"]
    if path == "/bytes-status":
        start_response(b"200 OK", [])
        return [b"never"]
    if path == "/no-start":
        return Tracked([b"never"], "no-start")
    if path == "/str-in-list":
        start_response("200 OK", [])
        return ["not bytes"]
    if path == "/slow":
        time.sleep(1.0)
        start_response("200 OK", [])
        return [b"slow"]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]
