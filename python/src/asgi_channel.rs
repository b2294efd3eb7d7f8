//! One ASGI request's `receive` and `send`, and the state they share with the engine's side:
//! body chunks read for the app, the response the app sends, and whether the client is gone.
//!
//! Everything runs on the worker thread that drives the loop; the mutex only makes the
//! Python objects shareable.

use crate::event_loop;
use crate::request::{done, Ready};
use bytes::Bytes;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyString, PyTuple};
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use tokio::sync::{oneshot, Notify};
use vireo_http::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use vireo_http::Response;

/// Bytes a streamed response may have queued before `send` waits for the client.
pub(crate) const HIGH_WATER: usize = 64 * 1024;

/// Where the response stands.
pub(crate) enum Phase {
    /// Nothing sent yet.
    Waiting,
    /// `http.response.start` received; the body follows.
    Started,
    /// The last body message received.
    Complete,
}

impl Phase {
    pub(crate) fn complete(&self) -> bool {
        matches!(self, Phase::Complete)
    }
}

pub(crate) struct Inner {
    // The request body, as read for the app.
    pub chunks: VecDeque<Bytes>,
    pub body_done: bool,
    /// The app asked for the body at least once.
    pub asked: bool,
    /// Read the rest of the body without waiting to be asked (the response has started).
    pub draining: bool,
    /// Chunks read while draining are thrown away: the app is done and will not read them.
    pub discard: bool,
    /// The `http.request` with `more_body` false has been given.
    pub delivered_last: bool,
    receive_waiter: Option<Py<PyAny>>,
    /// The client went away, or the response was given up.
    pub disconnected: bool,
    /// The client went away before the response ended: an unfinished response is no app error.
    pub client_left: bool,
    // The response.
    pub phase: Phase,
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub content_length: Option<u64>,
    pub out: VecDeque<Bytes>,
    pub queued: usize,
    pub send_waiter: Option<Py<PyAny>>,
    /// The stream's task, woken when a chunk is queued or the response ends.
    pub stream_waker: Option<Waker>,
    /// The app failed or returned after starting: the stream ends with this error.
    pub failed: Option<String>,
    /// The file `http.response.pathsend` named, opened, and its length.
    pub file: Option<(std::fs::File, u64)>,
    /// `http.response.start` had `trailers`: `http.response.trailers` follow the body.
    pub trailers_expected: bool,
    /// The trailer fields sent so far, and whether the last trailers message came.
    pub trailers: HeaderMap,
    pub trailers_done: bool,
    /// Where the trailers go once complete, when the response was handed over before them.
    pub trailers_to: Option<oneshot::Sender<HeaderMap>>,
}

impl Inner {
    /// Whether the app has sent the whole response: the body, and its trailers if promised.
    pub(crate) fn finished(&self) -> bool {
        self.phase.complete() && (!self.trailers_expected || self.trailers_done)
    }

    /// Whether a finished app left part of a body it began to read: read and thrown away so the
    /// connection stays usable.
    pub(crate) fn rest_to_read(&self) -> bool {
        self.asked && !self.body_done && !self.disconnected
    }
}

/// Shared by `receive`, `send`, the service and the response stream.
pub(crate) struct Exchange {
    inner: Mutex<Inner>,
    /// Wakes the service: the app has sent something.
    pub wake: Notify,
    /// Wakes the body reader: `receive` waits for a chunk.
    pub want: Notify,
}

