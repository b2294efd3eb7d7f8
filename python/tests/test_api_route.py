"""`vireo.routing.APIRoute`, as FastAPI's: the routes `app.routes` lists, one made directly
and added (`App(routes=...)`, `APIRouter(routes=...)`, `app.router.routes.append(...)`), and
`generate_unique_id_function`, which names operations in the schema (the same schema as
FastAPI's, built from the same app)."""

import warnings

import pytest
from pydantic import BaseModel

import vireo
from vireo import APIRouter, App
from vireo.routing import APIRoute
from vireo.testclient import TestClient

fastapi = pytest.importorskip("fastapi")


def hello(name: str = "world"):
    return {"hello": name}


def test_the_routes_an_app_lists_are_api_routes():
    app = App()
    app.get("/users/{user_id}", tags=["users"])(hello)
    (route,) = [r for r in app.routes if isinstance(r, APIRoute)]
    assert (route.path, route.name, route.methods, route.tags) == (
        "/users/{user_id}", "hello", ["GET"], ["users"])
    assert route.endpoint is hello
    assert repr(route) == "APIRoute(path='/users/{user_id}', name='hello', methods=['GET'])"


def test_a_path_convertor_is_left_out_of_path_format():
    assert APIRoute("/files/{name:path}", hello).path_format == "/files/{name}"


@pytest.mark.parametrize("add", [
    lambda route: App(routes=[route]),
    lambda route: _with_router(APIRouter(routes=[route])),
    lambda route: _appended(route),
])
def test_a_route_made_directly_is_served(add):
    route = APIRoute("/hi", hello, methods=["POST"], status_code=201, name="greet")
    app = add(route)
    res = TestClient(app).post("/hi?name=you")
    assert (res.status_code, res.json()) == (201, {"hello": "you"})
    assert app.url_path_for("greet") == "/hi"


def _with_router(router: APIRouter) -> App:
    app = App()
    app.include_router(router)
    return app


def _appended(route: APIRoute) -> App:
    app = App()
    app.router.routes.append(route)
    return app


def test_routes_takes_only_api_routes():
    with pytest.raises(TypeError, match=r"routes= takes APIRoute\(path, endpoint, \.\.\.\)"):
        App(routes=[("/hi", hello)])


class Item(BaseModel):
    name: str


class Message(BaseModel):
    title: str


def tagged(route) -> str:
    return f"{route.tags[0]}-{route.name}"


def build(mod, app_fn=None, router_fn=None, include_fn=None, route_fn=None):
    app = mod.FastAPI(**({"generate_unique_id_function": app_fn} if app_fn else {}))
    router = mod.APIRouter(**({"generate_unique_id_function": router_fn} if router_fn else {}))

    @app.post("/", tags=["root"], response_model=list[Item],
              responses={404: {"model": list[Message]}})
    def post_root(item1: Item, item2: Item):
        return [item1, item2]

    @router.post("/router", tags=["router"], response_model=list[Item],
                 **({"generate_unique_id_function": route_fn} if route_fn else {}))
    def post_router(item1: Item, item2: Item):
        return [item1, item2]

    @router.get("/plain", tags=["router"], operation_id="chosen")
    def plain() -> list[int]:
        return [1]

    app.include_router(router, **({"generate_unique_id_function": include_fn}
                                  if include_fn else {}))
    return app


@pytest.mark.parametrize("levels", [
    {},
    {"app_fn": tagged},
    {"app_fn": tagged, "router_fn": lambda r: f"router_{r.name}"},
    {"app_fn": tagged, "include_fn": lambda r: f"include_{r.name}"},
    {"router_fn": lambda r: f"router_{r.name}", "include_fn": lambda r: f"include_{r.name}"},
    {"app_fn": tagged, "route_fn": lambda r: f"route_{r.name}"},
])
def test_operation_ids_and_the_names_they_give_match_fastapi(levels):
    ours = build(vireo, **levels).openapi()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = build(fastapi, **levels).openapi()
    assert ours["paths"] == theirs["paths"]
    assert ours["components"] == theirs["components"]


def test_the_innermost_function_names_the_operation():
    schema = build(vireo, app_fn=tagged, router_fn=lambda r: f"router_{r.name}",
                   route_fn=lambda r: f"route_{r.name}").openapi()
    ids = {path: ops["post" if "post" in ops else "get"]["operationId"]
           for path, ops in schema["paths"].items()}
    assert ids == {"/": "root-post_root", "/router": "route_post_router", "/plain": "chosen"}
    assert "Body_route_post_router" in schema["components"]["schemas"]


def test_a_duplicate_operation_id_is_warned_of():
    app = App(generate_unique_id_function=lambda route: "same")
    app.get("/a")(hello)
    app.get("/b")(hello)
    with pytest.warns(UserWarning, match="Duplicate Operation ID same for function hello"):
        app.openapi()


def test_a_method_and_path_registered_twice_is_answered_by_the_first():
    app = App()
    app.get("/users")(lambda: "first")
    with pytest.warns(UserWarning, match="GET /users is registered twice: '<lambda>' answers"):
        app.api_route("/users", methods=["GET", "POST"], name="second")(lambda: "second")
    client = TestClient(app)
    assert client.get("/users").text == "first"
    # The second route still answers the method only it has.
    assert client.post("/users").text == "second"
    operations = app.openapi()["paths"]["/users"]
    assert operations["get"]["operationId"] == "_lambda__users_get"
    assert operations["post"]["operationId"] == "second_users_post"
    # Both are listed, as FastAPI lists them.
    assert [r.name for r in app.routes if isinstance(r, APIRoute)] == ["<lambda>", "second"]


def test_a_routes_name_gives_its_operation_id_and_summary_as_in_fastapi():
    def build(mod):
        app = mod.FastAPI()
        app.get("/x", name="list_things")(hello)
        return app

    ours = build(vireo).openapi()["paths"]["/x"]["get"]
    theirs = build(fastapi).openapi()["paths"]["/x"]["get"]
    assert (ours["operationId"], ours["summary"]) == (theirs["operationId"], theirs["summary"])
    assert ours["operationId"] == "list_things_x_get"
