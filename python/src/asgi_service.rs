//! An ASGI 3 application as the engine's service: the app runs on the worker's persistent
//! loop, started inline; the service reads the body as the app asks for it and answers once
//! the app has sent its response head and the first of its body (or the whole body), or the
//! head alone when the loop runs out of work before the body comes.

use crate::asgi_body::AsgiBody;
use crate::asgi_channel::{set_fields, Exchange, Inner, Phase, Receive, Send};
use crate::asgi_config::AppConfig;
use crate::asgi_file::FileStream;
use crate::asgi_scope::{http_scope, origin};
use crate::asgi_ws;
use crate::coroutine::{self, Completion, Outcome};
use crate::event_loop::{self, LoopState};
use crate::running::Running;
use crate::thread_state;
use bytes::{Bytes, BytesMut};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::oneshot;
use vireo_http::http::{header, HeaderValue, Method, StatusCode};
use vireo_http::{
    Body, BodyError, BodyKind, ContentType, Head, RequestBody, Response, TrailedStream,
    TrailersFuture,
};

/// This thread's loop, bound on the first request the thread serves.
pub(crate) fn loop_for_thread(config: &AppConfig) -> Result<Rc<LoopState>, Response> {
    if let Some(state) = event_loop::current() {
        return Ok(state);
    }
    thread_state::keep();
    let refs = Python::attach(|py| config.loop_refs(py));
    event_loop::install_with(refs).map_err(|e| {
        Python::attach(|py| config.log(py, "binding the event loop", Some(e)));
        server_error()
    })
}

/// The 500 sent when the app fails before its response starts.
pub(crate) fn server_error() -> Response {
    let mut res = Response::typed(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal Server Error",
        ContentType::Text,
    );
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

/// Gives `receive` a disconnect if the service is dropped (or ends) without handing the
/// response to a stream.
struct Guard(Option<Arc<Exchange>>);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(ex) = self.0.take() {
            Python::attach(|py| ex.finish(py));
        }
    }
}

/// The request body an app reads: still on the connection, or already read (in the test
/// client).
pub(crate) enum BodySource<'a> {
    Wire(RequestBody<'a>),
    Read(Option<Bytes>),
}

impl BodySource<'_> {
    async fn chunk(&mut self) -> Result<Option<Bytes>, BodyError> {
        match self {
            BodySource::Wire(body) => body.chunk().await,
            BodySource::Read(bytes) => Ok(bytes.take().filter(|b| !b.is_empty())),
        }
    }
}

/// Answer one request with the ASGI app.
pub(crate) async fn serve(
    config: &Arc<AppConfig>,
    req: vireo_http::Request<'_>,
    running: &Arc<Running>,
) -> Response {
    if config.ws.is_some() && asgi_ws::is_websocket(req.head()) {
        return asgi_ws::serve(config, req, running).await;
    }
    let peer = req.remote_addr().copied();
    let tls = req.tls();
    let (head, body) = req.into_parts();
    serve_parts(
        config,
        &head,
        BodySource::Wire(body),
        peer,
        tls,
        running,
        None,
    )
    .await
}

