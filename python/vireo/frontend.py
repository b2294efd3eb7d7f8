"""A static frontend build (a `dist` directory) served under a path, as FastAPI's
`app.frontend(...)`: below every route, mount and trailing-slash redirect, a request under the
path gets the file it names; a missing one gets the build's `404.html`, or (for a browser's
page navigation) its `index.html`, so a single-page app routes it in the browser."""

from __future__ import annotations

import email.message
import errno
import os
import stat
import warnings
from typing import Any, Literal, Sequence

from ._vireo import Request
from .exceptions import HTTPException

Fallback = Literal["auto", "index.html", "404.html"] | None

# The path value a frontend's route gives its handler: the file's path under the directory.
_REST = "vireo_frontend_path"
# What the routes of a frontend answer; a method other than GET or HEAD gets 405 or 404.
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def _resolved(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def normalized_path(path: str) -> str:
    """The path a frontend is served under: it starts with `/`, and has no trailing one."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"a frontend path starts with '/': {path!r}")
    return path if path == "/" else path.rstrip("/")


def joined(prefix: str, path: str) -> str:
    """`path` under a router's (or an inclusion's) `prefix`."""
    if not prefix:
        return path
    return prefix if path == "/" else prefix + path


def _development() -> bool:
    """Whether the app runs for development (`VIREO_ENV` or `FASTAPI_ENV` set so), where a
    missing directory is only warned of."""
    return "development" in (os.environ.get("VIREO_ENV"), os.environ.get("FASTAPI_ENV"))


class Frontend:
    """One frontend build: where its files are, and what a request for a missing one gets."""

    def __init__(self, directory: str | os.PathLike[str], fallback: Fallback = "auto",
                 check_dir: bool | Literal["auto"] = "auto") -> None:
        if fallback not in ("auto", "index.html", "404.html", None):
            raise ValueError(
                f"fallback is 'auto', 'index.html', '404.html' or None, not {fallback!r}")
        if check_dir not in (True, False, "auto"):
            raise ValueError(f"check_dir is True, False or 'auto', not {check_dir!r}")
        self.directory = os.fspath(directory)
        self.fallback = fallback
        if check_dir == "auto":
            check_dir = not _development()
            if not check_dir and not os.path.isdir(self.directory):
                warnings.warn(self._missing_directory(), stacklevel=3)
        if check_dir:
            if not os.path.isdir(self.directory):
                raise RuntimeError(self._missing_directory())
            if fallback in ("index.html", "404.html") and self._file(fallback) is None:
                raise RuntimeError(self._missing_fallback(fallback))

    def _missing_directory(self) -> str:
        return (f"Frontend directory '{self.directory}' does not exist. "
                f"Resolved absolute path: '{_resolved(self.directory)}'")

    def _missing_fallback(self, name: str) -> str:
        return (f"Frontend fallback file '{name}' does not exist in directory "
                f"'{self.directory}'. Resolved absolute directory: "
                f"'{_resolved(self.directory)}'")

    def _inside(self, path: str) -> str | None:
        """The real path of `path` under the directory; `None` when it (or a link on the
        way) is outside it."""
        root = _resolved(self.directory)
        full = os.path.realpath(os.path.join(root, *path.split("/")))
        return full if os.path.commonpath([full, root]) == root else None

    def _file(self, path: str) -> tuple[str, os.stat_result] | None:
        """The regular file at `path` under the directory, with its `stat`; `None` when there
        is none there."""
        try:
            full = self._inside(path)
            if full is None:
                return None
            found = os.stat(full)
        except PermissionError:
            raise HTTPException(401) from None
        except (ValueError, FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                return None
            raise
        return (full, found) if stat.S_ISREG(found.st_mode) else None

    def _resource(self, path: str) -> tuple[str, os.stat_result, bool] | None:
        """The file a request for `path` gets, its `stat`, and whether it is a directory's
        `index.html`."""
        if not os.path.isdir(self.directory):
            raise RuntimeError(self._missing_directory())
        found = self._file(path)
        if found is not None:
            return (*found, False)
        # A directory, by its `index.html` (which is there only if it is one).
        index = self._file(f"{path}/index.html" if path else "index.html")
        return None if index is None else (*index, True)

    def answer(self, request: Any, path: str) -> Any:
        """The response to `request` for the file `path` (relative to the directory)."""
        from .responses import RedirectResponse

        resource = self._resource(path)
        if request.method not in ("GET", "HEAD"):
            raise HTTPException(405 if resource is not None else 404)
        if resource is not None:
            full, found, is_index = resource
            if is_index and not request.url.path.endswith("/"):
                return RedirectResponse(str(request.url.replace(path=request.url.path + "/")))
            return _file_response(request, full, found)
        if self.fallback == "404.html" or (self.fallback == "auto"
                                           and self._file("404.html") is not None):
            return self._fallback(request, "404.html", 404)
        if (self.fallback == "index.html" or (
                self.fallback == "auto" and self._file("index.html") is not None)) \
                and is_navigation(request.headers.get("accept", "")):
            return self._fallback(request, "index.html", 200)
        raise HTTPException(404)

    def _fallback(self, request: Any, name: str, status: int) -> Any:
        found = self._file(name)
        if found is None:
            raise RuntimeError(self._missing_fallback(name))
        return _file_response(request, *found, status)


def _file_response(request: Any, full: str, found: os.stat_result, status: int = 200) -> Any:
    """The file, or a 304 when the client's copy (by `if-none-match`, else
    `if-modified-since`) is still the one there is, as Starlette's static files answer."""
    from .responses import FileResponse, Response

    response = FileResponse(full, status_code=status, stat_result=found)
    if status == 200 and _not_modified(request.headers, response.headers):
        kept = {name: value for name, value in response.headers.items()
                if name in ("cache-control", "content-location", "date", "etag", "expires",
                            "vary")}
        return Response(status_code=304, headers=kept)
    return response


