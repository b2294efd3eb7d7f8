"""Reverse routing as FastAPI's: route names (`name=`, else the handler's), `app.url_path_for`,
`request.url_for` and `request.base_url`, mounts found by name (`StaticFiles` and a mounted
app's routes), routers' prefixes, WebSocket routes, and Jinja2 templates calling `url_for`.
The same app is built against FastAPI and Vireo and every answer compared."""

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.staticfiles import StaticFiles  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from starlette.routing import NoMatchFound as StarletteNoMatchFound  # noqa: E402

import vireo  # noqa: E402
from vireo.routing import NoMatchFound  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def sub_app() -> fastapi.FastAPI:
    sub = fastapi.FastAPI()

    @sub.get("/things/{thing_id}")
    def thing(thing_id: int):
        return {"thing": thing_id}

    return sub


def build(mod, site):
    app = mod.FastAPI()
    router = mod.APIRouter(prefix="/v1")

    @app.get("/users/{user_id}")
    def user(user_id: int, request: mod.Request):
        return {
            "self": str(request.url_for("user", user_id=user_id)),
            "file": str(request.url_for("files", rest="a/b.txt")),
            "css": str(request.url_for("static", path="/css/site.css")),
            "thing": str(request.url_for("sub:thing", thing_id=3)),
            "room": str(request.url_for("room", room="r1")),
            "base": str(request.base_url),
        }

    @app.get("/files/{rest:path}", name="files")
    def serve_file(rest: str):
        return {"rest": rest}

    @app.post("/users")
    def create_user():
        return {}

    @router.get("/items/{item_id}")
    def item(item_id: str):
        return {"item": item_id}

    @app.websocket("/ws/{room}", name="room")
    async def room(websocket: mod.WebSocket, room: str):
        await websocket.accept()
        await websocket.send_text(f"{websocket.url_for('room', room=room)} "
                                  f"{websocket.url_for('user', user_id=2)}")
        await websocket.close()

    app.include_router(router, prefix="/api")
    app.mount("/static", StaticFiles(directory=site), name="static")
    app.mount("/sub", sub_app(), name="sub")
    return app


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "css").mkdir()
    (site / "css" / "site.css").write_text("body {}")
    return build(fastapi, str(site)), build(vireo, str(site))


LOOKUPS = [
    ("user", {"user_id": 7}),
    ("user", {"user_id": "ada"}),
    ("files", {"rest": "deep/er/x.txt"}),
    ("create_user", {}),
    ("item", {"item_id": "i-1"}),
    ("room", {"room": "lobby"}),
    ("static", {"path": "/css/site.css"}),
    ("static", {"path": "css/site.css"}),
    ("sub:thing", {"thing_id": 9}),
]


@pytest.mark.parametrize(("name", "params"), LOOKUPS)
def test_url_path_for_finds_what_fastapi_finds(apps, name, params):
    theirs, ours = apps
    expected = theirs.url_path_for(name, **params)
    found = ours.url_path_for(name, **params)
    assert found == str(expected)
    assert isinstance(found, str)


MISSES = [
    ("nobody", {}),
    ("user", {}),
    ("user", {"user_id": 1, "extra": 2}),
    ("create_user", {"user_id": 1}),
    ("static", {}),
    ("static", {"path": "x", "more": 1}),
    ("sub:nothing", {}),
    ("thing", {"thing_id": 1}),
]


@pytest.mark.parametrize(("name", "params"), MISSES)
def test_a_name_or_parameters_nothing_has_is_no_match(apps, name, params):
    theirs, ours = apps
    with pytest.raises(StarletteNoMatchFound) as expected:
        theirs.url_path_for(name, **params)
    with pytest.raises(NoMatchFound) as raised:
        ours.url_path_for(name, **params)
    assert str(raised.value) == str(expected.value)


def test_a_parameter_that_would_change_the_path_is_refused(apps):
    _, ours = apps
    with pytest.raises(ValueError, match="'user_id'.*'a/b'"):
        ours.url_path_for("user", user_id="a/b")
    with pytest.raises(ValueError, match="non-empty"):
        ours.url_path_for("user", user_id="")


def test_request_url_for_and_base_url_are_fastapis(apps):
    theirs, ours = apps
    with FastAPIClient(theirs) as client:
        expected = client.get("/users/5").json()
    with TestClient(ours) as client:
        got = client.get("/users/5").json()
    assert got == expected
    assert got["self"] == "http://testserver/users/5"
    assert got["room"] == "ws://testserver/ws/r1"


def test_a_websocket_finds_urls_as_under_fastapi(apps):
    texts = []
    for app, client_class in zip(apps, (FastAPIClient, TestClient)):
        with client_class(app) as client, client.websocket_connect("/ws/lobby") as ws:
            texts.append(ws.receive_text())
    assert texts[1] == texts[0]
    assert texts[1] == "ws://testserver/ws/lobby http://testserver/users/2"


def test_a_router_finds_its_own_routes_under_its_prefix():
    router = vireo.APIRouter(prefix="/v2")

    @router.get("/x/{n}")
    def x(n: int):
        return n

    assert router.url_path_for("x", n=1) == "/v2/x/1"


def test_url_for_over_a_real_socket_uses_the_scheme_and_host_the_client_sent(serve):
    served = serve("url_for_app:app")
    status, _, body = served.get("/here/3", headers={"Host": "example.test:8443"})
    assert status == 200
    assert body == b'{"url":"http://example.test:8443/here/3","base":"http://example.test:8443/"}'


