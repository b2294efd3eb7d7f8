"""A mutable default (a list, a dict, a model) is copied for each request, as FastAPI copies
defaults: what one request's handler does to it, no later request sees. Defaults that cannot
change (numbers, texts, enum members) are given as they are."""

from __future__ import annotations

import enum
from typing import Annotated, Optional

from pydantic import BaseModel, Field

from vireo import App, Body, Form, Header, Query
from vireo.testclient import TestClient


class Filters(BaseModel):
    term: str
    tags: list[str] = Field(default_factory=list)


class Color(enum.Enum):
    red = "red"


DEFAULT_FILTERS = Filters(term="default")
app = App()


@app.get("/query")
def query(tags: Annotated[list[str], Query()] = []):
    tags.append("seen")
    return tags


@app.get("/header")
def header(x_tag: Annotated[list[str], Header()] = []):
    x_tag.append("seen")
    return x_tag


@app.get("/model")
def model(filters: Annotated[Optional[Filters], Query()] = DEFAULT_FILTERS):
    filters.tags.append("seen")
    return filters


@app.post("/body")
def body(counts: Annotated[dict, Body()] = {}):
    counts["n"] = counts.get("n", 0) + 1
    return counts


@app.post("/form")
def form(names: Annotated[list[str], Form()] = []):
    names.append("seen")
    return names


@app.get("/enum")
def an_enum(color: Color = Color.red):
    return {"same": color is Color.red}


def test_each_request_gets_its_own_copy_of_a_mutable_default():
    client = TestClient(app)
    for _ in range(3):
        assert client.get("/query").json() == ["seen"]
        assert client.get("/header").json() == ["seen"]
        assert client.get("/model").json() == {"term": "default", "tags": ["seen"]}
        assert client.post("/body").json() == {"n": 1}
        assert client.post("/form").json() == ["seen"]
    assert DEFAULT_FILTERS.tags == []


def test_a_default_that_cannot_change_is_the_object_itself():
    assert TestClient(app).get("/enum").json() == {"same": True}
