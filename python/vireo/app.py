"""The app: routes, middleware, state and lifecycle hooks, in FastAPI's shape."""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import re
import json
import logging
import os
import typing
import warnings
from collections.abc import Mapping
from typing import Any, Awaitable, Callable, Iterable, Literal, Sequence

from . import _loop, _vireo, body_limits, params, route_handlers, streams
from . import frontend as frontends
from . import response_class as response_classes
from . import response_model as response_models
from .background import Runner
from .datastructures import Address
from .api_route import APIRoute, _check_strict, check_callbacks, check_dependencies
from .dependencies import Depends, solver
from .encoders import jsonable
from .mounts import answering_http_errors
from .exceptions import (
    HTTPException,
    RequestValidationError,
    http_errors,
    validation_errors,
)
from .routing import NoMatchFound, URLPath, fill, mount_path_for
from .responses import (
    FileResponse,
    JSONResponse,
    Response,
    StreamingResponse,
    from_starlette,
    starlette_response_class,
)
from .websockets import WebSocketRoutes

logger = logging.getLogger("vireo")

Handler = Callable[..., Any]


def log_exception(exc: BaseException, context: str) -> None:
    logger.error("Exception %s", context, exc_info=(type(exc), exc, exc.__traceback__))


async def finish_async(awaitable: Awaitable[Any], request: Any, next_: Any) -> Any:
    """Behind middleware: await a blocking handler's future and render what it gives."""
    try:
        value = await awaitable
    except (*http_errors(), *validation_errors()) as exc:
        return next_.render_error(request, exc)
    return next_.render(request, value)


async def _body_read(request: Any) -> Any:
    """The request body as FastAPI's `RequestValidationError.body` gives it: JSON parsed (the
    text if it is not JSON), a form's `FormData`, other bytes as they came; None if empty."""
    raw = await request.body()
    if not raw:
        return None
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media in ("multipart/form-data", "application/x-www-form-urlencoded"):
        return await request.form()
    if not media or media == "application/json" or (
            media.startswith("application/") and media.endswith("+json")):
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")
    return raw


def _exception_layer(handlers: dict[Any, Callable[..., Any]],
                     log: Callable[[BaseException, str], None] = log_exception
                     ) -> Callable[..., Any]:
    """The innermost middleware when the app has exception handlers: it turns what the
    handler raised into the registered handler's response, as Starlette's ExceptionMiddleware
    does (HTTP errors without a handler get their usual answer). Vireo's HTTPException and
    Starlette's (or FastAPI's) are one kind here, as are Vireo's and FastAPI's
    RequestValidationError: a handler registered for one handles the others too."""
    http_kinds, validation_kinds = http_errors(), validation_errors()
    handlers = dict(handlers)
    # Starlette's server-error handler (for `Exception`, or 500): it answers any other
    # exception, which is still logged (and raised by a test client that raises them).
    server_error = handlers.pop(Exception, None)
    server_error = handlers.pop(500, None) or server_error
    for kinds in (http_kinds, validation_kinds):
        registered = next((handlers[kind] for kind in kinds if kind in handlers), None)
        if registered is not None:
            for kind in kinds:
                handlers.setdefault(kind, registered)

    def find(exc: BaseException) -> Callable[..., Any] | None:
        if isinstance(exc, http_kinds) and exc.status_code in handlers:
            return handlers[exc.status_code]
        for cls in type(exc).__mro__:
            if cls in handlers:
                return handlers[cls]
        return None

    async def handle_exceptions(request: Any, call_next: Any) -> Any:
        try:
            return await call_next(request)
        except Exception as raised:  # noqa: BLE001 - matched against the registered handlers
            exc: Exception = raised
            if isinstance(exc, _vireo.ValidationFailed):
                # Each `loc` a tuple, as pydantic and FastAPI give it to a handler.
                errors = [{**e, "loc": tuple(e["loc"])} for e in json.loads(exc.args[0])["detail"]]
                exc = RequestValidationError(errors, body=await _body_read(request))
            handler = find(exc)
            if handler is None and server_error is not None \
                    and not isinstance(exc, (*http_kinds, *validation_kinds)):
                response = server_error(request, exc)
                if inspect.isawaitable(response):
                    response = await response
                log(exc, "in a request handler")
                return response
            if handler is None:
                if isinstance(exc, http_kinds):
                    return JSONResponse({"detail": exc.detail}, exc.status_code, exc.headers)
                if isinstance(exc, validation_kinds):
                    return JSONResponse({"detail": exc.errors()}, 422)
                raise
            response = handler(request, exc)
            if inspect.isawaitable(response):
                response = await response
            return response

    return handle_exceptions


def _route_class(cls: Any) -> type[APIRoute]:
    if not (isinstance(cls, type) and issubclass(cls, APIRoute)):
        raise TypeError(f"route_class takes APIRoute or a subclass of it, not {cls!r}")
    return cls


def _has_own_route_handler(route: Any) -> bool:
    return (isinstance(route, APIRoute)
            and type(route).get_route_handler is not APIRoute.get_route_handler)


def make_layer(mw: Callable[..., Any], call_next: Any) -> Callable[[Any], Any]:
    def layer(request: Any) -> Any:
        return mw(request, call_next)

    return layer


class BaseHTTPMiddleware:
    """Starlette's class form: subclass, override `dispatch`, and `app.add_middleware(Cls)`."""

    def __init__(self, app: Any = None, **options: Any) -> None:
        self.app = app
        self.options = options

    async def dispatch(self, request: Any, call_next: Any) -> Any:
        return await call_next(request)


def _vireo_stand_in(cls: type) -> type | None:
    """Vireo's middleware for one of Starlette's (also as FastAPI re-exports them), which are
    ASGI middleware an App does not run."""
    if not cls.__module__.startswith(("starlette.middleware.", "fastapi.middleware.")):
        return None
    from . import middleware

    if cls.__name__ in middleware.__all__:
        return typing.cast(type, getattr(middleware, cls.__name__))
    return None


class RouteList(list):  # type: ignore[type-arg]
    """`app.routes`: a list that knows the app (or router) it lists, so that
    `get_openapi(routes=app.routes)` documents them as that app does, and through which an
    `APIRoute` appended is added to it."""

    def __init__(self, routes: list[Any], app: Any) -> None:
        super().__init__(routes)
        self.app = app

    def append(self, route: Any) -> None:
        """Add an `APIRoute` to the app, as `app.router.routes.append(route)` does in FastAPI."""
        self.app._add_routes([route])
        super().append(route)

    def extend(self, routes: Iterable[Any]) -> None:
        routes = list(routes)
        self.app._add_routes(routes)
        super().extend(routes)


