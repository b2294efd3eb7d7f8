//! From the engine's request to the handler and back: route, read the body, convert the
//! parameters, call the handler the way its route was planned, render what it returned.

use crate::app::AppInner;
use crate::args::invoke;
use crate::asgi_service;
use crate::asgi_ws;
use crate::convert::convert;
use crate::coroutine::{self, Started};
use crate::errors::{self, error_response, CallError};
use crate::event_loop::{self, LoopState};
use crate::file_range::{AskRange, RangeAsk, NO_RANGE};
use crate::middleware::Rendered;
use crate::mounts::{mount_for, Mounted, Target};
use crate::plan::{CallKind, Route};
use crate::render::render;
use crate::request::{Parts, Request};
use crate::router::Lookup;
use crate::stream::Pull;
use crate::thread_state;
use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use pyo3::prelude::*;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::oneshot;
use vireo_http::tls::TlsSession;
use vireo_http::{Body, BodyError, BodyKind, ContentType, Head, Response, Service};

/// The app as the engine's service.
pub(crate) struct PyService(pub Arc<AppInner>);

impl Service for PyService {
    async fn call(&self, req: vireo_http::Request<'_>) -> Response {
        serve(&self.0, req).await
    }

    /// Once the connections are closed: WebSocket handlers, handlers whose client left, and
    /// responses' background tasks still running get to end.
    async fn drained(&self) {
        drain(&self.0).await;
    }
}

/// The app's answer to a request from a connection.
async fn serve(app: &Arc<AppInner>, mut req: vireo_http::Request<'_>) -> Response {
    if let Some(root) = &app.routed_root {
        strip_root(req.head_mut(), root);
    }
    // The body is read under the limit of the route it goes to, or the app's.
    if !matches!(req.head().body_kind(), BodyKind::Empty) {
        let head = req.head();
        if let Some(limit) = app.body_limit(head.method(), head.path()) {
            req.body().set_limit(limit);
        }
    }
    if let Some(mount) = mount_for(app, req.head()) {
        // Behind the app's middleware and exception handlers, a mounted app is answered as a
        // route is, its body read first; otherwise the body streams to it as it asks.
        if app.middleware.is_none() || asgi_ws::is_websocket(req.head()) {
            return match &mount.target {
                Target::Asgi(config) => {
                    let running = Arc::new(config.running.start().0);
                    asgi_service::serve(config, req, &running).await
                }
                Target::App(mounted) => {
                    req.head_mut().strip_path_prefix(&mount.prefix);
                    Box::pin(serve(mounted, req)).await
                }
            };
        }
        let mounted = mount.behind_middleware(req.tls());
        let (peer, secure) = (req.remote_addr().copied(), req.is_secure());
        let (head, mut body) = req.into_parts();
        return match body.to_bytes().await {
            Ok(body) => to_mount(app, mounted, head, body, peer, secure).await,
            Err(e) => Response::typed(e.status(), e.to_string(), ContentType::Text),
        };
    }
    if let Some(websockets) = &app.websockets {
        if asgi_ws::is_websocket(req.head()) {
            let running = Arc::new(websockets.running.start().0);
            return asgi_ws::serve(websockets, req, &running).await;
        }
    }
    let peer = req.remote_addr().copied();
    let secure = req.is_secure();
    let (head, mut body) = req.into_parts();
    let body = if matches!(head.body_kind(), BodyKind::Empty) {
        Bytes::new()
    } else {
        match body.to_bytes().await {
            Ok(bytes) => bytes,
            Err(e) => return Response::typed(e.status(), e.to_string(), ContentType::Text),
        }
    };
    handle(app, head, body, peer, secure).await
}

/// The app's answer to a request whose body has been read: by a mounted app if one takes it
/// (through the app's middleware), otherwise by a route.
pub(crate) async fn answer_read(
    app: &Arc<AppInner>,
    mut head: Head,
    body: Bytes,
    peer: Option<std::net::SocketAddr>,
    secure: bool,
    tls: Option<&Arc<TlsSession>>,
) -> Response {
    if let Some(root) = &app.routed_root {
        strip_root(&mut head, root);
    }
    let Some(mount) = mount_for(app, &head) else {
        return handle(app, head, body, peer, secure).await;
    };
    match (&mount.target, &app.middleware) {
        (Target::App(mounted), None) => {
            head.strip_path_prefix(&mount.prefix);
            Box::pin(answer_read(mounted, head, body, peer, secure, tls)).await
        }
        _ => to_mount(app, mount.behind_middleware(tls), head, body, peer, secure).await,
    }
}