def test_jinja2_templates_call_url_for_as_under_fastapi(apps, tmp_path):
    pytest.importorskip("jinja2")
    from fastapi.templating import Jinja2Templates

    (tmp_path / "page.html").write_text(
        '<link href="{{ url_for(\'static\', path=\'/css/site.css\') }}">'
        '<a href="{{ url_for(\'user\', user_id=uid) }}">{{ uid }}</a>'
    )
    templates = Jinja2Templates(directory=str(tmp_path))
    pages = []
    for mod, app, client_class in zip((fastapi, vireo), apps, (FastAPIClient, TestClient)):

        def page(request: mod.Request, uid: int):
            return templates.TemplateResponse(request, "page.html", {"uid": uid})

        app.add_api_route("/page/{uid}", page, methods=["GET"])
        with client_class(app) as client:
            response = client.get("/page/4")
        pages.append((response.status_code, response.headers["content-type"], response.text))
    assert pages[1] == pages[0]
    assert 'href="http://testserver/static/css/site.css"' in pages[1][2]
    assert 'href="http://testserver/users/4"' in pages[1][2]


def test_behind_a_proxy_the_urls_carry_the_root_path_as_under_fastapi():
    answers = []
    for mod, make_client, prefix in (
        (fastapi, lambda app: FastAPIClient(app, root_path="/api"), "/api"),
        (vireo, TestClient, ""),
    ):
        app = mod.FastAPI(**({"root_path": "/api"} if mod is vireo else {}))

        @app.get("/items/{item_id}", name="item")
        def item(item_id: int, request: mod.Request):
            scope = request.scope
            return {"url": str(request.url), "for": str(request.url_for("item", item_id=1)),
                    "base": str(request.base_url), "root_path": scope["root_path"],
                    "path": scope["path"], "raw_path": scope["raw_path"].decode()}

        # The proxy strips the prefix before Vireo sees the request; Starlette's client
        # sends it, as uvicorn's --root-path puts it in the path.
        with make_client(app) as client:
            answers.append((
                client.get(prefix + "/items/7").json(),
                client.get(prefix + "/openapi.json").json()["servers"],
                "/api/openapi.json" in client.get(prefix + "/docs").text,
            ))
    assert answers[1] == answers[0]
    assert answers[1][0]["url"] == "http://testserver/api/items/7"


def test_a_path_that_still_has_the_root_path_is_routed_without_it_as_in_fastapi():
    """`/api/items/7` and `/items/7` reach the same route with `root_path="/api"`; `/api`
    alone and `/apix/items/7` are not under it."""
    answers = []
    for mod, make_client in ((fastapi, FastAPIClient), (vireo, TestClient)):
        app = mod.FastAPI(root_path="/api")

        @app.get("/items/{item_id}")
        def item(item_id: int):
            return {"id": item_id}

        with make_client(app) as client:
            answers.append([(r.status_code, r.json()) for r in (
                client.get(path) for path in
                ("/api/items/7", "/items/7", "/api", "/apix/items/7"))])
    assert answers[1] == answers[0]
    assert answers[1][0] == (200, {"id": 7})


@pytest.mark.parametrize("mount_path", ["", "/sub"])
def test_a_test_clients_root_path_serves_the_app_as_behind_a_proxy_as_fastapis(mount_path):
    """`TestClient(app, root_path="/api")`: the path sent with the prefix is routed without
    it and the URLs the app makes carry it; an app's own root path wins; a later client
    without one serves the app without it again."""
    answers = []
    for mod, make_client in ((fastapi, FastAPIClient), (vireo, TestClient)):
        inner = mod.FastAPI()

        @inner.get("/items/{item_id}", name="item")
        def item(item_id: int, request: mod.Request):
            return {"for": str(request.url_for("item", item_id=1)),
                    "root_path": request.scope["root_path"]}

        app = inner
        if mount_path:
            app = mod.FastAPI()
            app.mount(mount_path, inner)
        own = mod.FastAPI(root_path="/own")
        @own.get("/where")
        def where(request: mod.Request):
            return {"root_path": request.scope["root_path"]}

        prefix = "/api" + mount_path
        client = make_client(app, root_path="/api")
        seen = [client.get(prefix + "/items/7").json(),
                client.get(prefix + "/openapi.json").json().get("servers")]
        plain = make_client(app)
        seen.append(plain.get(mount_path + "/items/7").json())
        seen.append(make_client(own, root_path="/api").get("/where").json())
        answers.append(seen)
    assert answers[1] == answers[0]
    assert answers[1][0]["for"] == f"http://testserver/api{mount_path}/items/1"


def test_a_mounted_app_takes_its_prefix_off_once():
    """The outer app takes `/v1` off `/v1/v1/items`; the mounted app, whose root path is
    `/v1`, routes `/v1/items` as it is."""
    outer, inner = vireo.App(), vireo.App()

    @inner.get("/v1/items")
    def nested() -> str:
        return "nested"

    @inner.get("/items")
    def items() -> str:
        return "items"

    outer.mount("/v1", inner)
    with TestClient(outer) as client:
        assert client.get("/v1/v1/items").text == "nested"
        assert client.get("/v1/items").text == "items"


def test_vireo_serve_root_path_reaches_an_app(serve):
    served = serve("url_for_app:app", "--root-path", "/api/")
    status, _, body = served.get("/here/3", headers={"Host": "example.test"})
    assert status == 200
    assert body == b'{"url":"http://example.test/api/here/3","base":"http://example.test/api/"}'
    # Sent with the prefix, as a proxy that keeps it would: routed the same.
    assert served.get("/api/here/3", headers={"Host": "example.test"})[2] == body
