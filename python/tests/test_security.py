"""Security schemes (`vireo.security`, FastAPI's `fastapi.security`): the same app under
FastAPI and under Vireo, the same requests (no credentials, good ones, the wrong scheme,
malformed ones), the same status, body and `WWW-Authenticate`; and the same OpenAPI
`securitySchemes` and per-operation `security`, scopes included."""

# Annotations are evaluated where written: the routes name dependencies local to `build`.
import base64
from typing import Annotated, Any

import pytest

pytest.importorskip("fastapi")

import fastapi  # noqa: E402
import fastapi.security  # noqa: E402
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
import vireo.security  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


def build(mod: Any, security: Any) -> Any:
    """The same routes, written against `fastapi` or `vireo`."""
    app = mod.FastAPI()
    Depends, Security = mod.Depends, mod.Security  # noqa: N806 - FastAPI's names

    basic = security.HTTPBasic()
    realm = security.HTTPBasic(realm="staff", scheme_name="StaffBasic")
    maybe_basic = security.HTTPBasic(auto_error=False, scheme_name="MaybeBasic")
    bearer = security.HTTPBearer(bearerFormat="JWT", description="a signed token")
    maybe_bearer = security.HTTPBearer(auto_error=False, scheme_name="MaybeBearer")
    digest = security.HTTPDigest()
    header_key = security.APIKeyHeader(name="X-API-Key")
    query_key = security.APIKeyQuery(name="api_key", auto_error=False)
    cookie_key = security.APIKeyCookie(name="session")
    oauth2 = security.OAuth2PasswordBearer(
        tokenUrl="token", scopes={"items:read": "Read items", "items:write": "Write items"}
    )
    code = security.OAuth2AuthorizationCodeBearer(
        authorizationUrl="https://auth.example/authorize", tokenUrl="https://auth.example/token",
        refreshUrl="https://auth.example/refresh",
    )
    oidc = security.OpenIdConnect(openIdConnectUrl="https://auth.example/.well-known/openid")

    class TokenChecker(security.HTTPBearer):
        async def __call__(self, request: mod.Request) -> str:
            credentials = await super().__call__(request)
            if credentials.credentials != "good":
                raise mod.HTTPException(403, "Invalid token")
            return credentials.credentials

    checked = TokenChecker(scheme_name="Checked")

    @app.get("/basic")
    def read_basic(credentials: Annotated[Any, Depends(basic)]):
        return {"username": credentials.username, "password": credentials.password}

    @app.get("/realm")
    def read_realm(credentials: Annotated[Any, Depends(realm)]):
        return {"username": credentials.username}

    @app.get("/maybe-basic")
    def read_maybe_basic(credentials: Annotated[Any, Depends(maybe_basic)]):
        return {"user": credentials.username if credentials else None}

    @app.get("/bearer")
    async def read_bearer(credentials: Annotated[Any, Depends(bearer)]):
        return {"scheme": credentials.scheme, "credentials": credentials.credentials}

    @app.get("/maybe-bearer")
    def read_maybe_bearer(credentials: Annotated[Any, Depends(maybe_bearer)]):
        return {"token": credentials.credentials if credentials else None}

    @app.get("/digest")
    def read_digest(credentials: Annotated[Any, Depends(digest)]):
        return {"credentials": credentials.credentials}

    @app.get("/keys")
    def read_keys(
        header: Annotated[str, Depends(header_key)],
        query: Annotated[str | None, Depends(query_key)],
        cookie: Annotated[str, Depends(cookie_key)],
    ):
        return {"header": header, "query": query, "cookie": cookie}

    @app.get("/checked")
    def read_checked(token: Annotated[str, Depends(checked)]):
        return {"token": token}

    @app.get("/oauth")
    def read_oauth(token: Annotated[str, Depends(oauth2)]):
        return {"token": token}

    @app.get("/code")
    def read_code(token: Annotated[str, Depends(code)]):
        return {"token": token}

    @app.get("/oidc")
    def read_oidc(authorization: Annotated[str, Depends(oidc)]):
        return {"authorization": authorization}

    def current_user(scopes: security.SecurityScopes, token: Annotated[str, Depends(oauth2)]):
        return {"token": token, "scopes": scopes.scopes, "scope_str": scopes.scope_str}

    def active_user(user: Annotated[dict, Security(current_user, scopes=["me"])]):
        return user

    @app.get("/items")
    def read_items(user: Annotated[dict, Security(active_user, scopes=["items:read"])]):
        return user

    @app.post("/items")
    def write_items(
        user: Annotated[dict, Security(active_user, scopes=["items:write", "items:read"])],
        plain: Annotated[dict, Depends(current_user)],
    ):
        return {"user": user, "plain": plain}

    @app.post("/token")
    def token(form: Annotated[security.OAuth2PasswordRequestForm, Depends()]):
        return {
            "access_token": form.username, "password": form.password, "scopes": form.scopes,
            "grant_type": form.grant_type, "client_id": form.client_id,
        }

    @app.post("/strict-token")
    def strict_token(form: Annotated[security.OAuth2PasswordRequestFormStrict, Depends()]):
        return {"access_token": form.username, "grant_type": form.grant_type}

    return app


def basic_auth(value: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(value.encode()).decode()}


AUTHORIZED = {"authorization": "Bearer good"}
KEYS = {"x-api-key": "k1", "cookie": "session=s1"}

