"""`yield` dependencies around a streamed response, as FastAPI runs them: what they yield
stays open until the stream's last chunk (then the teardown runs), a stream that fails throws
its error into them, and `Depends(scope="function")` closes one as soon as the handler
returns. Dependencies given as `functools.partial`, sync or async, plain or `yield`, are
called as what they wrap; a returned plain object is sent as its attributes. Each is checked
against FastAPI on the same app."""

from functools import partial
from typing import Annotated

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Session:
    def __init__(self, log):
        self.open = True
        self.log = log

    def rows(self):
        for row in ("a", "b", "c"):
            if not self.open:
                raise RuntimeError("the session is closed")
            yield row


def build(mod, log):
    responses = __import__(f"{mod.__name__}.responses", fromlist=["x"])
    app = mod.FastAPI()

    def session():
        s = Session(log)
        try:
            yield s
        except Exception as exc:
            log.append(f"rolled back: {exc}")
            raise
        finally:
            s.open = False
            log.append("closed")

    async def async_session():
        s = Session(log)
        try:
            yield s
        finally:
            s.open = False
            log.append("closed async")

    @app.get("/rows")
    def rows(s: Annotated[Session, mod.Depends(session)]):
        return responses.StreamingResponse(s.rows())

    @app.get("/rows-async")
    async def rows_async(s: Annotated[Session, mod.Depends(async_session)]):
        async def chunks():
            for row in s.rows():
                yield row

        return responses.StreamingResponse(chunks())

    @app.get("/rows-failing")
    def rows_failing(s: Annotated[Session, mod.Depends(session)]):
        def chunks():
            yield "a"
            raise ValueError("the stream broke")

        return responses.StreamingResponse(chunks())

    @app.get("/rows-function-scope")
    def rows_function_scope(s: Annotated[Session, mod.Depends(session, scope="function")]):
        log.append(f"open while handling: {s.open}")
        return responses.StreamingResponse(iter(["x", "y"]))

    return app


def clients():
    ours, theirs = [], []
    return ((TestClient(build(vireo, ours), raise_server_exceptions=False), ours),
            (FastAPIClient(build(fastapi, theirs), raise_server_exceptions=False), theirs))


@pytest.mark.parametrize("path", ["/rows", "/rows-async", "/rows-failing",
                                  "/rows-function-scope"])
def test_yield_dependencies_close_after_the_stream_as_under_fastapi(path):
    (ours, our_log), (theirs, their_log) = clients()
    mine, other = ours.get(path), theirs.get(path)
    assert (mine.status_code, mine.text) == (other.status_code, other.text)
    assert our_log == their_log


def test_a_stream_that_breaks_raises_its_error_in_the_test():
    app = build(vireo, [])
    with pytest.raises(ValueError, match="the stream broke"):
        TestClient(app).get("/rows-failing")


def test_an_unknown_dependency_scope_is_refused():
    with pytest.raises(ValueError, match="'function' or 'request'"):
        vireo.Depends(lambda: 1, scope="session")


def value(v: str) -> str:
    return v


async def async_value(v: str) -> str:
    return v


def gen_value(v: str):
    yield v


async def async_gen_value(v: str):
    yield v


class Plain:
    def __init__(self):
        self.name = "plain"
        self.tags = ["a"]


def partials(mod):
    app = mod.FastAPI()
    for fn in (value, async_value, gen_value, async_gen_value):
        def route(v: Annotated[str, mod.Depends(partial(fn, fn.__name__))]):
            return {"v": v}

        app.get(f"/{fn.__name__}")(route)

    @app.get("/plain")
    def plain():
        return Plain()

    return app


@pytest.mark.parametrize("path", ["/value", "/async_value", "/gen_value", "/async_gen_value",
                                  "/plain"])
def test_partial_dependencies_and_plain_objects_as_under_fastapi(path):
    mine = TestClient(partials(vireo)).get(path)
    other = FastAPIClient(partials(fastapi)).get(path)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())
