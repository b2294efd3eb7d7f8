"""Form fields and file uploads: urlencoded and multipart bodies, types, lists, defaults,
422s listed with the route's other errors, 400 for unreadable bodies, the schema."""

from __future__ import annotations

from typing import Annotated, Optional

import pydantic

from vireo import App, Depends, File, Form, UploadFile
from vireo.testclient import TestClient


def make_app() -> App:
    app = App()

    @app.post("/login")
    def login(username: str = Form(), age: int = Form(18), remember: bool = Form(False)):
        return {"username": username, "age": age, "remember": remember}

    @app.post("/tags/{kind}")
    def tags(kind: str, tag: Annotated[list[str], Form()], limit: int = 5) -> dict:
        return {"kind": kind, "tags": tag, "limit": limit}

    @app.post("/upload")
    async def upload(
        file: UploadFile, note: str = Form(""), raw: Optional[bytes] = File(None)
    ) -> dict:
        content = await file.read()
        return {
            "filename": file.filename,
            "type": file.content_type,
            "size": file.size,
            "content": content.decode(),
            "note": note,
            "raw": raw.decode() if raw is not None else None,
        }

    @app.post("/many")
    def many(files: list[UploadFile] = File()) -> list[str]:
        return [f"{f.filename}:{f.file.read().decode()}" for f in files]

    def who(user: str = Form()) -> str:
        return user.upper()

    @app.post("/dep")
    def dep(name: str = Depends(who), extra: str = Form("-")) -> str:
        return f"{name}{extra}"

    return app


def test_urlencoded_fields_with_types_and_defaults() -> None:
    with TestClient(make_app()) as client:
        res = client.post("/login", data={"username": "ann", "age": "30", "remember": "on"})
        assert res.json() == {"username": "ann", "age": 30, "remember": True}
        assert client.post("/login", data={"username": "bo"}).json() == {
            "username": "bo",
            "age": 18,
            "remember": False,
        }
        res = client.post("/tags/x?limit=2", data={"tag": ["a", "b c"]})
        assert res.json() == {"kind": "x", "tags": ["a", "b c"], "limit": 2}
        res = client.post("/dep", data={"user": "cy", "extra": "!"})
        assert res.text == "CY!"


def test_form_errors_are_listed_in_one_422_with_query_errors() -> None:
    with TestClient(make_app()) as client:
        res = client.post("/login", data={"age": "old"})
        assert res.status_code == 422
        assert res.json()["detail"] == [
            {
                "type": "missing",
                "loc": ["body", "username"],
                "msg": "Field required",
                "input": None,
            },
            {
                "type": "int_parsing",
                "loc": ["body", "age"],
                "msg": "Input should be a valid integer, unable to parse string as an integer",
                "input": "old",
            },
        ]
        res = client.post("/tags/x?limit=no", data={})
        locs = [e["loc"] for e in res.json()["detail"]]
        assert locs == [["query", "limit"], ["body", "tag"]]
        # A JSON body is not a form: the fields are missing.
        res = client.post("/login", json={"username": "ann"})
        assert res.json()["detail"][0]["loc"] == ["body", "username"]


def test_multipart_files_and_fields() -> None:
    with TestClient(make_app()) as client:
        res = client.post(
            "/upload",
            data={"note": "hi"},
            files={"file": ("a.txt", b"hello", "text/plain"), "raw": ("r.bin", b"\x00raw"[1:])},
        )
        assert res.json() == {
            "filename": "a.txt",
            "type": "text/plain",
            "size": 5,
            "content": "hello",
            "note": "hi",
            "raw": "raw",
        }
        res = client.post("/many", files={"files": [("1.txt", b"one"), ("2.txt", b"two")]})
        assert res.json() == ["1.txt:one", "2.txt:two"]
        # Form fields in a multipart body too.
        res = client.post("/login", data={"username": "mp"}, files={})
        assert res.json()["username"] == "mp"


