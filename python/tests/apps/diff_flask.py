"""A Flask app for the differential tests."""

from pathlib import Path

from flask import Flask, Response, abort, jsonify, make_response, redirect, request, send_from_directory

STATIC = Path(__file__).resolve().parent / "static"
app = Flask(__name__, static_folder=str(STATIC), static_url_path="/static")


@app.route("/")
def home():
    return "Hello from Flask"


@app.route("/json")
def as_json():
    return jsonify(args=request.args.to_dict(flat=False), path=request.path)


@app.route("/echo", methods=["POST", "PUT", "PATCH", "DELETE"])
def echo():
    data = request.get_data()
    return jsonify(length=len(data), sum=sum(data) % 65521, method=request.method,
                   type=request.content_type)


@app.route("/form", methods=["POST"])
def form():
    return jsonify(form=request.form.to_dict(flat=False))


@app.route("/redirect")
def go():
    return redirect("/json?from=redirect")


@app.route("/cookies")
def cookies():
    res = make_response(jsonify(seen=dict(sorted(request.cookies.items()))))
    res.set_cookie("a", "1", httponly=True)
    res.set_cookie("b", "2", path="/x")
    return res


@app.route("/error")
def error():
    raise RuntimeError("flask failure")


@app.route("/abort")
def aborted():
    abort(403)


@app.route("/stream")
def stream():
    def gen():
        for i in range(4):
            yield f"row {i}\n"
    return Response(gen(), mimetype="text/plain")


@app.route("/download")
def download():
    return send_from_directory(STATIC, "data.bin")


@app.route("/headers")
def headers():
    return jsonify(multi=request.headers.getlist("X-Multi"), empty=request.headers.get("X-Empty"),
                   host=request.host, url=request.url)