class _Routes:
    """The route decorators App and APIRouter share; both keep `_routes`."""

    _routes: list[APIRoute]
    _websockets: WebSocketRoutes
    _on_startup: list[Callable[[], Any]]
    _on_shutdown: list[Callable[[], Any]]
    _lifespans: list[Callable[[Any], Any]]
    _frontends: list[frontends.FrontendRoute]

    def on_event(self, event: str) -> Callable[[Handler], Handler]:
        """`@app.on_event("startup")` (or `"shutdown"`) registers a hook; a router's run in
        the app that includes it."""

        def register(hook: Handler) -> Handler:
            if event == "startup":
                self._on_startup.append(hook)
            elif event == "shutdown":
                self._on_shutdown.append(hook)
            else:
                raise ValueError(f"unknown event {event!r}")
            return hook

        return register

    def _add_routes(self, routes: Iterable[Any] | None) -> None:
        """Add each `APIRoute` of `routes` (`App(routes=[...])`, `APIRouter(routes=[...])`)."""
        for route in routes or ():
            if not isinstance(route, APIRoute):
                raise TypeError(f"routes= takes APIRoute(path, endpoint, ...) objects, not "
                                f"{route!r}; mount other ASGI apps with app.mount(path, app)")
            self.add_api_route(route.path, route.handler, methods=route.methods,
                               route_class_override=type(route), **route.options())

    _planned: list[tuple[Any, ...]] | None = None
    # The class of the routes added here (FastAPI's `router.route_class`).
    route_class: type[APIRoute] = APIRoute
    # Where this router is included, and how: what it gets later is added there too.
    _included_into: Sequence[tuple[Any, Any]] = ()
    # Whether a WebSocket route is planned when added (a router's waits for its full path).
    _plan_websockets = True

    def add_api_route(
        self,
        path: str,
        endpoint: Handler,
        *,
        methods: Sequence[str] = ("GET",),
        status_code: int = 200,
        blocking: bool = False,
        dependencies: Sequence[Depends] | None = None,
        tags: Sequence[str] | None = None,
        summary: str | None = None,
        description: str | None = None,
        response_model: Any = response_models.DEFAULT,
        include_in_schema: bool = True,
        deprecated: bool = False,
        operation_id: str | None = None,
        name: str | None = None,
        response_class: Any = response_classes.DEFAULT,
        responses: dict[Any, Any] | None = None,
        response_model_include: Any = None,
        response_model_exclude: Any = None,
        response_model_by_alias: bool = True,
        response_model_exclude_unset: bool = False,
        response_model_exclude_defaults: bool = False,
        response_model_exclude_none: bool = False,
        response_description: str = "Successful Response",
        openapi_extra: dict[str, Any] | None = None,
        max_body_size: int | None = None,
        form_limits: dict[str, int] | None = None,
        strict_content_type: bool | None = None,
        generate_unique_id_function: Callable[[APIRoute], str] | None = None,
        callbacks: Sequence[APIRoute] | None = None,
        route_class_override: type[APIRoute] | None = None,
    ) -> None:
        """Add a route. `dependencies` run before the handler (their values are not passed);
        `tags`, `summary`, `description`, `deprecated`, `operation_id` and
        `include_in_schema` shape its entry in the OpenAPI schema. What the handler returns
        is validated against `response_model` (by default its return annotation) and sent
        as that model's fields, shaped by the `response_model_*` options, as in FastAPI;
        `response_model=None` turns that off. `name` (by default the handler's) is what
        `url_path_for` and `request.url_for` find the route by. What the handler returns,
        unless it is a response, is sent as `response_class(value)` (by default the router's
        or app's `default_response_class`: JSON); `responses` adds answers to the schema,
        `response_description` describes the success answer there, and `openapi_extra` is
        merged into the route's operation; `generate_unique_id_function(route)` gives its
        operation id when it names none (by default the router's or app's). `max_body_size`
        (bytes) and `form_limits` (`max_fields`, `max_files`, `max_part_size`) limit its
        requests, over what the router and app set (see the README's "Request size
        limits"). `strict_content_type=False` reads a body with no `content-type` as JSON
        (by default the router's setting, then the app's). The route is a
        `route_class_override`, by default the router's `route_class` (`APIRoute`)."""
        # A router's route may have another path (the empty one, for its prefix itself, or an
        # OpenAPI callback's `{$callback_url}/...`); an app's full paths start with '/'.
        if not path.startswith("/") and not isinstance(self, APIRouter):
            raise ValueError(f"a route path starts with '/': {path!r}")
        route_class = _route_class(route_class_override or self.route_class)
        if not isinstance(self, APIRouter):  # `App(include_in_schema=..., deprecated=...)`
            include_in_schema = include_in_schema and self.include_in_schema
            deprecated = deprecated or self.deprecated
        route = route_class(
            path, endpoint, methods=methods, status_code=status_code, blocking=blocking,
            dependencies=dependencies, tags=tags, summary=summary, description=description,
            response_model=response_model, include_in_schema=include_in_schema,
            deprecated=deprecated, operation_id=operation_id, name=name,
            response_class=response_class, responses=responses,
            response_description=response_description, openapi_extra=openapi_extra,
            max_body_size=max_body_size, form_limits=form_limits,
            strict_content_type=strict_content_type,
            generate_unique_id_function=generate_unique_id_function,
            callbacks=callbacks,
            response_model_include=response_model_include,
            response_model_exclude=response_model_exclude,
            response_model_by_alias=response_model_by_alias,
            response_model_exclude_unset=response_model_exclude_unset,
            response_model_exclude_defaults=response_model_exclude_defaults,
            response_model_exclude_none=response_model_exclude_none,
        )
        self._warn_if_shadowed(route)
        self._routes.append(route)
        self._routes_changed()
        for target, inclusion in self._included_into:
            _include_route(target, typing.cast(APIRouter, self), inclusion, route)

    def _routes_changed(self) -> None:
        """Plan again at the next build (an open test client's next request)."""
        self._planned = None

    def _warn_if_shadowed(self, route: APIRoute) -> None:
        """Warn of a method and path an earlier route has: as in FastAPI, the first route
        answers it."""
        index: dict[tuple[str, str], APIRoute] = self.__dict__.setdefault("_route_index", {})
        for method in route.methods:
            first = index.setdefault((method, route.path), route)
            if first is not route:
                warnings.warn(
                    f"{method} {route.path or '/'} is registered twice: {first.name!r} answers "
                    f"it, not {route.name!r}", stacklevel=4)

    def add_route(self, path: str, route: Callable[[Any], Any], methods: Sequence[str] | None = None,
                  name: str | None = None, include_in_schema: bool = True) -> None:
        """Add a Starlette-style endpoint, `(async) def endpoint(request) -> response`: it
        gets the `Request` and nothing is read for it. As in FastAPI, it is not in the
        schema."""
        del include_in_schema  # Starlette's routes are left out of FastAPI's schema too

        if inspect.iscoroutinefunction(route):
            async def endpoint(request: _vireo.Request) -> Any:
                return await route(request)
        else:
            def endpoint(request: _vireo.Request) -> Any:  # type: ignore[misc]
                return route(request)

        self.add_api_route(path, endpoint, methods=list(methods or ["GET"]),
                           name=name or getattr(route, "__name__", None),
                           include_in_schema=False, response_model=None)

    def api_route(
        self, path: str, *, methods: Sequence[str] = ("GET",), **options: Any
    ) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.add_api_route(path, handler, methods=methods, **options)
            return handler

        return register

    # Each takes `add_api_route`'s keyword arguments: status_code, blocking, dependencies,
    # tags, summary, description, response_model (and its response_model_* options),
    # include_in_schema, deprecated, operation_id, name, response_class, responses.

    def get(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["GET"], **options)

    def post(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["POST"], **options)

    def put(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["PUT"], **options)

    def patch(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["PATCH"], **options)

    def delete(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["DELETE"], **options)

    def head(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["HEAD"], **options)

    def options(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["OPTIONS"], **options)

    def trace(self, path: str, **options: Any) -> Any:
        return self.api_route(path, methods=["TRACE"], **options)

    def websocket(
        self, path: str, name: str | None = None, *,
        dependencies: Sequence[Depends] | None = None,
    ) -> Callable[[Handler], Handler]:
        """`@app.websocket("/ws/{room}")` over `async def handler(websocket: WebSocket,
        room: str)`: see `vireo.WebSocket`. Other parameters are path, query, header and
        cookie values and `Depends`, as on HTTP routes, read from the handshake."""

        def register(handler: Handler) -> Handler:
            self.add_websocket_route(path, handler, name, dependencies=dependencies)
            return handler

        return register

    def add_websocket_route(
        self, path: str, handler: Handler, name: str | None = None, *,
        dependencies: Sequence[Depends] | None = None,
    ) -> None:
        ws_route = self._websockets.add(path, handler, check_dependencies(dependencies),
                                        check=self._plan_websockets, name=name)
        self._routes_changed()
        for target, inclusion in self._included_into:
            _include_websocket(target, typing.cast(APIRouter, self), inclusion, ws_route)

    def include_router(
        self,
        router: "APIRouter",
        *,
        prefix: str = "",
        dependencies: Sequence[Depends] | None = None,
        tags: Sequence[str] | None = None,
        responses: dict[Any, Any] | None = None,
        default_response_class: Any = response_classes.DEFAULT,
        include_in_schema: bool = True,
        deprecated: bool | None = None,
        max_body_size: int | None = None,
        form_limits: dict[str, int] | None = None,
        generate_unique_id_function: Callable[[APIRoute], str] | None = None,
        callbacks: Sequence[APIRoute] | None = None,
    ) -> None:
        """Add every route of `router`, its path prefixed with `prefix` and the router's, run
        after `dependencies` and the router's, tagged with `tags` and the router's, with the
        schema's `responses` and the router's added to each route's, and a route that names
        no `response_class` given `default_response_class` or the router's. With
        `include_in_schema=False` (here or on the router) its routes leave the schema;
        `deprecated=True` marks them deprecated there. `max_body_size`, `form_limits` and
        `generate_unique_id_function` apply to its routes that neither they nor the router
        set otherwise; `callbacks` are documented before the router's and each route's."""
        _include(self, router, _Inclusion(prefix, dependencies, tags, responses,
                                          default_response_class, include_in_schema,
                                          deprecated,
                                          body_limits.check_max_body_size(max_body_size),
                                          body_limits.check_form_limits(form_limits),
                                          generate_unique_id_function,
                                          check_callbacks(callbacks)))

    def frontend(self, path: str, *, directory: str | os.PathLike[str],
                 fallback: frontends.Fallback = "auto", check_dir: bool | Literal["auto"] = "auto") -> None:
        """Serve the static frontend build in `directory` under `path`, below every route,
        mount and trailing-slash redirect (see `vireo.frontend`): a file there by its path
        (a directory by its `index.html`); a missing one by the build's `404.html` (a 404),
        or for a browser's page navigation its `index.html`, with `fallback="auto"` (either,
        `404.html` first, if the build has it), `"index.html"`, `"404.html"` or `None` (a
        plain 404). Under several, the longest path that holds the request's serves it. The
        routers' dependencies run first. A missing directory (or fallback file) is a
        `RuntimeError` here, unless `check_dir=False` (then on the first request), or
        `"auto"` with `VIREO_ENV=development` (a warning)."""
        served = frontends.Frontend(directory, fallback, check_dir)
        self._add_frontend(frontends.FrontendRoute(frontends.normalized_path(path), served, []))

    def _add_frontend(self, served: frontends.FrontendRoute) -> None:
        self._frontends.append(served)
        self._routes_changed()
        for target, inclusion in self._included_into:
            _include_frontend(target, typing.cast(APIRouter, self), inclusion, served)

    @property
    def router(self) -> "_Routes":
        """The app's routes, as FastAPI's `app.router` (`app.router.routes`,
        `app.router.add_api_route`, ...): the app itself here."""
        return self

    @property
    def routes(self) -> list[Any]:
        """The routes, as FastAPI's `app.routes` lists them: HTTP routes (`path`, `name`,
        `methods`, `endpoint`), then WebSocket routes, then mounts (`path`, `name`, `app`)."""
        mounts = [Mount(path or "/", app, name) for path, app, name in getattr(self, "_mounts", ())]
        return RouteList([*self._routes, *self._websockets.routes, *mounts], self)

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        """The path of the route named `name` (see `add_api_route`) with these path
        parameters, as Starlette's: `app.url_path_for("user", user_id=7)` is `"/users/7"`.
        WebSocket routes and mounts are found too (`url_path_for("static", path="/a.css")`
        for a mount named `static`; `"api:items"` for the route `items` of an app mounted as
        `api`). `NoMatchFound` when nothing has that name and exactly those parameters."""
        prefix = getattr(self, "prefix", "")
        named = [(route.name, route.path, "http") for route in self._routes]
        named += [(route.name, route.path, "websocket") for route in self._websockets.routes]
        for route_name, template, protocol in named:
            if route_name == name:
                path = fill(template, path_params)
                if path is not None:
                    return URLPath(prefix + path, protocol)
        for mount_prefix, app, mount_name in getattr(self, "_mounts", ()):
            found = mount_path_for(mount_prefix, app, mount_name, name, path_params)
            if found is not None:
                return found
        raise NoMatchFound(name, path_params)


