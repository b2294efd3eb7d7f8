"""OpenAPI callbacks and webhooks: the requests an API makes to its caller, documented from
the routes of a router of their own (`callbacks=router.routes` on a route, a router, an
inclusion or the app; `app.webhooks`), compared with FastAPI's schema for the same app;
never served."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

import vireo
from vireo import APIRouter, App
from vireo.testclient import TestClient

fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402


class Invoice(BaseModel):
    id: str
    total: float


class InvoiceEvent(BaseModel):
    description: str
    paid: bool


class InvoiceEventReceived(BaseModel):
    ok: bool


class Receipt(BaseModel):
    number: int


def callbacks_app(mod):
    events = mod.APIRouter()

    @events.post("{$callback_url}/invoices/{$request.body.id}",
                 response_model=InvoiceEventReceived)
    def invoice_notification(body: InvoiceEvent):
        pass

    receipts = mod.APIRouter()

    @receipts.put("{$callback_url}/receipts", responses={404: {"model": Receipt}},
                  callbacks=events.routes)
    def receipt_notification(body: Receipt, attempt: int = 1):
        pass

    app = mod.FastAPI(callbacks=receipts.routes)

    @app.post("/invoices/", callbacks=events.routes)
    def create_invoice(invoice: Invoice, callback_url: str | None = None):
        return {"msg": "Invoice received"}

    billing = mod.APIRouter(prefix="/billing", callbacks=events.routes)

    @billing.get("/status")
    def status():
        return "ok"

    app.include_router(billing, callbacks=receipts.routes)
    return app


def test_callbacks_are_documented_as_fastapi_documents_them():
    theirs = FastAPIClient(callbacks_app(fastapi)).get("/openapi.json").json()
    with TestClient(callbacks_app(vireo)) as client:
        ours = client.get("/openapi.json").json()
    assert ours == theirs
    created = ours["paths"]["/invoices/"]["post"]["callbacks"]
    assert list(created) == ["receipt_notification", "invoice_notification"]
    notified = created["invoice_notification"]["{$callback_url}/invoices/{$request.body.id}"]
    assert notified["post"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/InvoiceEvent"}


def test_callbacks_are_not_served():
    with TestClient(callbacks_app(vireo)) as client:
        res = client.post("/invoices/", json={"id": "a", "total": 1.5})
        assert (res.status_code, res.json()) == (200, {"msg": "Invoice received"})
        assert client.post("/{$callback_url}/invoices/a").status_code == 404


def test_a_callback_router_cannot_be_served_by_an_app():
    events = APIRouter()

    @events.post("{$callback_url}/events")
    def event():
        pass

    with pytest.raises(ValueError, match="a route path starts with '/'"):
        App().include_router(events)


def test_callbacks_are_routes():
    app = App()
    with pytest.raises(TypeError, match="callbacks take the routes of a router"):
        app.post("/x", callbacks=[lambda: None])(lambda: None)
    with pytest.raises(TypeError, match="callbacks take the routes of a router"):
        APIRouter(callbacks=["not a route"])


class Subscription(BaseModel):
    username: str
    monthly_fee: float


def webhooks_app(mod):
    hooks = mod.APIRouter()

    @hooks.put("renewal", tags=["billing"])
    def renewal(body: Subscription, x_signature: str = mod.Header()):
        """Sent when a subscription renews."""

    app = mod.FastAPI(webhooks=hooks)

    @app.webhooks.post("new-subscription", responses={410: {"description": "Gone"}})
    def new_subscription(body: Subscription):
        """Sent when a user subscribes."""

    @app.get("/users/")
    def read_users():
        return ["Rick", "Morty"]

    return app


def test_webhooks_are_documented_as_fastapi_documents_them():
    theirs = FastAPIClient(webhooks_app(fastapi)).get("/openapi.json").json()
    with TestClient(webhooks_app(vireo)) as client:
        ours = client.get("/openapi.json").json()
        assert client.post("/new-subscription").status_code == 404
    assert ours == theirs
    assert set(ours["webhooks"]) == {"renewal", "new-subscription"}


def test_get_openapi_lists_the_webhooks_it_is_given():
    from fastapi.openapi.utils import get_openapi as their_get_openapi

    from vireo.openapi.utils import get_openapi

    def document(mod, get):
        app = webhooks_app(mod)
        return get(title="Hooks", version="1", routes=app.routes, webhooks=app.webhooks.routes)

    assert document(vireo, get_openapi) == document(fastapi, their_get_openapi)


def test_webhooks_take_a_router():
    with pytest.raises(TypeError, match="webhooks takes an APIRouter"):
        App(webhooks=[])
