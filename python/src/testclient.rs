//! An in-process client for tests: requests go through the same routing, conversion, handler
//! calls and rendering as from a socket, on a thread of their own that serves like a worker
//! (its own runtime and the app's event loop), without the connection layer.

use crate::app::{AppCore, AppInner};
use crate::asgi_bridge::{deliver, has_body, Flow, StreamJob};
use crate::dispatch::answer_read;
use crate::event_loop;
use crate::thread_state;
use bytes::Bytes;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tokio::sync::{mpsc, oneshot};
use vireo_http::{Body, ContentType, Head, Limits, ProtoError, Response};

/// A response as Python receives it: status, header fields, body, and why a streamed body
/// stopped short (`None` when it did not).
type PyReply<'py> = (
    u16,
    Vec<(String, Bound<'py, PyBytes>)>,
    Bound<'py, PyBytes>,
    Option<String>,
);

/// A response as the test client's thread hands it over: status, header fields, the body
/// (as far as it came) and why it stopped short.
type Reply = Result<(u16, Vec<(String, Vec<u8>)>, Vec<u8>, Option<String>), String>;

enum Job {
    /// A test's request, answered whole, one after another.
    Whole {
        head: Vec<u8>,
        body: Bytes,
        /// Sent over `https`, as the test's base URL says.
        secure: bool,
        reply: oneshot::Sender<Reply>,
    },
    /// An ASGI server's request, answered as it streams, beside the others.
    Streamed(StreamJob),
    /// Serve the requests after this one with another build of the app.
    Replace(Arc<AppInner>),
}

#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct LocalClient {
    jobs: Mutex<Option<mpsc::UnboundedSender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The answer as a test sees it: with `content-length` added, as the connection adds it, when
/// the body's length is known and the app did not give one (a streamed body has none).
/// What a connection answers a head it refuses (a target over the limit: 414) before it
/// closes, so a test sees the status a client would.
fn refused(error: ProtoError) -> Response {
    let status = error.status();
    let reason = status.canonical_reason().unwrap_or("Error").as_bytes();
    let mut res = Response::typed(status, Bytes::from_static(reason), ContentType::Text);
    res.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    res
}

async fn collect(mut res: Response) -> Reply {
    let status = res.status().as_u16();
    let mut headers: Vec<(String, Vec<u8>)> = res
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
        .collect();
    let given = res.headers().contains_key(http::header::CONTENT_LENGTH);
    if let (Some(length), true, false) = (res.body().len(), has_body(status), given) {
        headers.push(("content-length".to_owned(), length.to_string().into_bytes()));
    }
    let (body, failed) = match res.take_body() {
        Body::Empty => (Vec::new(), None),
        Body::Static(b) => (b.to_vec(), None),
        Body::Bytes(b) => (b.to_vec(), None),
        Body::Vec(v) => (v, None),
        Body::Stream(s) | Body::SizedStream(_, s) => chunks(s).await,
        Body::StreamWithTrailers(trailed) => chunks(trailed.stream).await,
    };
    Ok((status, headers, body, failed))
}

/// The chunks of a streamed body, up to the end or the error that stopped it.
async fn chunks(mut stream: vireo_http::BodyStream) -> (Vec<u8>, Option<String>) {
    let mut all = Vec::new();
    while let Some(chunk) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
        match chunk {
            Ok(chunk) => all.extend_from_slice(&chunk),
            Err(e) => return (all, Some(e.to_string())),
        }
    }
    (all, None)
}