def test_a_text_field_where_a_file_is_expected_is_a_422() -> None:
    with TestClient(make_app()) as client:
        res = client.post("/upload", data={"file": "not a file"}, files={})
        assert res.status_code == 422
        (error,) = res.json()["detail"]
        assert error["loc"] == ["body", "file"]
        assert error["msg"] == "Value error, Expected UploadFile, received: <class 'str'>"
        missing = client.post("/upload", data={"note": "x"}, files={})
        assert missing.json()["detail"][0] == {
            "type": "missing",
            "loc": ["body", "file"],
            "msg": "Field required",
            "input": None,
        }


def test_unreadable_bodies_are_400() -> None:
    with TestClient(make_app()) as client:
        cut = b'--b\r\ncontent-disposition: form-data; name="username"\r\n\r\nann'
        res = client.post(
            "/login", content=cut, headers={"content-type": "multipart/form-data; boundary=b"}
        )
        assert res.status_code == 400
        assert "detail" in res.json()
        res = client.post(
            "/login", content=b"x", headers={"content-type": "multipart/form-data"}
        )
        assert res.status_code == 400  # no boundary
        many = "&".join(f"f{i}=1" for i in range(1001))
        res = client.post(
            "/login",
            content=many,
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert res.status_code == 400


def test_form_bodies_in_the_schema() -> None:
    schema = make_app().openapi()
    paths, components = schema["paths"], schema["components"]["schemas"]

    def body(path: str, media: str) -> dict:
        ref = paths[path]["post"]["requestBody"]["content"][media]["schema"]["$ref"]
        name = ref.rsplit("/", 1)[1]
        assert name.startswith("Body_") and components[name]["title"] == name
        return components[name]

    login = body("/login", "application/x-www-form-urlencoded")
    assert login["required"] == ["username"]
    assert login["properties"]["age"] == {"type": "integer", "title": "Age", "default": 18}
    upload = body("/upload", "multipart/form-data")
    assert upload["properties"]["file"] == {
        "type": "string", "contentMediaType": "application/octet-stream", "title": "File"}
    assert upload["required"] == ["file"]
    many = body("/many", "multipart/form-data")
    assert many["properties"]["files"]["type"] == "array"



class Filters(pydantic.BaseModel):
    min_age: Optional[int] = None
    name: str = "any"


def test_an_input_left_empty_is_no_value_as_fastapi_reads_an_html_form() -> None:
    app = App()

    @app.post("/optional")
    def optional(age: Annotated[Optional[int], Form()] = None,
                 city: Annotated[str, Form()] = "unknown") -> dict:
        return {"age": age, "city": city}

    @app.post("/required")
    def required(name: Annotated[str, Form()]) -> dict:
        return {"name": name}

    @app.post("/many")
    def many(tags: Annotated[list[str], Form()]) -> dict:
        return {"tags": tags}

    @app.post("/model")
    def model(filters: Annotated[Filters, Form()]) -> dict:
        return filters.model_dump()

    client = TestClient(app)
    assert client.post("/optional", data={"age": "", "city": ""}).json() == {
        "age": None, "city": "unknown"}
    assert client.post("/optional", data={"age": "7"}).json() == {"age": 7, "city": "unknown"}
    res = client.post("/required", data={"name": ""})
    assert res.status_code == 422
    assert res.json()["detail"] == [
        {"type": "missing", "loc": ["body", "name"], "msg": "Field required", "input": None}]
    # A list keeps its empty values, as FastAPI keeps them.
    assert client.post("/many", data={"tags": ["", "a"]}).json() == {"tags": ["", "a"]}
    assert client.post("/model", data={"min_age": "", "name": ""}).json() == {
        "min_age": None, "name": "any"}


class Profile(pydantic.BaseModel):
    name: str
    age: int


def test_an_optional_form_model_given_only_empty_inputs_is_still_given() -> None:
    app = App()

    @app.post("/profiles")
    def create(token: Annotated[str, Form()],
               profile: Annotated[Optional[Profile], Form()] = None) -> dict:
        return {"profile": profile.model_dump() if profile else None}

    client = TestClient(app)
    assert client.post("/profiles", data={"token": "t"}).json() == {"profile": None}
    res = client.post("/profiles", data={"token": "t", "name": ""})
    assert res.status_code == 422
    assert res.json()["detail"][-1]["loc"] == ["body", "age"]
