"""A raw ASGI 3 hello app: no framework, `GET` anything -> `Hello, World!`. Served by
`vireo serve`, uvicorn and Granian (see harness/peers.py for the flags)."""

START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"13")],
}
BODY = {"type": "http.response.body", "body": b"Hello, World!"}


async def app(scope, receive, send):
    if scope["type"] != "http":
        return  # lifespan: not supported, which every server tolerates
    await send(START)
    await send(BODY)
