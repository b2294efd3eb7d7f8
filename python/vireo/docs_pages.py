"""The API docs pages an app serves: Swagger UI (`/docs`) and ReDoc (`/redoc`), each a small
HTML page that loads its viewer from a CDN and reads the app's schema."""

from __future__ import annotations

import html
import json
from typing import Any

SWAGGER_UI = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5"
REDOC = "https://cdn.jsdelivr.net/npm/redoc@2/bundles/redoc.standalone.js"

# Swagger UI's settings, as FastAPI sets them; an app's `swagger_ui_parameters` go over them.
SWAGGER_UI_DEFAULTS = {
    "dom_id": "#swagger-ui",
    "layout": "BaseLayout",
    "deepLinking": True,
    "showExtensions": True,
    "showCommonExtensions": True,
}


def swagger_ui_html(title: str, openapi_url: str,
                    parameters: dict[str, Any] | None = None) -> str:
    """Swagger UI reading `openapi_url`, with `parameters` over its default settings."""
    settings = {**SWAGGER_UI_DEFAULTS, **(parameters or {})}
    # Each setting as a line of the object literal, so the presets (functions) can follow.
    lines = f"    url: {json.dumps(openapi_url)},\n" + "".join(
        f"    {json.dumps(key)}: {json.dumps(value)},\n" for key, value in settings.items())
    return f"""<!DOCTYPE html>
<html>
<head>
<link type="text/css" rel="stylesheet" href="{SWAGGER_UI}/swagger-ui.css">
<title>{html.escape(title)} - Swagger UI</title>
</head>
<body>
<div id="swagger-ui"></div>
<script src="{SWAGGER_UI}/swagger-ui-bundle.js"></script>
<script>
const ui = SwaggerUIBundle({{
{lines}    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
}})
</script>
</body>
</html>
"""


def redoc_html(title: str, openapi_url: str) -> str:
    """ReDoc reading `openapi_url`."""
    return f"""<!DOCTYPE html>
<html>
<head>
<title>{html.escape(title)} - ReDoc</title>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
</head>
<body>
<redoc spec-url="{html.escape(openapi_url, quote=True)}"></redoc>
<script src="{REDOC}"></script>
</body>
</html>
"""