class APIRouter(_Routes):
    """Routes to add to an app under a prefix: `app.include_router(router, prefix="/v1")`.
    `dependencies` run for every route of the router; `tags` are added to each route's."""

    _plan_websockets = False

    def __init__(
        self,
        *,
        prefix: str = "",
        dependencies: Sequence[Depends] | None = None,
        tags: Sequence[str] | None = None,
        responses: dict[Any, Any] | None = None,
        default_response_class: Any = response_classes.DEFAULT,
        include_in_schema: bool = True,
        deprecated: bool | None = None,
        on_startup: Iterable[Callable[[], Any]] | None = None,
        on_shutdown: Iterable[Callable[[], Any]] | None = None,
        lifespan: Callable[[Any], Any] | None = None,
        max_body_size: int | None = None,
        form_limits: dict[str, int] | None = None,
        generate_unique_id_function: Callable[[APIRoute], str] | None = None,
        routes: Iterable[APIRoute] | None = None,
        callbacks: Sequence[APIRoute] | None = None,
        route_class: type[APIRoute] = APIRoute,
        strict_content_type: bool | None = None,
    ) -> None:
        self.prefix = prefix.rstrip("/")
        # The class of the routes added to the router (see `vireo.route_handlers`).
        self.route_class = _route_class(route_class)
        # OpenAPI callbacks documented on each of the router's routes, before their own.
        self.callbacks = check_callbacks(callbacks)
        # `fn(route) -> str`: the operation id of each route that names none.
        self.generate_unique_id_function = generate_unique_id_function
        # Request size limits for the router's routes that set none of their own.
        self.max_body_size = body_limits.check_max_body_size(max_body_size)
        self.form_limits = body_limits.check_form_limits(form_limits)
        # Whether its routes that say nothing read a body with no `content-type` as JSON
        # (`None`: as the router or app around it says).
        self.strict_content_type = _check_strict(strict_content_type)
        # Run by the app that includes the router (or the router that includes this one),
        # as FastAPI runs a router's: its hooks after the app's, its lifespan inside the app's.
        self._on_startup = list(on_startup or ())
        self._on_shutdown = list(on_shutdown or ())
        self._lifespans = [lifespan] if lifespan is not None else []
        self.responses = dict(responses or {})
        self.default_response_class = default_response_class
        self.include_in_schema = include_in_schema
        self.deprecated = deprecated
        self.dependencies = check_dependencies(dependencies)
        self.tags = list(tags or ())
        self._routes = []
        self._websockets = WebSocketRoutes()
        self._frontends: list[frontends.FrontendRoute] = []
        self._included_into: list[tuple[Any, Any]] = []
        self._add_routes(routes)

    def _is_below(self, router: "APIRouter") -> bool:
        """Whether this router is included in `router`, however deep."""
        return any(target is router or (isinstance(target, APIRouter) and target._is_below(router))
                   for target, _ in self._included_into)


