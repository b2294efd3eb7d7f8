//! One ASGI WebSocket's `receive` and `send`, and the state they share with the engine's side:
//! the app's answer to the handshake, messages read for the app, messages it sends, and
//! whether the connection is over.

use crate::asgi_channel::{
    bytes_of, message_type, new_future, parse_headers, ready, resolve, HIGH_WATER,
};
use crate::request::done;
use bytes::{Bytes, BytesMut};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use vireo::ws::{CloseCode, Message};
use vireo_http::http::{HeaderMap, StatusCode};

create_exception!(
    _vireo,
    ClientDisconnected,
    PyOSError,
    "`send` on a WebSocket whose connection is over."
);

/// Messages read ahead for an app that has not asked for them yet; reading pauses beyond.
const READ_AHEAD_MESSAGES: usize = 16;
const READ_AHEAD_BYTES: usize = 256 * 1024;

/// The app's answer to `websocket.connect`.
pub(crate) enum Handshake {
    /// No answer yet.
    Pending,
    /// `websocket.accept`: the subprotocol and extra fields for the `101`.
    Accepted {
        subprotocol: Option<String>,
        headers: HeaderMap,
    },
    /// `websocket.close` before accepting: a `403`.
    Refused,
    /// A denial response (`websocket.http.response.start` and `.body`); `done` once its last
    /// body message came.
    Denying {
        status: StatusCode,
        headers: HeaderMap,
        body: BytesMut,
        done: bool,
    },
}

/// What the app asks to send after accepting.
pub(crate) enum Outgoing {
    Message(Message),
    Close(CloseCode, String),
}

impl Outgoing {
    /// The bytes it counts for against the send queue's high-water mark.
    pub(crate) fn payload_len(&self) -> usize {
        match self {
            Outgoing::Message(Message::Text(text)) => text.len(),
            Outgoing::Message(Message::Binary(data)) => data.len(),
            _ => 0,
        }
    }
}

pub(crate) struct WsInner {
    pub handshake: Handshake,
    /// Events for `receive`, each with the payload bytes it counts for.
    incoming: VecDeque<(Py<PyAny>, usize)>,
    incoming_bytes: usize,
    receive_waiter: Option<Py<PyAny>>,
    /// The `websocket.disconnect` once queued, given again to any later `receive`.
    disconnect: Option<Py<PyAny>>,
    pub outgoing: VecDeque<Outgoing>,
    pub queued: usize,
    send_waiter: Option<Py<PyAny>>,
    /// The app sent `websocket.close` (or had it sent for it when it ended).
    pub close_sent: bool,
    /// The connection is over: `send` raises [`ClientDisconnected`].
    pub gone: bool,
    /// The app's task ended: `Some(true)` if it returned, `Some(false)` if it raised.
    pub app_done: Option<bool>,
}

/// Shared by `receive`, `send`, the service and the session.
pub(crate) struct WsExchange {
    inner: Mutex<WsInner>,
    /// Wakes the service or the session: the app sent something, or ended.
    pub wake: Notify,
    /// Wakes the session's reader: the app took a message.
    pub room: Notify,
}