REQUESTS = [
    ("GET", "/basic", {}, None),
    ("GET", "/basic", basic_auth("ada:secret:with:colons"), None),
    ("GET", "/basic", basic_auth("no-colon"), None),
    ("GET", "/basic", {"authorization": "Basic %%%"}, None),
    ("GET", "/basic", {"authorization": "Bearer abc"}, None),
    ("GET", "/realm", {}, None),
    ("GET", "/maybe-basic", {}, None),
    ("GET", "/maybe-basic", {"authorization": "Basic !!"}, None),
    ("GET", "/maybe-basic", basic_auth("bo:pw"), None),
    ("GET", "/bearer", {}, None),
    ("GET", "/bearer", {"authorization": "Bearer"}, None),
    ("GET", "/bearer", {"authorization": "Basic abc"}, None),
    ("GET", "/bearer", {"authorization": "bearer  tok  "}, None),
    ("GET", "/maybe-bearer", {}, None),
    ("GET", "/maybe-bearer", {"authorization": "Token x"}, None),
    ("GET", "/digest", {"authorization": "Digest username=ada"}, None),
    ("GET", "/digest", {"authorization": "Bearer x"}, None),
    ("GET", "/keys", KEYS, None),
    ("GET", "/keys?api_key=q1", KEYS, None),
    ("GET", "/keys", {"x-api-key": "k1"}, None),
    ("GET", "/keys", {"cookie": "session=s1"}, None),
    ("GET", "/checked", {}, None),
    ("GET", "/checked", {"authorization": "Bearer bad"}, None),
    ("GET", "/checked", AUTHORIZED, None),
    ("GET", "/oauth", {}, None),
    ("GET", "/oauth", {"authorization": "Basic x"}, None),
    ("GET", "/oauth", AUTHORIZED, None),
    ("GET", "/code", AUTHORIZED, None),
    ("GET", "/oidc", {}, None),
    ("GET", "/oidc", {"authorization": "Whatever value"}, None),
    ("GET", "/items", {}, None),
    ("GET", "/items", AUTHORIZED, None),
    ("POST", "/items", AUTHORIZED, None),
    ("POST", "/token", {}, {"username": "ada", "password": "pw", "scope": "a b  c"}),
    ("POST", "/token", {}, {"username": "ada", "password": "pw", "grant_type": "password",
                            "client_id": "cli"}),
    ("POST", "/token", {}, {"username": "ada", "password": "pw", "grant_type": "refresh"}),
    ("POST", "/token", {}, {"password": "pw"}),
    ("POST", "/strict-token", {}, {"username": "ada", "password": "pw", "grant_type": "password"}),
    ("POST", "/strict-token", {}, {"username": "ada", "password": "pw", "grant_type": "other"}),
]


@pytest.fixture(scope="module")
def clients():
    with TestClient(build(vireo, vireo.security)) as ours:
        yield ours, FastAPIClient(build(fastapi, fastapi.security))


def answer(res: Any) -> tuple[int, Any, str | None]:
    return res.status_code, res.json(), res.headers.get("www-authenticate")


@pytest.mark.parametrize(("method", "path", "headers", "form"), REQUESTS)
def test_the_same_answer_as_fastapi(clients, method, path, headers, form):
    ours, theirs = clients
    kwargs: dict[str, Any] = {"headers": headers}
    if form is not None:
        kwargs["data"] = form
    # Each request carries its own cookies: the FastAPI client would keep them otherwise.
    theirs.cookies.clear()
    assert answer(ours.request(method, path, **kwargs)) == answer(
        theirs.request(method, path, **kwargs)
    )


def test_the_schema_lists_the_same_schemes_and_scopes(clients):
    ours, theirs = clients
    mine, expected = ours.get("/openapi.json").json(), theirs.get("/openapi.json").json()
    assert mine["components"]["securitySchemes"] == expected["components"]["securitySchemes"]
    for path, item in expected["paths"].items():
        for method, operation in item.items():
            assert mine["paths"][path][method].get("security") == operation.get("security"), (
                method, path)


def test_the_password_forms_schemas_are_fastapis(clients):
    ours, theirs = clients
    mine, expected = ours.get("/openapi.json").json(), theirs.get("/openapi.json").json()
    forms = [name for name in expected["components"]["schemas"] if name.startswith("Body_")]
    assert forms
    for name in forms:
        assert mine["components"]["schemas"][name] == expected["components"]["schemas"][name]


def test_a_scheme_guards_a_blocking_route():
    app = vireo.App()
    oauth2 = vireo.security.OAuth2PasswordBearer(tokenUrl="token")

    @app.get("/report", blocking=True)
    def report(token: Annotated[str, vireo.Depends(oauth2)]):
        return {"token": token}

    with TestClient(app) as client:
        assert client.get("/report", headers=AUTHORIZED).json() == {"token": "good"}
        res = client.get("/report")
        assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer"


def test_security_scopes_are_per_set_of_scopes_and_cached_within_one():
    # As FastAPI 0.165 caches them: a dependency asked for with scopes is one per set of
    # scopes, apart from the same dependency asked for without.
    calls = []

    def scoped(scopes: vireo.security.SecurityScopes):
        calls.append(list(scopes.scopes))
        return scopes.scopes

    def plain():
        calls.append("plain")
        return "p"

    app = vireo.App()

    @app.get("/")
    def handler(
        a: Annotated[list, vireo.Security(scoped, scopes=["a"])],
        again: Annotated[list, vireo.Security(scoped, scopes=["a"])],
        b: Annotated[list, vireo.Security(scoped, scopes=["b"])],
        p1: Annotated[str, vireo.Security(plain, scopes=["x"])],
        p2: Annotated[str, vireo.Depends(plain)],
    ):
        return {"a": a, "again": again, "b": b}

    with TestClient(app) as client:
        assert client.get("/").json() == {"a": ["a"], "again": ["a"], "b": ["b"]}
    assert calls == [["a"], ["b"], "plain", "plain"]
