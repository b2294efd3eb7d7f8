"""Form models that are a union of models (`Annotated[A | B, Form(discriminator="kind")]`),
form models beside other form fields, and discriminated JSON bodies: the same app under
FastAPI and Vireo gives the same answers and the same schema."""

from typing import Annotated, Literal, Optional, Union

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402
from pydantic import BaseModel, Discriminator, Field, Tag  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402


class Person(BaseModel):
    kind: Literal["person"]
    name: str
    tags: list[str] = []


class Company(BaseModel):
    kind: Literal["company"]
    company_name: str
    employees: int = 1


class Email(BaseModel):
    email: str


class Phone(BaseModel):
    phone: int


class Profile(BaseModel):
    nickname: str


def build(mod):
    app = mod.FastAPI()

    @app.post("/contacts")
    def contact(c: Annotated[Union[Person, Company], mod.Form(discriminator="kind")],
                token: Annotated[str, mod.Form()]):
        return {"contact": c, "token": token}

    @app.post("/optional")
    def optional(c: Annotated[Optional[Union[Person, Company]],
                              mod.Form(discriminator="kind")] = None):
        return {"contact": c}

    @app.post("/either")
    def either(reach: Annotated[Union[Email, Phone], mod.Form()]):
        return {"reach": reach, "type": type(reach).__name__}

    @app.post("/profile")
    def profile(p: Annotated[Profile, mod.Form()], note: Annotated[str, mod.Form()] = "-"):
        return {"profile": p, "note": note}

    @app.post("/pets")
    def pets(pet: Annotated[Union[Person, Company], mod.Body(discriminator="kind")]):
        return pet

    @app.post("/pets-field")
    def pets_field(pet: Annotated[Union[Person, Company], Field(discriminator="kind")]):
        return pet

    @app.post("/pets-tagged")
    def pets_tagged(
            pet: Annotated[Union[Annotated[Person, Tag("person")],
                                 Annotated[Company, Tag("company")]], Field(discriminator="kind")],
            q: Annotated[str, Field(description="Query string")] = "-"):
        return pet

    def kind_of(value):
        return value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)

    @app.post("/pets-callable")
    def pets_callable(pet: Annotated[
            Union[Annotated[Person, Tag("person")], Annotated[Company, Tag("company")]],
            mod.Body(discriminator=Discriminator(kind_of))]):
        return pet

    return app


@pytest.fixture(scope="module")
def clients():
    with TestClient(build(vireo)) as ours:
        yield ours, FastAPIClient(build(fastapi))


FORMS = [
    ("/contacts", {"kind": "person", "name": "Ann", "token": "t"}),
    ("/contacts", {"kind": "person", "name": "Ann", "tags": ["a", "b"], "token": "t"}),
    ("/contacts", {"kind": "company", "company_name": "Acme", "employees": "7", "token": "t"}),
    ("/contacts", {"kind": "company", "company_name": "Acme", "employees": "many",
                   "token": "t"}),
    ("/contacts", {"kind": "person", "token": "t"}),
    ("/contacts", {"kind": "robot", "name": "R2", "token": "t"}),
    ("/contacts", {"name": "Ann", "token": "t"}),
    ("/contacts", {"token": "t"}),
    ("/contacts", {"kind": ["person", "company"], "name": "Ann", "token": "t"}),
    ("/contacts", {"kind": "person", "name": ["Ann", "Bea"], "token": "t"}),
    ("/contacts", {"kind": "person", "name": ""}),
    ("/optional", {}),
    ("/optional", {"unrelated": "x"}),
    ("/optional", {"kind": "company", "company_name": "Acme"}),
    ("/optional", {"name": "Ann"}),
    ("/either", {"email": "a@b.c"}),
    ("/either", {"phone": "123"}),
    ("/either", {"phone": "abc"}),
    ("/either", {}),
    ("/profile", {"nickname": "ann", "note": "hi"}),
    ("/profile", {"note": "hi"}),
]


@pytest.mark.parametrize(("path", "form"), FORMS)
def test_a_union_of_form_models_answers_as_in_fastapi(clients, path, form):
    ours, theirs = clients
    mine, other = ours.post(path, data=form), theirs.post(path, data=form)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


@pytest.mark.parametrize("path", ["/pets", "/pets-field", "/pets-tagged", "/pets-callable"])
@pytest.mark.parametrize("body", [
    {"kind": "person", "name": "Ann"}, {"kind": "company"}, {"kind": "x"}, {}, [],
])
def test_a_discriminated_json_body_answers_as_in_fastapi(clients, path, body):
    ours, theirs = clients
    mine, other = ours.post(path, json=body), theirs.post(path, json=body)
    assert (mine.status_code, mine.json()) == (other.status_code, other.json())


def test_the_schema_is_fastapis(clients):
    ours, theirs = clients
    mine, other = ours.get("/openapi.json").json(), theirs.get("/openapi.json").json()
    assert mine["components"] == other["components"]
    for path in other["paths"]:
        assert mine["paths"][path] == other["paths"][path], path
    body = mine["components"]["schemas"]["Body_contact_contacts_post"]
    assert body["allOf"][0]["discriminator"]["propertyName"] == "kind"


def test_a_discriminator_that_is_not_a_field_of_every_model_is_refused_when_the_app_starts():
    app = vireo.App()

    @app.post("/bad")
    def bad(reach: Annotated[Union[Email, Phone], vireo.Form(discriminator="kind")]):
        return reach

    with pytest.raises(TypeError, match="bad\\(reach\\): Model 'Email' needs a discriminator"):
        TestClient(app).post("/bad")


def test_a_discriminator_is_a_fields_name():
    with pytest.raises(TypeError, match="discriminator must be a field's name or a pydantic Discriminator"):
        vireo.Form(discriminator=3)
