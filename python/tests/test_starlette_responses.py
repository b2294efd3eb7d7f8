"""A FastAPI app's handlers return FastAPI's (Starlette's) response classes; under Vireo they
answer as under FastAPI: the same app under both, returning `fastapi.responses` objects from
handlers, a dependency's route, an exception handler and a middleware, and the same status,
header fields and body."""

# Annotations are evaluated where written: the routes name a model local to `build`.
import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
import pydantic  # noqa: E402
from fastapi import responses  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from starlette.background import BackgroundTask  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Item(pydantic.BaseModel):
    name: str


def build(mod, file_path, ran):
    app = mod.FastAPI()

    @app.middleware("http")
    async def refuse(request, call_next):
        if request.url.path == "/blocked":
            return responses.PlainTextResponse("blocked", status_code=403)
        return await call_next(request)

    @app.exception_handler(ValueError)
    def bad_value(request, exc):
        return responses.JSONResponse({"error": str(exc)}, status_code=400)

    @app.get("/html")
    def html():
        return responses.HTMLResponse("<b>hi</b>", headers={"x-served": "1"})

    @app.get("/json")
    def as_json():
        return responses.JSONResponse({"a": [1, "é"]}, status_code=201)

    @app.get("/cookies")
    def cookies():
        res = responses.PlainTextResponse("ok")
        res.set_cookie("session", "abc", httponly=True)
        res.set_cookie("theme", "dark")
        return res

    @app.get("/redirect")
    def redirect():
        return responses.RedirectResponse("/html")

    @app.get("/stream")
    def stream():
        return responses.StreamingResponse(iter(["a", "b", "c"]), media_type="text/plain")

    @app.get("/astream")
    async def astream():
        async def chunks():
            for part in (b"x", b"y"):
                yield part

        return responses.StreamingResponse(chunks(), media_type="application/octet-stream")

    @app.get("/file")
    def file():
        return responses.FileResponse(file_path, filename="notes.txt")

    @app.get("/model", response_model=Item)
    def model():
        return responses.JSONResponse({"not": "an item"})

    def dependency():
        return "dep"

    @app.get("/dep")
    def with_dependency(value: str = mod.Depends(dependency)):
        return responses.HTMLResponse(f"<i>{value}</i>")

    @app.get("/raises")
    def raises():
        raise ValueError("no good")

    @app.get("/background")
    def background():
        return responses.JSONResponse({"ok": True}, background=BackgroundTask(ran.append, "ran"))

    return app


PATHS = ["/html", "/json", "/cookies", "/redirect", "/stream", "/astream", "/file", "/model",
         "/dep", "/raises", "/blocked", "/background"]


def seen(res):
    fields = {name: res.headers.get(name)
              for name in ("content-type", "x-served", "location", "content-disposition")}
    if hasattr(res, "raw_headers"):  # Vireo's test response: (name, bytes) pairs
        cookies = [v.decode("latin-1") for k, v in res.raw_headers if k == "set-cookie"]
    else:
        cookies = res.headers.get_list("set-cookie")
    return res.status_code, fields, sorted(cookies), res.content


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("files") / "notes.txt"
    path.write_text("some notes\n")
    return str(path)


@pytest.mark.parametrize("path", PATHS)
def test_the_same_answer_as_fastapi(path, text_file):
    ours_ran, theirs_ran = [], []
    theirs = FastAPIClient(build(fastapi, text_file, theirs_ran), follow_redirects=False)
    with TestClient(build(vireo, text_file, ours_ran), follow_redirects=False) as ours:
        assert seen(ours.get(path)) == seen(theirs.get(path))
    assert ours_ran == theirs_ran
