"""Security schemes, as `fastapi.security` has them: dependencies that read credentials
from the request (an `Authorization` header, an API key in a header, query or cookie), answer
401 when they are missing, and describe themselves in the OpenAPI schema (`securitySchemes`,
and each operation's `security` with the scopes `Security(..., scopes=[...])` asks for).

    from vireo.security import OAuth2PasswordBearer

    oauth2 = OAuth2PasswordBearer(tokenUrl="token")

    @app.get("/me")
    def me(token: Annotated[str, Depends(oauth2)]):
        ...

Each scheme is a class whose instances are dependencies (`async def __call__(request)`), so
an app can subclass one and `await super().__call__(request)`, as with FastAPI's.
"""

from __future__ import annotations

import binascii
import dataclasses
from base64 import b64decode
from typing import Annotated, Any

from .connection import HTTPConnection
from .dependencies import Security, SecurityScopes
from .exceptions import HTTPException
from .forms import Form


@dataclasses.dataclass
class HTTPBasicCredentials:
    """What `HTTPBasic` gives: the user name and password of a Basic `Authorization`."""

    username: str
    password: str


@dataclasses.dataclass
class HTTPAuthorizationCredentials:
    """What `HTTPBearer` and `HTTPDigest` give: the `Authorization` value split at its first
    space into `scheme` and `credentials`."""

    scheme: str
    credentials: str


def get_authorization_scheme_param(value: str | None) -> tuple[str, str]:
    """`("Bearer", "token")` from `"Bearer token"`; `("", "")` from nothing."""
    if not value:
        return "", ""
    scheme, _, param = value.partition(" ")
    return scheme, param.strip()


def _scheme(kind: str, description: str | None, **fields: Any) -> dict[str, Any]:
    """An OpenAPI security scheme object, without the fields left unset."""
    model: dict[str, Any] = {"type": kind}
    if description is not None:
        model["description"] = description
    model.update({name: value for name, value in fields.items() if value is not None})
    return model


class SecurityBase:
    """What every scheme has: `model`, its OpenAPI security scheme object; `scheme_name`, the
    name it is listed under (the class name unless given); and `auto_error`: whether missing
    credentials are a 401 (else the dependency gives `None`)."""

    model: dict[str, Any]
    scheme_name: str
    auto_error: bool

    def __init__(self, model: dict[str, Any], scheme_name: str | None, auto_error: bool) -> None:
        self.model = model
        self.scheme_name = scheme_name or type(self).__name__
        self.auto_error = auto_error

    def make_authenticate_headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "Bearer"}

    def make_not_authenticated_error(self) -> HTTPException:
        return HTTPException(401, "Not authenticated", headers=self.make_authenticate_headers())

    def _missing(self) -> None:
        if self.auto_error:
            raise self.make_not_authenticated_error()
        return None

    def _authorization(self, request: HTTPConnection) -> str | None:
        """The whole `Authorization` value."""
        return request.headers.get("authorization") or self._missing()

    def check(self, request: HTTPConnection) -> Any:
        """The credentials in `request`; a 401, or `None`, when they are missing."""
        raise NotImplementedError

    async def __call__(self, request: HTTPConnection) -> Any:
        # A scheme that keeps this `__call__` is run as its (sync) `check`: it never waits,
        # and so it can guard `blocking=True` routes too.
        return self.check(request)


class HTTPBase(SecurityBase):
    """An HTTP authentication scheme (`Authorization: <scheme> <credentials>`)."""

    def __init__(
        self,
        *,
        scheme: str,
        scheme_name: str | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        super().__init__(_scheme("http", description, scheme=scheme), scheme_name, auto_error)

    def make_authenticate_headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.model["scheme"].title()}

    def check(self, request: HTTPConnection) -> HTTPAuthorizationCredentials | None:
        return self._credentials(request, None)

    def _credentials(self, request: HTTPConnection, expected: str | None) -> Any:
        authorization = request.headers.get("authorization")
        scheme, credentials = get_authorization_scheme_param(authorization)
        if not (authorization and scheme and credentials):
            return self._missing()
        if expected is not None and scheme.lower() != expected:
            return self._missing()
        return HTTPAuthorizationCredentials(scheme=scheme, credentials=credentials)