impl WsExchange {
    pub(crate) fn new(py: Python<'_>) -> PyResult<Arc<Self>> {
        let connect = PyDict::new(py);
        connect.set_item(intern!(py, "type"), intern!(py, "websocket.connect"))?;
        Ok(Arc::new(WsExchange {
            inner: Mutex::new(WsInner {
                handshake: Handshake::Pending,
                incoming: VecDeque::from([(connect.into_any().unbind(), 0)]),
                incoming_bytes: 0,
                receive_waiter: None,
                disconnect: None,
                outgoing: VecDeque::new(),
                queued: 0,
                send_waiter: None,
                close_sent: false,
                gone: false,
                app_done: None,
            }),
            wake: Notify::new(),
            room: Notify::new(),
        }))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, WsInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether reading should pause: the app has left enough unread, and will still read
    /// (it has neither closed nor ended, when only the close handshake is left to read).
    pub(crate) fn reading_paused(&self) -> bool {
        let inner = self.lock();
        let backlogged =
            inner.incoming.len() >= READ_AHEAD_MESSAGES || inner.incoming_bytes >= READ_AHEAD_BYTES;
        backlogged && !inner.close_sent && inner.app_done.is_none()
    }

    /// The app closed or ended: wake the session's reader if it paused for the app to read.
    pub(crate) fn stop_pausing(&self) {
        self.room.notify_one();
    }

    /// A message read from the client, for `receive`.
    pub(crate) fn push_message(&self, py: Python<'_>, message: Message) -> PyResult<()> {
        let event = PyDict::new(py);
        event.set_item(intern!(py, "type"), intern!(py, "websocket.receive"))?;
        let size = match &message {
            Message::Text(text) => {
                event.set_item(intern!(py, "text"), PyString::new(py, text.as_str()))?;
                text.len()
            }
            Message::Binary(data) => {
                event.set_item(intern!(py, "bytes"), PyBytes::new(py, data))?;
                data.len()
            }
            _ => return Ok(()),
        };
        let mut inner = self.lock();
        if inner.disconnect.is_some() {
            // The app closed: what the client sends meanwhile goes nowhere.
            return Ok(());
        }
        match inner.receive_waiter.take() {
            Some(waiter) => {
                drop(inner);
                resolve(py, waiter, Ok(event.into_any().unbind()));
            }
            None => {
                inner.incoming_bytes += size;
                inner.incoming.push_back((event.into_any().unbind(), size));
            }
        }
        Ok(())
    }

    /// Queue `websocket.disconnect` with `code` and `reason`, unless one already was.
    pub(crate) fn push_disconnect(&self, py: Python<'_>, code: u16, reason: &str) {
        let mut inner = self.lock();
        if inner.disconnect.is_some() {
            return;
        }
        let event = match disconnect_event(py, code, reason) {
            Ok(event) => event,
            Err(e) => return e.print(py),
        };
        inner.disconnect = Some(event.clone_ref(py));
        match inner.receive_waiter.take() {
            Some(waiter) => {
                drop(inner);
                resolve(py, waiter, Ok(event));
            }
            None => inner.incoming.push_back((event, 0)),
        }
    }

    /// The connection is over (or never opened): `receive` says disconnect (`1006` unless a
    /// code was given), `send` raises, a `send` waiting for room returns.
    pub(crate) fn connection_over(&self, py: Python<'_>) {
        self.push_disconnect(py, 1006, "");
        let mut inner = self.lock();
        inner.gone = true;
        inner.outgoing.clear();
        inner.queued = 0;
        let waiter = inner.send_waiter.take();
        drop(inner);
        if let Some(waiter) = waiter {
            resolve(py, waiter, Ok(py.None()));
        }
    }

    /// The session sent what was queued: release a `send` waiting for room.
    pub(crate) fn drained(&self, py: Python<'_>) {
        let mut inner = self.lock();
        if inner.queued <= HIGH_WATER {
            if let Some(waiter) = inner.send_waiter.take() {
                drop(inner);
                resolve(py, waiter, Ok(py.None()));
            }
        }
    }
}

fn disconnect_event(py: Python<'_>, code: u16, reason: &str) -> PyResult<Py<PyAny>> {
    let event = PyDict::new(py);
    event.set_item(intern!(py, "type"), intern!(py, "websocket.disconnect"))?;
    event.set_item(intern!(py, "code"), code)?;
    event.set_item(intern!(py, "reason"), reason)?;
    Ok(event.into_any().unbind())
}

/// A WebSocket scope's `receive`.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct WsReceive(pub Arc<WsExchange>);

#[pymethods]
impl WsReceive {
    fn __call__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let mut inner = self.0.lock();
        if let Some((event, size)) = inner.incoming.pop_front() {
            inner.incoming_bytes -= size;
            drop(inner);
            self.0.room.notify_one();
            return ready(py, event);
        }
        if let Some(event) = &inner.disconnect {
            return ready(py, event.clone_ref(py));
        }
        if inner.receive_waiter.is_some() {
            return Err(PyRuntimeError::new_err(
                "receive() called again while an earlier receive() is still waiting",
            ));
        }
        let future = new_future(py)?;
        inner.receive_waiter = Some(future.clone_ref(py));
        drop(inner);
        self.0.room.notify_one();
        Ok(future)
    }
}

/// A WebSocket scope's `send`.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct WsSend(pub Arc<WsExchange>);

