"""A Vireo App for `vireo serve url_for_app:app`: a route that answers with its own URL."""

from __future__ import annotations

from vireo import App, Request

app = App()


@app.get("/here/{n}", name="here")
def here(n: int, request: Request):
    return {"url": str(request.url_for("here", n=n)), "base": str(request.base_url)}
