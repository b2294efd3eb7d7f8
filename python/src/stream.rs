//! A Python iterator or async iterator of chunks as the engine's streamed body.

use crate::app::AppInner;
use crate::coroutine::{self, Completion, Outcome, Started};
use crate::errors;
use crate::event_loop::{self, LoopState};
use bytes::Bytes;
use futures_core::Stream;
use pyo3::exceptions::asyncio::CancelledError as PyCancelledError;
use pyo3::exceptions::{PyRuntimeError, PyStopAsyncIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::oneshot;
use vireo_http::BoxError;

type Chunk = Option<Result<Bytes, BoxError>>;

/// Streams chunks from `body_iterator`: `next()` on the worker for a sync iterator;
/// `__anext__()` started inline and continued on the loop for an async one.
pub(crate) struct PyStream {
    iter: Py<PyAny>,
    is_async: bool,
    /// An `__anext__()` that suspended, and the completion of the task continuing it.
    pending: Option<(oneshot::Receiver<Outcome>, Py<Completion>)>,
    done: bool,
    app: Arc<AppInner>,
}

impl PyStream {
    pub(crate) fn new(body_iterator: Bound<'_, PyAny>, app: Arc<AppInner>) -> PyResult<Self> {
        let is_async = body_iterator.hasattr("__anext__")?;
        let iter = if is_async {
            body_iterator
        } else {
            body_iterator.try_iter()?.into_any()
        };
        Ok(PyStream {
            iter: iter.unbind(),
            is_async,
            pending: None,
            done: false,
            app,
        })
    }

    fn chunk(value: &Bound<'_, PyAny>) -> PyResult<Bytes> {
        if let Ok(b) = value.cast::<PyBytes>() {
            return Ok(Bytes::copy_from_slice(b.as_bytes()));
        }
        if let Ok(s) = value.cast::<PyString>() {
            return Ok(Bytes::copy_from_slice(s.to_str()?.as_bytes()));
        }
        Err(PyTypeError::new_err(
            "a streamed chunk must be bytes or str",
        ))
    }

    /// A failure ends the stream with an error, so the client sees an incomplete body.
    fn fail(&mut self, py: Python<'_>, err: PyErr) -> Chunk {
        self.done = true;
        let message = err.to_string();
        errors::log(py, err, &self.app, "while streaming a response");
        Some(Err(message.into()))
    }

    fn outcome(&mut self, py: Python<'_>, outcome: PyResult<Bound<'_, PyAny>>) -> Chunk {
        match outcome {
            Ok(value) => match Self::chunk(&value) {
                Ok(bytes) => Some(Ok(bytes)),
                Err(e) => self.fail(py, e),
            },
            Err(e) if e.is_instance_of::<PyStopAsyncIteration>(py) => {
                self.done = true;
                None
            }
            Err(e) => self.fail(py, e),
        }
    }

    /// Ask for the next chunk; `Err` holds a receiver and its task when an `__anext__()`
    /// suspended.
    fn next(
        &mut self,
        py: Python<'_>,
    ) -> Result<Chunk, (oneshot::Receiver<Outcome>, Py<Completion>)> {
        let iter = self.iter.bind(py).clone();
        if !self.is_async {
            let mut it = match iter.cast_into::<pyo3::types::PyIterator>() {
                Ok(it) => it,
                Err(e) => return Ok(self.fail(py, e.into())),
            };
            return Ok(match it.next() {
                None => {
                    self.done = true;
                    None
                }
                Some(outcome) => self.outcome(py, outcome),
            });
        }
        let Some(state) = event_loop::current() else {
            let err = PyRuntimeError::new_err("no event loop on this thread");
            return Ok(self.fail(py, err));
        };
        let started = iter
            .call_method0("__anext__")
            .and_then(|aw| coroutine::start(&aw, &state, None));
        let result = match started {
            Ok(Started::Done(value)) => self.outcome(py, Ok(value)),
            Ok(Started::Pending(rx, completion)) => return Err((rx, completion)),
            Err(e) => self.outcome(py, Err(e)),
        };
        state.kick(py);
        Ok(result)
    }
}

impl Stream for PyStream {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Chunk> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Some((rx, _)) = this.pending.as_mut() {
            let outcome = match Pin::new(rx).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(outcome) => outcome,
            };
            this.pending = None;
            return Poll::Ready(Python::attach(|py| {
                let outcome = outcome
                    .unwrap_or_else(|_| Err(PyRuntimeError::new_err("the stream's task ended")));
                this.outcome(py, outcome.map(|v| v.into_bound(py)))
            }));
        }
        match Python::attach(|py| this.next(py)) {
            Ok(chunk) => Poll::Ready(chunk),
            Err(pending) => {
                this.pending = Some(pending);
                // Poll the receiver once, so this task is woken when it completes.
                Pin::new(this).poll_next(cx)
            }
        }
    }
}

impl Drop for PyStream {
    /// Dropped before its end (the client left): the iterator is stopped as Starlette stops
    /// it, so its `finally` runs. A pending `__anext__()` is cancelled; an async generator
    /// paused at a `yield` is closed by an `aclose()` task on the loop; a sync one is closed
    /// here, not whenever the cycle collector finds it.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        Python::attach(|py| {
            if !self.is_async {
                let iter = self.iter.bind(py);
                let closed = match iter.hasattr("close") {
                    Ok(true) => iter.call_method0("close").map(drop),
                    Ok(false) => Ok(()),
                    Err(e) => Err(e),
                };
                if let Err(e) = closed {
                    errors::log(py, e, &self.app, "while stopping a streamed response");
                }
                return;
            }
            let Some(state) = event_loop::current() else {
                return;
            };
            let stopped = match self.pending.take() {
                Some((_, completion)) => {
                    // What the generator raises on its way out goes to the log, unless it is
                    // the cancellation itself.
                    let app = self.app.clone();
                    completion.get().when_orphaned(Box::new(move |py, outcome| {
                        if let Err(e) = outcome {
                            if !e.is_instance_of::<PyCancelledError>(py) {
                                errors::log(py, e, &app, "while stopping a streamed response");
                            }
                        }
                    }));
                    completion.get().cancel(py)
                }
                None => close_later(py, self.iter.bind(py), &state),
            };
            if let Err(e) = stopped {
                errors::log(py, e, &self.app, "while stopping a streamed response");
            }
            state.kick(py);
        });
    }
}

/// `iter.aclose()` as a task of its own on the loop (never inline: the drop may happen while
/// another task runs).
fn close_later(py: Python<'_>, iter: &Bound<'_, PyAny>, state: &LoopState) -> PyResult<()> {
    if !iter.hasattr("aclose")? {
        return Ok(());
    }
    let closing = iter.call_method0("aclose")?;
    state
        .event_loop
        .bind(py)
        .call_method1(pyo3::intern!(py, "create_task"), (closing,))?;
    Ok(())
}
