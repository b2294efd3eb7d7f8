"""Route classes with a route handler of their own, as FastAPI's `APIRoute.get_route_handler`:
a subclass wraps the handler that reads the request and calls the endpoint, to change the
request (a `Request` subclass whose `body()` decompresses), the response, or an error.

    class TimedRoute(APIRoute):
        def get_route_handler(self):
            original = super().get_route_handler()

            async def timed(request):
                response = await original(request)
                response.headers["x-elapsed"] = "..."
                return response

            return timed

The wrapped handlers run innermost in the app's middleware, inside its exception handlers."""

from __future__ import annotations

import contextvars
import json
from typing import Any, Awaitable, Callable

from . import _vireo
from .exceptions import RequestValidationError

RouteHandler = Callable[[Any], Awaitable[Any]]

# The `call_next` that answers the request a route handler is running for.
_CALL_NEXT: contextvars.ContextVar[Any] = contextvars.ContextVar("vireo_route_call_next")


def default_route_handler() -> RouteHandler:
    """`await handler(request) -> response`: the route's parameters read from `request` (the
    body its `body()` gives, for a subclass that overrides it), the endpoint called and its
    value rendered. An HTTP error is raised, a validation error as `RequestValidationError`."""

    async def route_handler(request: Any) -> Any:
        try:
            call_next = _CALL_NEXT.get()
        except LookupError:
            raise RuntimeError("a route handler is called with the request its route is "
                               "answering, from the route's own handler") from None
        if type(request).body is not _vireo.Request.body:
            request._use_body(await request.body())
        try:
            return await call_next(request)
        except _vireo.ValidationFailed as exc:
            from .app import _body_read

            errors = [{**e, "loc": tuple(e["loc"])} for e in json.loads(exc.args[0])["detail"]]
            raise RequestValidationError(errors, body=await _body_read(request)) from None

    return route_handler


def route_handler_layer(handlers: dict[Any, RouteHandler]) -> Callable[..., Any]:
    """The middleware that answers each route of `handlers` (its `APIRoute` to the handler
    its `get_route_handler()` made) through that handler; other routes as usual."""

    async def route_handler_layer(request: Any, call_next: Any) -> Any:
        handler = handlers.get(request.scope.get("route"))
        if handler is None:
            return await call_next(request)
        token = _CALL_NEXT.set(call_next)
        try:
            return await handler(request)
        finally:
            _CALL_NEXT.reset(token)

    return route_handler_layer
