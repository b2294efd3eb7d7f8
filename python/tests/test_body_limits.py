"""Request size limits set by the app, a router, an inclusion or a route (`max_body_size`,
`form_limits`, as FastAPI takes them): the innermost level that sets a limit wins; over a
real connection, through the test client and through the app's ASGI side alike."""

import asyncio
import importlib.util
import json
import socket
from typing import Annotated

import httpx
import pytest

from vireo import APIRouter, App, Depends, Form, Request, UploadFile
from vireo.testclient import TestClient

from conftest import APPS, Served


def load_app():
    spec = importlib.util.spec_from_file_location("body_limits_app", APPS / "body_limits_app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


limits_app = load_app()

MIB = 1024 * 1024

# (path, body size, status): the app's limit (1000), a router's past the server's default,
# a route's, an inclusion's, a path no route takes, and a mounted app's, inherited.
CASES = [
    ("/items", 1000, 200),
    ("/items", 1001, 413),
    ("/uploads/", 2 * MIB + 512 * 1024, 200),
    ("/uploads/", 3 * MIB + 1, 413),
    ("/uploads/small", 10, 200),
    ("/uploads/small", 11, 413),
    ("/v2/", 50, 200),
    ("/v2/", 51, 413),
    ("/nowhere", 1001, 413),
    ("/sub/echo", 1000, 200),
    ("/sub/echo", 1001, 413),
]


def expect(status: int, body: bytes, size: int) -> None:
    if status == 200:
        assert json.loads(body) == {"size": size}
    else:
        assert b"larger than the limit" in body


@pytest.fixture(scope="module")
def served():
    server = Served("body_limits_app:app")
    yield server
    server.kill()


# A client that sends a long body the server refuses by its length alone cannot finish
# sending it (the server reads only so much before closing): such cases are sent with
# `Expect: 100-continue` below instead.
CONNECTION_CASES = [
    (path, size, status, chunked)
    for path, size, status in CASES
    for chunked in (False, True)
    if chunked or status == 200 or size < 64 * 1024
]


@pytest.mark.parametrize("path,size,status,chunked", CONNECTION_CASES)
def test_over_a_connection(served, path, size, status, chunked):
    body = b"x" * size
    if chunked:
        body = iter([body[: size // 2], body[size // 2:]])
    got, _, answer = served.request("POST", path, body=body, chunked=chunked,
                                    headers={"content-type": "application/octet-stream"})
    assert got == status
    expect(got, answer, size)


@pytest.mark.parametrize("path,size", [("/uploads/", 3 * MIB + 1), ("/uploads/small", 11),
                                       ("/items", 1001), ("/sub/echo", 1001)])
def test_a_refused_length_is_answered_before_the_body_is_sent(served, path, size):
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n"
                     f"Expect: 100-continue\r\n\r\n".encode())
        head = sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 413")


@pytest.mark.parametrize("path,size,status", CASES)
def test_through_the_test_client(path, size, status):
    res = TestClient(limits_app).post(path, content=b"x" * size)
    assert res.status_code == status
    expect(res.status_code, res.content, size)


@pytest.mark.parametrize("path,size,status", CASES)
def test_through_the_asgi_side(path, size, status):
    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=limits_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post(path, content=b"x" * size)

    res = asyncio.run(post())
    assert res.status_code == status
    expect(res.status_code, res.content, size)


@pytest.mark.parametrize(
    "app_limit,parent_limit,include_limit,child_limit,route_limit,status",
    [
        (None, None, None, None, None, 200),
        (5, None, None, None, None, 413),
        (5, 10, None, None, None, 200),
        (10, 5, None, None, None, 413),
        (5, 5, 10, None, None, 200),
        (10, 10, 5, None, None, 413),
        (5, 5, 5, 10, None, 200),
        (10, 10, 10, 5, None, 413),
        (5, 5, 5, 5, 10, 200),
        (10, 10, 10, 10, 0, 413),
        (None, None, 0, None, None, 413),
    ],
)
def test_the_innermost_limit_wins(app_limit, parent_limit, include_limit, child_limit,
                                  route_limit, status):
    child = APIRouter(max_body_size=child_limit)
    child.post("/", max_body_size=route_limit)(lambda: "ok")
    parent = APIRouter(max_body_size=parent_limit)
    parent.include_router(child, prefix="/child", max_body_size=include_limit)
    app = App(max_body_size=app_limit)
    app.include_router(parent, prefix="/parent")
    assert TestClient(app).post("/parent/child/", content=b"123456").status_code == status


def test_a_router_included_twice_keeps_each_inclusions_limit():
    router = APIRouter()
    router.post("/")(lambda: "ok")
    app = App(max_body_size=10)
    app.include_router(router)
    app.include_router(router, prefix="/small", max_body_size=5)
    client = TestClient(app)
    assert client.post("/", content=b"123456").status_code == 200
    assert client.post("/small/", content=b"123456").status_code == 413
    assert router.max_body_size is None
    assert router.routes[0].max_body_size is None


def test_a_mounted_app_limit_overrides_its_parents():
    child = App(max_body_size=10)
    child.post("/")(lambda: "ok")
    app = App(max_body_size=5)
    app.mount("/child", child)
    assert TestClient(app).post("/child/", content=b"123456").status_code == 200


def test_an_empty_body_and_the_query_do_not_count():
    app = App(max_body_size=0)
    app.post("/")(lambda q: q)
    assert TestClient(app).post("/?q=" + "x" * 100).text == "x" * 100


@pytest.mark.parametrize("value", [-1, True, 1.5, "5"])
def test_a_limit_that_is_not_a_byte_count_is_refused_at_registration(value):
    for make in (lambda: App(max_body_size=value), lambda: APIRouter(max_body_size=value),
                 lambda: App().post("/", max_body_size=value)(lambda: None),
                 lambda: App().include_router(APIRouter(), max_body_size=value)):
        with pytest.raises(ValueError, match="max_body_size must be a non-negative integer"):
            make()


async def text_field(text: Annotated[str, Form()]):
    return text


def submit(client: TestClient, path: str, fields: dict[str, str], multipart: bool):
    if multipart:
        return client.post(path, files={k: (None, v) for k, v in fields.items()})
    return client.post(path, data=fields)


@pytest.mark.parametrize("multipart", [False, True])
def test_form_limits_of_the_app_and_a_route(multipart):
    app = App(form_limits={"max_fields": 5})
    app.post("/notes")(text_field)
    app.post("/documents", form_limits={"max_part_size": 2 * MIB})(text_field)
    client = TestClient(app)
    big = "x" * (MIB + 1)
    assert submit(client, "/notes", {"text": "ok"}, multipart).text == "ok"
    # A field's default limit is 1 MiB, as Starlette's.
    refused = submit(client, "/notes", {"text": big}, multipart)
    assert refused.status_code == 400
    kind = "Part" if multipart else "Field"
    assert refused.json() == {"detail": f"{kind} exceeded maximum size of 1024KB."}
    assert submit(client, "/documents", {"text": big}, multipart).text == big
    fields = {"text": "ok", **{str(i): "v" for i in range(4)}}
    assert submit(client, "/documents", fields, multipart).text == "ok"
    refused = submit(client, "/documents", {**fields, "extra": "v"}, multipart)
    assert refused.status_code == 400
    assert refused.json() == {"detail": "Too many fields. Maximum number of fields is 5."}


def test_form_limits_merge_key_by_key_from_the_innermost():
    child = APIRouter(form_limits={"max_fields": 1})
    child.post("/", form_limits={"max_part_size": 3})(text_field)
    parent = APIRouter()
    parent.include_router(child, form_limits={"max_fields": 4})
    app = App(form_limits={"max_part_size": 1})
    app.include_router(parent, prefix="/one", form_limits={"max_files": 0})
    app.include_router(parent, prefix="/two", form_limits={"max_files": 1})
    client = TestClient(app)
    payload = [("text", (None, "abc")), ("file", ("f", b"12345"))]
    refused = client.post("/one/", files=payload)
    assert refused.json() == {"detail": "Too many files. Maximum number of files is 0."}
    assert client.post("/two/", files=payload).text == "abc"
    assert client.post("/two/", files=[*payload, ("text", (None, "z"))]).status_code == 400
    assert client.post("/two/", files={"text": (None, "abcd")}).status_code == 400


def test_a_mounted_app_takes_the_form_limits_it_does_not_set():
    child = App(form_limits={"max_fields": 1})
    child.post("/")(text_field)
    app = App(form_limits={"max_part_size": 2, "max_fields": 0})
    app.mount("/child", child)
    client = TestClient(app)
    assert client.post("/child/", files={"text": (None, "ab")}).text == "ab"
    assert client.post("/child/", files={"text": (None, "abc")}).status_code == 400


def test_form_limits_apply_to_a_dependencys_form_fields():
    app = App(form_limits={"max_fields": 1}, max_body_size=25)

    @app.post("/")
    async def endpoint(text: Annotated[str, Depends(text_field)]):
        return text

    client = TestClient(app)
    assert client.post("/", data={"text": "ok"}).text == "ok"
    assert client.post("/", data={"text": "ok", "extra": "v"}).status_code == 400
    assert client.post("/", data={"text": "x" * 30}).status_code == 413


def test_request_form_keeps_its_own_limits():
    app = App(form_limits={"max_fields": 0})

    @app.post("/")
    async def manual(request: Request):
        async with request.form(max_fields=1) as form:
            return form["text"]

    client = TestClient(app)
    assert client.post("/", data={"text": "ok"}).text == "ok"
    assert client.post("/", data={"text": "ok", "extra": "v"}).status_code == 400


def test_the_callers_settings_are_copied():
    limits = {"max_fields": 1}
    app = App(form_limits=limits)
    limits["max_fields"] = 0
    app.post("/")(text_field)
    assert TestClient(app).post("/", data={"text": "ok"}).text == "ok"


def test_an_upload_counts_as_a_file_not_a_field():
    app = App(form_limits={"max_fields": 0, "max_part_size": 1})

    @app.post("/")
    async def upload(file: UploadFile):
        return {"size": file.size}

    res = TestClient(app).post("/", files={"file": ("a.bin", b"12345")})
    assert res.json() == {"size": 5}


@pytest.mark.parametrize(
    "limits,message",
    [
        ({"max_parts": 1}, "no setting 'max_parts'"),
        ({"max_files": -1}, r"form_limits\['max_files'\] must be a non-negative integer"),
        ({"max_fields": False}, "must be a non-negative integer, not False"),
        ({"max_part_size": 1.5}, "not 1.5"),
        ([("max_fields", 1)], "form_limits must be a dict"),
    ],
)
def test_form_limits_that_cannot_apply_are_refused_at_registration(limits, message):
    for make in (lambda: App(form_limits=limits), lambda: APIRouter(form_limits=limits),
                 lambda: App().post("/", form_limits=limits)(lambda: None),
                 lambda: App().include_router(APIRouter(), form_limits=limits)):
        with pytest.raises(ValueError, match=message):
            make()