#[pymethods]
impl WsSend {
    fn __call__(&self, py: Python<'_>, message: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        let kind = message_type(message)?;
        let kind = kind.to_str()?;
        let ex = &self.0;
        let mut inner = ex.lock();
        if inner.gone {
            return Err(ClientDisconnected::new_err(
                "the WebSocket connection is closed",
            ));
        }
        let close_sent = inner.close_sent;
        match (&mut inner.handshake, kind) {
            (Handshake::Pending, "websocket.accept") => {
                let subprotocol = match message.get_item(intern!(message.py(), "subprotocol"))? {
                    Some(p) if !p.is_none() => Some(p.extract::<String>()?),
                    _ => None,
                };
                let (headers, _) = parse_headers(message, "websocket.accept")?;
                inner.handshake = Handshake::Accepted {
                    subprotocol,
                    headers,
                };
            }
            (Handshake::Pending, "websocket.close") => {
                inner.handshake = Handshake::Refused;
                drop(inner);
                ex.push_disconnect(py, 1006, "");
            }
            (Handshake::Pending, "websocket.http.response.start") => {
                let code: u16 = message
                    .get_item(intern!(message.py(), "status"))?
                    .ok_or_else(|| {
                        PyTypeError::new_err("websocket.http.response.start needs a 'status'")
                    })?
                    .extract()?;
                let status = StatusCode::from_u16(code)
                    .ok()
                    .filter(|s| *s >= StatusCode::OK && *s != StatusCode::SWITCHING_PROTOCOLS)
                    .ok_or_else(|| {
                        PyRuntimeError::new_err(format!(
                            "websocket.http.response.start: invalid status {code}"
                        ))
                    })?;
                let (headers, _) = parse_headers(message, "websocket.http.response.start")?;
                inner.handshake = Handshake::Denying {
                    status,
                    headers,
                    body: BytesMut::new(),
                    done: false,
                };
            }
            (Handshake::Pending, other) => {
                return Err(PyRuntimeError::new_err(format!(
                    "Expected ASGI message 'websocket.accept', 'websocket.close' or \
                     'websocket.http.response.start' but got {other:?}."
                )))
            }
            (
                Handshake::Denying {
                    body, done: false, ..
                },
                "websocket.http.response.body",
            ) => {
                if let Some(chunk) = message.get_item(intern!(message.py(), "body"))? {
                    body.extend_from_slice(&bytes_of(&chunk)?);
                }
                let more = match message.get_item(intern!(message.py(), "more_body"))? {
                    Some(more) => more.is_truthy()?,
                    None => false,
                };
                if !more {
                    if let Handshake::Denying { done, .. } = &mut inner.handshake {
                        *done = true;
                    }
                    drop(inner);
                    ex.push_disconnect(py, 1006, "");
                }
            }
            (Handshake::Denying { .. }, other) => {
                return Err(PyRuntimeError::new_err(format!(
                    "Expected ASGI message 'websocket.http.response.body' but got {other:?}."
                )))
            }
            (Handshake::Refused, other) => {
                return Err(PyRuntimeError::new_err(format!(
                    "Unexpected ASGI message {other:?}, after the handshake was refused."
                )))
            }
            (Handshake::Accepted { .. }, other) if close_sent => {
                return Err(PyRuntimeError::new_err(format!(
                    "Unexpected ASGI message {other:?}, after sending 'websocket.close'."
                )))
            }
            (Handshake::Accepted { .. }, "websocket.send") => {
                let item = Outgoing::Message(outgoing_message(message)?);
                inner.queued += item.payload_len();
                inner.outgoing.push_back(item);
                if inner.queued > HIGH_WATER {
                    let future = new_future(py)?;
                    inner.send_waiter = Some(future.clone_ref(py));
                    drop(inner);
                    ex.wake.notify_one();
                    return Ok(future);
                }
            }
            (Handshake::Accepted { .. }, "websocket.close") => {
                let (code, reason) = close_of(message)?;
                inner.close_sent = true;
                inner
                    .outgoing
                    .push_back(Outgoing::Close(code.into(), reason.clone()));
                drop(inner);
                ex.push_disconnect(py, code, &reason);
                ex.stop_pausing();
            }
            (Handshake::Accepted { .. }, other) => {
                return Err(PyRuntimeError::new_err(format!(
                "Expected ASGI message 'websocket.send' or 'websocket.close', but got {other:?}."
            )))
            }
        }
        ex.wake.notify_one();
        done(py)
    }
}

/// The frame a `websocket.send` asks for: `bytes` or `text`, exactly one of them.
fn outgoing_message(message: &Bound<'_, PyDict>) -> PyResult<Message> {
    let data = message
        .get_item(intern!(message.py(), "bytes"))?
        .filter(|v| !v.is_none());
    let text = message
        .get_item(intern!(message.py(), "text"))?
        .filter(|v| !v.is_none());
    match (data, text) {
        (Some(data), None) => Ok(Message::Binary(Bytes::from(bytes_of(&data)?.into_owned()))),
        (None, Some(text)) => Ok(Message::Text(text.extract::<String>()?.into())),
        _ => Err(PyRuntimeError::new_err(
            "websocket.send needs exactly one of 'bytes' and 'text'",
        )),
    }
}

/// A `websocket.close`'s code (default 1000) and reason, checked against RFC 6455 §7.4.
fn close_of(message: &Bound<'_, PyDict>) -> PyResult<(u16, String)> {
    let code: u16 = match message.get_item(intern!(message.py(), "code"))? {
        Some(code) if !code.is_none() => code.extract()?,
        _ => 1000,
    };
    let reason: String = match message.get_item(intern!(message.py(), "reason"))? {
        Some(reason) if !reason.is_none() => reason.extract()?,
        _ => String::new(),
    };
    let sendable = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
    if !sendable {
        return Err(PyRuntimeError::new_err(format!(
            "websocket.close: {code} is not a close code an endpoint may send"
        )));
    }
    if reason.len() > 123 {
        return Err(PyRuntimeError::new_err(
            "websocket.close: the reason is longer than 123 bytes",
        ));
    }
    Ok((code, reason))
}
