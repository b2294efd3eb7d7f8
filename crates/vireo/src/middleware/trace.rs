//! A `tracing` span per request.

use super::request_id::RequestId;
use super::{Middleware, Next};
use crate::handler::Reply;
use crate::request::RouteSlot;
use crate::Request;
use std::sync::Arc;
use std::time::Instant;
use tracing::field::Empty;
use tracing::Instrument;

/// Run each request inside a `request` span at `INFO`: `method`, `path`, `route` (the matched
/// template, `/users/:id`), `request_id` (from [`super::request_id`] when it runs first, else
/// the client's `X-Request-Id`), and, once answered, `status` and `latency_us`; an event marks
/// the response. Whatever middleware and handlers log while the request runs is inside the span,
/// so a subscriber (`tracing-subscriber`, an OpenTelemetry layer) attaches it to the request.
///
/// ```
/// let mut app = vireo::App::new();
/// app.r#use(vireo::middleware::request_id());
/// app.r#use(vireo::middleware::trace());
/// app.get("/users/:id", |_req| {
///     tracing::info!("looking the user up"); // logged inside the request's span
///     "a user"
/// });
/// ```
pub fn trace() -> Trace {
    Trace
}

/// See [`trace`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Trace;

impl Middleware for Trace {
    fn call(&self, mut req: Request, next: Next) -> Reply {
        let started = Instant::now();
        let request_id = req
            .get::<RequestId>()
            .map(|id| id.0.clone())
            .or_else(|| req.header("x-request-id").map(str::to_owned));
        let span = tracing::info_span!(
            "request",
            method = %req.method(),
            path = req.original_path(),
            route = Empty,
            request_id = request_id.as_deref(),
            status = Empty,
            latency_us = Empty,
        );
        if span.is_disabled() {
            return next.run(req);
        }
        let slot = Arc::new(RouteSlot::default());
        req.observe_route(slot.clone());
        let reply = span.in_scope(|| next.run(req)).into_state();
        let finish = move |span: &tracing::Span, status: http::StatusCode| {
            if let Some(route) = slot.get() {
                span.record("route", &*route);
            }
            span.record("status", status.as_u16());
            span.record("latency_us", started.elapsed().as_micros() as u64);
            span.in_scope(|| tracing::info!(status = status.as_u16(), "response"));
        };
        match reply {
            Ok(res) => {
                finish(&span, res.status());
                Reply::ready(res)
            }
            Err(later) => Reply::pending(
                async move {
                    let res = later.await;
                    finish(&tracing::Span::current(), res.status());
                    res
                }
                .instrument(span),
            ),
        }
    }
}