impl Exchange {
    pub(crate) fn new(body_done: bool) -> Arc<Self> {
        Arc::new(Exchange {
            inner: Mutex::new(Inner {
                chunks: VecDeque::new(),
                body_done,
                asked: false,
                draining: false,
                discard: false,
                delivered_last: false,
                receive_waiter: None,
                disconnected: false,
                client_left: false,
                phase: Phase::Waiting,
                status: StatusCode::OK,
                headers: HeaderMap::new(),
                content_length: None,
                out: VecDeque::new(),
                queued: 0,
                send_waiter: None,
                stream_waker: None,
                failed: None,
                file: None,
                trailers_expected: false,
                trailers: HeaderMap::new(),
                trailers_done: false,
                trailers_to: None,
            }),
            wake: Notify::new(),
            want: Notify::new(),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the service should read another chunk for a waiting `receive`.
    pub(crate) fn wants_body(&self) -> bool {
        let inner = self.lock();
        inner.receive_waiter.is_some()
            && !inner.delivered_last
            && inner.chunks.is_empty()
            && !inner.body_done
    }

    /// A chunk read (`None`: the body ended): hand it to a waiting `receive`.
    pub(crate) fn push_body(&self, py: Python<'_>, chunk: Option<Bytes>) {
        let mut inner = self.lock();
        match chunk {
            Some(chunk) => inner.chunks.push_back(chunk),
            None => inner.body_done = true,
        }
        if inner.delivered_last {
            return;
        }
        if let Some(waiter) = inner.receive_waiter.take() {
            // A `receive()` cancelled while it waited (`request.is_disconnected()` does this)
            // takes nothing: the chunk stays for the next one.
            if is_done(py, &waiter) {
                return;
            }
            let message = next_message(py, &mut inner);
            drop(inner);
            resolve(py, waiter, message.map(Bound::unbind));
        }
    }

    /// The client is gone (or the response was dropped): `receive` says `http.disconnect`,
    /// `send` stops waiting.
    pub(crate) fn disconnect(&self, py: Python<'_>) {
        let mut inner = self.lock();
        inner.disconnected = true;
        let receive = inner.receive_waiter.take();
        let send = inner.send_waiter.take();
        drop(inner);
        if let Some(waiter) = receive {
            resolve(
                py,
                waiter,
                disconnect_message(py).map(|d| d.into_any().unbind()),
            );
        }
        if let Some(waiter) = send {
            resolve(py, waiter, Ok(py.None()));
        }
    }

    /// The client left before the response ended: `disconnect`, remembered as the client's doing.
    pub(crate) fn client_left(&self, py: Python<'_>) {
        self.lock().client_left = true;
        self.disconnect(py);
    }

    /// The response ended (completely, or given up): later `receive` calls say disconnect.
    pub(crate) fn finish(&self, py: Python<'_>) {
        self.disconnect(py);
    }

    /// The stream took chunks: release a `send` waiting for room.
    pub(crate) fn drained(&self, py: Python<'_>) {
        let mut inner = self.lock();
        if inner.queued <= HIGH_WATER {
            if let Some(waiter) = inner.send_waiter.take() {
                drop(inner);
                resolve(py, waiter, Ok(py.None()));
            }
        }
    }

    /// End the stream with an error (the app failed after starting the response).
    pub(crate) fn fail(&self, message: String) {
        let mut inner = self.lock();
        if inner.failed.is_none() {
            inner.failed = Some(message);
        }
        // Trailers that will not come: the body's end is sent without them.
        inner.trailers_to = None;
        if let Some(waker) = inner.stream_waker.take() {
            waker.wake();
        }
    }
}

fn disconnect_message(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let message = PyDict::new(py);
    message.set_item("type", "http.disconnect")?;
    Ok(message)
}

/// The next message for `receive`, if one is ready.
fn next_message<'py>(py: Python<'py>, inner: &mut Inner) -> PyResult<Bound<'py, PyAny>> {
    if inner.disconnected {
        return Ok(disconnect_message(py)?.into_any());
    }
    let message = PyDict::new(py);
    message.set_item("type", "http.request")?;
    let chunk = inner.chunks.pop_front().unwrap_or_default();
    let last = inner.body_done && inner.chunks.is_empty();
    inner.delivered_last = last;
    message.set_item("body", PyBytes::new(py, &chunk))?;
    message.set_item("more_body", !last)?;
    Ok(message.into_any())
}

/// Complete an asyncio future from the loop's thread (it may have been cancelled).
pub(crate) fn resolve(py: Python<'_>, future: Py<PyAny>, value: PyResult<Py<PyAny>>) {
    let future = future.bind(py);
    let outcome = (|| -> PyResult<()> {
        if future.call_method0("done")?.is_truthy()? {
            return Ok(());
        }
        match value {
            Ok(value) => future.call_method1("set_result", (value,))?,
            Err(e) => future.call_method1("set_exception", (e.into_value(py),))?,
        };
        Ok(())
    })();
    if let Err(e) = outcome {
        e.print(py);
    }
    if let Some(state) = event_loop::current() {
        state.kick(py);
    }
}

/// Whether an asyncio future is done (cancelled, here); an error counts as done.
fn is_done(py: Python<'_>, future: &Py<PyAny>) -> bool {
    future
        .call_method0(py, pyo3::intern!(py, "done"))
        .and_then(|done| done.is_truthy(py))
        .unwrap_or(true)
}

pub(crate) fn new_future(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let state = event_loop::current()
        .ok_or_else(|| PyRuntimeError::new_err("receive/send called off the server's loop"))?;
    state.event_loop.call_method0(py, "create_future")
}

pub(crate) fn ready(py: Python<'_>, value: Py<PyAny>) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, Ready::new(value))?.into_any())
}

/// The scope's `receive`.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Receive(pub Arc<Exchange>);

#[pymethods]
impl Receive {
    fn __call__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let mut inner = self.0.lock();
        inner.asked = true;
        let body_ready = !inner.chunks.is_empty() || inner.body_done;
        if inner.disconnected || (!inner.delivered_last && body_ready) {
            let message = next_message(py, &mut inner)?;
            return ready(py, message.unbind());
        }
        if let Some(waiter) = &inner.receive_waiter {
            // One cancelled while it waited is forgotten; one still waiting is an error.
            if !is_done(py, waiter) {
                return Err(PyRuntimeError::new_err(
                    "receive() called again while an earlier receive() is still waiting",
                ));
            }
            inner.receive_waiter = None;
        }
        // Waiting for a chunk, or (the body all given) for the client to go away.
        let future = new_future(py)?;
        inner.receive_waiter = Some(future.clone_ref(py));
        drop(inner);
        self.0.want.notify_one();
        Ok(future)
    }
}