class _Inclusion(typing.NamedTuple):
    """What `include_router` adds to each route of the router it includes."""

    prefix: str
    dependencies: Sequence[Depends] | None
    tags: Sequence[str] | None
    responses: dict[Any, Any] | None
    default_response_class: Any
    include_in_schema: bool
    deprecated: bool | None
    max_body_size: int | None
    form_limits: dict[str, int]
    generate_unique_id_function: Callable[[APIRoute], str] | None
    callbacks: list[APIRoute]


class Mount(typing.NamedTuple):
    """A mounted app, as `routes` lists it."""

    path: str
    app: Any
    name: str | None


def _include(target: APIRoutes, router: APIRouter, inclusion: _Inclusion) -> None:
    """Add what `router` has to `target`, and remember the inclusion: what is added to the
    router later is added to `target` too, as FastAPI's inclusions are live."""
    if target is router:
        raise ValueError("Cannot include the same APIRouter instance into itself. "
                         "Did you mean to include a different router?")
    if isinstance(target, APIRouter) and target._is_below(router):
        raise ValueError("Cannot include an APIRouter instance that already includes this "
                         "router. Did you mean to include a different router?")
    for route in router._routes:
        _include_route(target, router, inclusion, route)
    for ws_route in router._websockets.routes:
        _include_websocket(target, router, inclusion, ws_route)
    for served in router._frontends:
        _include_frontend(target, router, inclusion, served)
    target._on_startup.extend(router._on_startup)
    target._on_shutdown.extend(router._on_shutdown)
    target._lifespans.extend(router._lifespans)
    router._included_into.append((target, inclusion))


def _outer_dependencies(router: APIRouter, inclusion: _Inclusion) -> list[Depends]:
    return check_dependencies(inclusion.dependencies) + router.dependencies


def _include_route(target: APIRoutes, router: APIRouter, inclusion: _Inclusion,
                   route: APIRoute) -> None:
    """Add `router`'s `route` to `target` as `inclusion` shapes it."""
    outer_tags = list(inclusion.tags or ()) + router.tags
    shown = inclusion.include_in_schema and router.include_in_schema
    options = route.options()
    options["responses"] = {**(inclusion.responses or {}), **router.responses,
                            **route.responses}
    # The route's, then the router's default, then the inclusion's, as FastAPI picks them.
    options["response_class"] = response_classes.resolve(
        route.response_class, router.default_response_class,
        inclusion.default_response_class,
    ) or response_classes.DEFAULT
    options["include_in_schema"] = route.include_in_schema and shown
    options["deprecated"] = route.deprecated or bool(inclusion.deprecated or router.deprecated)
    options["dependencies"] = _outer_dependencies(router, inclusion) + route.dependencies
    options["tags"] = outer_tags + [t for t in route.tags if t not in outer_tags]
    # The route's own limits, then the router's, then the inclusion's.
    options["max_body_size"] = body_limits.first_set(
        route.max_body_size, router.max_body_size, inclusion.max_body_size)
    options["form_limits"] = {**inclusion.form_limits, **router.form_limits,
                              **route.form_limits}
    options["strict_content_type"] = router.strict_content_type \
        if route.strict_content_type is None else route.strict_content_type
    options["generate_unique_id_function"] = (
        route.generate_unique_id_function or router.generate_unique_id_function
        or inclusion.generate_unique_id_function)
    options["callbacks"] = inclusion.callbacks + router.callbacks + route.callbacks
    path = _included_path(router, inclusion) + route.path
    if not path and not isinstance(target, APIRouter):
        raise ValueError(
            f"a prefix and a route path cannot both be empty (route {route.name!r})")
    target.add_api_route(path, route.handler, methods=route.methods,
                         route_class_override=type(route), **options)