fn serve_jobs(mut app: Arc<AppInner>, mut jobs: mpsc::UnboundedReceiver<Job>) {
    thread_state::keep();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build_local(Default::default())
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("vireo test client: no runtime: {e}");
            return;
        }
    };
    runtime.block_on(async {
        // The app's loop is driven from the start, so that what the client runs on it from
        // Python (a WebSocket session) runs before any request has been made.
        if let Err(e) = event_loop::install(&app.refs) {
            Python::attach(|py| e.print(py));
        }
        while let Some(job) = jobs.recv().await {
            match job {
                Job::Whole {
                    head,
                    body,
                    secure,
                    reply,
                } => {
                    let answer = match Head::parse(&head, &Limits::default()) {
                        Ok((head, _)) => {
                            collect(answer_read(&app, head, body, None, secure, None).await).await
                        }
                        Err(e) => collect(refused(e)).await,
                    };
                    let _ = reply.send(answer);
                }
                Job::Streamed(job) => {
                    tokio::task::spawn_local(deliver(app.clone(), job));
                }
                Job::Replace(rebuilt) => app = rebuilt,
            }
        }
    });
    event_loop::uninstall();
}

impl LocalClient {
    fn submit(&self, job: Job) -> PyResult<()> {
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the in-process client is closed"))?
            .send(job)
            .map_err(|_| PyRuntimeError::new_err("the in-process client's thread has ended"))
    }
}

#[pymethods]
impl LocalClient {
    #[new]
    fn new(core: &AppCore) -> PyResult<Self> {
        let (tx, rx) = mpsc::unbounded_channel();
        let app = core.inner.clone();
        let thread = std::thread::Builder::new()
            .name("vireo-testclient".into())
            .spawn(move || serve_jobs(app, rx))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(LocalClient {
            jobs: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Send one request: `head` is the request line and header fields, ending in an empty
    /// line; `secure` says it came over `https`. Returns `(status, [(name, value)], body,
    /// failed)`, `failed` saying why a streamed body stopped short (else `None`).
    #[pyo3(signature = (head, body, secure=false))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        head: &[u8],
        body: &[u8],
        secure: bool,
    ) -> PyResult<PyReply<'py>> {
        let (reply, wait) = oneshot::channel();
        self.submit(Job::Whole {
            head: head.to_vec(),
            body: Bytes::copy_from_slice(body),
            secure,
            reply,
        })?;
        let reply = py
            .detach(move || wait.blocking_recv())
            .map_err(|_| PyRuntimeError::new_err("the test client's thread has ended"))?;
        let (status, headers, body, failed) = reply.map_err(PyValueError::new_err)?;
        let headers = headers
            .into_iter()
            .map(|(n, v)| (n, PyBytes::new(py, &v)))
            .collect();
        Ok((status, headers, PyBytes::new(py, &body), failed))
    }

    /// Answer one request from an ASGI server, without waiting: `head` is the request line
    /// and header fields, `peer` the client's `(host, port)`. The answer goes to `sink` event
    /// by event (see [`StreamJob`]); the returned flow paces a streamed body. A head that
    /// does not parse raises `ValueError`.
    #[pyo3(signature = (head, body, peer, secure, sink))]
    fn stream(
        &self,
        head: &[u8],
        body: &[u8],
        peer: Option<(String, u16)>,
        secure: bool,
        sink: Py<PyAny>,
    ) -> PyResult<Flow> {
        let (head, _) = Head::parse(head, &Limits::default())
            .map_err(|e| PyValueError::new_err(format!("bad request head: {e}")))?;
        let peer = peer.and_then(|(host, port)| {
            let ip: std::net::IpAddr = host.parse().ok()?;
            Some(std::net::SocketAddr::new(ip, port))
        });
        let (flow, grants) = Flow::new();
        self.submit(Job::Streamed(StreamJob {
            head,
            body: Bytes::copy_from_slice(body),
            peer,
            secure,
            sink,
            grants,
        }))?;
        Ok(flow)
    }

    /// Serve the requests sent from now on with `core`, a new build of the same app on the
    /// same loop (after its dependency overrides changed); requests under way finish as
    /// they began.
    fn replace(&self, core: &AppCore) -> PyResult<()> {
        self.submit(Job::Replace(core.inner.clone()))
    }

    /// Stop the client's thread and wait for it.
    fn close(&self, py: Python<'_>) {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = thread {
            py.detach(move || {
                let _ = thread.join();
            });
        }
    }
}
