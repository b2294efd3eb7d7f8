"""Parameter models, as FastAPI's: `Annotated[Model, Query()]` (or `Header()`, `Cookie()`,
`Form()`) reads each field of the pydantic model as a parameter of its own and passes the model. The
same app under FastAPI and Vireo gives the same answers and lists the same parameters."""

import json
from typing import Annotated, Literal, Optional

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Filters(BaseModel):
    limit: int = Field(100, gt=0, le=100, description="How many")
    offset: int = Field(0, ge=0)
    order_by: Literal["created_at", "updated_at"] = "created_at"
    tags: list[str] = []
    q: str | None = Field(None, alias="search", min_length=2)


class Trace(BaseModel):
    x_request_id: str
    user_agent: str | None = None


class Login(BaseModel):
    username: str
    password: str = Field(min_length=3)
    remember: bool = False
    scopes: list[str] = []


class Session(BaseModel):
    session_id: str
    theme: str = "light"


def build(mod):
    app = mod.FastAPI() if mod is fastapi else mod.App()

    @app.get("/items")
    def items(filters: Annotated[Filters, mod.Query()]):
        return filters.model_dump()

    @app.get("/trace")
    def trace(headers: Annotated[Trace, mod.Header()]):
        return headers.model_dump()

    @app.get("/session")
    def session(cookies: Annotated[Session, mod.Cookie()], page: int = 1):
        return {**cookies.model_dump(), "page": page}

    @app.post("/login")
    def login(form: Annotated[Login, mod.Form()]):
        return form.model_dump()

    return app


REQUESTS = [
    ("/items", {}, {}),
    ("/items?limit=5&offset=10&order_by=updated_at&tags=a&tags=b&search=pen", {}, {}),
    ("/items?limit=0", {}, {}),
    ("/items?limit=abc&offset=-1", {}, {}),
    ("/items?order_by=name", {}, {}),
    ("/items?search=x", {}, {}),
    ("/items?q=ignored", {}, {}),
    ("/trace", {"x-request-id": "r1", "user-agent": "probe"}, {}),
    ("/trace", {}, {}),
    ("/session?page=2", {}, {"session_id": "s1", "theme": "dark"}),
    ("/session", {}, {}),
]


@pytest.fixture(scope="module")
def clients():
    with TestClient(build(vireo)) as ours:
        yield ours, FastAPIClient(build(fastapi))


@pytest.mark.parametrize(("path", "headers", "cookies"), REQUESTS)
def test_the_same_answer_as_fastapi(clients, path, headers, cookies):
    ours, theirs = clients
    mine = ours.get(path, headers=headers, cookies=cookies)
    other = theirs.get(path, headers={"user-agent": "", **headers}, cookies=cookies)
    if path == "/trace" and "user-agent" not in headers:
        other = theirs.get(path, headers=headers, cookies=cookies)
        # httpx sends its own user-agent; the answer's is whatever the client sent.
        assert mine.status_code == other.status_code
        return
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_each_field_is_a_parameter_in_the_schema_as_in_fastapi(clients):
    ours, theirs = clients

    def parameters(client, path):
        listed = client.get("/openapi.json").json()["paths"][path]["get"]["parameters"]
        return sorted(listed, key=lambda p: p["name"])

    for path in ("/items", "/trace", "/session"):
        assert parameters(ours, path) == parameters(theirs, path), path


FORMS = [
    {"username": "ann", "password": "secret", "remember": "true", "scopes": ["a", "b"]},
    {"username": "ann", "password": "x"},
    {"username": "ann", "password": "secret", "remember": "maybe"},
    {},
]


@pytest.mark.parametrize("form", FORMS)
def test_a_form_model_answers_as_in_fastapi(clients, form):
    ours, theirs = clients
    mine, other = (client.post("/login", data=form) for client in clients)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_a_form_model_is_the_request_body_in_the_schema_as_in_fastapi(clients):
    schemas = [client.get("/openapi.json").json() for client in clients]
    bodies = [schema["paths"]["/login"]["post"]["requestBody"] for schema in schemas]
    assert bodies[0] == bodies[1] == {"content": {"application/x-www-form-urlencoded": {
        "schema": {"$ref": "#/components/schemas/Login"}}}, "required": True}
    assert schemas[0]["components"]["schemas"]["Login"] == (
        schemas[1]["components"]["schemas"]["Login"])