/// `/api/items` routed as `/items` in an app whose `root_path` is `/api`; the root path alone
/// is left as it is (Starlette routes it as the empty path, which no route matches).
fn strip_root(head: &mut Head, root: &str) {
    if head.path_bytes().len() > root.len() {
        head.strip_path_prefix(root);
    }
}

/// Wait for what the app (and the Vireo apps mounted in it) still runs once its connections
/// are closed.
async fn drain(app: &Arc<AppInner>) {
    if let Some(websockets) = &app.websockets {
        websockets.running.all_ended().await;
    }
    for mount in &app.mounts {
        match &mount.target {
            Target::Asgi(config) => config.running.all_ended().await,
            Target::App(mounted) => Box::pin(drain(mounted)).await,
        }
    }
    app.orphans.all_ended().await;
    while Python::attach(|py| background_pending(py, app)) {
        tokio::time::sleep(BACKGROUND_POLL).await;
    }
}

/// How often a graceful shutdown looks again for background tasks still running.
const BACKGROUND_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Whether a response's background task is still running (`Runner.pending()`).
fn background_pending(py: Python<'_>, app: &AppInner) -> bool {
    match app
        .refs
        .run_background
        .call_method0(py, pyo3::intern!(py, "pending"))
    {
        Ok(pending) => pending.is_truthy(py).unwrap_or(false),
        Err(e) => {
            e.print(py);
            false
        }
    }
}

/// This thread's loop, bound on the first request the thread serves.
fn loop_for_thread(app: &AppInner) -> Result<Rc<LoopState>, Response> {
    if let Some(state) = event_loop::current() {
        return Ok(state);
    }
    thread_state::keep();
    event_loop::install(&app.refs)
        .map_err(|e| Python::attach(|py| errors::log_and_500(py, e, app, "binding the event loop")))
}

/// Marks the request's client as gone if the answer is dropped before it is made (the engine
/// drops it when the client leaves), for `request.is_disconnected()`.
struct MarkGone(Option<Arc<AtomicBool>>);

impl Drop for MarkGone {
    fn drop(&mut self) {
        if let Some(gone) = self.0.take() {
            gone.store(true, Ordering::Relaxed);
        }
    }
}

/// Answer one request whose body has been read.
pub(crate) async fn handle(
    app: &Arc<AppInner>,
    head: Head,
    body: Bytes,
    peer: Option<std::net::SocketAddr>,
    secure: bool,
) -> Response {
    let (route, path_values) = match app.router.find(head.method(), head.path()) {
        Lookup::Route(route, values) => (route.clone(), values),
        _ if too_large(&body, app.max_body_size) => return body_too_large(app.max_body_size),
        Lookup::NotFound => {
            if let Some(redirect) = app
                .redirect_slashes
                .then(|| slash_redirect(app, &head, secure))
                .flatten()
            {
                return redirect;
            }
            let low = app.low_priority.as_ref();
            match (
                low.map(|low| low.find(head.method(), head.path())),
                &app.fallback,
            ) {
                (Some(Lookup::Route(route, values)), _) => (route.clone(), values),
                // Through the middleware, when there is some, as Starlette's router answers.
                (_, Some((not_found, _))) => (not_found.clone(), Vec::new()),
                (_, None) => return errors::not_found(),
            }
        }
        Lookup::MethodNotAllowed(allow) => match (&app.fallback, allow.to_str()) {
            (Some((_, not_allowed)), Ok(allow)) => (not_allowed.clone(), vec![allow.to_owned()]),
            _ => return errors::method_not_allowed(allow),
        },
    };
    // A body read whole before the app was known (by the test client, or an ASGI server)
    // is held to the route's limit here; one from a connection was read under it.
    let limit = route.max_body_size.or(app.max_body_size);
    if too_large(&body, limit) {
        return body_too_large(limit);
    }
    let state = match loop_for_thread(app) {
        Ok(state) => state,
        Err(res) => return res,
    };
    // Only an answer that can wait (middleware, an async handler) can be left unfinished.
    let can_wait = app.middleware.is_some() || matches!(route.kind, CallKind::Async);
    let gone = can_wait.then(|| Arc::new(AtomicBool::new(false)));
    let mut mark = MarkGone(gone.clone());
    let parts = Parts {
        head,
        body,
        path_values,
        peer,
        secure,
        gone,
    };
    let response = answer(app, &state, route, parts).await;
    mark.0 = None;
    response
}

