"""A Flask hello app: `GET /` -> `Hello, World!`. Served by `vireo serve`, Granian (WSGI)
and gunicorn (see harness/peers.py for the flags)."""

from flask import Flask

app = Flask(__name__)


@app.route("/")
def hello():
    return "Hello, World!", 200, {"content-type": "text/plain"}