class Strict(BaseModel):
    model_config = {"extra": "forbid"}
    limit: int = 10
    tags: list[str] = []


class StrictSession(BaseModel):
    model_config = {"extra": "forbid"}
    session_id: str


class StrictLogin(BaseModel):
    model_config = {"extra": "forbid"}
    username: str
    tags: list[str] = []


class StrictHeaders(BaseModel):
    model_config = {"extra": "forbid"}
    host: str
    save_data: bool = False
    user_agent: str | None = None
    accept: str | None = None
    accept_encoding: str | None = None
    connection: str | None = None


def strict(mod):
    app = mod.FastAPI() if mod is fastapi else mod.App()

    @app.get("/items")
    def items(filters: Annotated[Strict, mod.Query()], request: mod.Request):
        return {**filters.model_dump(), "path": request.url.path}

    @app.get("/session")
    def session(cookies: Annotated[StrictSession, mod.Cookie()]):
        return cookies.model_dump()

    @app.get("/headers")
    def headers(fields: Annotated[StrictHeaders, mod.Header()]):
        return fields.model_dump()

    @app.post("/login")
    def login(form: Annotated[StrictLogin, mod.Form()]):
        return form.model_dump()

    return app


@pytest.mark.parametrize(("path", "headers"), [
    ("/headers", {"save-data": "true"}),
    ("/headers", {"save-data": "true", "x-extra": "1"}),
])
def test_a_header_model_that_forbids_extras_refuses_them_as_in_fastapi(path, headers):
    mine = TestClient(strict(vireo)).get(path, headers=headers)
    other = FastAPIClient(strict(fastapi)).get(path, headers=headers)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


@pytest.mark.parametrize(("path", "cookies"), [
    ("/items?limit=3&tags=a", {}),
    ("/items?limit=3&tool=plumbus", {}),
    ("/items?x=1&x=2", {}),
    ("/session", {"session_id": "s1"}),
    ("/session", {"session_id": "s1", "other": "2"}),
])
def test_a_model_that_forbids_extras_refuses_them_as_in_fastapi(path, cookies):
    with TestClient(strict(vireo)) as ours:
        mine = ours.get(path, cookies=cookies)
        other = FastAPIClient(strict(fastapi)).get(path, cookies=cookies)
        assert (mine.status_code, mine.json()) == (other.status_code, other.json())
        schema = ours.get("/openapi.json").json()
        names = [p["name"] for p in schema["paths"]["/items"]["get"]["parameters"]]
        assert names == ["limit", "tags"]


def factories(mod):
    app = mod.FastAPI() if mod is fastapi else mod.App()
    made = []

    def fresh():
        made.append(1)
        return []

    @app.get("/defaults")
    def defaults(tags: Annotated[list[str], mod.Query(default_factory=fresh)],
                 n: int = mod.Query(default_factory=lambda: 5)):
        tags.append("seen")  # a shared default would keep this for the next request
        return {"tags": tags, "n": n, "made": len(made)}

    return app


def test_default_factory_makes_a_fresh_default_per_request_as_in_fastapi():
    ours, theirs = TestClient(factories(vireo)), FastAPIClient(factories(fastapi))
    for path in ("/defaults", "/defaults", "/defaults?tags=a&n=2", "/defaults?n=x"):
        mine, other = ours.get(path), theirs.get(path)
        assert (mine.status_code, mine.json()) == (other.status_code, other.json()), path
    # The factory ran for each request without `tags`, the one whose `n` failed too.
    assert ours.get("/defaults").json() == theirs.get("/defaults").json() == {
        "tags": ["seen"], "n": 5, "made": 4}
    parameters = [client.get("/openapi.json").json()["paths"]["/defaults"]["get"]["parameters"]
                  for client in (ours, theirs)]
    assert parameters[0] == parameters[1]


