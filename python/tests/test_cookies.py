"""Cookies: read as parameters and from the request, set on responses."""

from __future__ import annotations

from typing import Optional

import pydantic
import pytest

from vireo import App, Cookie, Request, Response
from vireo.testclient import TestClient

app = App()


@app.get("/whoami")
def whoami(session: str = Cookie(), theme: Optional[str] = Cookie(None), visits: int = Cookie(0)):
    return {"session": session, "theme": theme, "visits": visits}


@app.get("/all")
def all_cookies(request: Request):
    return request.cookies


@app.get("/login")
def login():
    response = Response("logged in")
    response.set_cookie("session", "abc", httponly=True, max_age=60)
    response.set_cookie("theme", "dark")
    return response


def test_cookie_parameters():
    with TestClient(app) as client:
        res = client.get("/whoami", headers={"cookie": "session=s1; visits=3"})
        assert res.json() == {"session": "s1", "theme": None, "visits": 3}
        res = client.get("/whoami", headers={"cookie": "visits=x"})
        assert res.status_code == 422
        assert [e["loc"] for e in res.json()["detail"]] == [["cookie", "session"], ["cookie", "visits"]]
        assert client.get("/all", headers={"cookie": 'a=1; b="two"'}).json() == {"a": "1", "b": "two"}


def test_set_cookie():
    with TestClient(app) as client:
        res = client.get("/login")
        cookies = [v.decode() for n, v in res.raw_headers if n == "set-cookie"]
        assert len(cookies) == 2
        assert cookies[0].startswith("session=abc;") and "HttpOnly" in cookies[0]
        assert "Max-Age=60" in cookies[0]
        assert cookies[1].startswith("theme=dark;")


class _Visits(pydantic.BaseModel):
    visits: int


def _repeated_cookie_app(mod):
    built = mod.FastAPI()

    def read(request, visits=mod.Cookie(), model=mod.Cookie()):
        return [visits, model.visits, request.cookies["visits"]]

    # Set as objects: this module's annotations are strings of its own names.
    read.__annotations__ = {"request": mod.Request, "visits": int, "model": _Visits}
    built.get("/read")(read)
    return built


def test_a_repeated_cookie_is_its_last_value_as_in_starlette():
    # Read as a parameter, as a parameter model's field and from request.cookies: each the
    # last value sent, as Starlette's cookie parser keeps it.
    fastapi = pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient as FastAPIClient

    import vireo

    cookie = {"cookie": "visits=1; theme=dark; visits=2"}
    theirs = FastAPIClient(_repeated_cookie_app(fastapi)).get("/read", headers=cookie).json()
    with TestClient(_repeated_cookie_app(vireo)) as client:
        ours = client.get("/read", headers=cookie).json()
    assert ours == theirs == [2, 2, "2"]
