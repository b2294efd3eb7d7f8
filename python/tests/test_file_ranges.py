"""`FileResponse` and `Range` requests, against FastAPI: the same file under the same app
answers each range (one, several, suffixes, past the end, malformed, `If-Range`) with the same
status, fields and bytes; and the validators (`etag`, `last-modified`) are Starlette's."""

import re

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
import fastapi.responses  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from starlette.responses import FileResponse as StarletteFileResponse  # noqa: E402

import vireo  # noqa: E402
import vireo.responses  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

# Longer than a chunk (64 KiB), so a range can start in one chunk and end in another.
CONTENT = bytes(range(256)) * 800


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("files") / "data.bin"
    path.write_bytes(CONTENT)
    return str(path)


def build(mod, responses, path):
    app = mod.FastAPI()

    @app.get("/file")
    def whole():
        return responses.FileResponse(path)

    @app.get("/named")
    async def named():
        return responses.FileResponse(path, filename="data.bin")

    @app.get("/created")
    def created():
        return responses.FileResponse(path, status_code=203)

    @app.post("/file")
    def posted():
        return responses.FileResponse(path)

    return app


def normalized(response):
    """Status, fields (but `date`, `server`) and body, with a multipart boundary made fixed."""
    fields = {k: v for k, v in response.headers.items() if k not in ("date", "server")}
    body = response.content
    boundary = re.search(r"boundary=(\w+)", fields.get("content-type", ""))
    if boundary:
        fields["content-type"] = fields["content-type"].replace(boundary[1], "B")
        body = body.replace(boundary[1].encode(), b"B")
    return response.status_code, fields, body


RANGES = [
    "bytes=0-4", "bytes=10-", "bytes=-5", "bytes=-999999", "bytes=60000-140000",
    "bytes=0-2,5-7", "bytes=0-5,3-8", "bytes=100-200, 0-10", "bytes=204799-",
    "bytes=204800-", "bytes=999999-", "bytes=5-2", "bytes=abc", "bytes", "items=0-1",
    "bytes=0-1,,3-4", "bytes=-", "BYTES = 1-3", ",".join(["bytes=0-0"] + ["1-1"] * 100),
]


@pytest.fixture(scope="module")
def clients(data_file):
    with FastAPIClient(build(fastapi, fastapi.responses, data_file)) as theirs, \
            TestClient(build(vireo, vireo.responses, data_file)) as ours:
        yield theirs, ours


@pytest.mark.parametrize("field", RANGES)
def test_a_range_is_answered_as_fastapi_answers_it(clients, field):
    theirs, ours = clients
    for path in ("/file", "/named"):
        expected = normalized(theirs.get(path, headers={"range": field}))
        assert normalized(ours.get(path, headers={"range": field})) == expected, (path, field)


def test_a_single_range_is_the_bytes_asked_for(clients):
    _, ours = clients
    response = ours.get("/file", headers={"range": "bytes=60000-140000"})
    assert response.status_code == 206
    assert response.content == CONTENT[60000:140001]
    assert response.headers["content-range"] == f"bytes 60000-140000/{len(CONTENT)}"


def test_the_validators_are_starlettes(clients):
    theirs, ours = clients
    for name in ("etag", "last-modified", "accept-ranges"):
        assert ours.get("/file").headers[name] == theirs.get("/file").headers[name], name


def test_if_range_narrows_only_while_the_validator_matches(clients):
    theirs, ours = clients
    etag = theirs.get("/file").headers["etag"]
    modified = theirs.get("/file").headers["last-modified"]
    for if_range in (etag, modified, '"stale"', "W/" + etag, "Thu, 01 Jan 1970 00:00:00 GMT"):
        fields = {"range": "bytes=0-9", "if-range": if_range}
        assert normalized(ours.get("/file", headers=fields)) == \
            normalized(theirs.get("/file", headers=fields)), if_range
    assert ours.get("/file", headers={"range": "bytes=0-9", "if-range": etag}).status_code == 206


def test_only_a_200_to_a_get_or_head_is_narrowed(clients):
    theirs, ours = clients
    for method, path in (("GET", "/created"), ("POST", "/file")):
        expected = normalized(theirs.request(method, path, headers={"range": "bytes=0-4"}))
        got = normalized(ours.request(method, path, headers={"range": "bytes=0-4"}))
        assert got == expected, (method, path)
        assert got[0] != 206


def test_head_gets_the_ranges_head_without_a_body(clients):
    _, ours = clients
    response = ours.head("/file", headers={"range": "bytes=0-4"})
    assert response.status_code == 206
    assert response.headers["content-length"] == "5"
    assert response.content == b""


def test_behind_middleware_and_from_every_kind_of_handler_the_range_applies(data_file):
    app = vireo.FastAPI()

    @app.middleware("http")
    async def tag(request, call_next):
        response = await call_next(request)
        response.headers["x-mw"] = "1"
        return response

    @app.get("/sync")
    def sync():
        return vireo.responses.FileResponse(data_file)

    @app.get("/async")
    async def suspended():
        import asyncio

        await asyncio.sleep(0)
        return vireo.responses.FileResponse(data_file)

    @app.get("/blocking", blocking=True)
    def blocking():
        return vireo.responses.FileResponse(data_file)

    @app.get("/starlette")
    def starlettes():
        return StarletteFileResponse(data_file)

    bare = vireo.FastAPI()
    bare.get("/suspended")(suspended)
    bare.get("/blocking", blocking=True)(blocking)
    bare.get("/starlette")(starlettes)
    with TestClient(app) as client, TestClient(bare) as bare_client:
        for c, path in ((client, "/sync"), (client, "/async"), (client, "/blocking"),
                        (client, "/starlette"), (bare_client, "/suspended"),
                        (bare_client, "/blocking"), (bare_client, "/starlette")):
            response = c.get(path, headers={"range": "bytes=1-3"})
            assert (response.status_code, response.content) == (206, CONTENT[1:4]), path
            assert response.headers.get_list("accept-ranges") == ["bytes"], path
            assert len(response.headers.get_list("etag")) == 1, path
