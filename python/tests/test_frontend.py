"""`app.frontend(path, directory=...)`: a static frontend build served below every route,
mount and trailing-slash redirect, with FastAPI's fallbacks (`404.html`, or `index.html` for a
page navigation). The same app under FastAPI and Vireo gives the same answers."""

import os
from pathlib import Path

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("frontends")
    site, admin, spa, plain = root / "site", root / "admin", root / "spa", root / "plain"
    write(site / "index.html", "site index")
    write(site / "404.html", "site missing")
    write(site / "assets" / "app.js", "console.log(1)")
    write(site / "guide" / "index.html", "guide index")
    write(site / "empty" / "keep.txt", "kept")
    write(admin / "index.html", "admin shell")
    write(spa / "index.html", "spa shell")
    write(spa / "main.css", "body{}")
    write(plain / "only.txt", "only")
    write(root / "secret.txt", "secret")
    os.symlink(root / "secret.txt", spa / "leak.txt")
    return root


def build(mod, root: Path):
    app = mod.FastAPI()

    def require_key(request: mod.Request):
        if request.headers.get("x-key") != "ok":
            raise mod.HTTPException(status_code=401, detail="no key")

    @app.get("/api/items")
    def items():
        return ["a"]

    @app.get("/api/missing")
    def missing():
        raise mod.HTTPException(status_code=404, detail="api missing")

    @app.get("/redirected/")
    def redirected():
        return {"slash": True}

    inner = mod.FastAPI()

    @inner.get("/thing")
    def thing():
        return {"mounted": True}

    app.mount("/mounted", inner)
    app.frontend("/", directory=root / "site")
    admin = mod.APIRouter(prefix="/admin", dependencies=[mod.Depends(require_key)])
    admin.frontend("/", directory=root / "admin", fallback="index.html")
    app.include_router(admin)
    app.frontend("/spa", directory=root / "spa", fallback="index.html")
    app.frontend("/plain", directory=root / "plain", fallback=None)
    return app


@pytest.fixture(scope="module")
def clients(builds):
    ours = TestClient(build(vireo, builds), follow_redirects=False)
    theirs = FastAPIClient(build(fastapi, builds), follow_redirects=False)
    return ours, theirs


HTML = {"accept": "text/html"}
REQUESTS = [
    ("GET", "/", {}), ("GET", "/assets/app.js", {}), ("GET", "/assets/none.js", {}),
    ("GET", "/dashboard", HTML), ("GET", "/guide", {}), ("GET", "/guide/", {}),
    ("GET", "/empty", {}), ("GET", "/api/items", HTML), ("GET", "/api/missing", HTML),
    ("GET", "/redirected", {}), ("GET", "/mounted/thing", {}),
    ("GET", "/admin/settings", HTML), ("GET", "/admin/settings", {**HTML, "x-key": "ok"}),
    ("GET", "/spa", {}), ("GET", "/spa/", {}), ("GET", "/spa/main.css", {}),
    ("GET", "/spa/deep/page", HTML), ("GET", "/spa/deep/page", {"accept": "*/*"}),
    ("GET", "/spa/deep/page", {"accept": "text/html; q=0, */*"}),
    ("GET", "/spa/deep/page", {"accept": "application/xhtml+xml;q=0.5"}),
    ("GET", "/spa/missing.js", {"accept": "image/png"}), ("GET", "/spa/leak.txt", {}),
    ("GET", "/spam", HTML), ("GET", "/plain/only.txt", {}), ("GET", "/plain/x", HTML),
    ("GET", "/../secret.txt", {}), ("GET", "/%2e%2e/secret.txt", {}),
    ("GET", "/spa/..%2fsecret.txt", {}), ("GET", "/spa/%5c..%5csecret.txt", {}),
    ("HEAD", "/assets/app.js", {}), ("HEAD", "/dashboard", HTML),
    ("POST", "/assets/app.js", {}), ("POST", "/assets/none.js", {}), ("PUT", "/spa/", {}),
    ("DELETE", "/spa/deep/page", HTML), ("POST", "/api/items", {}),
]


@pytest.mark.parametrize(("method", "path", "headers"), REQUESTS)
def test_a_frontend_answers_as_fastapis(clients, method, path, headers):
    ours, theirs = clients
    mine = ours.request(method, path, headers=headers)
    other = theirs.request(method, path, headers=headers)
    assert (mine.status_code, mine.content) == (other.status_code, other.content), path
    for name in ("content-type", "location", "etag", "content-length"):
        assert mine.headers.get(name) == other.headers.get(name), name
    assert b"secret" not in mine.content  # nothing outside a build, by any spelling


def test_a_file_the_client_has_is_not_sent_again(clients):
    ours, _ = clients
    first = ours.get("/assets/app.js")
    again = ours.get("/assets/app.js", headers={"if-none-match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    since = ours.get("/assets/app.js",
                     headers={"if-modified-since": first.headers["last-modified"]})
    assert since.status_code == 304


def test_frontends_are_not_in_the_schema(clients):
    ours, theirs = clients
    assert ours.get("/openapi.json").json()["paths"] == theirs.get("/openapi.json").json()[
        "paths"]


def test_a_missing_directory_or_fallback_is_refused_when_declared(tmp_path, monkeypatch):
    monkeypatch.delenv("VIREO_ENV", raising=False)
    monkeypatch.delenv("FASTAPI_ENV", raising=False)
    app = vireo.App()
    with pytest.raises(RuntimeError, match="Frontend directory '.*missing' does not exist"):
        app.frontend("/", directory=tmp_path / "missing")
    (tmp_path / "dist").mkdir()
    with pytest.raises(RuntimeError, match="fallback file 'index.html' does not exist"):
        app.frontend("/", directory=tmp_path / "dist", fallback="index.html")
    with pytest.raises(ValueError, match="fallback is 'auto'"):
        app.frontend("/", directory=tmp_path / "dist", fallback="index.htm")
    with pytest.raises(ValueError, match="starts with '/'"):
        app.frontend("app", directory=tmp_path / "dist")


def test_in_development_a_missing_directory_is_a_warning_then_an_error_per_request(
        tmp_path, monkeypatch):
    monkeypatch.setenv("VIREO_ENV", "development")
    app = vireo.App()
    with pytest.warns(UserWarning, match="does not exist") as caught:
        app.frontend("/", directory=tmp_path / "later")
    assert caught[0].filename == __file__
    with pytest.raises(RuntimeError, match="does not exist"):
        TestClient(app).get("/index.html")
    write(tmp_path / "later" / "index.html", "built now")
    assert TestClient(app).get("/").text == "built now"
