"""FileResponse: media type, content-disposition, chunked reading, content-length over a
socket, HEAD, and a file missing when the response is sent."""

from __future__ import annotations

import http.client
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vireo import App, FileResponse
from vireo.testclient import TestClient

FILES_APP = Path(__file__).resolve().parent / "apps" / "files_app.py"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "hello.txt").write_text("hello, file\n")
    (tmp_path / "data.bin").write_bytes(os.urandom(300_000))
    (tmp_path / "page.html").write_text("<p>hi</p>")
    (tmp_path / "naïve report.csv").write_text("a,b\n")
    return tmp_path


def test_media_type_disposition_and_body(files: Path) -> None:
    app = App()

    @app.get("/f/{name}")
    def f(name: str, download: bool = False) -> FileResponse:
        return FileResponse(files / name, filename=name if download else None)

    @app.get("/typed")
    def typed() -> FileResponse:
        return FileResponse(files / "hello.txt", media_type="text/markdown", headers={"x-a": "1"})

    with TestClient(app) as client:
        res = client.get("/f/hello.txt")
        assert res.status_code == 200
        assert res.content == b"hello, file\n"
        assert res.headers["content-type"] == "text/plain; charset=utf-8"
        assert "content-disposition" not in res.headers
        assert client.get("/f/page.html").headers["content-type"] == "text/html; charset=utf-8"
        data = client.get("/f/data.bin")
        assert data.content == (files / "data.bin").read_bytes()
        assert data.headers["content-type"] == "application/octet-stream"
        down = client.get("/f/hello.txt?download=true")
        assert down.headers["content-disposition"] == 'attachment; filename="hello.txt"'
        odd = client.get("/f/na%C3%AFve%20report.csv?download=1")
        assert odd.headers["content-disposition"] == (
            "attachment; filename*=utf-8''na%C3%AFve%20report.csv"
        )
        assert odd.headers["content-type"] == "text/csv; charset=utf-8"
        t = client.get("/typed")
        assert t.headers["content-type"] == "text/markdown; charset=utf-8"
        assert t.headers["x-a"] == "1"


def test_the_file_is_read_in_chunks(files: Path) -> None:
    response = FileResponse(files / "data.bin")
    assert response.content_length == 300_000
    sizes = [len(chunk) for chunk in response.body_iterator]
    assert sizes == [65536] * 4 + [300_000 - 4 * 65536]


def test_a_missing_file_is_a_500_with_the_error_logged(files: Path, caplog) -> None:
    app = App()

    @app.get("/gone")
    def gone() -> FileResponse:
        return FileResponse(files / "nope.txt")

    with caplog.at_level(logging.ERROR, logger="vireo"), TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/gone").status_code == 500
    assert any("nope.txt does not exist" in repr(r.exc_info) for r in caplog.records if r.exc_info)
    with pytest.raises(RuntimeError, match="does not exist"):
        FileResponse(files / "nope.txt").content_length


@pytest.fixture
def files_server(files: Path):
    proc = subprocess.Popen(
        [sys.executable, str(FILES_APP), str(files), "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    match = re.search(r"listening on http://[\d.]+:(\d+)", line)
    assert match, line + proc.stderr.read()
    yield int(match.group(1))
    proc.terminate()
    assert proc.wait(15) == 0


def _request(port: int, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path)
        res = conn.getresponse()
        return res.status, {k.lower(): v for k, v in res.getheaders()}, res.read()
    finally:
        conn.close()


def test_content_length_and_head_over_a_socket(files: Path, files_server: int) -> None:
    status, headers, body = _request(files_server, "GET", "/files/data.bin")
    assert status == 200
    assert headers["content-length"] == "300000"
    assert "transfer-encoding" not in headers
    assert body == (files / "data.bin").read_bytes()
    status, headers, body = _request(files_server, "HEAD", "/files/hello.txt")
    assert (status, headers["content-length"], body) == (200, "12", b"")
    status, _, _ = _request(files_server, "GET", "/files/missing.txt")
    assert status == 500
