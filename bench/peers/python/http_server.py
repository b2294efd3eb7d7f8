"""http.server peer: the standard library's ThreadingHTTPServer (one thread per
connection), speaking HTTP/1.1 so keep-alive works. It has no async concept, so
the runner does not send it /async."""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server(ThreadingHTTPServer):
    # The default listen backlog is 5: at -c400 most SYNs would be dropped and
    # retried a second later. Node uses 511 and Go the kernel's maximum.
    request_queue_size = 1024
    daemon_threads = True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; the default HTTP/1.0 closes every connection
    # Buffer the response so head and body leave in one write (flushed after
    # each request). Unbuffered, the body is a second small write that Nagle's
    # algorithm holds until the client's delayed ACK, about 40 ms later.
    wbufsize = -1

    def log_message(self, *args):
        pass  # no per-request logging to stderr

    def send(self, status, body=b"", content_type="text/plain"):
        self.send_response(status)
        if self.request_version == "HTTP/1.0" and not self.close_connection:
            # http.server keeps an HTTP/1.0 keep-alive connection open but does not
            # say so; ab (HTTP/1.0) would then wait for a close that never comes.
            self.send_header("Connection", "keep-alive")
        if body or status != 204:
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    # The two "middlewares": methods run before routing, each setting a field.
    def first(self):
        self.one = True

    def second(self):
        self.two = True

    def do_GET(self):
        self.first()
        self.second()
        path = self.path.split("?", 1)[0]
        if path == "/":
            self.send(200, b"Hello, World!")
        elif path == "/json":
            self.send(200, json.dumps({"message": "Hello, World!"}, separators=(",", ":")).encode(), "application/json")
        elif path == "/favicon.ico":
            self.send(204)
        elif path == "/compute":
            self.send(200, str(sum(i * i for i in range(1000))).encode())
        elif path.startswith("/users/") and path.count("/") == 2 and len(path) > 7:
            if not (self.one and self.two):
                return self.send(500)
            self.send(200, f"User: {path[7:]}".encode())
        else:
            self.send(404, b"Not Found")


if __name__ == "__main__":
    port = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PORT", 8080))
    Server(("127.0.0.1", port), Handler).serve_forever()
