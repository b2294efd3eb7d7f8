"""`vireo serve` with a raw ASGI app over real sockets: the scope, streaming both ways,
lifespan, and apps that break the protocol."""

from __future__ import annotations

import http.client
import json
import re
import socket
import time

import pytest


def scope_of(served, path, **kw):
    status, _, body = served.request("GET", path, **kw)
    assert status == 200, body
    return json.loads(body)


def b(value):
    return bytes(value["bytes"])


# Longer than the stack buffer a header name is lower-cased in.
LONG_NAME = "X-A-Header-Name-" + "Long" * 16


def test_http_scope_has_every_key(serve):
    served = serve("asgi_raw:app")
    scope = scope_of(
        served, "/scope/caf%C3%A9%20x?a=1&a=2&b=%20c",
        headers={"X-Custom": "One", "x-custom": "two", "Cookie": "k=v", LONG_NAME: "long"},
    )
    assert scope["type"] == "http"
    assert scope["asgi"] == {"version": "3.0", "spec_version": "2.3"}
    assert scope["http_version"] == "1.1"
    assert scope["method"] == "GET"
    assert scope["scheme"] == "http"
    assert scope["path"] == "/scope/café x"
    assert b(scope["raw_path"]) == b"/scope/caf%C3%A9%20x"
    assert b(scope["query_string"]) == b"a=1&a=2&b=%20c"
    assert scope["root_path"] == ""
    headers = [(b(n), b(v)) for n, v in scope["headers"]]
    assert (b"x-custom", b"One") in headers and (b"x-custom", b"two") in headers
    assert headers.index((b"x-custom", b"One")) < headers.index((b"x-custom", b"two"))
    assert all(n == n.lower() for n, _ in headers)
    assert (LONG_NAME.lower().encode(), b"long") in headers
    assert scope["client"][0] == "127.0.0.1" and scope["client"][1] > 0
    assert scope["server"] == ["127.0.0.1", served.port]
    # The lifespan's state, as a shallow copy per request.
    assert scope["state"]["started"] is True
    assert "added_by_request" in scope["state"]
    again = scope_of(served, "/scope")
    assert again["state"]["shared"] == [1, 1], "the copy is shallow: the list is shared"
    assert served.stop() == 0


def test_each_response_has_only_the_fields_its_app_sent(serve):
    # Responses on one worker take turns with the same header maps: none may keep another's
    # fields.
    served = serve("asgi_raw:app")
    status, first, _ = served.get("/fields?x-one=1&x-two=2")
    assert status == 200
    assert [(n, v) for n, v in first if n.startswith("x-")] == [("x-one", "1"), ("x-two", "2")]
    for _ in range(3):
        status, fields, body = served.get("/fields?x-three=3")
        assert (status, body) == (200, b"ok")
        assert [(n, v) for n, v in fields if n.startswith("x-")] == [("x-three", "3")]
    assert served.stop() == 0


