"""`request.url` (and `base_url`, `url_for`) as Starlette's `URL`: its parts, `replace` and
the query helpers give what Starlette's give for the same URL, and a handler reading them
answers as under FastAPI."""

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from starlette.datastructures import URL as StarletteURL  # noqa: E402

import vireo  # noqa: E402
from vireo.datastructures import URL  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

URLS = ["http://example.test/a/b?x=1&y=2&x=3", "https://user:pw@h.test:8443/p?q#frag",
        "http://[::1]:8000/", "ws://h.test/ws", "http://h.test"]
OPERATIONS = [
    lambda u: (u.scheme, u.netloc, u.path, u.query, u.fragment, u.hostname, u.port,
               u.username, u.password, u.is_secure),
    lambda u: str(u.replace(scheme="https", path="/new")),
    lambda u: str(u.replace(hostname="other.test")),
    lambda u: str(u.replace(port=9000)),
    lambda u: str(u.replace(hostname="::2", port=1)),
    lambda u: str(u.replace(username="ann", password="secret")),
    lambda u: str(u.include_query_params(x=9, page=2)),
    lambda u: str(u.replace_query_params(only="1")),
    lambda u: str(u.remove_query_params("x")),
    lambda u: str(u.remove_query_params(["x", "y"])),
    lambda u: repr(u),
    lambda u: u == str(u),
]


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("operation", range(len(OPERATIONS)))
def test_parts_and_changes_are_starlettes(url, operation):
    assert OPERATIONS[operation](URL(url)) == OPERATIONS[operation](StarletteURL(url))


def test_a_handler_reading_the_url_answers_as_under_fastapi():
    answers = []
    for mod, client_class in ((fastapi, FastAPIClient), (vireo, TestClient)):
        app = mod.FastAPI()

        @app.get("/items/{name}")
        def items(name: str, request: mod.Request):
            url = request.url
            return {"url": str(url), "next": str(url.include_query_params(page=2)),
                    "host": url.hostname, "port": url.port, "secure": url.is_secure,
                    "base": str(request.base_url), "for": str(request.url_for("items", name="z")),
                    "equal": url == str(url)}

        with client_class(app) as client:
            answers.append(client.get("/items/caf%C3%A9%3F?page=1&sort=asc").json())
    assert answers[1] == answers[0]
    assert answers[1]["url"] == "http://testserver/items/café%3F?page=1&sort=asc"
    assert answers[1]["next"] == "http://testserver/items/café%3F?sort=asc&page=2"


SCOPES = [
    {"type": "http", "scheme": "http", "path": "/a", "query_string": b"x=1",
     "headers": [(b"host", b"h.test:8080")], "server": ("10.0.0.1", 8000)},
    {"type": "http", "scheme": "https", "path": "/", "query_string": b"",
     "headers": [], "server": ("h.test", 443)},
    {"type": "websocket", "scheme": "ws", "path": "/ws", "headers": [],
     "server": ("h.test", 8765)},
    {"type": "http", "path": "/only-path", "headers": [], "server": None},
]


@pytest.mark.parametrize("scope", range(len(SCOPES)))
def test_a_url_made_from_a_scope_is_starlettes(scope):
    assert str(URL(scope=SCOPES[scope])) == str(StarletteURL(scope=SCOPES[scope]))


@pytest.mark.parametrize("parts", [
    {"scheme": "https", "netloc": "h.test", "path": "/p"},
    {"scheme": "ws", "netloc": "h.test:81", "path": "/ws", "query": "a=1"},
    {"path": "/relative", "fragment": "top"},
])
def test_a_url_made_from_parts_is_starlettes(parts):
    assert str(URL(**parts)) == str(StarletteURL(**parts))


def test_a_url_takes_one_source_only():
    with pytest.raises(ValueError, match="only one of them"):
        URL("http://h.test/", scope=SCOPES[0])
    with pytest.raises(ValueError, match="only one of them"):
        URL("http://h.test/", path="/p")


@pytest.mark.parametrize("base", ["http://h.test/", "https://h.test:8443/root/", "ws://h.test"])
@pytest.mark.parametrize("protocol", ["http", "websocket", ""])
def test_a_route_path_made_absolute_is_starlettes_url(base, protocol):
    from starlette.datastructures import URLPath as StarletteURLPath

    from vireo.routing import URLPath

    ours = URLPath("/items/1", protocol).make_absolute_url(base)
    theirs = StarletteURLPath("/items/1", protocol).make_absolute_url(base)
    assert isinstance(ours, URL)
    assert str(ours) == str(theirs)
    assert str(URLPath("/x", protocol).make_absolute_url(URL(base))) == str(
        StarletteURLPath("/x", protocol).make_absolute_url(StarletteURL(base)))


def test_a_websockets_url_for_is_a_url_as_under_fastapi():
    answers = []
    for mod, client_class in ((fastapi, FastAPIClient), (vireo, TestClient)):
        app = mod.FastAPI()

        @app.websocket("/ws/{room}", name="room")
        async def room(websocket: mod.WebSocket, room: str):
            await websocket.accept()
            url = websocket.url_for("room", room="r2")
            await websocket.send_json({"scheme": url.scheme, "path": url.path,
                                       "netloc": url.netloc, "str": str(url)})
            await websocket.close()

        with client_class(app) as client, client.websocket_connect("/ws/r1") as ws:
            answers.append(ws.receive_json())
    assert answers[1] == answers[0]
