//! A request from an ASGI server that serves the app (`uvicorn main:app`, httpx's
//! `ASGITransport`, a Starlette app mounting it), answered on the in-process client's thread
//! and handed back event by event, so a streamed body reaches the server as it is produced.

use crate::app::AppInner;
use crate::dispatch::answer_read;
use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use vireo_http::{Body, BodyStream, Head, Response};

/// Chunks handed over before the server has sent one on: enough to keep a stream moving,
/// few enough that a slow client holds back the handler.
const WINDOW: usize = 2;

/// One request to answer: its head and whole body, where it came from, and `sink`, called
/// on the client's thread with each event: `("start", status, [(name, value)])`, then
/// `("body", bytes, more)` until `more` is false, or `("error", message)`.
pub(crate) struct StreamJob {
    pub head: Head,
    pub body: Bytes,
    pub peer: Option<SocketAddr>,
    pub secure: bool,
    pub sink: Py<PyAny>,
    pub grants: mpsc::UnboundedReceiver<()>,
}

/// The server's side of one streamed answer: `grant()` once it has sent a chunk on, so the
/// next may come; `cancel()` when the client has gone, which stops the stream.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Flow {
    grants: Mutex<Option<mpsc::UnboundedSender<()>>>,
}

impl Flow {
    pub(crate) fn new() -> (Flow, mpsc::UnboundedReceiver<()>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let flow = Flow {
            grants: Mutex::new(Some(tx)),
        };
        (flow, rx)
    }
}

#[pymethods]
impl Flow {
    /// Let one more chunk come.
    fn grant(&self) {
        if let Some(grants) = &*self.grants.lock().unwrap_or_else(|e| e.into_inner()) {
            let _ = grants.send(());
        }
    }

    /// Stop the stream: the handler's body is dropped at its next chunk.
    fn cancel(&self) {
        self.grants.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// Answer `job` and hand the answer to its sink.
pub(crate) async fn deliver(app: Arc<AppInner>, job: StreamJob) {
    let StreamJob {
        head,
        body,
        peer,
        secure,
        sink,
        mut grants,
    } = job;
    let is_head = head.method() == http::Method::HEAD;
    let mut response = answer_read(&app, head, body, peer, secure, None).await;
    if !emit_start(&sink, &response, response.body().len()) {
        return;
    }
    // As on the wire: the answer to a HEAD, and a status that has none, send no body.
    if is_head || !has_body(response.status().as_u16()) {
        return emit_body(&sink, b"", false);
    }
    if let Some(bytes) = response.body().in_memory() {
        return emit_body(&sink, bytes, false);
    }
    let stream = match response.take_body() {
        Body::Stream(s) | Body::SizedStream(_, s) => s,
        Body::StreamWithTrailers(trailed) => trailed.stream,
        Body::Empty | Body::Static(_) | Body::Bytes(_) | Body::Vec(_) => {
            return emit_body(&sink, b"", false)
        }
    };
    stream_chunks(stream, &sink, &mut grants).await;
}

/// Hand over each chunk of `stream`, each after a grant once the window is used up; stop when
/// the flow is cancelled.
async fn stream_chunks(
    mut stream: BodyStream,
    sink: &Py<PyAny>,
    grants: &mut mpsc::UnboundedReceiver<()>,
) {
    let mut credit = WINDOW;
    loop {
        if credit == 0 {
            if grants.recv().await.is_none() {
                return;
            }
            credit += 1;
        }
        match std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
            Some(Ok(chunk)) if chunk.is_empty() => {}
            Some(Ok(chunk)) => {
                credit -= 1;
                emit_body(sink, &chunk, true);
            }
            Some(Err(error)) => {
                return emit_error(sink, &error.to_string());
            }
            None => return emit_body(sink, b"", false),
        }
        // A cancelled flow stops here rather than at the next wait for a grant.
        loop {
            match grants.try_recv() {
                Ok(()) => credit += 1,
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => return,
            }
        }
    }
}

/// The start event: status and header fields, with `content-length` when the response has a
/// body whose length is known and the app did not give it. False if the sink refused it.
fn emit_start(sink: &Py<PyAny>, response: &Response, length: Option<u64>) -> bool {
    Python::attach(|py| {
        let mut fields: Vec<(Bound<'_, PyBytes>, Bound<'_, PyBytes>)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    PyBytes::new(py, n.as_str().as_bytes()),
                    PyBytes::new(py, v.as_bytes()),
                )
            })
            .collect();
        let status = response.status().as_u16();
        let given = response
            .headers()
            .contains_key(http::header::CONTENT_LENGTH);
        if let (Some(length), true, false) = (length, has_body(status), given) {
            fields.push((
                PyBytes::new(py, b"content-length"),
                PyBytes::new(py, length.to_string().as_bytes()),
            ));
        }
        match sink.call1(py, ("start", status, fields)) {
            Ok(_) => true,
            Err(error) => {
                error.print(py);
                false
            }
        }
    })
}

/// Whether a response with `status` has a body (and says its length): not a 1xx, 204 or 304
/// (RFC 9110 §6.4.1).
pub(crate) fn has_body(status: u16) -> bool {
    !(status < 200 || status == 204 || status == 304)
}

/// A body event: `bytes`, and whether more will follow.
fn emit_body(sink: &Py<PyAny>, bytes: &[u8], more: bool) {
    Python::attach(|py| {
        if let Err(error) = sink.call1(py, ("body", PyBytes::new(py, bytes), more)) {
            error.print(py);
        }
    });
}

/// The stream failed after the start was sent: the server should close the connection.
fn emit_error(sink: &Py<PyAny>, message: &str) {
    Python::attach(|py| {
        if let Err(error) = sink.call1(py, ("error", message)) {
            error.print(py);
        }
    });
}
