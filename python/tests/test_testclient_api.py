"""The test client as Starlette's (httpx's) is used in FastAPI apps' tests: an exception a
handler raises is raised in the test unless `raise_server_exceptions=False`; `base_url`,
`headers`, `cookies`, `client`; `auth=`; the response's `url`, `request`, `is_*` checks and
`raise_for_status()`; `options()`, `stream()`; files as httpx takes them; the response's
`cookies`; a WebSocket handler's unhandled disconnect. Each is checked
against Starlette's client on the same app where it has one; `request.client` also over a
real socket."""

import json

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import HTTPStatusError, TestClient  # noqa: E402


def build(mod):
    app = mod.FastAPI() if mod is fastapi else mod.App()

    request_class = mod.Request

    @app.get("/echo")
    def echo(request: request_class):
        return {"client": [request.client.host, request.client.port],
                "host": request.headers.get("host"), "team": request.headers.get("x-team"),
                "auth": request.headers.get("authorization"),
                "cookie": request.cookies.get("session"), "url": str(request.url)}

    @app.get("/boom")
    def boom():
        raise RuntimeError("the handler fails")

    @app.get("/missing")
    def missing():
        raise mod.HTTPException(404, "nothing here")

    @app.options("/echo")
    def options():
        return {"options": True}

    upload_file = mod.UploadFile

    @app.head("/head")
    def head():
        return {"not": "sent"}

    @app.get("/nothing", status_code=204)
    def nothing():
        return None

    @app.post("/upload")
    async def upload(files: list[upload_file]):
        return [[f.filename, (await f.read()).decode()] for f in files]

    form = mod.Form

    @app.post("/upload-one")
    async def upload_one(file: upload_file, flag: str = form(), note: str = form("")):
        return {"name": file.filename, "type": file.content_type, "x": file.headers.get("x-part"),
                "body": (await file.read()).decode(), "flag": flag, "note": note}

    @app.get("/query")
    def query(flag: str, empty: str = "unset"):
        return [flag, empty]

    response_class = mod.responses.Response if mod is fastapi else vireo.Response

    socket_class = mod.WebSocket

    @app.websocket("/ws")
    async def endless(websocket: socket_class):
        await websocket.accept()
        while True:
            text = await websocket.receive_text()
            await websocket.send_text(f"got {text}")

    @app.get("/cookies")
    def cookies():
        response = response_class("set")
        response.set_cookie("session", "abc", path="/")
        response.set_cookie("theme", "dark", max_age=60)
        response.delete_cookie("gone")
        return response

    streaming = mod.responses.StreamingResponse if mod is fastapi else vireo.StreamingResponse

    @app.get("/stream")
    def stream():
        return streaming(iter([b"a", b"bc"]))

    return app


def both(**options):
    return TestClient(build(vireo), **options), FastAPIClient(build(fastapi), **options)


def test_a_handlers_exception_is_raised_in_the_test_as_by_starlettes_client():
    ours, theirs = both()
    with ours:
        for client in (ours, theirs):
            with pytest.raises(RuntimeError, match="the handler fails"):
                client.get("/boom")
            # An HTTP error is an answer, not raised; the client goes on.
            assert client.get("/missing").status_code == 404
            assert client.get("/echo").status_code == 200