def test_each_scope_has_its_own_method_version_and_asgi_values(serve):
    # Scopes start from a shared template: what one request's scope holds, or what its app
    # changes in it, is never seen by the next.
    served = serve("asgi_raw:app")
    for method in ["GET", "POST", "DELETE", "GET", "PATCH"]:
        status, _, body = served.request(method, "/scope", body=b"" if method != "GET" else None)
        assert status == 200, body
        scope = json.loads(body)
        assert (scope["method"], scope["http_version"]) == (method, "1.1")
        assert scope["asgi"] == {"version": "3.0", "spec_version": "2.3"}
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(b"GET /scope HTTP/1.0\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    scope = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    assert (scope["method"], scope["http_version"]) == ("GET", "1.0")
    assert scope_of(served, "/scope")["http_version"] == "1.1"
    assert served.stop() == 0


def test_anyio_worker_threads_outlive_the_request(serve):
    # anyio ties its worker threads to the loop's root task: one that lasts as long as the
    # server, not as long as the request that started the thread.
    served = serve("asgi_raw:app")
    seen = [scope_of(served, "/to-thread")["new_thread"] for _ in range(3)]
    assert seen == [True, False, False]


def test_send_awaitables_complete_under_a_generic_driver(serve):
    served = serve("asgi_raw:app")
    status, _, body = served.request("GET", "/driven-by-hand")
    assert (status, body) == (200, b"by hand")


def test_the_app_runs_in_one_task_across_its_suspensions(serve):
    # Each request is one asyncio task from its first step to its last: a cancel scope
    # entered before the first await still works after it, and can cancel.
    served = serve("asgi_raw:app")
    assert scope_of(served, "/one-task") == {"same_task": True, "is_task": True, "cut_short": True}


def _tasks(served, count):
    """`/context` asked `count` times: what each request's task saw, and the tasks' names."""
    seen = [scope_of(served, "/context") for _ in range(count)]
    return seen, [each.pop("name") for each in seen]


def test_each_request_is_a_task_of_its_own_in_a_copy_of_the_context(serve):
    served = serve("asgi_raw:app")
    expected = {"seen": "unset", "is_task": True, "by_factory": False}
    seen, names = _tasks(served, 2)
    assert seen == [expected, expected]
    # Each task has a name of its own, numbered as the requests come.
    numbers = [int(re.fullmatch(r"asgi-request-(\d+)", name)[1]) for name in names]
    assert numbers[1] > numbers[0]
    # A task factory the app sets on the loop makes the tasks of the requests that follow.
    scope_of(served, "/set-task-factory")
    seen, names = _tasks(served, 2)
    assert seen == [{**expected, "by_factory": True}] * 2
    assert all(re.fullmatch(r"Task-\d+", name) for name in names), names
    assert served.stop() == 0


def test_a_requests_context_is_let_go_when_it_is_done(serve):
    # What a request keeps in a context variable goes with its task, not with the next request.
    served = serve("asgi_raw:app")
    scope_of(served, "/hold-in-context")
    time.sleep(0.6)
    assert scope_of(served, "/context-released") == {"freed": True}
    assert served.stop() == 0


def test_an_app_whose_call_returns_an_awaitable_that_is_not_a_coroutine(serve):
    served = serve("asgi_raw:awaitable_app", "--interface", "asgi")
    # Twice: each request is a task of its own, in a fresh copy of the context.
    expected = {"seen": "unset", "is_task": True, "by_factory": False}
    seen, names = _tasks(served, 2)
    assert seen == [expected, expected] and names[0] != names[1]
    assert served.request("GET", "/missing")[0] == 404
    assert served.stop() == 0


def test_root_path_and_proxy_headers(serve):
    served = serve("asgi_raw:app", "--root-path", "/api", "--proxy-headers",
                   "--forwarded-allow-ips", "127.0.0.1")
    scope = scope_of(served, "/scope", headers={
        "X-Forwarded-For": "203.0.113.9, 127.0.0.1", "X-Forwarded-Proto": "https"})
    assert scope["root_path"] == "/api"
    assert scope["path"] == "/api/scope"
    assert b(scope["raw_path"]) == b"/api/scope"
    assert scope["client"] == ["203.0.113.9", 0]
    assert scope["scheme"] == "https"


def test_proxy_headers_ignored_from_untrusted_peer(serve):
    served = serve("asgi_raw:app", "--proxy-headers", "--forwarded-allow-ips", "10.0.0.1")
    scope = scope_of(served, "/scope", headers={
        "X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"})
    assert scope["client"][0] == "127.0.0.1"
    assert scope["scheme"] == "http"
    # Without --proxy-headers they are ignored whatever the peer.
    plain = serve("asgi_raw:app")
    scope = scope_of(plain, "/scope", headers={"X-Forwarded-For": "203.0.113.9"})
    assert scope["client"][0] == "127.0.0.1"


def test_request_body_streams_in_chunks(serve):
    served = serve("asgi_raw:app")
    data = bytes(range(256)) * 4096  # 1 MiB

    def chunks():
        for i in range(0, len(data), 65536):
            yield data[i:i + 65536]

    status, _, body = served.request("POST", "/echo", body=chunks(), chunked=True)
    reply = json.loads(body)
    assert status == 200
    assert reply["length"] == len(data)
    assert reply["sum"] == sum(data) % 65521
    assert reply["messages"] > 1, "the body arrives as more than one http.request message"
    status, _, body = served.request("POST", "/echo", body=data)
    assert json.loads(body)["length"] == len(data)
    status, _, body = served.request("POST", "/echo", body=b"")
    assert json.loads(body) == {"messages": 1, "length": 0, "sum": 0}


def test_a_receive_cancelled_while_waiting_loses_nothing(serve):
    served = serve("asgi_raw:app")

    def slow_chunks():
        yield b"first,"
        time.sleep(0.3)
        yield b"second"

    status, _, body = served.request("POST", "/receive-after-cancel", body=slow_chunks(),
                                      chunked=True)
    assert (status, json.loads(body)) == (200, {"body": "first,second", "timed_out": True})


def test_response_started_before_the_body_is_read(serve):
    served = serve("asgi_raw:app")
    data = b"abcdefgh" * 50000
    status, _, body = served.request("POST", "/echo-stream", body=data)
    assert (status, body) == (200, data)


def test_streamed_response_and_disconnect_after_completion(serve):
    served = serve("asgi_raw:app")
    status, headers, body = served.get("/stream?n=5&size=3")
    assert status == 200
    assert dict(headers)["transfer-encoding"] == "chunked"
    assert dict(headers)["x-chunks"] == "5"
    assert body == b"AAABBBCCCDDDEEE"
    # The listener waiting on receive() got http.disconnect once the response completed.
    assert json.loads(served.get("/listener")[2]) == ["http.disconnect"]
    status, _, body = served.get("/big")
    assert (status, len(body)) == (200, 64 * 65536)


def test_a_head_with_no_body_ready_goes_out_alone(serve):
    served = serve("asgi_raw:app")
    conn = served.connection(timeout=5)
    conn.request("GET", "/head-then-wait")
    res = conn.getresponse()
    assert (res.status, res.getheader("x-head")) == (200, "alone")
    conn.close()


def test_pathsend_sends_the_file(serve):
    from conftest import APPS

    served = serve("asgi_raw:app")
    status, headers, body = served.get("/pathsend")
    expected = (APPS / "asgi_raw.py").read_bytes()
    assert (status, body) == (200, expected)
    assert dict(headers)["content-length"] == str(len(expected))
    assert served.get("/pathsend-missing")[0] == 500
    served.stop()
    assert "No such file" in served.log()


def test_head_keeps_the_declared_length(serve):
    served = serve("asgi_raw:app")
    status, headers, body = served.request("HEAD", "/head-length")
    assert (status, body) == (200, b"")
    assert dict(headers)["content-length"] == "1234"


@pytest.mark.parametrize("path, message", [
    ("/raise-before", "boom before start"),
    ("/body-before-start", "'http.response.body' sent, before 'http.response.start'"),
    ("/double-start", "after response already started"),
    ("/invalid-header", "invalid header name"),
    ("/invalid-value", "invalid value for header x-bad"),
    ("/no-response", "returned without starting response"),
])
def test_misbehaving_app_gets_a_500_and_a_logged_error(serve, path, message):
    served = serve("asgi_raw:app")
    status, headers, body = served.get(path)
    assert (status, body) == (500, b"Internal Server Error")
    assert dict(headers)["connection"] == "close"
    assert served.get("/scope")[0] == 200, "the worker goes on"
    assert served.stop() == 0
    assert message in served.log()


@pytest.mark.parametrize("path", ["/raise-after", "/incomplete"])
def test_failure_after_the_response_started_closes_the_connection(serve, path):
    served = serve("asgi_raw:app")
    conn = served.connection()
    conn.request("GET", path)
    res = conn.getresponse()
    assert res.status == 200
    with pytest.raises(http.client.IncompleteRead) as err:
        res.read()
    assert err.value.partial.startswith(b"half" if path == "/incomplete" else b"partial")
    conn.close()
    assert served.get("/scope")[0] == 200
    served.stop()
    log = served.log()
    assert ("boom after start" if path == "/raise-after" else "without completing response") in log


def test_error_after_a_complete_response_keeps_the_response(serve):
    served = serve("asgi_raw:app")
    assert served.get("/complete-then-raise")[0::2] == (500, b"handled")
    served.stop()
    assert "re-raised after the response" in served.log()


def test_lifespan_shutdown_runs_on_sigterm(serve):
    served = serve("asgi_raw:app")
    assert served.stop() == 0
    assert "app: lifespan shutdown" in served.proc.stdout.read()
    log = served.log()
    assert "Application startup complete." in log
    assert "Application shutdown complete." in log


def test_app_without_lifespan_is_served(serve):
    served = serve("asgi_no_lifespan:app")
    assert served.get("/")[0::2] == (200, b"no lifespan")
    assert "lifespan' protocol appears unsupported" in served.log()
    assert served.stop() == 0


def test_failed_startup_is_fatal(serve):
    import subprocess
    import sys

    from conftest import APPS

    proc = subprocess.run(
        [sys.executable, "-m", "vireo", "serve", "asgi_startup_fails:app", "--port", "0"],
        cwd=APPS, capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode != 0
    assert "database unreachable" in proc.stderr
    assert "Application startup failed" in proc.stderr
    assert "listening" not in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "vireo", "serve", "asgi_startup_fails:app", "--port", "0",
         "--workers", "2"],
        cwd=APPS, capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode != 0, "a worker that cannot start stops the supervisor too"


def test_factory(serve):
    served = serve("asgi_startup_fails:make_app", "--factory")
    assert served.get("/")[0::2] == (200, b"from a factory")


def test_limit_concurrency_answers_503(serve):
    import threading

    served = serve("asgi_raw:app", "--limit-concurrency", "1")
    refused = False
    blocked: dict = {}
    # /block holds the only slot for a while; a request meanwhile is refused. Which of the
    # two reaches the server first is a race, so the pair is retried until /block won it.
    for _ in range(20):
        blocked.clear()
        thread = threading.Thread(target=lambda: blocked.setdefault("r", served.get("/block")))
        thread.start()
        while thread.is_alive() and not refused:
            refused = served.get("/scope")[0] == 503
            thread.join(0.02)
        thread.join(10)
        if refused:
            break
    assert refused
    assert blocked["r"][0] == 200, "the request holding the slot is answered"
    assert served.get("/scope")[0] == 200, "a slot is free again"


def test_limit_concurrency_counts_an_app_still_working_after_its_response(serve):
    served = serve("asgi_raw:app", "--limit-concurrency", "1")
    assert served.get("/after?1")[0] == 200
    assert served.get("/scope")[0] == 503, "the app answered /after but still runs"
    deadline = time.monotonic() + 10
    while served.get("/scope")[0] == 503 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert served.get("/scope")[0] == 200, "a slot is free once the app has ended"


def test_request_body_limit_answers_413(serve):
    served = serve("asgi_raw:app", "--limit-request-body", "1000")
    assert served.request("POST", "/echo", body=b"x" * 1000)[0] == 200
    assert served.request("POST", "/echo", body=b"x" * 1001)[0] == 413
    # Started but not yet sent: the limit's answer still goes instead of the app's.
    assert served.request("POST", "/start-then-read", body=b"x" * 1001)[0::2] == (
        413, b"request body is larger than the limit of 1000 bytes")
    served = serve("wsgi_raw:app", "--limit-request-body", "1000")
    assert served.request("POST", "/echo", body=b"x" * 1001)[0] == 413


def test_a_streaming_app_that_reads_the_body_late_gets_it(serve):
    # The app sends part of its response before it first asks for the body.
    served = serve("asgi_raw:app")
    assert served.request("POST", "/start-then-read?stream", body=b"hello", timeout=5)[0::2] == (
        200, b"first,hello")


def test_trailers_follow_a_chunked_body(serve):
    served = serve("asgi_raw:app")
    raw = served.raw_get("/trailers", "TE: trailers\r\n")
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    assert body == b"3\r\nabc\r\n3\r\ndef\r\n0\r\nx-sum: 597\r\nx-count: 6\r\n\r\n"


def test_trailers_that_never_come(serve):
    served = serve("asgi_raw:app")
    # Nothing sent yet when the app returns: an incomplete response is a 500.
    assert served.get("/trailers-missing")[0] == 500
    # Already streaming: the body ends without them.
    raw = served.raw_get("/trailers-missing-late")
    assert raw.startswith(b"HTTP/1.1 200 ")
    assert raw.endswith(b"3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n")
    assert served.get("/scope")[0] == 200
    served.stop()
    assert served.log().count("returned without completing response") == 2


def test_trailers_without_the_promise_are_refused(serve):
    served = serve("asgi_raw:app")
    assert served.get("/trailers-unpromised")[0::2] == (200, b"plain")
    _, _, events = served.get("/events")
    assert "without 'trailers'" in json.loads(events)["trailers-unpromised"]


def wait_for_event(served, key: str, seconds: float = 5):
    """What the app recorded under `key` in `/events`, once it has (None after `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen = json.loads(served.get("/events")[2])
        if key in seen:
            return seen[key]
        time.sleep(0.02)
    return None


def send_and_leave(served, path: str, body: bytes | None = None) -> None:
    """Send a GET for `path` (a POST with `body`), then close the connection before the
    response comes."""
    sock = socket.create_connection((served.host, served.port), timeout=10)
    if body is None:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    else:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
        sock.sendall(head.encode() + body)
    time.sleep(0.2)
    sock.close()


def test_a_client_leaving_before_the_response_is_an_http_disconnect(serve):
    served = serve("asgi_raw:app")
    send_and_leave(served, "/wait-for-disconnect")
    assert wait_for_event(served, "wait-for-disconnect") == ["http.request", "http.disconnect"]
    served.stop()
    assert "returned without" not in served.log(), "a client that left is no app error"


def test_a_client_leaving_after_its_body_was_read_is_an_http_disconnect(serve):
    # As under uvicorn: once the app has the whole body, the end of the client's stream is
    # seen while the app works on its answer.
    served = serve("asgi_raw:app")
    send_and_leave(served, "/wait-for-disconnect", body=b"x" * 5000)
    assert wait_for_event(served, "wait-for-disconnect") == ["http.request", "http.disconnect"]
    served.stop()
    assert "returned without" not in served.log(), "a client that left is no app error"


def test_an_exception_raised_after_the_client_left_is_still_logged(serve):
    served = serve("asgi_raw:app")
    send_and_leave(served, "/raise-after-disconnect")
    deadline = time.monotonic() + 5
    while "raised after the client left" not in served.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    served.stop()
    assert "raised after the client left" in served.log()


def test_an_app_that_stops_streaming_to_a_client_that_left_logs_no_error(serve):
    served = serve("asgi_raw:app")
    sock = socket.create_connection((served.host, served.port), timeout=10)
    sock.sendall(b"GET /stream-until-disconnect HTTP/1.1\r\nHost: x\r\n\r\n")
    seen = b""
    while b"first" not in seen:  # the head and the first chunk may come apart
        chunk = sock.recv(4096)
        assert chunk, "the connection closed before the first chunk"
        seen += chunk
    sock.close()
    assert wait_for_event(served, "stream-until-disconnect") == "http.disconnect"
    served.stop()
    assert "returned without" not in served.log()