/// Whether `body` is longer than `limit`.
fn too_large(body: &Bytes, limit: Option<u64>) -> bool {
    limit.is_some_and(|limit| body.len() as u64 > limit)
}

/// The 413 for a body longer than `limit`, as the engine answers one it reads.
fn body_too_large(limit: Option<u64>) -> Response {
    let error = BodyError::TooLarge {
        limit: limit.unwrap_or(0),
    };
    Response::typed(error.status(), error.to_string(), ContentType::Text)
}

/// Answer a request whose body has been read with the mounted app, through the app's
/// middleware and exception handlers when it has some.
pub(crate) async fn to_mount(
    app: &Arc<AppInner>,
    mounted: Mounted,
    head: Head,
    body: Bytes,
    peer: Option<std::net::SocketAddr>,
    secure: bool,
) -> Response {
    let gone = Arc::new(AtomicBool::new(false));
    let parts = Parts {
        head,
        body,
        path_values: Vec::new(),
        peer,
        secure,
        gone: Some(gone.clone()),
    };
    // A request under middleware runs the 404 route if no mount takes it; here one does.
    let (Some(chain), Some((route, _))) = (&app.middleware, &app.fallback) else {
        return mounted.serve(&parts).await;
    };
    let state = match loop_for_thread(app) {
        Ok(state) => state,
        Err(res) => return res,
    };
    let mut mark = MarkGone(Some(gone));
    let request = |parts| Request::to_mount(parts, route.clone(), app.clone(), Some(mounted));
    let response = through_middleware(app, &state, chain, parts, request).await;
    mark.0 = None;
    response
}

/// For a path no route matches: a `307` to the same path with its trailing slash added or
/// removed, if a route matches that (whatever its methods), as Starlette's router answers.
/// Rare enough that the app's `root_path` is read from Python each time.
fn slash_redirect(app: &AppInner, head: &Head, secure: bool) -> Option<Response> {
    let path = head.path();
    if path == "/" {
        return None;
    }
    let other = match path.strip_suffix('/') {
        Some(trimmed) => trimmed.to_owned(),
        None => format!("{path}/"),
    };
    if matches!(app.router.find(head.method(), &other), Lookup::NotFound) {
        return None;
    }
    let query = head.query().map(|q| format!("?{q}")).unwrap_or_default();
    // The URL the client knows: with the app's `root_path` (a mount's prefix, or what a proxy
    // in front strips), as `request.url` has it.
    let root: String = Python::attach(|py| {
        let root = app.app.bind(py).getattr(pyo3::intern!(py, "root_path"));
        root.and_then(|root| root.extract()).unwrap_or_default()
    });
    let other = root + &other;
    let location = match head.header("host") {
        Some(host) => format!(
            "{}://{}{other}{query}",
            crate::request::scheme(secure),
            String::from_utf8_lossy(host)
        ),
        None => format!("{other}{query}"),
    };
    let mut res = Response::new(StatusCode::TEMPORARY_REDIRECT, Body::Empty);
    res.headers_mut().insert(
        http::header::LOCATION,
        HeaderValue::try_from(location).ok()?,
    );
    Some(res)
}