/// Answer a request, given in parts, with the ASGI app; `scope_entry` is one more key of its
/// scope.
pub(crate) async fn serve_parts(
    config: &Arc<AppConfig>,
    head: &Head,
    body: BodySource<'_>,
    peer: Option<std::net::SocketAddr>,
    tls: Option<&Arc<vireo_http::tls::TlsSession>>,
    running: &Arc<Running>,
    scope_entry: Option<(&str, Py<PyAny>)>,
) -> Response {
    let state = match loop_for_thread(config) {
        Ok(state) => state,
        Err(res) => return res,
    };
    let is_head = head.method() == Method::HEAD;
    let ex = Exchange::new(matches!(head.body_kind(), BodyKind::Empty));
    // The app runs as an asyncio task of its own, as under other servers: libraries such as
    // anyio tie cancel scopes to the task they were entered in.
    let started = Python::attach(|py| {
        let origin = origin(head, peer, tls, config);
        let scope = http_scope(py, head, &origin, config)?;
        if let Some((key, value)) = scope_entry {
            scope.set_item(key, value)?;
        }
        let receive = Py::new(py, Receive(ex.clone()))?.into_any();
        let send = Py::new(py, Send(ex.clone()))?.into_any();
        let mut rx = start_app(py, config, &state, scope, receive, send, running.clone())?;
        // An app that answered in its first step (most do) is answered under this same hold of
        // the GIL, when none of the body it began to read is left to read.
        if response_ready(&ex, false) && !ex.lock().rest_to_read() {
            if let Ok(outcome) = rx.try_recv() {
                let guard = Guard(Some(ex.clone()));
                let res = finished(py, config, &ex, outcome.map(drop), is_head, guard);
                return Ok(Started::Answered(res));
            }
        }
        Ok(Started::Running(rx))
    });
    let (mut app_done, mut rx) = match started {
        Ok(Started::Answered(res)) => return res,
        Ok(Started::Running(rx)) => (None, Some(rx)),
        Err(e) => (Some(Err(e)), None),
    };
    let guard = Guard(Some(ex.clone()));
    let mut pump = pin!(pump(body, &ex));
    let mut pump_done = false;
    let mut head_seen_at: Option<u64> = None;
    let mut head_alone = false;
    while app_done.is_none() && !response_ready(&ex, head_alone) {
        let head_only = head_only(&ex);
        if head_only && head_seen_at.is_none() {
            head_seen_at = Some(state.turns.get());
            // Make sure the loop takes a turn even if nothing else woke it.
            state.wake.notify_one();
        }
        tokio::select! {
            outcome = async {
                match rx.as_mut() {
                    Some(rx) => rx.await,
                    None => std::future::pending().await,
                }
            } => {
                app_done = Some(outcome.unwrap_or_else(|_| Err(ended())));
            }
            _ = ex.wake.notified() => {}
            _ = state.turned.notified(), if head_only => {
                let turns = state.turns.get() - head_seen_at.unwrap_or(0);
                head_alone = state.idle.get() || turns >= HEAD_WAITS_TURNS;
            }
            result = &mut pump, if !pump_done => {
                pump_done = true;
                if let Err(e) = result {
                    // The body could not be read: the client is gone or broke a limit.
                    Python::attach(|py| body_failed(py, &ex, &e));
                    // Nothing has gone to the client yet, even if the app has started its
                    // response: the limit's own answer (413, 400) goes instead.
                    return Response::typed(e.status(), e.to_string(), ContentType::Text);
                }
            }
        }
    }
    // The app may have finished in the same step that started the response.
    if app_done.is_none() {
        if let Some(outcome) = rx.as_mut().and_then(|rx| rx.try_recv().ok()) {
            app_done = Some(outcome);
        }
    }
    // The rest of the body is read now, or never: the engine reads a request's body only until
    // its response is given. An app still running (streaming its response) may yet ask for it,
    // so it is kept; for one that is done and had begun reading, it is read and thrown away so
    // the connection stays usable.
    let read_rest = {
        let inner = ex.lock();
        if app_done.is_none() {
            !inner.body_done && !inner.disconnected
        } else {
            inner.rest_to_read()
        }
    };
    if read_rest && !pump_done {
        {
            let mut inner = ex.lock();
            inner.draining = true;
            inner.discard = app_done.is_some();
        }
        ex.want.notify_one();
        if let Err(e) = pump.as_mut().await {
            Python::attach(|py| body_failed(py, &ex, &e));
        }
    }
    if let Some(result) = app_done {
        // The app's return value is let go here, with the GIL held, rather than queued for later.
        return Python::attach(|py| finished(py, config, &ex, result.map(drop), is_head, guard));
    }
    // The app goes on sending on the loop; its outcome is logged when it comes.
    if let Some(rx) = rx {
        let (config, ex) = (config.clone(), ex.clone());
        tokio::task::spawn_local(async move {
            let outcome = coroutine::finish(rx).await;
            Python::attach(|py| after_start(py, &config, &ex, outcome.map(drop)));
        });
    }
    respond(&ex, is_head, guard)
}