def _included_path(router: APIRouter, inclusion: _Inclusion) -> str:
    return inclusion.prefix.rstrip("/") + router.prefix


def _include_websocket(target: APIRoutes, router: APIRouter, inclusion: _Inclusion,
                       ws_route: Any) -> None:
    target.add_websocket_route(
        _included_path(router, inclusion) + ws_route.path, ws_route.handler, ws_route.name,
        dependencies=_outer_dependencies(router, inclusion) + ws_route.dependencies,
    )


def _include_frontend(target: APIRoutes, router: APIRouter, inclusion: _Inclusion,
                      served: frontends.FrontendRoute) -> None:
    target._add_frontend(frontends.FrontendRoute(
        frontends.joined(_included_path(router, inclusion), served.path), served.frontend,
        _outer_dependencies(router, inclusion) + served.dependencies))


class App(_Routes):
    """An app: `@app.get("/users/{user_id}")` and friends register handlers, `app.run()`
    serves them (see `vireo.server`), `vireo.testclient.TestClient(app)` calls them in tests.
    """

    # A `str` a handler returns is sent as text (`FastAPI` sends it as a JSON string).
    _str_as_json = False

    def __init__(
        self,
        *,
        title: str = "Vireo",
        version: str = "0.1.0",
        description: str | None = None,
        openapi_url: str | None = "/openapi.json",
        docs_url: str | None = "/docs",
        dependencies: Sequence[Depends] | None = None,
        on_startup: Iterable[Callable[[], Any]] | None = None,
        on_shutdown: Iterable[Callable[[], Any]] | None = None,
        redirect_slashes: bool = True,
        lifespan: Callable[[Any], Any] | None = None,
        default_response_class: Any = response_classes.DEFAULT,
        responses: dict[Any, Any] | None = None,
        root_path: str = "",
        root_path_in_servers: bool = True,
        redoc_url: str | None = "/redoc",
        summary: str | None = None,
        terms_of_service: str | None = None,
        contact: dict[str, Any] | None = None,
        license_info: dict[str, Any] | None = None,
        servers: list[dict[str, Any]] | None = None,
        openapi_tags: list[dict[str, Any]] | None = None,
        openapi_external_docs: dict[str, Any] | None = None,
        include_in_schema: bool = True,
        deprecated: bool | None = None,
        swagger_ui_parameters: dict[str, Any] | None = None,
        swagger_ui_oauth2_redirect_url: str | None = "/docs/oauth2-redirect",
        swagger_ui_init_oauth: dict[str, Any] | None = None,
        debug: bool = False,
        middleware: Sequence[Any] | None = None,
        exception_handlers: dict[Any, Callable[..., Any]] | None = None,
        strict_content_type: bool = True,
        max_body_size: int | None = None,
        form_limits: dict[str, int] | None = None,
        generate_unique_id_function: Callable[[APIRoute], str] | None = None,
        routes: Iterable[APIRoute] | None = None,
        separate_input_output_schemas: bool = True,
        callbacks: Sequence[APIRoute] | None = None,
        webhooks: APIRouter | None = None,
    ) -> None:
        if lifespan is not None and (on_startup or on_shutdown):
            raise TypeError("give App either lifespan or on_startup/on_shutdown, not both")
        if webhooks is not None and not isinstance(webhooks, APIRouter):
            raise TypeError(f"webhooks takes an APIRouter, not {webhooks!r}")
        self.title = title
        # OpenAPI callbacks documented on every route, before its own.
        self.callbacks = check_callbacks(callbacks)
        # `@app.webhooks.post("new-subscription")`: requests the API makes to URLs its users
        # register, in the schema's `webhooks`; never served.
        self.webhooks = webhooks if webhooks is not None else APIRouter()
        # A path no route matches, but would with its trailing slash added or removed, gets
        # a 307 there, as FastAPI answers it.
        self.redirect_slashes = redirect_slashes
        # A JSON body is read as JSON only under a JSON content type; with none at all, only
        # when this is off, as in FastAPI (a browser's cross-site request without a CORS
        # preflight cannot send JSON's content type).
        self.strict_content_type = strict_content_type
        # The most bytes of body a request may have (413 beyond), for routes (and requests no
        # route takes) that set none of their own; `None` leaves the server's limit.
        self.max_body_size = body_limits.check_max_body_size(max_body_size)
        # How `Form()` and `File()` parameters are read, for routes that set none of these.
        self.form_limits = body_limits.check_form_limits(form_limits)
        # The limits of the app this one is mounted in, for what this one leaves unset.
        self._outer_limits: tuple[int | None, dict[str, int]] = (None, {})
        # The prefix a proxy in front strips (`vireo serve --root-path`): requests arrive
        # without it, and the URLs the app makes (`url_for`, the schema's `servers`, the
        # docs page's schema URL) carry it.
        self.root_path = root_path.rstrip("/")
        # The root path the app was made with, and the one a test client serves it under
        # (`TestClient(app, root_path=...)`), if any.
        self._own_root_path = self.root_path
        self._client_root_path: str | None = None
        # The outermost app when this one is mounted in another: it names the routes
        # `url_for` finds, as Starlette's outermost router does.
        self._url_root: App | None = None
        self.root_path_in_servers = root_path_in_servers
        # A model whose schema differs as sent and as answered is listed twice in the schema
        # (`Model-Input`, `Model-Output`), as FastAPI lists it; off, once, as sent.
        self.separate_input_output_schemas = separate_input_output_schemas
        self.version = version
        self.description = description
        self.openapi_url = openapi_url
        self.docs_url = docs_url
        self.redoc_url = redoc_url
        # The schema's `info` fields, `servers` and `tags`, and Swagger UI's settings, as
        # FastAPI takes them.
        self.summary = summary
        self.terms_of_service = terms_of_service
        self.contact = contact
        self.license_info = license_info
        # The schema's top-level `externalDocs` (`{"description": ..., "url": ...}`).
        self.openapi_external_docs = openapi_external_docs
        # Every route's, as FastAPI's app-wide settings: out of the schema, or deprecated.
        self.include_in_schema = include_in_schema
        self.deprecated = deprecated
        self.servers = list(servers or ())
        self.openapi_tags = openapi_tags
        self.swagger_ui_parameters = swagger_ui_parameters
        # The page an OAuth2 login from Swagger UI returns to, and Swagger UI's `initOAuth`.
        self.swagger_ui_oauth2_redirect_url = swagger_ui_oauth2_redirect_url
        self.swagger_ui_init_oauth = swagger_ui_init_oauth
        # Accepted for FastAPI's signature: a traceback is logged, never sent to the client.
        self.debug = debug
        self.dependencies = check_dependencies(dependencies)
        # What a route that names no `response_class` sends its value as; JSON by default.
        self.default_response_class = default_response_class
        # Answers every operation's schema lists besides its own.
        self.responses = dict(responses or {})
        self.openapi_schema: dict[str, Any] | None = None
        self.state = _vireo.State()
        self._routes: list[APIRoute] = []
        self._middleware: list[Callable[..., Any]] = []
        self._on_startup = list(on_startup or ())
        self._on_shutdown = list(on_shutdown or ())
        # `lifespan(app)`: a context manager entered at startup and left at shutdown, as in
        # FastAPI; a mapping it yields is copied into each request's `request.state`.
        # The app's lifespan, then those of the routers it includes, entered in that order.
        self._lifespans = [lifespan] if lifespan is not None else []
        self._lifespan_contexts: list[Any] = []
        self._lifespan_state: dict[str, Any] | None = None
        self._exception_handlers: dict[Any, Callable[..., Any]] = {}
        self._planned: list[tuple[Any, ...]] | None = None
        self._planned_form_limits: dict[str, int] = {}
        self._background: Runner | None = None
        # Dependencies to call in place of others (for tests): {original: replacement}.
        self.dependency_overrides: dict[Callable[..., Any], Callable[..., Any]] = {}
        self._planned_overrides: dict[Any, Any] = {}
        self._websockets = WebSocketRoutes()
        self._mounts: list[tuple[str, Any, str | None]] = []
        self._frontends: list[frontends.FrontendRoute] = []
        # Starlette's `Middleware(cls, *args, **kwargs)` items, the first outermost.
        for item in reversed(list(middleware or ())):
            try:
                cls, args, kwargs = item
            except (TypeError, ValueError):
                raise TypeError(
                    f"App(middleware=...) takes Middleware(cls, ...) items, not {item!r}"
                ) from None
            self.add_middleware(cls, *args, **kwargs)
        for key, handler in (exception_handlers or {}).items():
            self.add_exception_handler(key, handler)
        # `fn(route) -> str`: the operation id of each route that names none (FastAPI's
        # `generate_unique_id` when `None`).
        self.generate_unique_id_function = generate_unique_id_function
        self._add_routes(routes)

    # Routes: the decorators come from _Routes.

    def mount(self, path: str, app: Any, name: str | None = None) -> None:
        """Serve `app` under `path`, as Starlette's `Mount`: a request for `path/...` that no
        route of this app answers goes to it. `app` is an ASGI app (Starlette's `StaticFiles`,
        a FastAPI or Starlette app, ...), given `root_path` set to `path` and the full path in
        `path`; or another Vireo `App`, served natively, whose `root_path` becomes `path` and
        which routes the rest of the path with its own middleware, exception handlers and
        docs (`path/docs`). `name` is what `url_path_for` finds it by."""
        if not path.startswith("/"):
            raise ValueError(f"a mount path starts with '/': {path!r}")
        if app is self:
            raise ValueError("an app cannot be mounted in itself")
        if not isinstance(app, App) and not callable(app):
            raise TypeError(
                f"a mounted app is a Vireo App or an ASGI application, not {app!r}")
        self._mounts.append((path.rstrip("/"), app, name))

    # Middleware: `async def mw(request, call_next) -> response`, the last added outermost,
    # as in Starlette.

    def middleware(self, kind: str = "http") -> Callable[[Handler], Handler]:
        if kind != "http":
            raise ValueError('only "http" middleware is supported')

        def register(mw: Handler) -> Handler:
            self.add_middleware(mw)
            return mw

        return register

    def add_middleware(self, middleware: Any, *args: Any, **options: Any) -> None:
        """Add `async def mw(request, call_next)`, a class with `dispatch(request, call_next)`
        (a `BaseHTTPMiddleware` subclass, or one of `vireo.middleware`'s), or one of
        Starlette's or FastAPI's that `vireo.middleware` has (CORS, GZip, sessions, trusted
        hosts, HTTPS redirect), which Vireo's stands in for; a class is made with `args` and
        `options`."""
        if isinstance(middleware, type):
            middleware = _vireo_stand_in(middleware) or middleware
            if not hasattr(middleware, "dispatch"):
                raise TypeError(
                    f"{middleware.__qualname__} is ASGI middleware, which an App does not run: "
                    "give a class with `async def dispatch(request, call_next)` or an "
                    "`async def (request, call_next)` (or serve an ASGI app with `vireo serve`)"
                )
            middleware = middleware(self, *args, **options).dispatch
        elif args or options:
            raise TypeError("arguments are for a middleware class, not a function")
        if not inspect.iscoroutinefunction(middleware):
            raise TypeError("middleware must be an `async def (request, call_next)`")
        self._middleware.insert(0, middleware)

    # Exception handlers: `handler(request, exc) -> response`, sync or async, by exception
    # class (matched along the MRO) or by an HTTPException's status code.

    def exception_handler(self, key: type[BaseException] | int) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.add_exception_handler(key, handler)
            return handler

        return register

    def add_exception_handler(self, key: type[BaseException] | int, handler: Handler) -> None:
        self._exception_handlers[key] = handler

    @property
    def exception_handlers(self) -> dict[Any, Callable[..., Any]]:
        """The handlers by exception class or status code, as FastAPI's `app.exception_handlers`
        (changing it before the app starts changes them)."""
        return self._exception_handlers

    # Lifecycle: run in each worker process, before it serves and after it stops.

    async def _run_hooks(self, hooks: list[Callable[[], Any]]) -> None:
        for hook in hooks:
            result = hook()
            if inspect.isawaitable(result):
                await result

    async def startup(self) -> None:
        await self._run_hooks(self._on_startup)
        merged: dict[str, Any] | None = None
        for lifespan in self._lifespans:
            # A bare generator function works too, as Starlette takes one.
            if inspect.isasyncgenfunction(lifespan):
                lifespan = contextlib.asynccontextmanager(lifespan)
            elif inspect.isgeneratorfunction(lifespan):
                lifespan = contextlib.contextmanager(lifespan)
            context = lifespan(self)
            if hasattr(context, "__aenter__"):
                state = await context.__aenter__()
            elif hasattr(context, "__enter__"):
                state = context.__enter__()
            else:
                raise TypeError(
                    f"lifespan must give an async context manager (@asynccontextmanager), "
                    f"not {context!r}"
                )
            self._lifespan_contexts.append(context)
            if state is not None and not isinstance(state, Mapping):
                raise TypeError(
                    f"lifespan may yield a mapping of state or nothing, not {state!r}")
            if state is not None:
                # The app's state over a router's, as FastAPI merges them.
                merged = {**state, **(merged or {})}
        self._lifespan_state = merged

    async def shutdown(self) -> None:
        contexts, self._lifespan_contexts = self._lifespan_contexts, []
        self._lifespan_state = None
        for context in reversed(contexts):
            if hasattr(context, "__aexit__"):
                await context.__aexit__(None, None, None)
            else:
                context.__exit__(None, None, None)
        await self._run_hooks(self._on_shutdown)

    # Building for the engine.

    def _overrides_differ(self, planned: dict[Any, Any]) -> bool:
        """Whether `dependency_overrides` are no longer `planned` (those a build used)."""
        return planned != (self.dependency_overrides or {})

    def _routes_changed(self) -> None:
        super()._routes_changed()
        self.openapi_schema = None

    def _changed_since(self, planned: dict[Any, Any]) -> bool:
        """Whether a build with the overrides `planned` is out of date: the overrides have
        changed, or routes were added (to the app or a router it includes) since."""
        return self._planned is None or self._overrides_differ(planned)

    def _plan(self) -> list[tuple[Any, ...]]:
        """Every route's plan, made once (and again only if routes were added or the
        dependency overrides changed since)."""
        form_limits = {**self._outer_limits[1], **self.form_limits}
        if (self._planned is None or self._overrides_differ(self._planned_overrides)
                or form_limits != self._planned_form_limits):
            self._planned_overrides = dict(self.dependency_overrides or {})
            self._planned_form_limits = form_limits
            self._planned = []
            # A method and path a route has already is left to it (see `_warn_if_shadowed`).
            taken: set[tuple[str, str]] = set()
            for route in self._routes:
                methods = [m for m in route.methods if (m, route.path) not in taken]
                taken.update((m, route.path) for m in route.methods)
                if methods:
                    planned = self._plan_route(route)
                    self._planned.append((methods, *planned[1:]))
            # The schema and docs routes, without the app's dependencies (as in FastAPI).
            from .openapi import schema_routes

            for route in schema_routes(self):
                self._planned.append(self._plan_route(route, with_app_dependencies=False))
        return self._planned

    def _plan_route(self, route: APIRoute, with_app_dependencies: bool = True) -> tuple[Any, ...]:
        dependencies = route.dependencies
        if with_app_dependencies:
            dependencies = self.dependencies + dependencies
        handler = route.handler
        if streams.is_streaming(handler):
            # A handler that yields streams its items (JSON Lines unless a response class
            # says otherwise), as FastAPI streams them.
            handler = streams.streaming(handler, response_classes.resolve(
                route.response_class, self.default_response_class), route.status_code)
        else:
            shape = response_models.filtering(
                handler, route.response_model, route.response_model_options
            )
            render = response_classes.rendering(
                response_classes.resolve(route.response_class, self.default_response_class),
                route.status_code,
            )
            filter_value = shape if render is None else render if shape is None else (
                lambda value: render(shape(value)))
            if filter_value is not None:
                handler = response_models.with_filter(handler, filter_value)
        if dependencies or any(p.tag != "leaf" for p in params.analyse(route.path, handler)):
            # The handler and its dependencies, flattened into one solver function.
            solve, planned, kind, _ = solver(
                handler,
                dependencies,
                route.path,
                route.status_code,
                route.blocking,
                self._planned_overrides,
                form_limits={**self._planned_form_limits, **route.form_limits},
                str_as_json=self._str_as_json,
            )
            return (route.methods, route.path, solve, planned, route.status_code, kind, route)
        return (
            route.methods,
            route.path,
            handler,
            params.plan(route.path, handler),
            route.status_code,
            params.call_kind(handler, route.blocking),
            route,
        )

    def _fallback_routes(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """What a request no route takes runs, when the app has middleware or exception
        handlers, so that they see it as in Starlette (a CORS preflight, a custom 404 page):
        a 404, and a 405 with the path's methods in `Allow` (given as the path value)."""

        def not_found() -> None:
            raise HTTPException(404)

        def method_not_allowed(allow: str) -> None:
            raise HTTPException(405, headers={"allow": allow})

        # Without their Python route: no route matched, so the scope names none.
        return (
            self._plan_route(
                APIRoute("/", not_found, status_code=404, response_class=None), False)[:6],
            self._plan_route(
                APIRoute("/{allow}", method_not_allowed, status_code=405, response_class=None),
                False)[:6],
        )

    def _websocket_endpoint(self, raise_disconnect: bool = False) -> Any:
        """The WebSocket routes as one ASGI app, after the app's dependencies and with its
        dependency overrides (`raise_disconnect`: see `WebSocketEndpoint`)."""
        return self._websockets.endpoint(self.dependencies, self.dependency_overrides or {},
                                         self, raise_disconnect)

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI 3.1 schema of the app's routes, made once (see `vireo.openapi`)."""
        if self.openapi_schema is None:
            from .openapi import build_schema

            self.openapi_schema = build_schema(self)
        return self.openapi_schema

    def _build(self, loop: Any, websocket_options: dict[str, Any] | None = None, *,
               log: Callable[[BaseException, str], None] = log_exception,
               client_without_peer: Address | None = None, mounted: bool = False) -> Any:
        """The native app, bound to this process's event loop. `websocket_options` are the
        WebSocket settings `vireo serve` takes (`ws`, `ws_max_size`, `ws_ping_interval`,
        `ws_ping_timeout`, `ws_per_message_deflate`); `ws=False` serves no WebSocket
        routes, so an upgrade request is plain HTTP. `log(exc, context)` logs what a handler
        raised; `client_without_peer` is `request.client` where there is no peer (the test
        client's)."""
        self._background = Runner(loop)
        refs = {
            "HTTPException": http_errors(),
            "RequestValidationError": validation_errors(),
            "Response": Response,
            "StreamingResponse": StreamingResponse,
            "FileResponse": FileResponse,
            "jsonable": jsonable,
            "log_exception": log,
            "Address": Address,
            "client_without_peer": client_without_peer,
            "json_loads": json.loads,
            "copy_context": contextvars.copy_context,
            "context_run": contextvars.Context.run,
            "send_none": _vireo.send_none,
            "spawn": _loop.make_spawn(loop),
            "bind_loop": lambda: _loop.bind(loop),
            "done": _loop.done,
            "raised": _loop.raised,
            "finish_async": finish_async,
            "make_layer": make_layer,
            "run_background": self._background,
            "StarletteResponse": starlette_response_class(),
            "from_starlette": from_starlette,
        }
        middleware = list(self._middleware)
        handlers = dict(self._exception_handlers)
        planned = self._plan()  # first: it reads the dependency overrides for the rest
        # Routes whose class answers them through a route handler of its own; those raise
        # HTTP errors to the exception handlers, as in FastAPI.
        own_handlers = {route: route.get_route_handler() for *_, route in planned
                        if _has_own_route_handler(route)}
        if handlers or own_handlers:
            middleware.append(_exception_layer(handlers, log))
        if own_handlers:
            middleware.append(route_handlers.route_handler_layer(own_handlers))
        from ._serve import _helpers

        websockets = None
        options = dict(websocket_options or {})
        ws = options.pop("ws", True)
        if self._websockets.routes and ws:
            endpoint = self._websocket_endpoint()
            websockets = _vireo.AsgiApp(endpoint, "asgi", _helpers(loop), **options)
        mounts = []
        for prefix, app, _ in self._mounts:
            if isinstance(app, App):
                mounts.append((prefix, self._build_mounted(app, prefix, loop, websocket_options,
                                                           log, client_without_peer)))
            else:
                mounts.append((prefix, _vireo.AsgiApp(
                    answering_http_errors(app), "asgi", _helpers(loop), root_path=prefix,
                    mounted=True, ws=ws, **options)))
        # A path that still has the root path is routed without it, as in Starlette; a
        # mounted app's paths come with its prefix (its root path) taken off already.
        routed_root = "" if mounted else self.root_path
        # Frontends, the first of two at one path serving it, as in FastAPI.
        low_priority, paths = [], set()
        for served in self._frontends:
            if served.path not in paths:
                paths.add(served.path)
                low_priority += [self._plan_route(route) for route in served.routes()]
        return _vireo.AppCore(
            self, planned, middleware, refs, bool(handlers or own_handlers), websockets, mounts,
            routed_root, self._body_limit(), low_priority
        )

    def _serve_under(self, root_path: str) -> None:
        """Serve as behind a proxy that strips `root_path`, as a test client's `root_path`
        makes Starlette's scopes; an app's own root path wins, as in FastAPI."""
        root_path = root_path.rstrip("/")
        if self._own_root_path or (not root_path and self._client_root_path is None):
            return
        self._client_root_path = root_path or None
        if self.root_path != root_path:
            self.root_path = root_path
            self.openapi_schema = None

    def _body_limit(self) -> int | None:
        """The body limit of a request no route of this app limits: the app's, or that of
        the app it is mounted in."""
        return body_limits.first_set(self.max_body_size, self._outer_limits[0])

    def _build_mounted(self, app: App, prefix: str, loop: Any,
                       websocket_options: dict[str, Any] | None,
                       log: Callable[[BaseException, str], None],
                       client_without_peer: Address | None) -> Any:
        """The native app of a Vireo app mounted at `prefix`: its URLs and schema are under
        the prefix, its requests see this app's lifespan state, and their `url_for` finds
        routes by this app's names (`"mount:route"`), as in Starlette (its own startup and
        shutdown hooks do not run, as there)."""
        root_path = self.root_path + prefix
        if app.root_path != root_path:
            app.root_path = root_path
            app.openapi_schema = None
        app._lifespan_state = self._lifespan_state
        app._url_root = self._url_root or self
        # What the mounted app does not limit, this one's limits do, as in FastAPI.
        app._outer_limits = (self._body_limit(), {**self._outer_limits[1], **self.form_limits})
        return app._build(loop, websocket_options, log=log,
                          client_without_peer=client_without_peer, mounted=True)

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any],
                       send: Callable[[dict[str, Any]], Any]) -> None:
        """The app as an ASGI 3 application, for servers and tools that take one (`uvicorn
        main:app`, httpx's `ASGITransport`, a Starlette app mounting it): it runs on a thread
        and event loop of its own, as under the `TestClient`. `app.run()` and `vireo serve`
        serve it natively, without ASGI in between, and much faster."""
        bridge = self.__dict__.get("_asgi_bridge")
        if bridge is None:
            bridge = self._asgi_bridge = self.asgi()
        await bridge(scope, receive, send)

    def asgi(self, *, max_body_size: int = 2 * 1024 * 1024) -> Any:
        """An ASGI 3 application serving this app, as `app` itself is, with its own limits: a
        request body longer than `max_body_size` bytes gets 413 where its route and the app
        set no limit of their own (the default is the native server's). Each call makes a
        new one, with a thread of its own once it starts."""
        from ._asgi_app import AsgiBridge

        return AsgiBridge(self, max_body_size)

    def run(self, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
            ssl_certfile: str | None = None, ssl_keyfile: str | None = None,
            ssl_keyfile_password: str | None = None, ssl_ca_certs: str | None = None,
            ssl_cert_reqs: int = 0, ssl_version: int = 17, ssl_ciphers: str = "TLSv1",
            ssl_crl: str | list[str] | None = None) -> None:
        """Serve until SIGTERM or SIGINT; HTTPS (and HTTP/2 by ALPN) with a PEM certificate
        chain and key, client certificates, versions and cipher suites as
        `vireo serve --help` says. See `vireo.server.run`."""
        from .server import run

        status = run(self, host, port, workers, ssl_certfile=ssl_certfile,
                     ssl_keyfile=ssl_keyfile, ssl_keyfile_password=ssl_keyfile_password,
                     ssl_ca_certs=ssl_ca_certs, ssl_cert_reqs=ssl_cert_reqs,
                     ssl_version=ssl_version, ssl_ciphers=ssl_ciphers, ssl_crl=ssl_crl)
        if status:
            # The workers could not start the app (each logged why): the script fails too.
            raise SystemExit(status)


class FastAPI(App):
    """`App` under FastAPI's name, for code moved from FastAPI: the same app with FastAPI's
    defaults, so that it answers and documents what it did before: a returned `str` is sent
    as a JSON string, and the default `title` is "FastAPI"."""

    _str_as_json = True

    def __init__(self, *, title: str = "FastAPI", **options: Any) -> None:
        super().__init__(title=title, **options)
