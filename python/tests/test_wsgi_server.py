"""`vireo serve` with a raw WSGI app: the PEP 3333 environ, wsgi.input, start_response with
exc_info, results closed, wsgi.file_wrapper, and a slow request not stalling the worker."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from pathlib import Path

import pytest

from conftest import APPS


def test_environ_has_every_required_key(serve):
    served = serve("wsgi_raw:app", "--root-path", "/mount")
    status, _, body = served.request(
        "POST", "/environ?a=1&a=2&b=%20c", body=b"x=1",
        headers={"Content-Type": "application/x-www-form-urlencoded", "X-Thing": "one",
                 "Cookie": "a=1"},
    )
    env = json.loads(body)
    assert status == 200
    assert env["REQUEST_METHOD"] == "POST"
    assert env["SCRIPT_NAME"] == "/mount"
    assert env["PATH_INFO"] == "/environ"
    assert env["QUERY_STRING"] == "a=1&a=2&b=%20c"
    assert env["CONTENT_TYPE"] == "application/x-www-form-urlencoded"
    assert env["CONTENT_LENGTH"] == "3"
    assert "HTTP_CONTENT_TYPE" not in env and "HTTP_CONTENT_LENGTH" not in env
    assert env["HTTP_X_THING"] == "one"
    assert env["HTTP_COOKIE"] == "a=1"
    assert env["HTTP_HOST"] == f"127.0.0.1:{served.port}"
    assert env["SERVER_NAME"] == "127.0.0.1"
    assert env["SERVER_PORT"] == str(served.port)
    assert env["SERVER_PROTOCOL"] == "HTTP/1.1"
    assert env["REMOTE_ADDR"] == "127.0.0.1"
    assert env["wsgi.version"] == [1, 0]
    assert env["wsgi.url_scheme"] == "http"
    assert env["wsgi.multithread"] is True
    assert env["wsgi.multiprocess"] is False
    assert env["wsgi.run_once"] is False
    assert env["input_type"] == "WsgiInput"
    assert env["errors_is_stderr"] is True


def test_each_request_gets_an_environ_of_its_own(serve):
    served = serve("wsgi_raw:app")
    assert served.get("/scribble")[0] == 204
    env = json.loads(served.get("/environ")[2])
    assert env["REQUEST_METHOD"] == "GET"
    assert env["SERVER_PROTOCOL"] == "HTTP/1.1"
    assert env["wsgi.url_scheme"] == "http"
    assert "HTTP_X_LEFT" not in env
    assert env["QUERY_STRING"] == ""


def test_repeated_fields_are_joined_and_values_are_latin1(serve):
    served = serve("wsgi_raw:app")
    raw = served.raw_get("/environ", "X-Many: one\r\nCookie: a=1\r\nX-Many: two\r\n"
                         "Cookie: b=2\r\nX-Name: caf\xe9\r\n")
    env = json.loads(raw.partition(b"\r\n\r\n")[2])
    assert env["HTTP_X_MANY"] == "one,two"
    assert env["HTTP_COOKIE"] == "a=1; b=2"
    # raw_get sends UTF-8: each of its bytes is one character (PEP 3333).
    assert env["HTTP_X_NAME"] == "caf\xc3\xa9"


def test_http_1_0_is_the_server_protocol(serve):
    served = serve("wsgi_raw:app")
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(b"DELETE /environ HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    env = json.loads(data.partition(b"\r\n\r\n")[2])
    assert env["SERVER_PROTOCOL"] == "HTTP/1.0"
    assert env["REQUEST_METHOD"] == "DELETE"
    assert "HTTP_HOST" not in env


def test_path_info_is_latin1_bytes(serve):
    served = serve("wsgi_raw:app")
    status, _, body = served.get("/environ/caf%C3%A9%20x")
    # The decoded bytes, each as one code point, as PEP 3333 wants.
    assert json.loads(body)["PATH_INFO"] == "/environ/caf\xc3\xa9 x"


def test_input_reads_the_whole_body(serve):
    served = serve("wsgi_raw:app")
    data = bytes(range(256)) * 2048

    def chunks():
        for i in range(0, len(data), 10000):
            yield data[i:i + 10000]

    status, _, body = served.request("POST", "/echo", body=chunks(), chunked=True)
    assert (status, body) == (200, f"{len(data)}:{sum(data) % 65521}".encode())
    status, _, body = served.request("POST", "/echo", body=data)
    assert body == f"{len(data)}:{sum(data) % 65521}".encode()


def test_input_streams_lines_and_partial_reads(serve):
    served = serve("wsgi_raw:app")
    lines = b"".join(b"line %d\n" % i for i in range(20000)) + b"tail"

    def chunks():
        for i in range(0, len(lines), 7000):
            yield lines[i:i + 7000]

    status, _, body = served.request("POST", "/lines", body=chunks(), chunked=True)
    assert status == 200
    assert json.loads(body) == {"first": "line 0\n", "rest": 20000, "last": "tail", "after_eof": ""}
    # An app that reads part of a large body and answers: the rest is read for it, and the
    # connection serves the next request.
    conn = served.connection()
    conn.request("POST", "/partial", body=b"0123456789" * 100000)
    res = conn.getresponse()
    assert (res.status, res.read()) == (200, b"0123456789")
    conn.request("GET", "/write")
    assert conn.getresponse().read() == b"written,returned"
    conn.close()


def test_results_are_streamed_and_closed(serve):
    served = serve("wsgi_raw:app")
    status, headers, body = served.get("/gen")
    assert (status, body) == (200, b"one,two,three")
    assert dict(headers)["transfer-encoding"] == "chunked"
    conn = served.connection()
    conn.request("GET", "/gen-fails")
    res = conn.getresponse()
    with pytest.raises(http.client.IncompleteRead):
        res.read()
    conn.close()
    assert json.loads(served.get("/closed")[2]) == ["gen", "gen-fails"]
    served.stop()
    assert "boom while iterating" in served.log()


def test_sized_results_are_sent_whole_and_closed(serve):
    served = serve("wsgi_raw:app")
    status, headers, body = served.get("/sized")
    assert (status, body, dict(headers)["content-length"]) == (200, b"abcd", "4")
    # Failing after the declared length but before its end: nothing went out yet, so a 500.
    assert served.get("/sized-fails-at-end")[0::2] == (500, b"Internal Server Error")
    # More than declared: the declared bytes go out and the connection is cut.
    conn = served.connection()
    conn.request("GET", "/sized-overlong")
    res = conn.getresponse()
    assert res.read() == b"abcd"
    conn.close()
    # The cut connection's iterable is closed on the blocking pool, which may still be at it
    # when the next request comes: it is asked again for a moment.
    expected = ["sized", "sized-fails-at-end", "sized-overlong"]
    deadline = time.monotonic() + 5
    while (closed := json.loads(served.get("/closed")[2])) != expected and (
            time.monotonic() < deadline):
        time.sleep(0.05)
    assert closed == expected
    served.stop()
    assert "boom while iterating" in served.log()


def test_start_response_exc_info(serve):
    served = serve("wsgi_raw:app")
    # Before anything was sent, exc_info replaces the status and headers.
    assert served.get("/exc-before")[0::2] == (503, b"recovered")
    # After the first chunk went out, it re-raises: the connection is closed.
    conn = served.connection()
    conn.request("GET", "/exc-after")
    res = conn.getresponse()
    assert res.status == 200
    with pytest.raises(http.client.IncompleteRead) as err:
        res.read()
    assert err.value.partial == b"first"
    conn.close()
    # Twice without exc_info is an error: 500.
    assert served.get("/twice")[0] == 500
    assert served.get("/raise")[0::2] == (500, b"Internal Server Error")
    assert json.loads(served.get("/closed")[2]) == ["exc-before"]
    served.stop()
    log = served.log()
    assert "late" in log and "wsgi boom" in log and "second time without exc_info" in log


def test_file_wrapper_and_write(serve):
    served = serve("wsgi_raw:app")
    status, _, body = served.get("/file")
    assert (status, body) == (200, (APPS / "wsgi_raw.py").read_bytes())
    assert served.get("/write")[0::2] == (200, b"written,returned")
    assert served.request("HEAD", "/write")[0::2] == (200, b"")


def test_what_write_is_given_while_the_result_is_iterated_goes_out_in_order(serve):
    served = serve("wsgi_raw:app")
    assert served.get("/write-while-iterating")[0::2] == (
        200, b"written,yielded,written again,last")


def test_a_non_empty_write_sends_the_head_so_exc_info_re_raises(serve):
    served = serve("wsgi_raw:app")
    # The status cannot change after the head went out: the app's error is the answer's end.
    status, _, body = served.get("/write-then-exc-info")
    assert (status, body) == (500, b"Internal Server Error")
    served.stop()
    assert "after write" in served.log()


def test_a_refused_status_still_closes_a_streamed_result(serve):
    served = serve("wsgi_raw:app")
    assert served.get("/bad-status-streamed")[0] == 500
    assert json.loads(served.get("/closed")[2]) == ["bad-status-streamed"]
    served.stop()
    assert "invalid WSGI status" in served.log()


def test_a_chunk_that_is_not_bytes_is_an_error_not_nul_bytes(serve):
    served = serve("wsgi_raw:app")
    assert served.get("/int-chunk")[0::2] == (500, b"Internal Server Error")
    served.stop()
    assert "not int" in served.log()


def test_start_response_takes_any_pair_and_the_body_any_bytes_like_chunk(serve):
    served = serve("wsgi_raw:app")
    status, headers, body = served.get("/list-pair-bytearray")
    assert (status, body) == (200, b"from buffers")
    assert ("x-pair", "list") in [(name.lower(), value) for name, value in headers]


def test_what_start_response_and_the_result_refuse_is_a_500_with_the_reason_logged(serve):
    served = serve("wsgi_raw:app")
    for path in ("/three-item-header", "/bytes-status", "/no-start", "/str-in-list"):
        assert served.get(path)[0::2] == (500, b"Internal Server Error"), path
    # A result the app returned without starting the response is still closed.
    assert json.loads(served.get("/closed")[2]) == ["no-start"]
    served.stop()
    log = served.log()
    assert "a WSGI header is a (name, value) pair, not ('Content-Type', 'text/plain', 'extra')" in log
    assert "the WSGI status must be a str, not bytes" in log
    assert "yielded before calling start_response()" in log
    assert "a WSGI response body is made of bytes, not str" in log


def test_header_values_go_out_as_latin1(serve):
    served = serve("wsgi_raw:app")
    raw = served.raw_get("/latin1-header")
    assert b"\r\nx-name: caf\xe9\r\n" in raw, raw
    # A character that does not fit in one byte is the app's error.
    assert served.get("/wide-header")[0] == 500


def test_header_names_with_underscores_are_dropped(serve):
    served = serve("wsgi_raw:app")
    env = json.loads(served.get("/environ", headers={"X_Forwarded_For": "6.6.6.6",
                                                     "X-Thing": "kept"})[2])
    assert "HTTP_X_FORWARDED_FOR" not in env
    assert env["HTTP_X_THING"] == "kept"


def test_every_x_forwarded_for_line_counts(serve):
    # A proxy appends its own line after the one a client forged: the address nearest the
    # trusted proxy wins, as under uvicorn.
    served = serve("wsgi_raw:app", "--proxy-headers", "--forwarded-allow-ips", "127.0.0.1")
    raw = served.raw_get("/environ", "X-Forwarded-For: 1.2.3.4\r\nX-Forwarded-For: 5.6.7.8\r\n"
                         "X-Forwarded-Proto: http\r\nX-Forwarded-Proto: https\r\n")
    env = json.loads(raw.partition(b"\r\n\r\n")[2])
    assert env["REMOTE_ADDR"] == "5.6.7.8"
    assert env["wsgi.url_scheme"] == "https"


def test_a_body_read_after_the_app_returned_fails_rather_than_looks_short(serve):
    served = serve("wsgi_raw:app")
    conn = served.connection()
    conn.request("POST", "/read-after-return", body=b"x" * 300_000)
    res = conn.getresponse()
    assert res.status == 200
    # The stream ends with the app's error (cut short; with the upload unread, perhaps reset),
    # never with a count that looks like the whole body.
    with pytest.raises((http.client.IncompleteRead, ConnectionResetError)):
        res.read()
    conn.close()
    served.stop()
    assert "the rest of the body is gone" in served.log()


def test_pool_threads_keep_their_state_between_requests(serve):
    served = serve("wsgi_raw:app")
    seen = [served.request("GET", "/thread-local")[2] for _ in range(4)]
    assert seen[0] == b"new" and seen[1:] == [b"seen"] * 3, seen
    assert served.stop() == 0


def test_slow_request_does_not_stall_the_worker(serve):
    served = serve("wsgi_raw:app")
    slow = {}
    thread = threading.Thread(target=lambda: slow.setdefault("r", served.get("/slow")))
    thread.start()
    time.sleep(0.2)
    # While /slow sleeps on the blocking pool, the worker answers others.
    assert served.get("/write", timeout=5)[0] == 200
    assert thread.is_alive(), "the slow request is still running"
    thread.join(10)
    assert slow["r"][0::2] == (200, b"slow")


def _peak_overlap(served, requests: int, wait: float) -> int:
    """Send `requests` concurrent requests to /overlap, each waiting up to `wait` seconds for
    all to be in the app; the most the app ran at once."""
    answers = []
    threads = [
        threading.Thread(
            target=lambda: answers.append(served.get(f"/overlap?n={requests}&wait={wait}",
                                                     timeout=30)))
        for _ in range(requests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
        assert not thread.is_alive(), "a request did not finish"
    assert [a[0] for a in answers] == [200] * requests
    return max(int(a[2]) for a in answers)


def test_threads_bound_the_requests_run_at_once(serve):
    served = serve("wsgi_raw:app", "--threads", "2")
    assert _peak_overlap(served, 4, wait=0.5) == 2


def test_default_threads_run_requests_side_by_side(serve):
    served = serve("wsgi_raw:app")
    assert _peak_overlap(served, 4, wait=10) == 4


@pytest.mark.skipif(not Path("/proc/thread-self/stat").exists(), reason="Linux only")
@pytest.mark.parametrize(("flags", "policy"), [((), b"3"), (("--no-batch-threads",), b"0")])
def test_pool_threads_run_under_sched_batch_unless_told_not_to(serve, flags, policy):
    served = serve("wsgi_raw:app", *flags)
    assert served.get("/policy")[0::2] == (200, policy)


@pytest.mark.parametrize(("threads", "multithread"), [("1", False), ("2", True)])
def test_multithread_says_whether_requests_may_overlap(serve, threads, multithread):
    served = serve("wsgi_raw:app", "--threads", threads)
    assert json.loads(served.get("/environ")[2])["wsgi.multithread"] is multithread


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_threads_must_be_a_positive_count(value, capsys):
    from vireo.cli import main

    with pytest.raises(SystemExit) as exit:
        main(["serve", "wsgi_raw:app", "--threads", value])
    assert exit.value.code == 2
    assert "--threads" in capsys.readouterr().err


def test_serve_refuses_zero_threads():
    import vireo

    with pytest.raises(ValueError, match="threads must be at least 1, not 0"):
        vireo.serve(lambda environ, start_response: [], threads=0)


def test_serve_refuses_a_keep_alive_timeout_of_zero():
    import vireo

    # Zero would also leave no time for a write that has to wait: refused before serving.
    with pytest.raises(ValueError, match="keep_alive_timeout .* must be above zero"):
        vireo.serve(lambda environ, start_response: [], port=0, timeout_keep_alive=0)
