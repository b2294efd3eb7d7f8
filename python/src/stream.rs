//! A Python iterator or async iterator of chunks as the engine's streamed body.

use crate::app::AppInner;
use crate::coroutine::{self, Completion, Outcome, Started};
use crate::errors;
use crate::event_loop::{self, LoopState};
use crate::plan::CallKind;
use crate::thread_state;
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
use tokio::task::JoinHandle;
use vireo_http::BoxError;

type Chunk = Option<Result<Bytes, BoxError>>;

/// Where a sync iterator's `next()` runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Pull {
    /// On the worker, between its other connections' work.
    Worker,
    /// On the blocking pool, one chunk at a time: a `blocking=True` route's stream, which may
    /// block between chunks as its handler may.
    Pool,
}

impl Pull {
    /// Where the chunks of a stream a handler of this kind returned are made.
    pub(crate) fn after(kind: CallKind) -> Pull {
        match kind {
            CallKind::Blocking => Pull::Pool,
            CallKind::Sync | CallKind::Async => Pull::Worker,
        }
    }
}

/// What one `next()` on the pool gave: a chunk, the end, or the exception it raised.
type Pulled = PyResult<Option<Bytes>>;

/// Streams chunks from `body_iterator`: `next()` on the worker or the blocking pool (see
/// [`Pull`]) for a sync iterator; `__anext__()` started inline and continued on the loop for
/// an async one.
pub(crate) struct PyStream {
    iter: Arc<Py<PyAny>>,
    is_async: bool,
    pull: Pull,
    /// An `__anext__()` that suspended, and the completion of the task continuing it.
    pending: Option<(oneshot::Receiver<Outcome>, Py<Completion>)>,
    /// A `next()` running on the blocking pool.
    pulling: Option<JoinHandle<Pulled>>,
    done: bool,
    app: Arc<AppInner>,
}

impl PyStream {
    pub(crate) fn new(
        body_iterator: Bound<'_, PyAny>,
        app: Arc<AppInner>,
        pull: Pull,
    ) -> PyResult<Self> {
        let is_async = body_iterator.hasattr("__anext__")?;
        let iter = if is_async {
            body_iterator
        } else {
            body_iterator.try_iter()?.into_any()
        };
        Ok(PyStream {
            iter: Arc::new(iter.unbind()),
            is_async,
            pull,
            pending: None,
            pulling: None,
            done: false,
            app,
        })
    }

    /// `next()` of a sync iterator, made into a chunk.
    fn next_sync(py: Python<'_>, iter: &Py<PyAny>) -> Pulled {
        let mut it = iter
            .bind(py)
            .clone()
            .cast_into::<pyo3::types::PyIterator>()?;
        match it.next() {
            None => Ok(None),
            Some(value) => Self::chunk(&value?).map(Some),
        }
    }

    /// The next chunk of a sync iterator pulled on the blocking pool.
    fn poll_pool(&mut self, cx: &mut Context<'_>) -> Poll<Chunk> {
        let pulling = self.pulling.get_or_insert_with(|| {
            let iter = self.iter.clone();
            tokio::task::spawn_blocking(move || {
                thread_state::keep_until_exit();
                Python::attach(|py| Self::next_sync(py, &iter))
            })
        });
        let pulled = match Pin::new(pulling).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(pulled) => pulled,
        };
        self.pulling = None;
        Poll::Ready(match pulled {
            Ok(Ok(Some(bytes))) => Some(Ok(bytes)),
            Ok(Ok(None)) => {
                self.done = true;
                None
            }
            Ok(Err(e)) => Python::attach(|py| self.fail(py, e)),
            Err(e) => Python::attach(|py| {
                self.fail(
                    py,
                    PyRuntimeError::new_err(format!("the stream's thread: {e}")),
                )
            }),
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
        if !self.is_async {
            return Ok(match Self::next_sync(py, &self.iter) {
                Ok(Some(bytes)) => Some(Ok(bytes)),
                Ok(None) => {
                    self.done = true;
                    None
                }
                Err(e) => self.fail(py, e),
            });
        }
        let iter = self.iter.bind(py).clone();
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
        if !this.is_async && this.pull == Pull::Pool {
            return this.poll_pool(cx);
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
        if !self.is_async && self.pull == Pull::Pool {
            return self.close_on_pool();
        }
        Python::attach(|py| {
            if !self.is_async {
                close_sync(py, &self.iter, &self.app);
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

impl PyStream {
    /// Close a pool-pulled iterator on the pool, once no `next()` runs (its `finally` may
    /// block as its chunks may).
    fn close_on_pool(&mut self) {
        let (iter, app, pulling) = (self.iter.clone(), self.app.clone(), self.pulling.take());
        let close = move || {
            thread_state::keep_until_exit();
            Python::attach(|py| close_sync(py, &iter, &app));
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(async move {
                if let Some(pulling) = pulling {
                    let _ = pulling.await;
                }
                let _ = tokio::task::spawn_blocking(close).await;
            })),
            // Dropped off any runtime: close now (a `next()` still running would make the
            // close fail, and that is logged).
            Err(_) => close(),
        }
    }
}

/// `iter.close()` of a sync iterator that has one (a generator), so its `finally` runs now.
fn close_sync(py: Python<'_>, iter: &Py<PyAny>, app: &Arc<AppInner>) {
    let iter = iter.bind(py);
    let closed = match iter.hasattr("close") {
        Ok(true) => iter.call_method0("close").map(drop),
        Ok(false) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(e) = closed {
        errors::log(py, e, app, "while stopping a streamed response");
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
