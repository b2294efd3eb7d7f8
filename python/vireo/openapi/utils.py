"""FastAPI's `get_openapi`, for a schema an app makes its own way:

    def custom_openapi():
        if app.openapi_schema is None:
            schema = get_openapi(title="Shop", version="2.5.0", routes=app.routes)
            schema["info"]["x-logo"] = {"url": "https://example.com/logo.png"}
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = custom_openapi
"""

from __future__ import annotations

from typing import Any, Sequence

from .schema import build_schema, schema_info


def get_openapi(
    *,
    title: str,
    version: str,
    openapi_version: str = "3.1.0",
    summary: str | None = None,
    description: str | None = None,
    routes: Sequence[Any],
    webhooks: Sequence[Any] | None = None,
    tags: list[dict[str, Any]] | None = None,
    servers: list[dict[str, Any]] | None = None,
    terms_of_service: str | None = None,
    contact: dict[str, Any] | None = None,
    license_info: dict[str, Any] | None = None,
    separate_input_output_schemas: bool = True,
    external_docs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The OpenAPI document of `routes` (their HTTP routes; `app.routes`) with this `info`,
    `servers` and `tags`, as FastAPI's `get_openapi` makes it, with `webhooks` (routes of
    `app.webhooks`) under its `webhooks`. The routes' app (that `app.routes` names) gives
    what the app adds to each operation (its dependencies' security, its `responses`); a
    list made otherwise is read as routes of an app with none."""
    from ..api_route import APIRoute
    from ..app import App

    app = getattr(routes, "app", None)
    if not isinstance(app, App):
        app = App(title=title, version=version)
    info = schema_info(title, version, summary, description, terms_of_service, contact,
                       license_info)
    schema = build_schema(app, [route for route in routes if isinstance(route, APIRoute)],
                          info=info, servers=list(servers or ()), tags=tags or [],
                          openapi_version=openapi_version,
                          webhooks=[route for route in webhooks or () if isinstance(route, APIRoute)],
                          separate_input_output_schemas=separate_input_output_schemas)
    if external_docs:
        schema["externalDocs"] = external_docs
    return schema