def test_a_default_and_a_factory_together_are_refused():
    with pytest.raises(TypeError, match="default or a default_factory"):
        vireo.Query(3, default_factory=list)
    with pytest.raises(TypeError, match="must be callable"):
        vireo.Query(default_factory=3)


@pytest.mark.parametrize("form", [
    {"username": "a", "tags": ["x", "y"]},
    {"username": "a", "x": ["1", "2"], "y": "3"},
])
def test_a_form_model_that_forbids_extras_refuses_them_as_in_fastapi(form):
    mine = TestClient(strict(vireo)).post("/login", data=form)
    other = FastAPIClient(strict(fastapi)).post("/login", data=form)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


class RawHeaders(BaseModel):
    save_data: bool = False
    x_tag: list[str] = []


def raw_headers(mod):
    app = mod.FastAPI()

    @app.get("/raw")
    def raw(headers: Annotated[RawHeaders, mod.Header(convert_underscores=False)]):
        return headers

    return app


@pytest.mark.parametrize("headers", [
    [("save_data", "true"), ("x_tag", "a"), ("x_tag", "b")],
    [("save-data", "true"), ("x-tag", "a")],
    [],
])
def test_a_header_model_without_underscore_conversion_reads_names_as_fastapi(headers):
    mine = TestClient(raw_headers(vireo)).get("/raw", headers=headers)
    other = FastAPIClient(raw_headers(fastapi)).get("/raw", headers=headers)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


class Window(BaseModel):
    start: int
    end: int
    label: str = "default"


def optional_models(mod):
    app = mod.FastAPI()

    @app.get("/window")
    def window(w: Annotated[Optional[Window], mod.Query()] = None):
        return {"window": w}

    return app


@pytest.mark.parametrize("query", ["", "?start=1&end=2", "?start=1", "?label=x", "?start=x&end=2"])
def test_an_optional_parameter_model_is_none_when_no_field_is_given_as_in_fastapi(query):
    mine = TestClient(optional_models(vireo)).get(f"/window{query}")
    other = FastAPIClient(optional_models(fastapi)).get(f"/window{query}")
    assert mine.status_code == other.status_code
    if mine.status_code == 200:
        assert mine.json() == other.json()
    else:  # the same errors (a field's `input` is its converted value here, text there)
        assert [(e["type"], e["loc"]) for e in mine.json()["detail"]] == [
            (e["type"], e["loc"]) for e in other.json()["detail"]]


def optional_headers(mod):
    app = mod.FastAPI()

    @app.get("/client")
    def client(c: Annotated[Optional[Trace], mod.Header()] = None):
        return {"client": c}

    return app


@pytest.mark.parametrize(("path", "headers"), [
    ("/trace", [("accept-encoding", "gzip"), ("x-tag", "a"), ("x-tag", "b")]),
    ("/trace", [("accept-encoding", "gzip"), ("x_request_id", "r1")]),
    ("/items?limit=0&tags=a&tags=b&extra=1&extra=2", [("accept-encoding", "gzip")]),
])
def test_a_refused_model_echoes_all_the_request_gave_located_by_its_sent_name_as_fastapi(
        clients, path, headers):
    ours, theirs = clients
    mine, other = ours.get(path, headers=headers), theirs.get(path, headers=headers)
    assert mine.status_code == 422
    assert mine.json() == other.json()


def test_an_optional_models_fields_are_not_required_in_the_schema_as_in_fastapi():
    def parameters(mod):
        client = (FastAPIClient if mod is fastapi else TestClient)(optional_headers(mod))
        schema = client.get("/openapi.json").json()
        return schema["paths"]["/client"]["get"]["parameters"]

    assert parameters(vireo) == parameters(fastapi)
    assert [p["required"] for p in parameters(vireo)] == [False, False]