/// How the app's first step left the request.
enum Started {
    /// Answered in full, the app done.
    Answered(Response),
    /// Still running: the receiver gets its outcome.
    Running(oneshot::Receiver<Outcome>),
}

/// Start `app(scope, receive, send)` as a task of its own on the worker's loop; the receiver
/// gets its outcome.
pub(crate) fn start_app(
    py: Python<'_>,
    config: &Arc<AppConfig>,
    state: &LoopState,
    scope: Bound<'_, PyDict>,
    receive: Py<PyAny>,
    send: Py<PyAny>,
    running: Arc<Running>,
) -> PyResult<oneshot::Receiver<Outcome>> {
    let (completion, rx) = Completion::channel(py)?;
    let call_args = (scope, receive, send).into_pyobject(py)?;
    let app = config.app.clone_ref(py);
    let task = config
        .starter
        .start(py, app, call_args, completion.clone().unbind())?;
    completion.get().hold(task.unbind());
    // Once nothing waits for the outcome (the client left, or a limit was answered), an
    // exception the app still raises is logged, as one raised while answering is. The
    // completion drops this closure when the task ends, and with it the task's hold on the
    // call's count as running.
    let config = config.clone();
    completion.get().when_orphaned(Box::new(move |py, outcome| {
        let _running = running;
        if let Err(e) = outcome {
            config.log(py, "Exception in ASGI application", Some(e));
        }
    }));
    state.kick(py);
    Ok(rx)
}

/// Loop iterations a response head waits for the first of its body before it is sent alone.
const HEAD_WAITS_TURNS: u64 = 8;

/// Whether the app has sent enough to answer: the head with the first of the body, or the
/// head alone once the loop has run out of work (the app waits for something outside it) or
/// taken [`HEAD_WAITS_TURNS`] turns, so that a head whose body follows at once is not sent in
/// a write of its own.
fn response_ready(ex: &Exchange, head_alone: bool) -> bool {
    let inner = ex.lock();
    match inner.phase {
        Phase::Waiting => false,
        Phase::Complete => true,
        Phase::Started => {
            head_alone || !inner.out.is_empty() || inner.file.is_some() || inner.failed.is_some()
        }
    }
}

/// The app has sent its head and nothing of its body yet.
fn head_only(ex: &Exchange) -> bool {
    let inner = ex.lock();
    matches!(inner.phase, Phase::Started) && inner.out.is_empty() && inner.file.is_none()
}

/// Read body chunks when `receive` waits for one (or all, when draining).
async fn pump(mut body: BodySource<'_>, ex: &Exchange) -> Result<(), BodyError> {
    loop {
        loop {
            let wanted = ex.wants_body() || {
                let inner = ex.lock();
                inner.draining && !inner.body_done
            };
            if wanted {
                break;
            }
            if ex.lock().body_done {
                return Ok(());
            }
            ex.want.notified().await;
        }
        let chunk = body.chunk().await?;
        if chunk.is_some() && ex.lock().discard {
            continue;
        }
        Python::attach(|py| ex.push_body(py, chunk));
    }
}

/// The request body could not be read: `receive` says `http.disconnect`. Only a client that
/// went away (not one that broke a limit or the framing) excuses an unfinished response.
fn body_failed(py: Python<'_>, ex: &Exchange, error: &BodyError) {
    match error {
        BodyError::Incomplete | BodyError::TimedOut | BodyError::Io(_) => ex.client_left(py),
        _ => ex.disconnect(py),
    }
}

/// The app returned or raised before the service answered.
fn finished(
    py: Python<'_>,
    config: &AppConfig,
    ex: &Arc<Exchange>,
    result: PyResult<()>,
    is_head: bool,
    guard: Guard,
) -> Response {
    // Nothing has reached the client yet: a failed or unfinished response is a clean 500.
    let complete = ex.lock().finished();
    match (complete, result) {
        (true, Err(e)) => config.log(py, "Exception in ASGI application", Some(e)),
        (true, Ok(())) => {}
        (false, Err(e)) => {
            config.log(py, "Exception in ASGI application", Some(e));
            return server_error();
        }
        (false, Ok(())) => {
            let (waiting, gone) = {
                let inner = ex.lock();
                (matches!(inner.phase, Phase::Waiting), inner.client_left)
            };
            // An app may stop answering a client that has left (Starlette's streaming
            // responses do): not an error, as under uvicorn.
            if !gone {
                let message = if waiting {
                    "ASGI callable returned without starting response."
                } else {
                    "ASGI callable returned without completing response."
                };
                config.log(py, message, None);
            }
            return server_error();
        }
    }
    respond(ex, is_head, guard)
}

