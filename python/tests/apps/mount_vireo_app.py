"""Vireo Apps for `vireo serve`: a sub-app mounted at /api (a typed route, a body, a
WebSocket route, a middleware of its own), in `app` alone and in `wrapped` behind the app's
middleware."""

from __future__ import annotations

from vireo import App, Request, WebSocket


def api() -> App:
    sub = App()

    @sub.middleware("http")
    async def tag(request, call_next):
        response = await call_next(request)
        response.headers["x-sub"] = request.url.path
        return response

    @sub.get("/items/{item_id}")
    def item(item_id: int, q: str, request: Request):
        return {"id": item_id, "q": q, "url": str(request.url)}

    @sub.post("/size")
    async def size(request: Request):
        return str(len(await request.body()))

    @sub.websocket("/ws")
    async def echo(ws: WebSocket):
        await ws.accept()
        await ws.send_text("echo: " + await ws.receive_text())
        await ws.close()

    return sub


def with_own_route(app: App) -> App:
    @app.get("/own")
    def own():
        return "own"

    app.mount("/api", api())
    return app


app = with_own_route(App())
wrapped = App()


@wrapped.middleware("http")
async def outer(request, call_next):
    response = await call_next(request)
    response.headers["x-outer"] = "1"
    return response


with_own_route(wrapped)
