//! `wsgi.input`: the request body as a file the app reads on the blocking pool, fed chunk by
//! chunk by the service as the client sends it. At most a little is read ahead, so a large
//! upload is not held in memory unless the app answers before reading all of what it began.

use bytes::{Buf, Bytes};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use tokio::sync::Notify;
use vireo_http::{BodyError, RequestBody};

/// Bytes read ahead of the app before the reader waits for it.
const READ_AHEAD: usize = 64 * 1024;

/// Why a read finds no more of a body that had more: the engine reads a request's body only
/// until its response is given.
const LOST: &str = "the rest of the body is gone: the application returned its response \
                    before reading it";

#[derive(Default)]
struct Queue {
    chunks: VecDeque<Bytes>,
    queued: usize,
    /// The body ended (or the request did): reads give what is left, then nothing.
    eof: bool,
    error: Option<String>,
    /// The app read from it at least once.
    touched: bool,
    /// Read everything, without waiting for the app, and throw it away.
    draining: bool,
    /// The whole body came from the client (an empty one included).
    complete: bool,
    /// Part of the body will never reach the app (thrown away, or left on the connection when
    /// the service finished): reads past what is queued fail rather than look like its end.
    lost: bool,
}

/// Shared by the service (the writer) and `wsgi.input` (the reader).
#[derive(Default)]
pub(crate) struct Input {
    queue: Mutex<Queue>,
    ready: Condvar,
    room: Notify,
}

impl Input {
    pub(crate) fn new(empty: bool) -> Arc<Self> {
        let input = Input::default();
        {
            let mut queue = input.lock();
            queue.eof = empty;
            queue.complete = empty;
        }
        Arc::new(input)
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read the body into the queue as the app takes it (all of it once draining).
    pub(crate) async fn pump(&self, body: &mut RequestBody<'_>) -> Result<(), BodyError> {
        loop {
            loop {
                let (eof, room) = {
                    let queue = self.lock();
                    (queue.eof, queue.queued < READ_AHEAD || queue.draining)
                };
                if eof {
                    return Ok(());
                }
                if room {
                    break;
                }
                self.room.notified().await;
            }
            let chunk = body.chunk().await;
            let mut queue = self.lock();
            match chunk {
                Ok(Some(_)) if queue.draining => queue.lost = true,
                Ok(Some(chunk)) => {
                    queue.queued += chunk.len();
                    queue.chunks.push_back(chunk);
                }
                Ok(None) => {
                    queue.eof = true;
                    queue.complete = true;
                }
                Err(e) => {
                    queue.error = Some(e.to_string());
                    queue.eof = true;
                    drop(queue);
                    self.ready.notify_all();
                    return Err(e);
                }
            }
            drop(queue);
            self.ready.notify_all();
        }
    }

    /// Whether the app began reading and has not had everything.
    pub(crate) fn wants_rest(&self) -> bool {
        let queue = self.lock();
        queue.touched && !queue.eof
    }

    pub(crate) fn drain(&self) {
        self.lock().draining = true;
        self.room.notify_one();
    }

    /// The service is done reading (or gone): a waiting reader gets what was queued, then end
    /// of file if that was the whole body, or an error if it was not.
    pub(crate) fn end(&self) {
        let mut queue = self.lock();
        queue.eof = true;
        queue.lost |= !queue.complete;
        drop(queue);
        self.ready.notify_all();
    }

    /// Up to `limit` bytes (all with `None`), stopping after a newline if `line`.
    fn take(&self, py: Python<'_>, limit: Option<usize>, line: bool) -> PyResult<Vec<u8>> {
        let mut out = Vec::new();
        if limit == Some(0) {
            return Ok(out);
        }
        py.detach(|| {
            let mut guard = self.lock();
            guard.touched = true;
            loop {
                let queue = &mut *guard;
                while let Some(chunk) = queue.chunks.front_mut() {
                    let want = limit.map_or(usize::MAX, |l| l - out.len());
                    let mut n = chunk.len().min(want);
                    if line {
                        if let Some(i) = chunk[..n].iter().position(|&b| b == b'\n') {
                            n = i + 1;
                        }
                    }
                    out.extend_from_slice(&chunk[..n]);
                    chunk.advance(n);
                    queue.queued -= n;
                    if chunk.is_empty() {
                        queue.chunks.pop_front();
                    }
                    let done_line = line && out.last() == Some(&b'\n');
                    if done_line || limit.is_some_and(|l| out.len() >= l) {
                        self.room.notify_one();
                        return Ok(());
                    }
                }
                self.room.notify_one();
                if let Some(error) = &queue.error {
                    return Err(error.clone());
                }
                if queue.lost {
                    return Err(LOST.to_owned());
                }
                if queue.eof {
                    return Ok(());
                }
                guard = self.ready.wait(guard).unwrap_or_else(|e| e.into_inner());
            }
        })
        .map_err(|e| PyOSError::new_err(format!("reading the request body: {e}")))?;
        Ok(out)
    }
}

/// The file-like object the app gets as `environ["wsgi.input"]`.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct WsgiInput(pub Arc<Input>);

fn limit(size: Option<isize>) -> Option<usize> {
    size.and_then(|s| usize::try_from(s).ok())
}

#[pymethods]
impl WsgiInput {
    #[pyo3(signature = (size=-1))]
    fn read<'py>(&self, py: Python<'py>, size: Option<isize>) -> PyResult<Bound<'py, PyBytes>> {
        let data = self.0.take(py, limit(size), false)?;
        Ok(PyBytes::new(py, &data))
    }

    #[pyo3(signature = (size=-1))]
    fn readline<'py>(&self, py: Python<'py>, size: Option<isize>) -> PyResult<Bound<'py, PyBytes>> {
        let data = self.0.take(py, limit(size), true)?;
        Ok(PyBytes::new(py, &data))
    }

    #[pyo3(signature = (hint=-1))]
    fn readlines<'py>(
        &self,
        py: Python<'py>,
        hint: Option<isize>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let hint = limit(hint).filter(|h| *h > 0);
        let mut lines = Vec::new();
        let mut total = 0;
        loop {
            let line = self.0.take(py, None, true)?;
            if line.is_empty() {
                return Ok(lines);
            }
            total += line.len();
            lines.push(PyBytes::new(py, &line));
            if hint.is_some_and(|h| total >= h) {
                return Ok(lines);
            }
        }
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let line = self.0.take(py, None, true)?;
        Ok((!line.is_empty()).then(|| PyBytes::new(py, &line)))
    }
}
