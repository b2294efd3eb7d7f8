"""An ASGI app that does not support lifespan: it raises on that scope."""


async def app(scope, receive, send):
    assert scope["type"] == "http", f"unsupported scope {scope['type']}"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"no lifespan"})
