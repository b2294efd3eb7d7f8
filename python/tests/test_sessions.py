"""`SessionMiddleware`, as Starlette's (FastAPI's): the same app under FastAPI and Vireo, the
same requests, the same answers and `set-cookie` attributes; a cookie either app wrote is
read by the other (same secret), and a tampered or expired one starts an empty session. And
`set_cookie` / `append_header` on the response middleware gets from `call_next`."""

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("itsdangerous")

import fastapi  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from starlette.middleware.sessions import SessionMiddleware as StarletteSessions  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

SECRET = "a secret for the tests"


def build(mod, **options):
    app = mod.FastAPI()
    app.add_middleware(StarletteSessions, secret_key=SECRET, **options)

    @app.get("/login/{user}")
    def login(user: str, request: mod.Request, response: mod.Response):
        request.session["user"] = user
        request.session["visits"] = request.session.get("visits", 0) + 1
        response.set_cookie("own", "cookie")
        return {"ok": True}

    @app.get("/me")
    def me(request: mod.Request):
        return {"session": dict(request.session)}

    @app.get("/logout")
    def logout(request: mod.Request):
        request.session.clear()
        return {"ok": True}

    return app


def cookie_attributes(response):
    """Each `set-cookie` field with its value left out: name and attributes."""
    fields = response.headers.get_list("set-cookie")
    out = []
    for field in fields:
        name, _, rest = field.partition("=")
        _, _, attributes = rest.partition(";")
        out.append((name, attributes.strip()))
    return sorted(out)


@pytest.mark.parametrize("options", [{}, {"max_age": None, "same_site": "strict"},
                                     {"session_cookie": "sid", "max_age": 60}])
def test_a_session_lives_across_requests_as_under_fastapi(options):
    flows = []
    for mod, client_class in ((fastapi, FastAPIClient), (vireo, TestClient)):
        with client_class(build(mod, **options)) as client:
            steps = []
            for path in ("/me", "/login/ada", "/login/ada", "/me", "/logout", "/me"):
                response = client.get(path)
                steps.append((path, response.status_code, response.json(),
                              cookie_attributes(response), response.headers.get("vary")))
            flows.append(steps)
    assert flows[1] == flows[0]
    assert flows[1][3][2] == {"session": {"user": "ada", "visits": 2}}


def test_secure_and_domain_flags_are_starlettes():
    attributes = []
    for mod, client_class in ((fastapi, FastAPIClient), (vireo, TestClient)):
        app = build(mod, https_only=True, domain="example.test", path="/")
        with client_class(app) as client:
            attributes.append(cookie_attributes(client.get("/login/ada")))
    assert attributes[1] == attributes[0]
    assert ("session", "path=/; Max-Age=1209600; httponly; samesite=lax; secure; "
            "domain=example.test") in attributes[1]


def test_a_cookie_either_app_wrote_the_other_reads():
    theirs, ours = build(fastapi), build(vireo)
    with FastAPIClient(theirs) as a, TestClient(ours) as b:
        a.get("/login/from-fastapi")
        cookie = a.cookies.get("session")
        assert b.get("/me", headers={"cookie": f"session={cookie}"}).json() == {
            "session": {"user": "from-fastapi", "visits": 1}}
        fields = b.get("/login/from-vireo").headers.get_list("set-cookie")
        cookie = next(f for f in fields if f.startswith("session=")).split(";")[0]
        assert a.get("/me", headers={"cookie": cookie}).json() == {
            "session": {"user": "from-vireo", "visits": 1}}


@pytest.mark.parametrize("cookie", ["session=garbage", "session=eyJ1c2VyIjogImV2ZSJ9.x.y", ""])
def test_a_cookie_that_does_not_verify_starts_an_empty_session(cookie):
    with TestClient(build(vireo)) as client:
        response = client.get("/me", headers={"cookie": cookie} if cookie else {})
        assert response.json() == {"session": {}}
        assert "set-cookie" not in response.headers


def test_request_session_without_the_middleware_says_what_is_missing():
    app = vireo.App()

    @app.get("/")
    def root(request: vireo.Request):
        return dict(request.session)

    with TestClient(app, raise_server_exceptions=False) as client, caplog_of("vireo") as records:
        assert client.get("/").status_code == 500
    assert any("SessionMiddleware must be installed to access request.session" in r
               for r in records)


class caplog_of:
    """The formatted records (tracebacks included) one logger emits inside the block."""

    def __init__(self, name):
        import logging

        self.logger = logging.getLogger(name)
        self.records = []
        outer = self

        class Keep(logging.Handler):
            def emit(self, record):
                outer.records.append(self.format(record) + str(record.exc_info))

        self.handler = Keep()

    def __enter__(self):
        self.logger.addHandler(self.handler)
        return self.records

    def __exit__(self, *exc):
        self.logger.removeHandler(self.handler)


def test_the_client_keeps_cookies_as_httpx_does():
    app = vireo.App()

    @app.get("/set")
    def set_(response: vireo.Response):
        response.set_cookie("a", "1")
        response.set_cookie("scoped", "2", path="/only")
        response.set_cookie("safe", "3", secure=True)
        return "set"

    @app.get("/gone")
    def gone(response: vireo.Response):
        response.delete_cookie("a")
        return "gone"

    @app.get("/echo")
    @app.get("/only/echo")
    def echo(request: vireo.Request):
        return request.headers.get("cookie", "")

    with TestClient(app) as client:
        client.get("/set")
        assert client.cookies["a"] == "1" and client.cookies["safe"] == "3"
        assert client.get("/echo").text == "a=1"
        assert client.get("/only/echo").text == "a=1; scoped=2"
        assert client.get("/echo", cookies={"extra": "x"}).text == "a=1; extra=x"
        assert client.get("/echo", headers={"Cookie": "mine=1"}).text == "mine=1"
        client.get("/gone")
        assert "a" not in client.cookies
        client.cookies.set("manual", "m")
        assert client.get("/echo").text == "manual=m"


def test_middleware_adds_cookies_beside_the_handlers():
    app = vireo.App()

    @app.middleware("http")
    async def stamp(request, call_next):
        response = await call_next(request)
        response.headers["x-seen"] = "1"
        response.set_cookie("mw", "one", httponly=True)
        response.append_header("set-cookie", "raw=two; Path=/")
        response.delete_cookie("old")
        return response

    @app.get("/")
    def root(response: vireo.Response):
        response.set_cookie("handler", "zero")
        return "ok"

    with TestClient(app) as client:
        response = client.get("/")
    fields = response.headers.get_list("set-cookie")
    assert [f.split("=")[0] for f in fields] == ["handler", "mw", "raw", "old"]
    assert "HttpOnly" in fields[1] and "Max-Age=0" in fields[3]
    assert response.headers["X-Seen"] == "1"
