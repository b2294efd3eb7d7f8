"""When some of a request's values do not validate, the dependencies whose own values do still
run first, in order, as FastAPI runs them: an `HTTPException` one raises (a 401 from an auth
dependency) is the answer rather than the 422, a `yield` dependency entered is closed, and
the 422 lists every error otherwise. Each case is checked against FastAPI on the same app."""

from typing import Annotated, Optional

import pytest
from pydantic import BaseModel

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Item(BaseModel):
    name: str


def build(mod, log):
    app = mod.FastAPI()

    def auth(authorization: Annotated[Optional[str], mod.Header()] = None):
        log.append("auth")
        if authorization != "Bearer ok":
            raise mod.HTTPException(401, "not authenticated")
        return "ada"

    async def auth_async(authorization: Annotated[Optional[str], mod.Header()] = None):
        return auth(authorization)

    def needs_key(x_key: Annotated[str, mod.Header()]):
        log.append("key")
        return x_key

    def session():
        log.append("open")
        try:
            yield "db"
        finally:
            log.append("close")

    def user_in_session(db: Annotated[str, mod.Depends(session)],
                        user: Annotated[str, mod.Depends(auth)]):
        return f"{user}@{db}"

    @app.post("/items")
    def create(item: Item, user: Annotated[str, mod.Depends(auth)]):
        return {"item": item.name, "user": user}

    @app.get("/async")
    async def read(n: int, user: Annotated[str, mod.Depends(auth_async)]):
        return {"n": n, "user": user}

    @app.get("/both", dependencies=[mod.Depends(needs_key), mod.Depends(auth)])
    def both(n: int):
        return n

    @app.get("/session")
    def in_session(n: int, who: Annotated[str, mod.Depends(user_in_session)]):
        return {"who": who}

    @app.get("/blocked-sub")
    def blocked_sub(who: Annotated[str, mod.Depends(user_in_session)],
                    key: Annotated[str, mod.Depends(needs_key)]):
        return {"who": who}

    return app


def clients():
    ours, theirs = [], []
    return (TestClient(build(vireo, ours)), ours), (FastAPIClient(build(fastapi, theirs)), theirs)


def answers(client, method, path, **options):
    response = client.request(method, path, **options)
    return response.status_code, response.json()


OK = {"authorization": "Bearer ok"}


@pytest.mark.parametrize("method, path, options", [
    # A dependency with valid values runs though the body (or a query value) does not.
    ("POST", "/items", {}),
    ("POST", "/items", {"json": {"wrong": 1}}),
    ("GET", "/async", {}),
    ("GET", "/async?n=x", {}),
    # With its header it passes, and the 422 is the answer.
    ("POST", "/items", {"headers": OK}),
    ("GET", "/async?n=x", {"headers": OK}),
    # One dependency without its header is skipped; the next one still runs and answers.
    ("GET", "/both", {}),
    ("GET", "/both", {"headers": OK}),
    ("GET", "/both?n=1", {"headers": {**OK, "x-key": "k"}}),
    # A yield dependency entered on the way is closed, whichever answer wins.
    ("GET", "/session", {}),
    ("GET", "/session", {"headers": OK}),
    ("GET", "/session?n=2", {"headers": OK}),
    # A sub-dependency's dependent runs only when all it needs is valid.
    ("GET", "/blocked-sub", {}),
    ("GET", "/blocked-sub", {"headers": OK}),
])
def test_the_answer_and_what_ran_are_fastapis(method, path, options):
    (ours, our_log), (theirs, their_log) = clients()
    with ours:
        mine = answers(ours, method, path, **options)
        other = answers(theirs, method, path, **options)
    assert mine == other
    assert our_log == their_log


def test_a_validation_error_handler_still_gets_the_errors():
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    for mod, client_class in ((vireo, TestClient), (fastapi, FastAPIClient)):
        app = build(mod, [])

        @app.exception_handler(RequestValidationError)
        async def handler(request, exc):
            return JSONResponse({"count": len(exc.errors())}, 400)

        with client_class(app) as client:
            response = client.get("/both", headers=OK)
            assert (response.status_code, response.json()) == (400, {"count": 2}), mod
            assert client.get("/both").status_code == 401
