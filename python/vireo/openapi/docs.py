"""The API docs pages an app serves: Swagger UI (`/docs`) and ReDoc (`/redoc`), each a small
HTML page that loads its viewer from a CDN and reads the app's schema; and FastAPI's
functions that make them (`get_swagger_ui_html`, `get_redoc_html`,
`get_swagger_ui_oauth2_redirect_html`), for docs pages of an app's own (self-hosted scripts,
another title)."""

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


def _script_json(value: Any) -> str:
    """`value` as JSON safe inside a `<script>`: `<`, `>` and `&` escaped, so a setting
    holding `</script>` cannot end the script."""
    text = json.dumps(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def swagger_ui_html(title: str, openapi_url: str,
                    parameters: dict[str, Any] | None = None, *,
                    js_url: str = f"{SWAGGER_UI}/swagger-ui-bundle.js",
                    css_url: str = f"{SWAGGER_UI}/swagger-ui.css",
                    favicon_url: str | None = None,
                    oauth2_redirect_url: str | None = None,
                    init_oauth: dict[str, Any] | None = None) -> str:
    """Swagger UI reading `openapi_url`, with `parameters` over its default settings, its
    script and style from `js_url` and `css_url`; `oauth2_redirect_url` is the page an
    OAuth2 login returns to, `init_oauth` Swagger UI's `initOAuth` settings."""
    settings = {**SWAGGER_UI_DEFAULTS, **(parameters or {})}
    if oauth2_redirect_url:
        settings["oauth2RedirectUrl"] = oauth2_redirect_url
    # Each setting as a line of the object literal, so the presets (functions) can follow.
    lines = f"    url: {_script_json(openapi_url)},\n" + "".join(
        f"    {_script_json(key)}: {_script_json(value)},\n" for key, value in settings.items())
    icon = (f'<link rel="shortcut icon" href="{html.escape(favicon_url, quote=True)}">\n'
            if favicon_url else "")
    oauth = f"ui.initOAuth({_script_json(init_oauth)})\n" if init_oauth else ""
    return f"""<!DOCTYPE html>
<html>
<head>
<link type="text/css" rel="stylesheet" href="{html.escape(css_url, quote=True)}">
{icon}<title>{html.escape(title)}</title>
</head>
<body>
<div id="swagger-ui"></div>
<script src="{html.escape(js_url, quote=True)}"></script>
<script>
const ui = SwaggerUIBundle({{
{lines}    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
}})
{oauth}</script>
</body>
</html>
"""


def redoc_html(title: str, openapi_url: str, *, js_url: str = REDOC,
               favicon_url: str | None = None) -> str:
    """ReDoc reading `openapi_url`, its script from `js_url`."""
    icon = (f'<link rel="shortcut icon" href="{html.escape(favicon_url, quote=True)}">\n'
            if favicon_url else "")
    return f"""<!DOCTYPE html>
<html>
<head>
<title>{html.escape(title)}</title>
{icon}<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
</head>
<body>
<redoc spec-url="{html.escape(openapi_url, quote=True)}"></redoc>
<script src="{html.escape(js_url, quote=True)}"></script>
</body>
</html>
"""


def oauth2_redirect_html(js_url: str = f"{SWAGGER_UI}/oauth2-redirect.js") -> str:
    """The page an OAuth2 login in Swagger UI returns to: Swagger UI's own script hands the
    answer to the docs page that opened it (so it is served from the app's origin)."""
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head><title>Swagger UI: OAuth2 Redirect</title></head>
<body>
<script src="{html.escape(js_url, quote=True)}"></script>
</body>
</html>
"""


def get_swagger_ui_html(
    *,
    openapi_url: str,
    title: str,
    swagger_js_url: str = f"{SWAGGER_UI}/swagger-ui-bundle.js",
    swagger_css_url: str = f"{SWAGGER_UI}/swagger-ui.css",
    swagger_favicon_url: str | None = None,
    oauth2_redirect_url: str | None = None,
    init_oauth: dict[str, Any] | None = None,
    swagger_ui_parameters: dict[str, Any] | None = None,
) -> Any:
    """FastAPI's: a Swagger UI page as an `HTMLResponse`, for a docs route of the app's own
    (`FastAPI(docs_url=None)` and `@app.get("/docs", include_in_schema=False)`)."""
    from ..responses import HTMLResponse

    return HTMLResponse(swagger_ui_html(
        title, openapi_url, swagger_ui_parameters, js_url=swagger_js_url,
        css_url=swagger_css_url, favicon_url=swagger_favicon_url,
        oauth2_redirect_url=oauth2_redirect_url, init_oauth=init_oauth))


def get_redoc_html(
    *,
    openapi_url: str,
    title: str,
    redoc_js_url: str = REDOC,
    redoc_favicon_url: str | None = None,
    with_google_fonts: bool = True,
) -> Any:
    """FastAPI's: a ReDoc page as an `HTMLResponse`. `with_google_fonts` is taken for its
    signature; the page uses ReDoc's own fonts."""
    from ..responses import HTMLResponse

    return HTMLResponse(redoc_html(title, openapi_url, js_url=redoc_js_url,
                                   favicon_url=redoc_favicon_url))


def get_swagger_ui_oauth2_redirect_html() -> Any:
    """FastAPI's: the OAuth2 redirect page for Swagger UI, as an `HTMLResponse`."""
    from ..responses import HTMLResponse

    return HTMLResponse(oauth2_redirect_html())