def test_with_raise_server_exceptions_false_it_is_a_500_as_served(caplog):
    ours, theirs = both(raise_server_exceptions=False)
    with ours:
        assert ours.get("/boom").status_code == theirs.get("/boom").status_code == 500
    assert any("the handler fails" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


def test_base_url_headers_cookies_client_and_auth_as_starlettes():
    options = dict(base_url="https://api.example.org", headers={"X-Team": "blue"},
                   cookies={"session": "s1"}, client=("10.1.2.3", 4321))
    ours, theirs = both(**options)
    with ours:
        mine = ours.get("/echo?x=1", auth=("ada", "secret"))
        other = theirs.get("/echo?x=1", auth=("ada", "secret"))
    assert mine.json()["client"] == other.json()["client"] == ["10.1.2.3", 4321]
    fields = ("host", "team", "auth", "cookie")
    assert {k: mine.json()[k] for k in fields} == {k: other.json()[k] for k in fields}
    assert str(mine.url) == str(other.url) == "https://api.example.org/echo?x=1"
    assert mine.request.method == other.request.method == "GET"


def test_an_https_base_url_is_the_apps_scheme_as_under_starlettes_client():
    ours, theirs = both(base_url="https://example.com", follow_redirects=False)
    with ours:
        for client in (ours, theirs):
            assert client.get("/echo").json()["url"] == "https://example.com/echo"
            # The slash redirect names the URL the client used.
            moved = client.get("/echo/")
            assert (moved.status_code, moved.headers["location"]) == (
                307, "https://example.com/echo")
        assert ours.get("http://example.com/echo").json()["url"] == "http://example.com/echo"


def test_a_relative_url_is_joined_to_the_base_url_as_by_httpx():
    ours, theirs = both()
    with ours:
        assert ours.get("echo").json()["url"] == theirs.get("echo").json()["url"] == (
            "http://testserver/echo")


def test_the_default_client_is_testclient_50000_and_headers_can_change():
    ours, theirs = both()
    with ours:
        for client in (ours, theirs):
            assert client.get("/echo").json()["client"] == ["testclient", 50000]
            client.headers["X-Team"] = "red"
            assert client.get("/echo").json()["team"] == "red"
            del client.headers["x-team"]
            assert client.get("/echo").json()["team"] is None


def test_answers_without_a_body_have_none_as_on_the_wire():
    ours, theirs = both()
    with ours:
        for method, path in [("HEAD", "/head"), ("GET", "/nothing")]:
            mine, other = ours.request(method, path), theirs.request(method, path)
            assert (mine.status_code, mine.content) == (other.status_code, other.content)
            assert mine.content == b""


def test_content_length_is_given_where_starlettes_client_gives_it():
    ours, theirs = both()
    with ours:
        for method, path in [("GET", "/echo"), ("HEAD", "/head"), ("GET", "/nothing"),
                             ("GET", "/stream"), ("GET", "/missing")]:
            mine, other = ours.request(method, path), theirs.request(method, path)
            assert mine.headers.get("content-length") == other.headers.get("content-length"), path
            assert mine.headers.get_list("content-length") == other.headers.get_list(
                "content-length"), path
    assert mine.headers["content-length"] == str(len(mine.content))


def test_the_response_checks_and_raise_for_status():
    ours, theirs = both()
    with ours:
        for client in (ours, theirs):
            ok, missing = client.get("/echo"), client.get("/missing")
            assert (ok.is_success, ok.is_error, missing.is_client_error) == (True, False, True)
            assert ok.raise_for_status() is ok
            assert missing.reason_phrase == "Not Found"
        with pytest.raises(HTTPStatusError, match="Client error '404 Not Found'") as raised:
            ours.get("/missing").raise_for_status()
        assert raised.value.response.status_code == 404


def test_options_stream_and_files_as_pairs_as_starlettes():
    ours, theirs = both()
    files = [("files", ("a.txt", b"first")), ("files", ("b.txt", b"second"))]
    with ours:
        assert ours.options("/echo").json() == theirs.options("/echo").json()
        assert ours.post("/upload", files=files).json() == theirs.post(
            "/upload", files=files).json() == [["a.txt", "first"], ["b.txt", "second"]]
        with ours.stream("GET", "/echo") as mine, theirs.stream("GET", "/echo") as other:
            assert json.loads(b"".join(mine.iter_bytes())) == json.loads(b"".join(
                other.iter_bytes()))


def test_files_as_httpx_takes_them_and_form_values_as_it_writes_them(tmp_path):
    ours, theirs = both()
    path = tmp_path / "notes.txt"
    path.write_bytes(b"from a file")
    uploads = [
        b"bare bytes",
        "bare text",
        ("data.json", b"{}"),
        ("x.bin", b"typed", "application/x-custom"),
        ("h.txt", b"with fields", None, {"X-Part": "7"}),
    ]
    with ours:
        for upload in uploads:
            mine = ours.post("/upload-one", files={"file": upload}, data={"flag": True})
            other = theirs.post("/upload-one", files={"file": upload}, data={"flag": True})
            assert mine.json() == other.json(), upload
        for client in (ours, theirs):
            with path.open("rb") as file:
                answer = client.post("/upload-one", files={"file": file},
                                     data={"flag": False, "note": None}).json()
            assert answer == {"name": "notes.txt", "type": "text/plain", "x": None,
                              "body": "from a file", "flag": "false", "note": ""}
        assert ours.get("/query", params={"flag": True, "empty": None}).json() == theirs.get(
            "/query", params={"flag": True, "empty": None}).json() == ["true", ""]
        with path.open("r") as text_file, pytest.raises(TypeError, match="binary mode"):
            ours.post("/upload-one", files={"file": text_file})


def test_response_cookies_are_what_the_response_sets_as_httpxs():
    ours, theirs = both()
    with ours:
        mine, other = ours.get("/cookies"), theirs.get("/cookies")
    assert dict(mine.cookies) == dict(other.cookies) == {"session": "abc", "theme": "dark"}
    assert mine.cookies["session"] == "abc"


def test_a_disconnect_the_handler_lets_out_reaches_the_test_as_under_starlettes():
    ours, theirs = both()
    for client, disconnect in ((ours, vireo.WebSocketDisconnect),
                               (theirs, fastapi.WebSocketDisconnect)):
        with pytest.raises(disconnect):
            with client.websocket_connect("/ws") as ws:
                ws.send_text("hi")
                assert ws.receive_text() == "got hi"


def test_over_a_socket_request_client_is_the_peers_address(serve):
    served = serve("native_app:app")
    status, _, body = served.get("/client")
    seen = json.loads(body)
    assert status == 200 and seen["host"] == "127.0.0.1" and seen["port"] > 0
    assert seen["tuple"] == [seen["host"], seen["port"]]
    assert served.stop() == 0


def fields_app(mod):
    import gzip
    import zlib

    app = mod.FastAPI() if mod is fastapi else mod.App()

    @app.get("/fields")
    def fields(request: mod.Request):
        names = ("accept", "accept-encoding", "connection", "user-agent", "x-team")
        return {name: request.headers.get(name) for name in names}

    @app.get("/gzip")
    def packed():
        return mod.Response(gzip.compress(b"packed " * 50), headers={"content-encoding": "gzip"})

    @app.get("/deflate")
    def deflated():
        return mod.Response(zlib.compress(b"deflated"), headers={"content-encoding": "deflate"})

    return app


def test_default_fields_and_decoded_bodies_as_starlettes_client():
    ours = TestClient(fields_app(vireo), headers={"X-Team": "core"})
    theirs = FastAPIClient(fields_app(fastapi), headers={"X-Team": "core"})
    for client in (ours, theirs):
        # httpx's own default names more codings when brotli or zstandard is installed.
        client.headers["accept-encoding"] = "gzip, deflate"
    for path, headers in (("/fields", {}), ("/fields", {"user-agent": "probe", "x-team": "a"}),
                          ("/gzip", {}), ("/deflate", {})):
        mine, other = ours.get(path, headers=headers), theirs.get(path, headers=headers)
        assert (mine.status_code, mine.content) == (other.status_code, other.content), path
        assert mine.headers.get("content-encoding") == other.headers.get("content-encoding")


def test_a_body_that_does_not_decode_is_a_clear_error():
    app = vireo.App()

    @app.get("/")
    def broken():
        return vireo.Response(b"not gzip", headers={"content-encoding": "gzip"})

    with pytest.raises(ValueError, match="gzip body does not decode"):
        TestClient(app).get("/")


def test_a_request_the_server_would_refuse_at_its_head_gets_the_servers_answer():
    app = vireo.App()

    @app.get("/items")
    def items(ids: list[int] = vireo.Query([])):
        return len(ids)

    client = TestClient(app)
    res = client.get("/items?" + "&".join(["ids=1"] * 10_000))
    assert (res.status_code, res.text, res.headers["connection"]) == (414, "URI Too Long", "close")
    assert client.get("/items?ids=1&ids=2").json() == 2
