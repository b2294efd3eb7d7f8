"""Vireo's GZipMiddleware answers as Starlette's (FastAPI's) does: the same app under both,
the same requests, the same status, `Content-Encoding`, `Vary` and `Content-Length`, and
the same body once decompressed, across the options; streamed bodies are compressed too.
`add_middleware` given Starlette's class uses Vireo's."""

from __future__ import annotations

import gzip
import socket
import zlib

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.middleware.gzip import GZipMiddleware as StarletteGZip  # noqa: E402
from fastapi.testclient import TestClient as StarletteClient  # noqa: E402

import vireo  # noqa: E402
from vireo.middleware.gzip import GZipMiddleware  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

TEXT = "".join(f"line {i} of a body worth compressing\n" for i in range(80))

CONFIGS = [
    {},
    {"minimum_size": 10, "compresslevel": 1},
    {"exclude_content_types": ("text/plain",)},
]

ENCODINGS = ["gzip", "deflate, gzip;q=0.5, br", "identity", None]

PATHS = ["/small", "/big", "/json", "/encoded", "/image", "/partial", "/vary", "/stream",
         "/stream-one", "/events", "/file"]


def routes(mod, app, file_path):
    responses = mod.responses

    @app.get("/small")
    def small():
        return responses.PlainTextResponse("tiny")

    @app.get("/big")
    def big():
        return responses.PlainTextResponse(TEXT)

    @app.get("/json")
    def as_json():
        return responses.JSONResponse({"lines": TEXT.splitlines()})

    @app.get("/encoded")
    def encoded():
        return responses.Response(TEXT, headers={"content-encoding": "br"}, media_type="text/plain")

    @app.get("/image")
    def image():
        return responses.Response(TEXT.encode(), media_type="image/png")

    @app.get("/partial")
    def partial():
        return responses.PlainTextResponse(TEXT, status_code=206)

    @app.get("/vary")
    def vary():
        return responses.PlainTextResponse(TEXT, headers={"vary": "Cookie"})

    def lines():
        for line in TEXT.splitlines(keepends=True):
            yield line

    @app.get("/stream")
    def stream():
        return responses.StreamingResponse(lines(), media_type="text/plain")

    @app.get("/stream-one")
    def stream_one():
        return responses.StreamingResponse(iter(["short"]), media_type="text/plain")

    @app.get("/events")
    def events():
        return responses.StreamingResponse(iter(["data: 1\n\n"]), media_type="text/event-stream")

    @app.get("/file")
    def file():
        return responses.FileResponse(file_path, media_type="text/plain")


def seen(res, raw: bytes, path: str) -> tuple:
    fields = {name: res.headers.get(name) for name in ("content-encoding", "vary")}
    # The compressed length: equal only if the bytes sent are (a stream has none). Vireo's test
    # client sets no length of its own, so other responses are not compared on it; nor is a
    # file, which Starlette compresses whole when it fits in one read and Vireo as a stream.
    if fields["content-encoding"] == "gzip" and path != "/file":
        fields["content-length"] = res.headers.get("content-length")
    return res.status_code, fields, raw


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("gzip") / "lines.txt"
    path.write_text(TEXT)
    return str(path)


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(o) or "defaults")
def test_the_same_answers_as_starlette(options, text_file):
    theirs_app = fastapi.FastAPI()
    theirs_app.add_middleware(StarletteGZip, **options)
    routes(fastapi, theirs_app, text_file)
    ours_app = vireo.App()
    ours_app.add_middleware(GZipMiddleware, **options)
    routes(vireo, ours_app, text_file)
    theirs = StarletteClient(theirs_app)
    with TestClient(ours_app) as ours:
        for path in PATHS:
            for encoding in ENCODINGS:
                # Without one, each client sends its default, `gzip, deflate`.
                headers = {"accept-encoding": encoding} if encoding else {}
                # Both clients give the body decompressed.
                expected = theirs.get(path, headers=headers)
                mine = ours.get(path, headers=headers)
                assert seen(mine, mine.content, path) == seen(
                    expected, expected.content, path), (path, encoding)


def test_starlettes_class_is_served_by_vireos():
    app = vireo.App()
    app.add_middleware(StarletteGZip, minimum_size=10)
    app.get("/")(lambda: vireo.PlainTextResponse(TEXT))
    with TestClient(app) as client:
        res = client.get("/", headers={"accept-encoding": "gzip"})
    assert res.headers["content-encoding"] == "gzip"
    assert res.text == TEXT


def test_a_bad_level_is_refused():
    with pytest.raises(ValueError, match="compresslevel"):
        GZipMiddleware(compresslevel=10)


def test_each_chunk_of_a_stream_arrives_compressed_as_it_is_made(serve):
    """Over a real connection: chunked, gzip-encoded, and the first chunk decodes while the
    stream is still waiting for its second."""
    served = serve("gzip_app:app")
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(b"GET /ticks HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, data = data.split(b"\r\n\r\n", 1)
        head = head.lower()
        assert b"content-encoding: gzip" in head and b"transfer-encoding: chunked" in head
        assert b"vary: accept-encoding" in head
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        text = b""
        while b"tick 0\n" not in text:
            while b"\r\n" not in data:
                data += sock.recv(65536)
            size_line, data = data.split(b"\r\n", 1)
            size = int(size_line, 16)
            while len(data) < size + 2:
                data += sock.recv(65536)
            text += decoder.decompress(data[:size])
            data = data[size + 2:]
        assert text == b"tick 0\n"
