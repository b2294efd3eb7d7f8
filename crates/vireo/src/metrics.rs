//! Prometheus metrics (the `metrics` feature), with `prometheus-client`.
//!
//! ```
//! let metrics = vireo::metrics::Metrics::new();
//! let mut app = vireo::App::new();
//! app.r#use(metrics.middleware());
//! app.get("/metrics", metrics.handler());
//! app.get("/users/:id", |_req| "a user");
//!
//! let client = vireo::TestClient::new(app);
//! client.get("/users/7").send();
//! let text = client.get("/metrics").send().text().to_owned();
//! assert!(text.contains(r#"http_requests_total{method="GET",route="/users/:id",status="200"} 1"#));
//! ```
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `http_requests` (`_total`) | counter | `method`, `route`, `status` |
//! | `http_request_duration_seconds` | histogram | `method`, `route` |
//! | `http_requests_in_flight` | gauge | |
//! | `http_request_body_bytes` (`_total`), `http_response_body_bytes` (`_total`) | counter | |
//! | `vireo_connections_open` | gauge | `worker` |
//!
//! `route` is the matched route's template (`/users/:id`), so a path with an id in it does not
//! make a series per id; requests that match no route are labelled `unmatched`, and methods
//! outside RFC 9110's are labelled `OTHER`. Latency is from the middleware to the response being
//! made, so put the middleware first to time every other one. Body bytes are counted whole when
//! the length is known in advance (`Content-Length`), and otherwise as the bytes are read or
//! sent: a chunked upload as the handler reads it, a streamed response as each chunk is made.
//! Connections are reported when the app is served by a [`Server`](crate::Server)
//! (`App::serve`, `App::spawn`). Register your own metrics with [`Metrics::register`].

use crate::handler::Reply;
use crate::health::Serving;
use crate::middleware::{Middleware, Next};
use crate::request::RouteSlot;
use crate::router::STANDARD_METHODS;
use crate::Request;
use http::{HeaderValue, Method, StatusCode};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Metric, Registry};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;
use vireo_http::{Body, BodyKind, BodyStream, Response};

/// A registry of the app's metrics: record with [`Metrics::middleware`], expose with
/// [`Metrics::handler`]. Clone it freely; clones share the registry.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    duration: Family<RouteLabels, Histogram>,
    in_flight: Gauge,
    body_in: Counter,
    body_out: Counter,
    connections: Family<WorkerLabels, Gauge>,
    /// The route label of requests no route matched.
    unmatched: Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: Arc<str>,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WorkerLabels {
    worker: usize,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A registry with Vireo's HTTP metrics in it.
    pub fn new() -> Self {
        let requests = Family::<RequestLabels, Counter>::default();
        // 0.1 ms to about 13 s.
        let duration = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0001, 2.0, 18))
        });
        let in_flight = Gauge::default();
        let body_in = Counter::default();
        let body_out = Counter::default();
        let connections = Family::<WorkerLabels, Gauge>::default();
        let mut registry = Registry::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "Time from the request reaching the app to its response being made",
            duration.clone(),
        );
        registry.register(
            "http_requests_in_flight",
            "Requests being handled",
            in_flight.clone(),
        );
        registry.register(
            "http_request_body_bytes",
            "Bytes of request bodies with a Content-Length",
            body_in.clone(),
        );
        registry.register(
            "http_response_body_bytes",
            "Bytes of response bodies of a length known before sending",
            body_out.clone(),
        );
        registry.register(
            "vireo_connections_open",
            "Connections open, by worker",
            connections.clone(),
        );
        Metrics(Arc::new(Inner {
            registry: Mutex::new(registry),
            requests,
            duration,
            in_flight,
            body_in,
            body_out,
            connections,
            unmatched: Arc::from("unmatched"),
        }))
    }

    /// Add a metric of your own to the registry, exposed with the others.
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        self.registry().register(name, help, metric);
    }

    /// The middleware that records every request it sees.
    pub fn middleware(&self) -> MetricsMiddleware {
        MetricsMiddleware(self.0.clone())
    }

    /// A handler that answers with every metric in the text format Prometheus scrapes.
    pub fn handler(&self) -> impl Fn(Request) -> Response + Send + Sync + 'static {
        let inner = self.0.clone();
        move |req: Request| {
            if let Ok(serving) = req.state::<Serving>() {
                for (worker, open) in serving.stats.open_connections().into_iter().enumerate() {
                    let open = i64::try_from(open).unwrap_or(i64::MAX);
                    inner
                        .connections
                        .get_or_create(&WorkerLabels { worker })
                        .set(open);
                }
            }
            let mut text = String::new();
            let encoded =
                prometheus_client::encoding::text::encode(&mut text, &Inner::registry(&inner));
            if encoded.is_err() {
                return Response::new(StatusCode::INTERNAL_SERVER_ERROR, "metrics did not encode");
            }
            let mut res = Response::new(StatusCode::OK, text);
            res.headers_mut().insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            res
        }
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        Inner::registry(&self.0)
    }
}

impl Inner {
    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        // A panic while the lock was held left nothing half-written that encoding relies on.
        self.registry
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Records requests into [`Metrics`]: made by [`Metrics::middleware`].
#[derive(Clone)]
pub struct MetricsMiddleware(Arc<Inner>);

impl std::fmt::Debug for MetricsMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsMiddleware").finish_non_exhaustive()
    }
}

/// Takes a request off the in-flight gauge when its handling ends: answered, cancelled, or
/// unwound by a panic.
struct InFlight<I: std::ops::Deref<Target = Inner>>(I);

