"""Routes (`APIRoute` and `APIRouter`, as `fastapi.routing` has them) and reverse routing:
the path of a named route, mount or mounted app's route, as Starlette's `url_path_for`
finds it (`app.url_path_for("user", user_id=7)`, `request.url_for(...)`)."""

from __future__ import annotations

from typing import Any

from .api_route import APIRoute
from .datastructures import URL
from .params import PATH_PARAM

__all__ = ["APIRoute", "APIRouter", "NoMatchFound", "URLPath"]


def __getattr__(name: str) -> Any:
    # `from vireo.routing import APIRouter`, as from `fastapi.routing`; defined in `app`,
    # which imports this module.
    if name == "APIRouter":
        from .app import APIRouter

        return APIRouter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class NoMatchFound(Exception):
    """No route, WebSocket route or mount has this name and exactly these path parameters."""

    def __init__(self, name: str, path_params: dict[str, Any]) -> None:
        params = ", ".join(path_params)
        super().__init__(f'No route exists for name "{name}" and params "{params}".')


class URLPath(str):
    """The path of a route, as `url_path_for` gives it: a `str` that knows whether it is an
    HTTP route's (`protocol` "http"), a WebSocket route's ("websocket") or a mount's ("")."""

    protocol: str

    def __new__(cls, path: str, protocol: str = "") -> "URLPath":
        made = super().__new__(cls, path)
        made.protocol = protocol
        return made

    def make_absolute_url(self, base_url: str | URL) -> URL:
        """This path under `base_url` (`scheme://host/root/`), with the scheme its protocol
        uses (`http`/`https` for an HTTP route, `ws`/`wss` for a WebSocket one), as
        Starlette's."""
        base = base_url if isinstance(base_url, URL) else URL(str(base_url))
        scheme = base.scheme
        if self.protocol == "http":
            scheme = "https" if base.is_secure else "http"
        elif self.protocol == "websocket":
            scheme = "wss" if base.is_secure else "ws"
        return URL(scheme=scheme, netloc=base.netloc, path=base.path.rstrip("/") + self)


def fill(template: str, path_params: dict[str, Any]) -> str | None:
    """`template` (`/users/{user_id}`, `/files/{rest:path}`) with its parameters put in, or
    None unless `path_params` names exactly its parameters. A value is put in as `str()`
    makes it, as Starlette does; one that would be a different path (empty, or with a `/`
    outside a `:path` parameter) is a ValueError."""
    names = [match.group(2) for match in PATH_PARAM.finditer(template)]
    if sorted(names) != sorted(path_params):
        return None

    def put(match: Any) -> str:
        name = match.group(2)
        text = str(path_params[name])
        if not (match.group(1) or match.group(3)) and ("/" in text or not text):
            raise ValueError(
                f"path parameter {name!r} of {template} cannot be {text!r}: "
                "it must be non-empty and have no '/' (only a {name:path} parameter may)"
            )
        return text

    return PATH_PARAM.sub(put, template)


def mount_path_for(
    prefix: str, app: Any, mount_name: str | None, name: str, path_params: dict[str, Any]
) -> URLPath | None:
    """The path for `name` under a mount at `prefix`, as Starlette's `Mount` gives it: the
    mount's own name with a `path` parameter (`url_path_for("static", path="/app.css")`),
    or `"mount:route"` for a route of the mounted app (any of its names if the mount has
    none). None when the mount has nothing of that name."""
    if name == mount_name and "path" in path_params and len(path_params) == 1:
        return URLPath(prefix + "/" + str(path_params["path"]).lstrip("/"))
    if mount_name is None:
        inner = name
    elif name.startswith(mount_name + ":"):
        inner = name[len(mount_name) + 1 :]
    else:
        return None
    find = getattr(app, "url_path_for", None)
    if find is None:
        return None
    try:
        path = find(inner, **path_params)
    except Exception as exc:  # Starlette's own NoMatchFound, or ours
        if type(exc).__name__ == "NoMatchFound":
            return None
        raise
    return URLPath(prefix + str(path), getattr(path, "protocol", ""))
