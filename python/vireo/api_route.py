"""`APIRoute`: one registered route, as FastAPI's (what `add_api_route` makes and
`app.routes` lists), and the checks its options go through."""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from . import body_limits
from . import response_class as response_classes
from . import response_model as response_models
from . import route_handlers
from .dependencies import Depends

Handler = Callable[..., Any]

# Starlette's `{id:int}`, `{x:float}`, `{s:str}` and `{u:uuid}`; `:path` is the router's.
_CONVERTOR = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*):(?:int|float|str|uuid)\}")


def check_dependencies(dependencies: Sequence[Any] | None) -> list[Depends]:
    out = list(dependencies or ())
    for dep in out:
        if not isinstance(dep, Depends) or dep.dependency is None:
            raise TypeError(f"dependencies take Depends(callable), not {dep!r}")
    return out


def check_callbacks(callbacks: Sequence[Any] | None) -> list[APIRoute]:
    out = list(callbacks or ())
    for callback in out:
        if not isinstance(callback, APIRoute):
            raise TypeError(f"callbacks take the routes of a router (router.routes), not "
                            f"{callback!r}")
    return out


class APIRoute:
    """A route: its `path`, `endpoint`, `methods`, `name`, `tags` and the other options of
    `add_api_route`, which takes the same keyword arguments. One made directly is added with
    `App(routes=[...])` or `APIRouter(routes=[...])`. A subclass, given as a router's
    `route_class`, may override `get_route_handler` to wrap how its requests are answered
    (see `vireo.route_handlers`); its other methods are not called, as routes are planned
    into native code when the app starts."""

    __slots__ = (
        "path",
        "handler",
        "methods",
        "status_code",
        "blocking",
        "dependencies",
        "tags",
        "summary",
        "description",
        "response_model",
        "include_in_schema",
        "deprecated",
        "operation_id",
        "name",
        "response_class",
        "responses",
        "response_description",
        "openapi_extra",
        "max_body_size",
        "form_limits",
        "strict_content_type",
        "generate_unique_id_function",
        "callbacks",
        "response_model_options",
    )

    def __init__(
        self,
        path: str,
        endpoint: Handler,
        *,
        methods: Sequence[str] | None = None,
        status_code: int | None = None,
        blocking: bool = False,
        dependencies: Sequence[Depends] | None = None,
        tags: Sequence[Any] | None = None,
        summary: str | None = None,
        description: str | None = None,
        response_model: Any = response_models.DEFAULT,
        include_in_schema: bool = True,
        deprecated: bool | None = None,
        operation_id: str | None = None,
        name: str | None = None,
        response_class: Any = response_classes.DEFAULT,
        responses: dict[Any, Any] | None = None,
        response_description: str = "Successful Response",
        openapi_extra: dict[str, Any] | None = None,
        max_body_size: int | None = None,
        form_limits: dict[str, int] | None = None,
        strict_content_type: bool | None = None,
        generate_unique_id_function: Callable[[APIRoute], str] | None = None,
        callbacks: Sequence[APIRoute] | None = None,
        response_model_include: Any = None,
        response_model_exclude: Any = None,
        response_model_by_alias: bool = True,
        response_model_exclude_unset: bool = False,
        response_model_exclude_defaults: bool = False,
        response_model_exclude_none: bool = False,
    ) -> None:
        # `{id:int}` and the like as `{id}`: the handler's annotation converts the value.
        self.path = _CONVERTOR.sub(r"{\1}", path)
        self.handler = endpoint
        self.methods = [m.upper() for m in (methods or ("GET",))]
        self.status_code = 200 if status_code is None else status_code
        self.blocking = blocking
        self.dependencies = check_dependencies(dependencies)
        self.tags = list(tags or ())
        self.summary = summary
        self.description = description
        self.response_model = response_model
        self.include_in_schema = include_in_schema
        self.deprecated = bool(deprecated)
        self.operation_id = operation_id
        # What `url_path_for` finds it by: by default the handler's name, as in FastAPI.
        self.name = name or getattr(endpoint, "__name__", type(endpoint).__name__)
        self.response_class = response_class
        # More answers for the OpenAPI schema, by status: {404: {"model": ..., ...}}.
        self.responses = dict(responses or {})
        # The success answer's description in the schema, and what is merged into the
        # route's operation there, as FastAPI takes them.
        self.response_description = response_description
        self.openapi_extra = openapi_extra
        # The route's own request size limits (see `vireo.body_limits`), over those of the
        # routers and app around it.
        self.max_body_size = body_limits.check_max_body_size(max_body_size)
        self.form_limits = body_limits.check_form_limits(form_limits)
        # Whether a body with no `content-type` is not read as JSON; `None` takes the
        # router's, then the app's (`App(strict_content_type=...)`).
        self.strict_content_type = _check_strict(strict_content_type)
        # `fn(route) -> str`, the route's operation id in the schema when it names none;
        # `None` takes the router's or app's.
        self.generate_unique_id_function = generate_unique_id_function
        # The requests the route's caller should expect from the API (OpenAPI callbacks),
        # as routes of a router of their own: only documented, never served.
        self.callbacks = check_callbacks(callbacks)
        self.response_model_options = {
            "response_model_include": response_model_include,
            "response_model_exclude": response_model_exclude,
            "response_model_by_alias": response_model_by_alias,
            "response_model_exclude_unset": response_model_exclude_unset,
            "response_model_exclude_defaults": response_model_exclude_defaults,
            "response_model_exclude_none": response_model_exclude_none,
        }

    @property
    def endpoint(self) -> Handler:
        """The handler, by FastAPI's name for it."""
        return self.handler

    @property
    def path_format(self) -> str:
        """The path with `{name:path}` written `{name}`, as FastAPI's `path_format`."""
        return re.sub(r":\w+}", "}", self.path)

    def options(self) -> dict[str, Any]:
        """The keyword arguments of `add_api_route` that make this route again, but for its
        path, endpoint and methods."""
        options = {name: getattr(self, name) for name in self.__slots__[3:-1]}
        return {**options, **self.response_model_options}

    def get_route_handler(self) -> route_handlers.RouteHandler:
        """`await handler(request) -> response`, which answers the route's requests: override
        it to wrap the handler `super().get_route_handler()` gives, as in FastAPI."""
        return route_handlers.default_route_handler()

    def __repr__(self) -> str:
        return f"APIRoute(path={self.path!r}, name={self.name!r}, methods={self.methods!r})"


def _check_strict(value: Any) -> bool | None:
    """A `strict_content_type` setting: `True`, `False`, or `None` for the enclosing one."""
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"strict_content_type is True, False or None, not {value!r}")
    return value
