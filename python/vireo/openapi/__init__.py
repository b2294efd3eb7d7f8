"""OpenAPI: the schema an app serves (`app.openapi()`) and its docs pages, and FastAPI's
modules for making them an app's own way: `vireo.openapi.utils.get_openapi` (a schema with
other `info`, for `app.openapi = custom_openapi`) and `vireo.openapi.docs`
(`get_swagger_ui_html`, `get_redoc_html`, `get_swagger_ui_oauth2_redirect_html`)."""

from .schema import build_schema, schema_routes

__all__ = ["build_schema", "schema_routes"]