impl<I: std::ops::Deref<Target = Inner>> Drop for InFlight<I> {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

thread_local! {
    /// A route slot no request holds any more, for the next request on this thread.
    static SPARE_SLOT: RefCell<Option<Arc<RouteSlot>>> = const { RefCell::new(None) };
}

/// An empty route slot: this thread's spare if nothing else holds it, else a new one.
fn take_slot() -> Arc<RouteSlot> {
    let spare = SPARE_SLOT.with(|spare| spare.borrow_mut().take());
    match spare {
        Some(mut slot) => match Arc::get_mut(&mut slot) {
            Some(unique) => {
                unique.clear();
                slot
            }
            None => Arc::new(RouteSlot::default()),
        },
        None => Arc::new(RouteSlot::default()),
    }
}

/// Keep `slot` as this thread's spare.
fn give_back_slot(slot: Arc<RouteSlot>) {
    SPARE_SLOT.with(|spare| *spare.borrow_mut() = Some(slot));
}

impl Middleware for MetricsMiddleware {
    fn call(&self, mut req: Request, next: Next) -> Reply {
        let started = Instant::now();
        let slot = take_slot();
        req.observe_route(slot.clone());
        let method = method_label(req.method());
        match req.head().body_kind() {
            BodyKind::Empty => {}
            BodyKind::Length(len) => {
                self.0.body_in.inc_by(len);
            }
            BodyKind::Chunked => {
                let body_in = self.0.body_in.clone();
                req.observe_body(Arc::new(move |len| {
                    body_in.inc_by(len);
                }));
            }
        }
        self.0.in_flight.inc();
        let in_flight = InFlight(&*self.0);
        let reply = next.run(req).into_state();
        std::mem::forget(in_flight);
        match reply {
            // A response made at once is recorded at once, without a future around it.
            Ok(mut res) => {
                let _done = InFlight(&*self.0);
                record(&self.0, &slot, method, started, &mut res);
                give_back_slot(slot);
                Reply::ready(res)
            }
            Err(later) => {
                let in_flight = InFlight(self.0.clone());
                Reply::pending(async move {
                    let mut res = later.await;
                    record(&in_flight.0, &slot, method, started, &mut res);
                    res
                })
            }
        }
    }
}

/// Count a request answered with `res`; a streamed body is counted as it is sent.
fn record(
    inner: &Arc<Inner>,
    slot: &RouteSlot,
    method: &'static str,
    started: Instant,
    res: &mut Response,
) {
    let route = slot.get();
    let route = route.as_ref().unwrap_or(&inner.unmatched);
    let status = res.status().as_u16();
    with_series(inner, route, method, status, |series| {
        series.requests.inc();
        series.duration.observe(started.elapsed().as_secs_f64());
    });
    if let Some(len) = res.body().len() {
        inner.body_out.inc_by(len);
        return;
    }
    let counted = match res.take_body() {
        Body::Stream(stream) => Body::Stream(counted(stream, &inner.body_out)),
        Body::StreamWithTrailers(mut trailed) => {
            trailed.stream = counted(trailed.stream, &inner.body_out);
            Body::StreamWithTrailers(trailed)
        }
        other => other,
    };
    res.set_body(counted);
}

/// `stream`, adding the size of each chunk to `counter` as it is made.
fn counted(stream: BodyStream, counter: &Counter) -> BodyStream {
    Box::pin(CountedStream {
        stream,
        counter: counter.clone(),
    })
}

struct CountedStream {
    stream: BodyStream,
    counter: Counter,
}

impl futures_core::Stream for CountedStream {
    type Item = Result<bytes::Bytes, vireo_http::BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.stream.as_mut().poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            self.counter.inc_by(chunk.len() as u64);
        }
        polled
    }
}

/// The handles on one series of each per-request metric, kept per thread so that recording a
/// request looks them up without a lock or a hash of its label strings.
struct Series {
    requests: Counter,
    duration: Histogram,
    /// Keep the registry and the route alive, so the addresses in the key stay theirs.
    _owners: (Arc<Inner>, Arc<str>),
}

/// A series by the addresses of its registry, route template and method label, and its status.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct SeriesKey {
    registry: usize,
    route: usize,
    method: usize,
    status: u16,
}

thread_local! {
    static SERIES: RefCell<HashMap<SeriesKey, Series, BuildHasherDefault<AddressHasher>>> =
        RefCell::new(HashMap::default());
}

/// Run `record` on this thread's handles on the series of these labels, made on first use.
fn with_series(
    inner: &Arc<Inner>,
    route: &Arc<str>,
    method: &'static str,
    status: u16,
    record: impl FnOnce(&Series),
) {
    let key = SeriesKey {
        registry: Arc::as_ptr(inner) as usize,
        route: Arc::as_ptr(route).cast::<u8>() as usize,
        method: method.as_ptr() as usize,
        status,
    };
    SERIES.with(|series| {
        let mut series = series.borrow_mut();
        let entry = series.entry(key).or_insert_with(|| Series {
            requests: inner
                .requests
                .get_or_create(&RequestLabels {
                    method,
                    route: route.clone(),
                    status,
                })
                .clone(),
            duration: inner
                .duration
                .get_or_create(&RouteLabels {
                    method,
                    route: route.clone(),
                })
                .clone(),
            _owners: (inner.clone(), route.clone()),
        });
        record(entry);
    });
}

/// A hasher for keys made of addresses and small numbers (FxHash's mixing): the default one
/// defends against keys chosen by an attacker, which these are not.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn write_u16(&mut self, word: u16) {
        self.write_u64(u64::from(word));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The method as a label: one of RFC 9110's, or `OTHER`, so a client cannot make series.
fn method_label(method: &Method) -> &'static str {
    STANDARD_METHODS
        .iter()
        .find(|m| *m == method)
        .map_or("OTHER", Method::as_str)
}
