"""`vireo serve` with the ASGI `websocket` scope, over real sockets: the handshake and the
app's answers to it, messages both ways, close codes, limits, and apps that break the
protocol."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

KEY = "dGhlIHNhbXBsZSBub25jZQ=="


def url(served, path):
    return f"ws://{served.host}:{served.port}{path}"


def seen(served):
    status, _, body = served.get("/seen")
    assert status == 200
    return json.loads(body)


def eventually(served, key, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = seen(served)
        if key in found:
            return found[key]
        time.sleep(0.02)
    raise AssertionError(f"the app never recorded {key!r}: {seen(served)}")


def test_messages_go_both_ways_with_the_chosen_subprotocol(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/echo"), subprotocols=["other", "chat"]) as ws:
        assert ws.subprotocol == "chat"
        assert ws.response.headers["x-accepted-by"] == "app"
        ws.send("héllo")
        assert ws.recv() == "héllo"
        ws.send(b"\x00\xff" * 5000)
        assert ws.recv() == b"\x00\xff" * 5000
    assert eventually(served, "echo") == {"type": "websocket.disconnect", "code": 1000,
                                          "reason": ""}
    assert served.stop() == 0


def test_websocket_scope_has_every_key(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/scope?x=1&x=%202"), subprotocols=["a", "b"]) as ws:
        scope = json.loads(ws.recv())
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
    assert closed.value.rcvd.code == 1000
    assert scope["type"] == "websocket"
    assert scope["asgi"] == {"version": "3.0", "spec_version": "2.4"}
    assert scope["http_version"] == "1.1"
    assert scope["scheme"] == "ws"
    assert scope["path"] == "/scope"
    assert bytes(scope["raw_path"]["bytes"]) == b"/scope"
    assert bytes(scope["query_string"]["bytes"]) == b"x=1&x=%202"
    assert scope["root_path"] == ""
    headers = {bytes(n["bytes"]): bytes(v["bytes"]) for n, v in scope["headers"]}
    assert headers[b"upgrade"] == b"websocket"
    assert headers[b"sec-websocket-protocol"] == b"a, b"
    assert scope["subprotocols"] == ["a", "b"]
    assert scope["client"][0] == "127.0.0.1"
    assert scope["server"] == ["127.0.0.1", served.port]
    assert scope["state"] == {"started": True}
    assert scope["extensions"] == {"websocket.http.response": {}}
    assert "method" not in scope
    assert eventually(served, "scope-close")["code"] == 1000


def test_close_before_accept_is_a_403(serve):
    served = serve("asgi_ws:app")
    with pytest.raises(InvalidStatus) as refused:
        connect(url(served, "/refuse"))
    assert refused.value.response.status_code == 403
    assert eventually(served, "refuse") == {"type": "websocket.disconnect", "code": 1006,
                                            "reason": ""}


def test_a_denial_response_is_sent_as_the_app_gives_it(serve):
    served = serve("asgi_ws:app")
    with pytest.raises(InvalidStatus) as denied:
        connect(url(served, "/deny"))
    response = denied.value.response
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.body == b"who are you?"


@pytest.mark.parametrize("path,logged", [
    ("/raise-before", "boom before accept"),
    ("/return-before", "returned without completing handshake"),
])
def test_an_app_that_fails_before_accepting_gets_a_500(serve, path, logged):
    served = serve("asgi_ws:app")
    with pytest.raises(InvalidStatus) as failed:
        connect(url(served, path))
    assert failed.value.response.status_code == 500
    assert served.get("/seen")[0] == 200, "the worker goes on serving"
    served.stop()
    assert logged in served.log()


def test_an_app_that_raises_after_accepting_closes_with_1011(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/raise-after")) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
    assert closed.value.rcvd.code == 1011
    served.stop()
    assert "boom after accept" in served.log()


def test_an_app_that_returns_after_accepting_closes_with_1000(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/return-after")) as ws:
        assert ws.recv() == "bye"
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
    assert closed.value.rcvd.code == 1000


def test_the_apps_close_code_and_reason_reach_the_client(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/close-code")) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4000, "custom")
    assert eventually(served, "close-code") == {"type": "websocket.disconnect", "code": 4000,
                                                "reason": "custom"}
    assert "after sending 'websocket.close'" in eventually(served, "send-after-close")


def test_send_after_the_client_left_raises_an_oserror(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/send-after-disconnect")) as ws:
        ws.close(code=4001, reason="leaving")
    event = eventually(served, "send-after-disconnect-event")
    assert (event["code"], event["reason"]) == (4001, "leaving")
    assert eventually(served, "send-after-disconnect") == "ClientDisconnected"
    assert seen(served)["is-vireo-client-disconnected"] is True


def test_invalid_messages_raise_readable_errors(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/bad-message")) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
    assert closed.value.rcvd.code == 1000
    assert "exactly one of 'bytes' and 'text'" in eventually(served, "bad-message")
    assert "1006 is not a close code" in eventually(served, "bad-close")


def test_a_flood_of_messages_arrives_whole_and_in_order(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/flood"), max_size=None) as ws:
        time.sleep(0.3)  # the app outruns the client; send must hold it back, losing nothing
        received = [ws.recv() for _ in range(2000)]
        with pytest.raises(ConnectionClosed):
            ws.recv()
    assert all(m == bytes([i % 256]) * 1024 for i, m in enumerate(received))


def test_a_message_over_the_limit_closes_with_1009(serve):
    served = serve("asgi_ws:app", "--ws-max-size", "1024")
    with connect(url(served, "/echo")) as ws:
        ws.send(b"x" * 1024)
        assert ws.recv() == b"x" * 1024
        ws.send(b"x" * 1025)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
    assert closed.value.rcvd.code == 1009
    assert eventually(served, "echo")["code"] == 1009


def test_per_message_deflate_is_agreed_when_the_client_offers_it(serve):
    served = serve("asgi_ws:app")
    # The websockets client offers permessage-deflate unless told not to.
    with connect(url(served, "/echo")) as ws:
        agreed = ws.response.headers["sec-websocket-extensions"]
        assert agreed.startswith("permessage-deflate; server_no_context_takeover")
        text = "a line the server compresses on its way back. " * 400
        for _ in range(3):
            ws.send(text)
            assert ws.recv() == text
        ws.send(b"\x00" * 100_000)
        assert ws.recv() == b"\x00" * 100_000
    assert served.stop() == 0


def test_per_message_deflate_can_be_turned_off(serve):
    served = serve("asgi_ws:app", "--ws-per-message-deflate", "false")
    with connect(url(served, "/echo")) as ws:
        assert "sec-websocket-extensions" not in ws.response.headers
        ws.send("plain " * 100)
        assert ws.recv() == "plain " * 100


def test_a_bad_boolean_option_fails_readably():
    proc = subprocess.run([sys.executable, "-m", "vireo", "serve", "asgi_ws:app",
                           "--ws-per-message-deflate", "maybe"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "'maybe' is not a valid boolean" in proc.stderr


def raw_handshake(served, path="/wait"):
    sock = socket.create_connection((served.host, served.port), timeout=10)
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                  f"Sec-WebSocket-Key: {KEY}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    return sock, head.decode()


def read_frame(sock):
    first, second = sock.recv(1)[0], sock.recv(1)[0]
    length = second & 0x7F
    payload = b""
    while len(payload) < length:
        payload += sock.recv(length - len(payload))
    return first & 0x0F, payload


def test_a_silent_client_is_pinged_then_closed(serve):
    served = serve("asgi_ws:app", "--ws-ping-interval", "0.2", "--ws-ping-timeout", "0.2")
    sock, head = raw_handshake(served)
    assert head.startswith("HTTP/1.1 101 ")
    assert "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n" in head
    opcode, _ = read_frame(sock)
    assert opcode == 0x9, "a ping after the ping interval"
    opcode, payload = read_frame(sock)
    assert opcode == 0x8, "a close when no pong came back"
    assert struct.unpack("!H", payload[:2])[0] == 1001
    # The client answers the close (a masked frame with a zero mask) and the app hears it.
    sock.sendall(bytes([0x88, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
    assert sock.recv(1) == b"", "the server closes the connection after the handshake"
    sock.close()
    assert eventually(served, "wait")["code"] == 1001


def test_a_handshake_that_is_not_valid_is_refused_without_the_app(serve):
    served = serve("asgi_ws:app")
    status, _, body = served.get("/echo", headers={"Upgrade": "websocket",
                                                   "Connection": "Upgrade",
                                                   "Sec-WebSocket-Version": "13"})
    assert status == 400 and b"Sec-WebSocket-Key" in body
    status, headers, _ = served.get("/echo", headers={
        "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "8",
        "Sec-WebSocket-Key": KEY})
    assert status == 426
    assert ("sec-websocket-version", "13") in [(n.lower(), v) for n, v in headers]
    assert "echo" not in seen(served)


def test_shutdown_closes_open_websockets_with_1001(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/wait")) as ws:
        assert served.proc.poll() is None
        served.proc.send_signal(__import__("signal").SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    assert closed.value.rcvd.code == 1001
    assert served.proc.wait(timeout=10) == 0


def test_with_ws_none_an_upgrade_is_plain_http(serve):
    # As uvicorn does without a WebSocket library: the upgrade request is an http scope.
    served = serve("asgi_ws:app", "--ws", "none")
    status, _, body = served.get("/echo", headers={
        "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": KEY})
    assert (status, json.loads(body)) == (200, {"type": "http"})


def test_an_open_websocket_counts_against_the_concurrency_limit(serve):
    served = serve("asgi_ws:app", "--limit-concurrency", "1")
    with connect(url(served, "/wait")):
        assert served.get("/seen")[0] == 503
    deadline = time.monotonic() + 5
    while served.get("/seen")[0] != 200:
        assert time.monotonic() < deadline, "the closed WebSocket still counts"
        time.sleep(0.02)


def test_an_app_that_closes_without_reading_still_finishes_the_close(serve):
    served = serve("asgi_ws:app")
    with connect(url(served, "/close-unread"), close_timeout=10) as ws:
        for i in range(100):
            ws.send(f"unread {i}")
        started = time.monotonic()
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=15)
    # The server read the client's answer to its close and ended the connection, rather than
    # leaving the client to give up after its close timeout; nothing is left open.
    assert closed.value.rcvd.code == 1000
    assert time.monotonic() - started < 3
    assert served.stop(timeout=5) == 0
