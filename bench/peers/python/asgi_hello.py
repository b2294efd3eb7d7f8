"""A raw ASGI 3 hello app: no framework, `GET` anything -> `Hello, World!`, and a WebSocket
echo at `/ws`. Served by `vireo serve`, uvicorn and Granian (see harness/peers.py for the
flags)."""

START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"13")],
}
BODY = {"type": "http.response.body", "body": b"Hello, World!"}


async def echo(receive, send):
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        if message.get("text") is not None:
            await send({"type": "websocket.send", "text": message["text"]})
        else:
            await send({"type": "websocket.send", "bytes": message["bytes"]})


async def app(scope, receive, send):
    if scope["type"] == "websocket":
        return await echo(receive, send)
    if scope["type"] != "http":
        return  # lifespan: not supported, which every server tolerates
    await send(START)
    await send(BODY)