def _not_modified(sent: Any, answer: Any) -> bool:
    tags = sent.get("if-none-match")
    if tags is not None:
        etag = answer.get("etag", "")
        return etag in {tag.strip(" W/") for tag in tags.split(",")} or tags.strip() == "*"
    since, modified = sent.get("if-modified-since"), answer.get("last-modified")
    if since and modified:
        from email.utils import parsedate_to_datetime

        try:
            return parsedate_to_datetime(since) >= parsedate_to_datetime(modified)
        except (TypeError, ValueError):
            return False
    return False


def is_navigation(accept: str) -> bool:
    """Whether an `accept` value asks for an HTML page by name (not only by `*/*`): a
    browser's page navigation, which a single-page app's `index.html` answers."""
    for item in accept.split(","):
        message = email.message.Message()
        message["content-type"] = item.strip()
        quality = message.get_param("q")
        try:
            q = float(quality) if isinstance(quality, str) else 1.0
        except ValueError:
            q = 1.0
        if message.get_content_type() in ("text/html", "application/xhtml+xml") and q != 0:
            return True
    return False


class FrontendRoute:
    """A frontend as an app holds it: its full path, its build, and the dependencies of the
    routers it came through."""

    __slots__ = ("path", "frontend", "dependencies")

    def __init__(self, path: str, frontend: Frontend, dependencies: Sequence[Any]) -> None:
        self.path = path
        self.frontend = frontend
        self.dependencies = list(dependencies)

    def routes(self) -> list[Any]:
        """Its routes: the path itself (with and without a trailing slash), and every path
        under it."""
        from .api_route import APIRoute

        frontend = self.frontend

        def serve_under(request: Request, vireo_frontend_path: str) -> Any:
            return frontend.answer(request, vireo_frontend_path)

        def serve_at(request: Request) -> Any:
            return frontend.answer(request, "")

        options = {"methods": _METHODS, "include_in_schema": False,
                   "dependencies": self.dependencies, "response_class": None}
        if self.path == "/":
            return [APIRoute("/", serve_at, **options),
                    APIRoute("/{%s:path}" % _REST, serve_under, **options)]
        # `/app/` is the directory itself, as `/app` is.
        return [APIRoute(self.path, serve_at, **options),
                APIRoute(self.path + "/", serve_at, **options),
                APIRoute(self.path + "/{%s:path}" % _REST, serve_under, **options)]
