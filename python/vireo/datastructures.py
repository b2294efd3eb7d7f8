"""`URL`, as Starlette's: what `request.url`, `request.base_url` and `request.url_for` give,
a URL to read by part and to change into another (`replace`, the query helpers); and
`Address`, what `request.client` gives; `MutableHeaders`, a response's header fields; and
`QueryParams`, what `request.query_params` gives, made from a query string, a mapping or pairs
as Starlette's is."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit

from vireo._vireo import QueryParams


class MutableHeaders(dict):  # type: ignore[type-arg]
    """A response's header fields, as Starlette's `MutableHeaders` shows them: names compared
    without case (kept lower-case), `headers["X-Token"] = "1"` replacing the field, `append`
    adding one more of a name (a second `set-cookie`), `add_vary_header`. It is a `dict`, so
    code that treats the headers as one keeps working; a name appended to shows its first
    value."""

    # The fields `append` added beside a name's first, as (lower-case name, value) pairs.
    extra: list[tuple[str, str]] | tuple[()] = ()

    def __init__(self, fields: Mapping[str, str] | Iterable[tuple[str, str]] = (), **more: str):
        super().__init__()
        if fields or more:
            self.update(fields, **more)

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __setitem__(self, name: str, value: str) -> None:
        super().__setitem__(name.lower(), value)

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name.lower() if isinstance(name, str) else name)

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)

    def pop(self, name: str, *default: Any) -> Any:  # type: ignore[override]
        return super().pop(name.lower(), *default)

    def setdefault(self, name: str, value: str) -> str:  # type: ignore[override]
        return super().setdefault(name.lower(), value)

    def update(self, fields: Any = (), **more: str) -> None:  # type: ignore[override]
        pairs = fields.items() if isinstance(fields, Mapping) else fields
        for name, value in [*pairs, *more.items()]:
            self[name] = value

    def append(self, name: str, value: str) -> None:
        """One more field of `name`, beside those there are."""
        if name not in self:
            self[name] = value
        elif isinstance(self.extra, list):
            self.extra.append((name.lower(), value))
        else:
            self.extra = [(name.lower(), value)]

    def getlist(self, name: str) -> list[str]:
        name = name.lower()
        first = [super().__getitem__(name)] if super().__contains__(name) else []
        return first + [value for key, value in self.extra if key == name]

    def add_vary_header(self, vary: str) -> None:
        existing = self.get("vary")
        self["vary"] = f"{existing}, {vary}" if existing else vary

    @property
    def raw(self) -> list[tuple[bytes, bytes]]:
        """Every field as `(name, value)` byte pairs, as Starlette's `headers.raw`."""
        pairs = [*super().items(), *self.extra]
        return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in pairs]

    def mutablecopy(self) -> "MutableHeaders":
        copy = MutableHeaders(dict(self))
        copy.extra = list(self.extra)
        return copy


class Address(NamedTuple):
    """A client's `host` and `port`, as Starlette's."""

    host: str
    port: int


class URL:
    """A URL: `scheme`, `netloc`, `hostname`, `port`, `path`, `query`, `fragment`, `str()`
    for the whole; equal to a `str` or `URL` of the same text."""

    def __init__(self, url: str = "", scope: dict[str, Any] | None = None,
                 **components: Any) -> None:
        """`URL("https://host/path")`; or, as Starlette's, `URL(scope=scope)`, the URL an ASGI
        scope was for, or `URL(scheme=..., netloc=..., path=..., ...)` from its parts."""
        if scope is not None:
            if url or components:
                raise ValueError("URL takes a url, a scope or components, only one of them")
            url = _scope_url(scope)
        elif components:
            if url:
                raise ValueError("URL takes a url, a scope or components, only one of them")
            url = URL().replace(**components)._url
        self._url = url

    @property
    def components(self) -> SplitResult:
        if not hasattr(self, "_components"):
            self._components = urlsplit(self._url)
        return self._components

    scheme = property(lambda self: self.components.scheme)
    netloc = property(lambda self: self.components.netloc)
    path = property(lambda self: self.components.path)
    query = property(lambda self: self.components.query)
    fragment = property(lambda self: self.components.fragment)
    username = property(lambda self: self.components.username)
    password = property(lambda self: self.components.password)
    hostname = property(lambda self: self.components.hostname)
    port = property(lambda self: self.components.port)

    @property
    def is_secure(self) -> bool:
        return self.scheme in ("https", "wss")

    def replace(self, **parts: Any) -> URL:
        """This URL with some parts replaced: `scheme`, `netloc`, `path`, `query`, `fragment`,
        or `hostname`, `port`, `username`, `password` (which rebuild the netloc)."""
        if parts.keys() & {"hostname", "port", "username", "password"}:
            parts["netloc"] = self._netloc(parts.pop("hostname", None),
                                           parts.pop("port", self.port),
                                           parts.pop("username", self.username),
                                           parts.pop("password", self.password))
        return URL(self.components._replace(**parts).geturl())

    def _netloc(self, hostname: str | None, port: int | None, username: str | None,
                password: str | None) -> str:
        if hostname is None:
            hostname = self.netloc.rpartition("@")[2]
            if hostname and not hostname.endswith("]"):
                hostname = hostname.rsplit(":", 1)[0]
        elif ":" in hostname and not hostname.startswith("["):
            try:
                ipaddress.IPv6Address(hostname)
                hostname = f"[{hostname}]"
            except ValueError:
                pass
        netloc = hostname if port is None else f"{hostname}:{port}"
        if username is not None:
            user = username if password is None else f"{username}:{password}"
            netloc = f"{user}@{netloc}"
        return netloc

    def include_query_params(self, **params: Any) -> URL:
        """With these query parameters set (each replacing every value of its name, the new
        ones after the others), as Starlette's."""
        given = {str(name): str(value) for name, value in params.items()}
        kept = [(k, v) for k, v in parse_qsl(self.query, keep_blank_values=True)
                if k not in given]
        return self.replace(query=urlencode(kept + list(given.items())))

    def replace_query_params(self, **params: Any) -> URL:
        """With exactly these query parameters."""
        return self.replace(query=urlencode([(str(k), str(v)) for k, v in params.items()]))

    def remove_query_params(self, keys: str | Sequence[str]) -> URL:
        """Without the query parameters of these names."""
        drop = {keys} if isinstance(keys, str) else set(keys)
        kept = [(k, v) for k, v in parse_qsl(self.query, keep_blank_values=True)
                if k not in drop]
        return self.replace(query=urlencode(kept))

    def __eq__(self, other: Any) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(self._url)

    def __str__(self) -> str:
        return self._url

    def __repr__(self) -> str:
        url = str(self.replace(password="********")) if self.password else self._url
        return f"URL({url!r})"


_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def scope_netloc(scope: dict[str, Any]) -> str:
    """The host an ASGI scope was for: its `Host` field, else the server's address (without
    the scheme's default port), as Starlette builds a URL from a scope."""
    for name, value in scope.get("headers") or ():
        if name == b"host":
            return value.decode("latin-1")
    server = scope.get("server")
    if not server:
        return ""
    host, port = server
    default = _DEFAULT_PORTS.get(scope.get("scheme", "http"))
    return host if port == default else f"{host}:{port}"


def _scope_url(scope: dict[str, Any]) -> str:
    netloc = scope_netloc(scope)
    url = f"{scope.get('scheme', 'http')}://{netloc}{scope['path']}" if netloc else scope["path"]
    query = scope.get("query_string", b"")
    return f"{url}?{query.decode('latin-1')}" if query else url
