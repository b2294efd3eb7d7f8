"""`TrustedHostMiddleware` and `HTTPSRedirectMiddleware`, as Starlette's (FastAPI's): the
same app under FastAPI and Vireo, the same requests, the same status, location and body."""

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
from fastapi.middleware.httpsredirect import HTTPSRedirectMiddleware  # noqa: E402
from fastapi.middleware.trustedhost import TrustedHostMiddleware  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod, middleware, **options):
    app = mod.FastAPI()
    app.add_middleware(middleware, **options)

    @app.get("/page")
    def page(q: str = ""):
        return {"q": q}

    return app


def answer(client, path, host):
    response = client.get(path, headers={"host": host}, follow_redirects=False)
    return response.status_code, response.headers.get("location"), response.content


HOSTS = ["example.com", "EXAMPLE.com:8080", "api.example.com", "deep.api.example.com",
         "www.other.org", "other.org", "evil.com", "example.com.evil.com", "[::1]:8000"]
ALLOWED = [["example.com", "*.example.com", "www.other.org"], ["*"],
           ["www.other.org"], ["[::1]"]]


@pytest.mark.parametrize("allowed", ALLOWED, ids=lambda a: ",".join(a))
@pytest.mark.parametrize("www_redirect", [True, False])
def test_trusted_hosts_answer_as_under_fastapi(allowed, www_redirect):
    options = {"allowed_hosts": allowed, "www_redirect": www_redirect}
    with FastAPIClient(build(fastapi, TrustedHostMiddleware, **options)) as theirs, \
            TestClient(build(vireo, TrustedHostMiddleware, **options)) as ours:
        for host in HOSTS:
            path = "/page?q=a%20b"
            assert answer(ours, path, host) == answer(theirs, path, host), host


@pytest.mark.parametrize("pattern", ["example.*", "*example.com", "a.*.com"])
def test_a_wildcard_not_at_the_front_is_refused(pattern):
    with pytest.raises(AssertionError):
        TrustedHostMiddleware(None, allowed_hosts=[pattern])
    with pytest.raises(ValueError, match=r"\*\.example\.com"):
        vireo.App().add_middleware(TrustedHostMiddleware, allowed_hosts=[pattern])


@pytest.mark.parametrize("host", ["example.com", "example.com:80", "example.com:443",
                                  "Example.com:8080", "127.0.0.1:5000"])
def test_plain_http_is_redirected_to_https_as_under_fastapi(host):
    with FastAPIClient(build(fastapi, HTTPSRedirectMiddleware)) as theirs, \
            TestClient(build(vireo, HTTPSRedirectMiddleware)) as ours:
        for path in ("/page", "/page?q=1&q=2", "/missing"):
            assert answer(ours, path, host) == answer(theirs, path, host)