/// The scope's `send`.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Send(pub Arc<Exchange>);

#[pymethods]
impl Send {
    fn __call__(&self, py: Python<'_>, message: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        match message_type(message)?.to_str()? {
            "http.response.start" => self.start(py, message),
            "http.response.body" => self.body(py, message),
            "http.response.pathsend" => self.pathsend(py, message),
            "http.response.trailers" => self.trailers(py, message),
            other => Err(PyRuntimeError::new_err(format!(
                "Unexpected ASGI message {other:?} sent to an http connection"
            ))),
        }
    }
}

impl Send {
    fn start(&self, py: Python<'_>, message: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        let code: u16 = message
            .get_item(intern!(py, "status"))?
            .ok_or_else(|| PyTypeError::new_err("http.response.start needs a 'status'"))?
            .extract()?;
        let status = StatusCode::from_u16(code)
            .ok()
            .filter(|s| *s >= StatusCode::OK)
            .ok_or_else(|| {
                PyRuntimeError::new_err(format!("http.response.start: invalid status {code}"))
            })?;
        let (headers, content_length) = parse_headers(message, "http.response.start")?;
        let trailers = match message.get_item(intern!(py, "trailers"))? {
            Some(trailers) => trailers.is_truthy()?,
            None => false,
        };
        let mut inner = self.0.lock();
        if !matches!(inner.phase, Phase::Waiting) {
            return Err(PyRuntimeError::new_err(
                "Unexpected ASGI message 'http.response.start' sent, after response already started",
            ));
        }
        inner.phase = Phase::Started;
        inner.status = status;
        inner.headers = headers;
        inner.content_length = content_length;
        inner.trailers_expected = trailers;
        drop(inner);
        self.0.wake.notify_one();
        done(py)
    }

    /// The extension's `{"type": "http.response.pathsend", "path": ...}`: the file is the
    /// rest of the body, read by the server.
    fn pathsend(&self, py: Python<'_>, message: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        let path: std::path::PathBuf = message
            .get_item(intern!(py, "path"))?
            .ok_or_else(|| PyTypeError::new_err("http.response.pathsend needs a 'path'"))?
            .extract()?;
        let file = std::fs::File::open(&path)?;
        let len = file.metadata()?.len();
        let mut inner = self.0.lock();
        if !matches!(inner.phase, Phase::Started) {
            return Err(PyRuntimeError::new_err(
                "Unexpected ASGI message 'http.response.pathsend' sent, outside a started response",
            ));
        }
        if !inner.disconnected {
            inner.file = Some((file, len));
        }
        inner.phase = Phase::Complete;
        if let Some(waker) = inner.stream_waker.take() {
            waker.wake();
        }
        drop(inner);
        self.0.wake.notify_one();
        done(py)
    }

    /// The extension's `{"type": "http.response.trailers", "headers": ..., "more_trailers":
    /// ...}`, after the last body message of a response started with `trailers`.
    fn trailers(&self, py: Python<'_>, message: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        let (fields, _) = parse_headers(message, "http.response.trailers")?;
        let more = match message.get_item(intern!(py, "more_trailers"))? {
            Some(more) => more.is_truthy()?,
            None => false,
        };
        let mut inner = self.0.lock();
        if !inner.trailers_expected || inner.trailers_done {
            return Err(PyRuntimeError::new_err(
                "Unexpected ASGI message 'http.response.trailers' sent, without 'trailers' in \
                 'http.response.start' or after the last trailers",
            ));
        }
        if !inner.phase.complete() {
            return Err(PyRuntimeError::new_err(
                "Unexpected ASGI message 'http.response.trailers' sent, before the last \
                 'http.response.body'",
            ));
        }
        for (name, value) in fields.iter() {
            inner.trailers.append(name.clone(), value.clone());
        }
        if !more {
            inner.trailers_done = true;
            if let Some(to) = inner.trailers_to.take() {
                let _ = to.send(std::mem::take(&mut inner.trailers));
            }
        }
        drop(inner);
        self.0.wake.notify_one();
        done(py)
    }

