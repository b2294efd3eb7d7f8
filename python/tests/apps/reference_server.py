"""A reference server for the differential tests: `uvicorn MODULE:ATTR` (ASGI) or
`wsgiref MODULE:ATTR` (WSGI), on an ephemeral port announced as vireo does."""

import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vireo._serve import import_app  # noqa: E402

kind, spec = sys.argv[1], sys.argv[2]
app = import_app(spec)
if kind == "uvicorn":
    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="auto")
    uvicorn.Server(config).run(sockets=[sock])
else:
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server("127.0.0.1", 0, app, handler_class=Quiet)
    print(f"listening on http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()
