"""A raw ASGI 3 app for the WebSocket server tests, one path per case. What the server told
the app (disconnect codes, errors from `send`) is kept and read back over HTTP at `/seen`."""

import asyncio
import json

from asgi_raw import _jsonable

seen = {}


async def _json(send, value):
    body = json.dumps(value).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


async def _until_disconnect(receive):
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return message


async def websocket(scope, receive, send):
    path = scope["path"]
    connect = await receive()
    assert connect == {"type": "websocket.connect"}, connect
    if path == "/echo":
        offered = scope["subprotocols"]
        await send({"type": "websocket.accept",
                    "subprotocol": "chat" if "chat" in offered else None,
                    "headers": [(b"x-accepted-by", b"app")]})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                seen["echo"] = message
                return
            if message.get("text") is not None:
                await send({"type": "websocket.send", "text": message["text"]})
            else:
                await send({"type": "websocket.send", "bytes": message["bytes"]})
    if path == "/scope":
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": json.dumps(_jsonable(dict(scope)))})
        await send({"type": "websocket.close"})
        seen["scope-close"] = await _until_disconnect(receive)
        return
    if path == "/refuse":
        await send({"type": "websocket.close"})
        seen["refuse"] = await receive()
        return
    if path == "/deny":
        await send({"type": "websocket.http.response.start", "status": 401,
                    "headers": [(b"www-authenticate", b"Bearer")]})
        await send({"type": "websocket.http.response.body", "body": b"who ", "more_body": True})
        await send({"type": "websocket.http.response.body", "body": b"are you?"})
        return
    if path == "/raise-before":
        raise RuntimeError("boom before accept")
    if path == "/return-before":
        return
    if path == "/raise-after":
        await send({"type": "websocket.accept"})
        raise RuntimeError("boom after accept")
    if path == "/return-after":
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": "bye"})
        return
    if path == "/close-code":
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": 4000, "reason": "custom"})
        seen["close-code"] = await _until_disconnect(receive)
        try:
            await send({"type": "websocket.send", "text": "after close"})
        except RuntimeError as e:
            seen["send-after-close"] = str(e)
        return
    if path == "/send-after-disconnect":
        await send({"type": "websocket.accept"})
        seen["send-after-disconnect-event"] = await _until_disconnect(receive)
        await asyncio.sleep(0.05)
        try:
            await send({"type": "websocket.send", "text": "too late"})
        except OSError as e:
            import vireo

            seen["send-after-disconnect"] = type(e).__name__
            seen["is-vireo-client-disconnected"] = isinstance(e, vireo.ClientDisconnected)
        return
    if path == "/flood":
        # Many messages at once: send must hold back the app while the client is slow.
        await send({"type": "websocket.accept"})
        for i in range(2000):
            await send({"type": "websocket.send", "bytes": bytes([i % 256]) * 1024})
        await send({"type": "websocket.close"})
        await _until_disconnect(receive)
        return
    if path == "/bad-message":
        await send({"type": "websocket.accept"})
        try:
            await send({"type": "websocket.send"})
        except RuntimeError as e:
            seen["bad-message"] = str(e)
        try:
            await send({"type": "websocket.close", "code": 1006})
        except RuntimeError as e:
            seen["bad-close"] = str(e)
        await send({"type": "websocket.close"})
        await _until_disconnect(receive)
        return
    if path == "/close-unread":
        # Leaves what the client sends unread, then closes: the server must still read the
        # client's answer to the close.
        await send({"type": "websocket.accept"})
        await asyncio.sleep(0.3)
        await send({"type": "websocket.close"})
        return
    if path == "/wait":
        # Stays open until the client or the server ends it.
        await send({"type": "websocket.accept"})
        seen["wait"] = await _until_disconnect(receive)
        return
    await send({"type": "websocket.close", "code": 1000})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                scope["state"]["started"] = True
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "websocket":
        return await websocket(scope, receive, send)
    assert scope["type"] == "http"
    if scope["path"] == "/seen":
        return await _json(send, _jsonable(seen))
    await _json(send, {"type": scope["type"]})
