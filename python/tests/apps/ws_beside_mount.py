"""An app with WebSocket routes of its own and a Starlette app mounted beside them, for
`test_mount_app.py`: a handshake goes to the app's own route first, else to the mount."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import WebSocketRoute

from vireo import App, WebSocket


async def from_sub(ws) -> None:
    await ws.accept()
    await ws.send_text("from the mount")
    await ws.close()


app = App()
app.mount("/sub", Starlette(routes=[WebSocketRoute("/ws", from_sub),
                                    WebSocketRoute("/own", from_sub)]))


@app.websocket("/ws")
@app.websocket("/sub/own")
async def own(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("from the app")
    await websocket.close()