/// The app's outcome after the response was handed to the engine.
fn after_start(py: Python<'_>, config: &AppConfig, ex: &Exchange, outcome: PyResult<()>) {
    let (complete, gone) = {
        let inner = ex.lock();
        (inner.finished(), inner.client_left)
    };
    match outcome {
        Err(e) => {
            config.log(py, "Exception in ASGI application", Some(e));
            if !complete {
                ex.fail("the application raised while sending its response".to_owned());
            }
        }
        Ok(()) if !complete => {
            if !gone {
                config.log(
                    py,
                    "ASGI callable returned without completing response.",
                    None,
                );
            }
            ex.fail("the application did not complete its response".to_owned());
        }
        Ok(()) => {}
    }
}

/// The engine's response for what the app has sent: whole if it is complete, else a stream.
fn respond(ex: &Arc<Exchange>, is_head: bool, guard: Guard) -> Response {
    let mut inner = ex.lock();
    let status = inner.status;
    let headers = std::mem::take(&mut inner.headers);
    let length = inner.content_length;
    let complete = matches!(inner.phase, Phase::Complete) && inner.failed.is_none();
    if inner.trailers_expected {
        let trailers = trailers_of(&mut inner);
        drop(inner);
        let mut guard = guard;
        guard.0 = None;
        let stream = Box::pin(AsgiBody::new(ex.clone()));
        let mut res = Response::new(
            status,
            Body::StreamWithTrailers(Box::new(TrailedStream { stream, trailers })),
        );
        set_fields(&mut res, headers);
        return res;
    }
    if complete && inner.out.is_empty() {
        if let Some((file, len)) = inner.file.take() {
            drop(inner);
            drop(guard);
            let mut res = Response::new(
                status,
                Body::SizedStream(len, Box::pin(FileStream::new(file))),
            );
            set_fields(&mut res, headers);
            return res;
        }
    }
    let body = if complete && inner.file.is_none() {
        let body = match inner.out.len() {
            0 => Bytes::new(),
            1 => inner.out.pop_front().unwrap_or_default(),
            _ => {
                let mut all = BytesMut::with_capacity(inner.queued);
                for chunk in inner.out.drain(..) {
                    all.extend_from_slice(&chunk);
                }
                all.freeze()
            }
        };
        inner.queued = 0;
        drop(inner);
        // `guard` tells a still-listening `receive` that the response is done.
        drop(guard);
        match length {
            // A HEAD answer announces the length of the body it does not send.
            Some(len) if is_head && body.is_empty() => Body::SizedStream(len, empty()),
            _ => Body::Bytes(body),
        }
    } else {
        drop(inner);
        let mut guard = guard;
        guard.0 = None;
        let stream = Box::pin(AsgiBody::new(ex.clone()));
        match length {
            Some(len) => Body::SizedStream(len, stream),
            None => Body::Stream(stream),
        }
    };
    let mut res = Response::new(status, body);
    set_fields(&mut res, headers);
    res
}

/// The trailer fields, once the app has sent them all (at once if it already has).
fn trailers_of(inner: &mut Inner) -> TrailersFuture {
    let (to, fields) = oneshot::channel();
    if inner.trailers_done {
        let _ = to.send(std::mem::take(&mut inner.trailers));
    } else if inner.failed.is_none() {
        inner.trailers_to = Some(to);
    }
    Box::pin(async move { fields.await.unwrap_or_default() })
}

fn empty() -> vireo_http::BodyStream {
    Box::pin(Empty)
}

struct Empty;

impl futures_core::Stream for Empty {
    type Item = Result<Bytes, vireo_http::BoxError>;
    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::task::Poll::Ready(None)
    }
}

fn ended() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(
        "the task running the application ended without an outcome",
    )
}