/// The response of the route's middleware and handler.
async fn answer(
    app: &Arc<AppInner>,
    state: &Rc<LoopState>,
    route: Arc<Route>,
    parts: Parts,
) -> Response {
    if let Some(chain) = &app.middleware {
        let request = |parts| Request::new(parts, route, app.clone());
        return through_middleware(app, state, chain, parts, request).await;
    }
    match route.kind {
        CallKind::Sync => Python::attach(|py| {
            let (res, left) = match app.refs.copy_context.bind(py).call0() {
                Ok(context) => call(py, app, &route, parts, Some(&context)),
                Err(e) => (Err(e.into()), Leftover::Parts(parts)),
            };
            let res = respond(py, res, app, route.status, Pull::Worker, &|| left.range());
            state.kick(py);
            res
        }),
        CallKind::Async => {
            // What the request asks of a `FileResponse`, read now if the handler suspends.
            let mut later = None;
            let step = Python::attach(|py| {
                let context = app.refs.copy_context.bind(py).call0()?;
                let (called, left) = call(py, app, &route, parts, Some(&context));
                let range = || left.range();
                let status = route.status;
                let out = match called {
                    Ok(coro) => match coroutine::start(&coro, state, Some(&context)) {
                        Ok(Started::Done(value)) => {
                            Step::Ready(respond(py, Ok(value), app, status, Pull::Worker, &range))
                        }
                        Ok(Started::Pending(rx, completion)) => {
                            let app = app.clone();
                            let orphan = app.orphans.start().0;
                            completion.get().when_orphaned(Box::new(move |py, outcome| {
                                let _orphan = orphan;
                                let outcome = outcome.map(|v| v.into_bound(py)).map_err(Into::into);
                                // The client is gone: made only for its background tasks.
                                drop(respond(py, outcome, &app, status, Pull::Worker, NO_RANGE));
                            }));
                            later = range();
                            Step::Wait(rx)
                        }
                        Err(e) => {
                            let e = Err(e.into());
                            Step::Ready(respond(py, e, app, status, Pull::Worker, &range))
                        }
                    },
                    Err(e) => Step::Ready(respond(py, Err(e), app, status, Pull::Worker, &range)),
                };
                state.kick(py);
                Ok(out)
            });
            finish(step, app, route.status, &|| later.clone()).await
        }
        CallKind::Blocking => {
            let app = app.clone();
            vireo_http::spawn_blocking(move || {
                // A blocking-pool thread starts each call with a fresh context of its own.
                Python::attach(|py| {
                    let (res, left) = call(py, &app, &route, parts, None);
                    respond(py, res, &app, route.status, Pull::Pool, &|| left.range())
                })
            })
            .await
        }
    }
}

/// The response of the app's middleware to the request `make_request` makes of `parts`.
async fn through_middleware(
    app: &Arc<AppInner>,
    state: &Rc<LoopState>,
    chain: &(Py<PyAny>, Py<PyAny>),
    parts: Parts,
    make_request: impl FnOnce(Parts) -> Request,
) -> Response {
    let mut kept_request = None;
    let step = Python::attach(|py| {
        let request = Py::new(py, make_request(parts))?;
        let coro = chain
            .0
            .bind(py)
            .call1((request.clone_ref(py), chain.1.bind(py)))?;
        let context = app.refs.copy_context.bind(py).call0()?;
        let started = coroutine::start(&coro, state, Some(&context));
        state.kick(py);
        Ok(match started? {
            Started::Done(value) => Step::Ready(final_response(py, value, app, Some(&request))),
            Started::Pending(rx, completion) => {
                let (app, orphan) = (app.clone(), app.orphans.start().0);
                completion.get().when_orphaned(Box::new(move |py, outcome| {
                    let _orphan = orphan;
                    drop(match outcome {
                        Ok(value) => final_response(py, value.into_bound(py), &app, None),
                        Err(e) => error_response(py, e, &app),
                    })
                }));
                kept_request = Some(request);
                Step::Wait(rx)
            }
        })
    });
    match step {
        Ok(Step::Wait(rx)) => {
            let outcome = coroutine::finish(rx).await;
            Python::attach(|py| match outcome {
                Ok(value) => final_response(py, value.into_bound(py), app, kept_request.as_ref()),
                Err(e) => error_response(py, e, app),
            })
        }
        other => finish(other, app, http::StatusCode::OK, NO_RANGE).await,
    }
}

