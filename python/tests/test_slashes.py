"""A path that matches no route but would with its trailing slash added or removed is
redirected there with a 307, as FastAPI (Starlette's router) answers it; and the test client
follows redirects as Starlette's does."""

from __future__ import annotations

from vireo import App, Request
from vireo.testclient import TestClient

app = App()


@app.get("/items/")
def items():
    return ["pen"]


@app.post("/orders")
def orders(request: Request):
    return {"method": request.method, "url": str(request.url)}


@app.get("/moved")
def moved():
    from vireo import RedirectResponse

    return RedirectResponse("/orders", status_code=303)


client = TestClient(app, follow_redirects=False)


def test_the_other_form_of_a_path_is_redirected_to_with_its_query():
    res = client.get("/items?page=2")
    assert res.status_code == 307
    assert res.headers["location"] == "http://testserver/items/?page=2"
    assert res.content == b""
    assert client.post("/orders/").headers["location"] == "http://testserver/orders"


def test_a_route_with_other_methods_is_still_redirected_to_as_starlette_does():
    assert client.get("/orders/").status_code == 307


def test_no_redirect_where_neither_form_matches_or_for_the_root():
    assert client.get("/nothing").status_code == 404
    assert client.get("/nothing/").status_code == 404
    assert client.get("//").status_code == 404


def test_redirects_can_be_turned_off():
    strict = App(redirect_slashes=False)
    strict.get("/items/")(items)
    assert TestClient(strict, follow_redirects=False).get("/items").status_code == 404


def test_the_client_follows_keeping_the_method_for_307_and_getting_for_303():
    following = TestClient(app)
    assert following.get("/items").json() == ["pen"]
    res = following.post("/orders/", json={"a": 1})
    assert res.json() == {"method": "POST", "url": "http://testserver/orders"}
    assert following.get("/moved").status_code == 405  # the 303 is followed as a GET


def test_the_redirect_carries_the_root_path_a_proxy_strips():
    app = App(root_path="/api")

    @app.get("/items")
    def items():
        return []

    res = TestClient(app, follow_redirects=False).get("/items/?page=2")
    assert res.status_code == 307
    assert res.headers["location"] == "http://testserver/api/items?page=2"