class HTTPBasic(HTTPBase):
    """HTTP Basic authentication (RFC 7617): gives `HTTPBasicCredentials`. A value that is
    not base64 of `user:password` is a 401 even with `auto_error=False`, as in FastAPI."""

    def __init__(
        self,
        *,
        scheme_name: str | None = None,
        realm: str | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        super().__init__(
            scheme="basic", scheme_name=scheme_name, description=description, auto_error=auto_error
        )
        self.realm = realm

    def make_authenticate_headers(self) -> dict[str, str]:
        if self.realm:
            return {"WWW-Authenticate": f'Basic realm="{self.realm}"'}
        return {"WWW-Authenticate": "Basic"}

    def check(self, request: HTTPConnection) -> HTTPBasicCredentials | None:
        authorization = request.headers.get("authorization")
        scheme, param = get_authorization_scheme_param(authorization)
        if not authorization or scheme.lower() != "basic":
            return self._missing()
        try:
            data = b64decode(param).decode("ascii")
        except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
            raise self.make_not_authenticated_error() from exc
        username, separator, password = data.partition(":")
        if not separator:
            raise self.make_not_authenticated_error()
        return HTTPBasicCredentials(username=username, password=password)


class HTTPBearer(HTTPBase):
    """A bearer token in `Authorization: Bearer <token>`: gives
    `HTTPAuthorizationCredentials`."""

    def __init__(
        self,
        *,
        bearerFormat: str | None = None,  # noqa: N803 - FastAPI's (and OpenAPI's) name
        scheme_name: str | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        SecurityBase.__init__(
            self,
            _scheme("http", description, scheme="bearer", bearerFormat=bearerFormat),
            scheme_name,
            auto_error,
        )

    def check(self, request: HTTPConnection) -> HTTPAuthorizationCredentials | None:
        return self._credentials(request, "bearer")


class HTTPDigest(HTTPBase):
    """HTTP Digest: gives the `Authorization` value as `HTTPAuthorizationCredentials`, for
    the app to check."""

    def __init__(
        self,
        *,
        scheme_name: str | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        super().__init__(
            scheme="digest", scheme_name=scheme_name, description=description, auto_error=auto_error
        )

    def check(self, request: HTTPConnection) -> HTTPAuthorizationCredentials | None:
        return self._credentials(request, "digest")


class APIKeyBase(SecurityBase):
    """An API key, named `name`, where the subclass reads it (`location`): gives its value."""

    location: str

    def __init__(
        self,
        *,
        name: str,
        scheme_name: str | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        model = _scheme("apiKey", description)
        model.update({"in": self.location, "name": name})
        super().__init__(model, scheme_name, auto_error)

    def make_authenticate_headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "APIKey"}

    def check_api_key(self, api_key: str | None) -> str | None:
        if not api_key:
            return self._missing()
        return api_key

    def check(self, request: HTTPConnection) -> str | None:
        return self.check_api_key(self.read(request, self.model["name"]))

    def read(self, request: HTTPConnection, name: str) -> str | None:
        raise NotImplementedError


class APIKeyQuery(APIKeyBase):
    """An API key in a query parameter."""

    location = "query"

    def read(self, request: HTTPConnection, name: str) -> str | None:
        return request.query_params.get(name)


class APIKeyHeader(APIKeyBase):
    """An API key in a header field."""

    location = "header"

    def read(self, request: HTTPConnection, name: str) -> str | None:
        return request.headers.get(name)


class APIKeyCookie(APIKeyBase):
    """An API key in a cookie."""

    location = "cookie"

    def read(self, request: HTTPConnection, name: str) -> str | None:
        return request.cookies.get(name)


class OAuth2(SecurityBase):
    """OAuth2 with the given `flows` (OpenAPI's OAuth Flows object): gives the whole
    `Authorization` value."""

    def __init__(
        self,
        *,
        flows: dict[str, dict[str, Any]] | None = None,
        scheme_name: str | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        flows = {
            kind: {name: value for name, value in flow.items() if value is not None}
            for kind, flow in (flows or {}).items()
        }
        super().__init__(_scheme("oauth2", description, flows=flows), scheme_name, auto_error)

    def check(self, request: HTTPConnection) -> str | None:
        return self._authorization(request)


class _OAuth2Bearer(OAuth2):
    """An OAuth2 flow whose token is sent as `Authorization: Bearer <token>`: gives the
    token."""

    def check(self, request: HTTPConnection) -> str | None:
        scheme, param = get_authorization_scheme_param(request.headers.get("authorization"))
        if scheme.lower() != "bearer":
            return self._missing()
        return param


class OAuth2PasswordBearer(_OAuth2Bearer):
    """OAuth2's password flow, its token sent as `Authorization: Bearer <token>`: gives the
    token. `tokenUrl` is where clients get one (a route taking
    `OAuth2PasswordRequestForm`)."""

    def __init__(
        self,
        tokenUrl: str,  # noqa: N803 - FastAPI's (and OpenAPI's) name
        scheme_name: str | None = None,
        scopes: dict[str, str] | None = None,
        description: str | None = None,
        auto_error: bool = True,
        refreshUrl: str | None = None,  # noqa: N803
    ) -> None:
        flow = {"refreshUrl": refreshUrl, "scopes": scopes or {}, "tokenUrl": tokenUrl}
        super().__init__(
            flows={"password": flow},
            scheme_name=scheme_name,
            description=description,
            auto_error=auto_error,
        )


class OAuth2AuthorizationCodeBearer(_OAuth2Bearer):
    """OAuth2's authorization code flow, its token sent as a bearer token: gives the token."""

    def __init__(
        self,
        authorizationUrl: str,  # noqa: N803 - FastAPI's (and OpenAPI's) names
        tokenUrl: str,  # noqa: N803
        refreshUrl: str | None = None,  # noqa: N803
        scheme_name: str | None = None,
        scopes: dict[str, str] | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        flow = {
            "refreshUrl": refreshUrl,
            "scopes": scopes or {},
            "authorizationUrl": authorizationUrl,
            "tokenUrl": tokenUrl,
        }
        super().__init__(
            flows={"authorizationCode": flow},
            scheme_name=scheme_name,
            description=description,
            auto_error=auto_error,
        )


class OpenIdConnect(SecurityBase):
    """OpenID Connect discovery at `openIdConnectUrl`: gives the whole `Authorization`
    value."""

    def __init__(
        self,
        *,
        openIdConnectUrl: str,  # noqa: N803 - FastAPI's (and OpenAPI's) name
        scheme_name: str | None = None,
        description: str | None = None,
        auto_error: bool = True,
    ) -> None:
        model = _scheme("openIdConnect", description, openIdConnectUrl=openIdConnectUrl)
        super().__init__(model, scheme_name, auto_error)

    def check(self, request: HTTPConnection) -> str | None:
        return self._authorization(request)


class OAuth2PasswordRequestForm:
    """The form a client posts to an OAuth2 password flow's `tokenUrl`: `username`,
    `password`, `scope` (split into `scopes`), and optionally `grant_type` (`password` when
    given), `client_id` and `client_secret`."""

    def __init__(
        self,
        *,
        grant_type: Annotated[str | None, Form(pattern="^password$")] = None,
        username: Annotated[str, Form()],
        password: Annotated[str, Form(json_schema_extra={"format": "password"})],
        scope: Annotated[str, Form()] = "",
        client_id: Annotated[str | None, Form()] = None,
        client_secret: Annotated[str | None, Form(json_schema_extra={"format": "password"})]
        = None,
    ) -> None:
        self.grant_type = grant_type
        self.username = username
        self.password = password
        self.scopes = scope.split()
        self.client_id = client_id
        self.client_secret = client_secret


class OAuth2PasswordRequestFormStrict(OAuth2PasswordRequestForm):
    """`OAuth2PasswordRequestForm` with `grant_type=password` required, as OAuth2 says."""

    def __init__(
        self,
        grant_type: Annotated[str, Form(pattern="^password$")],
        username: Annotated[str, Form()],
        password: Annotated[str, Form()],
        scope: Annotated[str, Form()] = "",
        client_id: Annotated[str | None, Form()] = None,
        client_secret: Annotated[str | None, Form()] = None,
    ) -> None:
        super().__init__(
            grant_type=grant_type,
            username=username,
            password=password,
            scope=scope,
            client_id=client_id,
            client_secret=client_secret,
        )


__all__ = [
    "APIKeyCookie",
    "APIKeyHeader",
    "APIKeyQuery",
    "HTTPAuthorizationCredentials",
    "HTTPBase",
    "HTTPBasic",
    "HTTPBasicCredentials",
    "HTTPBearer",
    "HTTPDigest",
    "OAuth2",
    "OAuth2AuthorizationCodeBearer",
    "OAuth2PasswordBearer",
    "OAuth2PasswordRequestForm",
    "OAuth2PasswordRequestFormStrict",
    "OpenIdConnect",
    "Security",
    "SecurityBase",
    "SecurityScopes",
    "get_authorization_scheme_param",
]
