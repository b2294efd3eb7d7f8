"""HTTPS and HTTP/2: `vireo serve --ssl-certfile/--ssl-keyfile` and `App.run(ssl_...)` serve
TLS with ALPN (`h2` and `http/1.1`), and every plain port also takes HTTP/2 with prior
knowledge (h2c)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import sys

import h2.config
import h2.connection
import h2.events
import httpx
import pytest
import trustme
import websockets

from conftest import APPS, Served


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


@pytest.fixture(scope="module")
def tls_files(ca, tmp_path_factory):
    """(certificate chain file, key file) for 127.0.0.1, signed by `ca`."""
    cert = ca.issue_cert("127.0.0.1", "localhost")
    folder = tmp_path_factory.mktemp("tls")
    chain, key = folder / "chain.pem", folder / "key.pem"
    for blob in cert.cert_chain_pems:
        blob.write_to_path(str(chain), append=True)
    cert.private_key_pem.write_to_path(str(key))
    return str(chain), str(key)


@pytest.fixture
def client_tls(ca):
    # One per test: httpx sets the ALPN list on the context it is given.
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def _https(served: Served) -> str:
    return f"https://{served.host}:{served.port}"


def test_https_serves_http1_and_http2_by_alpn(serve, tls_files, client_tls):
    chain, key = tls_files
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key)
    with httpx.Client(verify=client_tls, http2=True, timeout=10) as h2:
        res = h2.get(_https(served) + "/scope?x=1")
        assert res.http_version == "HTTP/2"
        scope = res.json()
        assert (scope["scheme"], scope["http_version"]) == ("https", "2")
        assert scope["query_string"] == {"bytes": list(b"x=1")}
        # A streamed upload and a streamed answer, both ways over one HTTP/2 stream.
        body = bytes(range(256)) * 1024
        res = h2.post(_https(served) + "/echo", content=iter([body[:100_000], body[100_000:]]))
        echoed = res.json()
        assert (echoed["length"], echoed["sum"]) == (len(body), sum(body) % 65521)
        res = h2.get(_https(served) + "/stream?n=5&size=1000")
        assert res.content == b"".join(bytes([65 + i]) * 1000 for i in range(5))
    with httpx.Client(verify=client_tls, timeout=10) as h1:
        res = h1.get(_https(served) + "/scope")
        assert res.http_version == "HTTP/1.1"
        assert (res.json()["scheme"], res.json()["http_version"]) == ("https", "1.1")
    assert served.stop() == 0


def test_plain_port_takes_http2_with_prior_knowledge(serve):
    served = serve("asgi_raw:app")
    with httpx.Client(http1=False, http2=True, timeout=10) as h2c:
        res = h2c.get(f"http://{served.host}:{served.port}/scope")
        assert res.http_version == "HTTP/2"
        assert (res.json()["scheme"], res.json()["http_version"]) == ("http", "2")
        assert "tls" not in res.json()["extensions"], "no TLS extension without TLS"
    assert served.stop() == 0


def test_wsgi_over_https(serve, tls_files, client_tls):
    chain, key = tls_files
    served = serve("wsgi_raw:app", "--ssl-certificate", chain, "--ssl-keyfile", key)
    with httpx.Client(verify=client_tls, http2=True, timeout=10) as client:
        environ = client.get(_https(served) + "/environ").json()
        assert environ["wsgi.url_scheme"] == "https"
        assert environ["SERVER_PROTOCOL"] == "HTTP/2"


def test_websocket_over_tls(serve, tls_files, client_tls):
    chain, key = tls_files
    served = serve("asgi_ws:app", "--ssl-certfile", chain, "--ssl-keyfile", key)

    async def talk():
        url = f"wss://{served.host}:{served.port}/echo"
        async with websockets.connect(url, ssl=client_tls, compression=None) as ws:
            await ws.send("over tls")
            return await ws.recv()

    assert asyncio.run(talk()) == "over tls"


def test_the_native_app_serves_https(tls_files, client_tls, tmp_path):
    chain, key = tls_files
    script = tmp_path / "tls_app.py"
    script.write_text(
        "import vireo\n"
        "app = vireo.App()\n"
        "@app.get('/users/{user_id}')\n"
        "def user(user_id: int, request: vireo.Request):\n"
        "    return {'id': user_id, 'url': str(request.url), 'scheme': request.url.scheme}\n"
        "@app.get('/items/')\n"
        "def items():\n"
        "    return []\n"
        f"app.run(port=0, ssl_certfile={chain!r}, ssl_keyfile={key!r})\n"
    )
    served = Served("", command=[sys.executable, str(script)], cwd=tmp_path)
    try:
        with httpx.Client(verify=client_tls, http2=True, timeout=10) as client:
            res = client.get(_https(served) + "/users/7?x=1")
            assert res.http_version == "HTTP/2"
            origin = _https(served)
            assert res.json() == {"id": 7, "url": f"{origin}/users/7?x=1", "scheme": "https"}
            # A redirect to the other form of a path keeps the scheme.
            res = client.get(origin + "/items")
            assert (res.status_code, res.headers["location"]) == (307, f"{origin}/items/")
        assert served.stop() == 0
    finally:
        served.kill()


@pytest.mark.parametrize("args, message", [
    (["--ssl-certfile", "/nonexistent/chain.pem", "--ssl-keyfile", "/nonexistent/key.pem"],
     "/nonexistent/chain.pem"),
    (["--ssl-certfile", "KEY_AS_CHAIN", "--ssl-keyfile", "KEY"], "CERTIFICATE"),
    (["--ssl-certfile", "CHAIN"], "both a certificate chain file and a private key file"),
])
def test_bad_tls_files_fail_at_start_readably(tls_files, args, message):
    chain, key = tls_files
    args = [{"CHAIN": chain, "KEY": key, "KEY_AS_CHAIN": key}.get(a, a) for a in args]
    proc = subprocess.run([sys.executable, "-m", "vireo", "serve", "asgi_raw:app", "--port", "0",
                           *args], cwd=APPS, capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "listening on" not in proc.stdout


def test_trailers_go_out_as_an_http2_trailers_frame(serve):
    served = serve("asgi_raw:app")
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.send_headers(1, [(":method", "GET"), (":path", "/trailers"), (":scheme", "http"),
                          (":authority", "127.0.0.1"), ("te", "trailers")], end_stream=True)
    sock = socket.create_connection((served.host, served.port), timeout=10)
    sock.sendall(conn.data_to_send())
    status, body, trailers, ended = None, b"", None, False
    while not ended:
        data = sock.recv(65536)
        assert data, "the connection closed before the stream ended"
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                status = dict(event.headers)[b":status"]
            elif isinstance(event, h2.events.DataReceived):
                body += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, 1)
            elif isinstance(event, h2.events.TrailersReceived):
                trailers = dict(event.headers)
            elif isinstance(event, h2.events.StreamEnded):
                ended = True
        sock.sendall(conn.data_to_send())
    sock.close()
    assert (status, body) == (b"200", b"abcdef")
    assert trailers == {b"x-sum": b"597", b"x-count": b"6"}