class Flags(BaseModel):
    limit: int = Field(10, gt=0)


class Item(BaseModel):
    name: str


def combined(mod):
    app = mod.FastAPI()

    @app.post("/both")
    def both(trace: Annotated[Trace, mod.Header()], n: int,
             flags: Annotated[Flags, mod.Query()], item: Item):
        return {"n": n}

    def flagged(flags: Annotated[Flags, mod.Query()]):
        return flags

    def strict_first(headers: Annotated[Trace, mod.Header()], flags=mod.Depends(flagged)):
        return headers

    @app.get("/through")
    def through(t=mod.Depends(strict_first), n: int = 1):
        return {"n": n}

    return app


@pytest.mark.parametrize(("method", "path", "headers", "body"), [
    ("post", "/both?n=x&limit=0", {}, {}),
    ("post", "/both?n=1&limit=0", {"x-request-id": "r"}, {"name": "a"}),
    ("post", "/both?n=x", {"x-request-id": "r"}, {"name": "a"}),
    ("post", "/both?limit=-1", {}, {"name": "a"}),
    ("get", "/through?limit=0&n=x", {}, None),
    ("get", "/through?limit=0", {"x-request-id": "r"}, None),
])
def test_every_refusal_of_a_request_is_in_one_422_as_in_fastapi(method, path, headers, body):
    """Parameter models, the values the engine converts and the body are checked together:
    one 422 lists all their errors, in FastAPI's order."""
    kwargs = {"headers": headers} if body is None else {"headers": headers, "json": body}
    mine = getattr(TestClient(combined(vireo)), method)(path, **kwargs)
    other = getattr(FastAPIClient(combined(fastapi)), method)(path, **kwargs)
    assert mine.status_code == other.status_code == 422
    if path.startswith("/both"):
        assert mine.json() == other.json()
    else:  # the same errors; FastAPI lists a dependency's sub-dependencies' first
        key = json.dumps
        assert sorted(map(key, mine.json()["detail"])) == sorted(
            map(key, other.json()["detail"]))


def required_optional_models(mod):
    app = mod.FastAPI()

    @app.get("/window")
    def window(w: Annotated[Optional[Window], mod.Query()]):
        return {"window": w}

    @app.get("/trace")
    def trace(t: Annotated[Optional[Trace], mod.Header()]):
        return {"trace": t}

    return app


@pytest.mark.parametrize(("path", "headers"), [
    ("/window", {}), ("/window?start=1&end=2", {}), ("/window?start=1", {}),
    ("/trace", {}), ("/trace", {"x-request-id": "r1"}),
])
def test_an_optional_model_without_a_default_needs_some_field_as_in_fastapi(path, headers):
    mine = TestClient(required_optional_models(vireo)).get(path, headers=headers)
    other = FastAPIClient(required_optional_models(fastapi)).get(path, headers=headers)
    assert mine.status_code == other.status_code
    if mine.status_code == 200:
        assert mine.json() == other.json()
    else:
        assert [(e["type"], e["loc"]) for e in mine.json()["detail"]] == [
            (e["type"], e["loc"]) for e in other.json()["detail"]]


def test_parameter_models_are_read_from_a_websocket_handshake():
    app = vireo.App()

    @app.websocket("/ws")
    async def talk(websocket: vireo.WebSocket, window: Annotated[Window, vireo.Query()],
                   trace: Annotated[Trace, vireo.Header()]):
        await websocket.accept()
        await websocket.send_json([window.model_dump(), trace.x_request_id])
        await websocket.close()

    with TestClient(app) as client:
        with client.websocket_connect("/ws?start=1&end=2",
                                      headers={"x-request-id": "r1"}) as socket:
            assert socket.receive_json() == [{"start": 1, "end": 2, "label": "default"}, "r1"]
        with pytest.raises(vireo.WebSocketDisconnect) as refused:
            with client.websocket_connect("/ws?start=x&end=2", headers={"x-request-id": "r1"}):
                pass
        assert refused.value.code == 1008