    fn body(&self, py: Python<'_>, message: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        let chunk = match message.get_item(intern!(py, "body"))? {
            Some(body) => Bytes::from(bytes_of(&body)?.into_owned()),
            None => Bytes::new(),
        };
        let more = match message.get_item(intern!(py, "more_body"))? {
            Some(more) => more.is_truthy()?,
            None => false,
        };
        let mut inner = self.0.lock();
        match inner.phase {
            Phase::Waiting => {
                return Err(PyRuntimeError::new_err(
                    "Unexpected ASGI message 'http.response.body' sent, before 'http.response.start'",
                ))
            }
            Phase::Complete => {
                return Err(PyRuntimeError::new_err(
                    "Unexpected ASGI message 'http.response.body' sent, after response already completed",
                ))
            }
            Phase::Started => {}
        }
        if inner.disconnected {
            // As other servers do: the client is gone, so what is sent goes nowhere.
            return done(py);
        }
        if !chunk.is_empty() {
            inner.queued += chunk.len();
            inner.out.push_back(chunk);
        }
        if !more {
            inner.phase = Phase::Complete;
        }
        if let Some(waker) = inner.stream_waker.take() {
            waker.wake();
        }
        let wait = more && inner.queued > HIGH_WATER;
        let out = if wait {
            let future = new_future(py)?;
            inner.send_waiter = Some(future.clone_ref(py));
            future
        } else {
            done(py)?
        };
        drop(inner);
        self.0.wake.notify_one();
        Ok(out)
    }
}

/// A message's `type`.
pub(crate) fn message_type<'py>(message: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyString>> {
    Ok(message
        .get_item(intern!(message.py(), "type"))?
        .ok_or_else(|| PyTypeError::new_err("an ASGI message needs a 'type'"))?
        .cast_into::<PyString>()?)
}

thread_local! {
    /// An empty header map that keeps its allocation, handed back by the last response made
    /// on this thread, for the next response's fields.
    static SPARE_MAP: Cell<Option<HeaderMap>> = const { Cell::new(None) };
}

/// Gives `fields` to the response and keeps the map it had (emptied) for the next one, so
/// that a worker's responses take turns with the same few allocations.
pub(crate) fn set_fields(res: &mut Response, mut fields: HeaderMap) {
    std::mem::swap(res.headers_mut(), &mut fields);
    fields.clear();
    SPARE_MAP.with(|spare| spare.set(Some(fields)));
}

/// A message's `headers` (byte pairs) as a header map, and the `content-length` among them.
pub(crate) fn parse_headers(
    message: &Bound<'_, PyDict>,
    kind: &str,
) -> PyResult<(HeaderMap, Option<u64>)> {
    let mut headers = SPARE_MAP.with(Cell::take).unwrap_or_default();
    let mut content_length = None;
    let mut add = |pair: Bound<'_, PyAny>| -> PyResult<()> {
        let (name, value) = match pair.cast::<PyTuple>() {
            Ok(pair) => (pair.get_item(0)?, pair.get_item(1)?),
            Err(_) => (pair.get_item(0)?, pair.get_item(1)?),
        };
        let name = HeaderName::from_bytes(&bytes_of(&name)?)
            .map_err(|_| PyRuntimeError::new_err(format!("{kind}: invalid header name {name}")))?;
        let value = HeaderValue::from_bytes(&bytes_of(&value)?).map_err(|_| {
            PyRuntimeError::new_err(format!("{kind}: invalid value for header {name}: {value}"))
        })?;
        if name == vireo_http::http::header::CONTENT_LENGTH {
            content_length = value.to_str().ok().and_then(|v| v.trim().parse().ok());
        }
        headers.append(name, value);
        Ok(())
    };
    if let Some(list) = message.get_item(intern!(message.py(), "headers"))? {
        // Lists of tuples, the usual shape, are read without the generic protocols.
        match list.cast::<PyList>() {
            Ok(list) => list.iter().try_for_each(add)?,
            Err(_) => list.try_iter()?.try_for_each(|pair| add(pair?))?,
        }
    }
    Ok((headers, content_length))
}

/// The bytes of a `bytes` (borrowed: immutable, so nothing can change them under us), or a
/// copy of a `bytearray`'s or `memoryview`'s.
pub(crate) fn bytes_of<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = value.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if value.is_instance_of::<PyMemoryView>() {
        return Ok(Cow::Owned(value.call_method0("tobytes")?.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "expected bytes in an ASGI message, got {}",
        value.get_type().name()?
    )))
}