/// A coroutine's first step: answered, or waiting on the loop. A request dropped while it
/// waits (its client left) still has its outcome rendered when it comes, so the response's
/// background tasks run and an exception is logged, as under an ASGI server.
enum Step {
    Ready(Response),
    Wait(oneshot::Receiver<coroutine::Outcome>),
}

async fn finish(
    step: PyResult<Step>,
    app: &Arc<AppInner>,
    status: http::StatusCode,
    range: AskRange<'_>,
) -> Response {
    match step {
        Ok(Step::Ready(res)) => res,
        Ok(Step::Wait(rx)) => {
            let outcome = coroutine::finish(rx).await;
            Python::attach(|py| {
                respond(
                    py,
                    outcome.map(|v| v.into_bound(py)).map_err(Into::into),
                    app,
                    status,
                    // Only an `async def` handler's first step waits.
                    Pull::Worker,
                    range,
                )
            })
        }
        Err(e) => Python::attach(|py| error_response(py, e, app)),
    }
}

/// What the outermost middleware returned: `call_next`'s response, or one of its own (a
/// `FileResponse` of its own narrowed to what the request asks).
fn final_response(
    py: Python<'_>,
    value: Bound<'_, PyAny>,
    app: &Arc<AppInner>,
    request: Option<&Py<Request>>,
) -> Response {
    let res = match value.cast::<Rendered>() {
        Ok(rendered) => rendered.get().take(py),
        Err(_) => {
            let range = || request.and_then(|r| RangeAsk::of(&r.bind(py).get().parts.head));
            render(&value, http::StatusCode::OK, Pull::Worker, app, &range)
        }
    };
    res.unwrap_or_else(|e| error_response(py, e, app))
}

/// Convert the route's parameters and call its handler; what is left of the request is
/// returned beside the outcome.
fn call<'py>(
    py: Python<'py>,
    app: &Arc<AppInner>,
    route: &Arc<Route>,
    parts: Parts,
    context: Option<&Bound<'py, PyAny>>,
) -> (Result<Bound<'py, PyAny>, CallError>, Leftover<'py>) {
    let converted = convert(&route.params, &*parts.head, &parts.path_values);
    let body = parts.body.clone();
    let mut parts = Some(parts);
    let mut taken = None;
    let mut make_request = |py: Python<'py>| -> PyResult<Bound<'py, PyAny>> {
        let parts = parts.take().ok_or_else(|| {
            pyo3::exceptions::PyTypeError::new_err("a handler takes at most one Request")
        })?;
        let request = Bound::new(py, Request::new(parts, route.clone(), app.clone()))?;
        taken = Some(request.clone());
        Ok(request.into_any())
    };
    let outcome = invoke(py, app, route, converted, &body, &mut make_request, context);
    let left = match (parts, taken) {
        (Some(parts), _) => Leftover::Parts(parts),
        (None, Some(request)) => Leftover::Request(request),
        (None, None) => Leftover::Gone,
    };
    (outcome, left)
}

/// What a handler's call leaves of the request: its parts, or the `Request` they went into.
enum Leftover<'py> {
    Parts(Parts),
    Request(Bound<'py, Request>),
    Gone,
}

impl Leftover<'_> {
    /// What the request asks of a `FileResponse`.
    fn range(&self) -> Option<RangeAsk> {
        match self {
            Leftover::Parts(parts) => RangeAsk::of(&parts.head),
            Leftover::Request(request) => RangeAsk::of(&request.get().parts.head),
            Leftover::Gone => None,
        }
    }
}

/// The response for a handler's outcome.
fn respond(
    py: Python<'_>,
    outcome: Result<Bound<'_, PyAny>, CallError>,
    app: &Arc<AppInner>,
    status: http::StatusCode,
    pull: Pull,
    range: AskRange<'_>,
) -> Response {
    match outcome {
        Ok(value) => {
            render(&value, status, pull, app, range).unwrap_or_else(|e| error_response(py, e, app))
        }
        Err(CallError::Invalid(body)) => Response::typed(
            http::StatusCode::UNPROCESSABLE_ENTITY,
            body,
            ContentType::Json,
        ),
        Err(CallError::Raised(e)) => error_response(py, e, app),
    }
}
