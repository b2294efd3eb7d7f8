//! The rest of a WSGI result after its first chunk, pulled on the blocking pool as the client
//! takes it; the result's `close()` is called when it ends, fails or the client goes away.

use crate::asgi_config::AppConfig;
use crate::thread_state;
use bytes::Bytes;
use futures_core::Stream;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::task::JoinHandle;
use vireo_http::BoxError;

type Next = Result<Option<Bytes>, String>;

pub(crate) struct WsgiStream {
    first: VecDeque<Bytes>,
    /// `(iterator, result)`; `None` once closed.
    iter: Option<Arc<(Py<PyAny>, Py<PyAny>)>>,
    pending: Option<JoinHandle<Next>>,
    config: Option<Arc<AppConfig>>,
}

impl WsgiStream {
    pub(crate) fn new(
        first: Vec<Bytes>,
        rest: Py<PyAny>,
        result: Py<PyAny>,
        config: Arc<AppConfig>,
    ) -> Self {
        WsgiStream {
            first: first.into(),
            iter: Some(Arc::new((rest, result))),
            pending: None,
            config: Some(config),
        }
    }

    /// A stream with nothing in it (a HEAD answer's body).
    pub(crate) fn empty() -> Self {
        WsgiStream {
            first: VecDeque::new(),
            iter: None,
            pending: None,
            config: None,
        }
    }
}

/// `next(rest)`, closing the result at its end or on an error.
fn next_chunk(iter: &(Py<PyAny>, Py<PyAny>), config: &AppConfig) -> Next {
    Python::attach(|py| {
        let (rest, result) = iter;
        let outcome = (|| -> PyResult<Option<Bytes>> {
            loop {
                let mut it = rest
                    .bind(py)
                    .clone()
                    .cast_into::<pyo3::types::PyIterator>()?;
                match it.next() {
                    None => return Ok(None),
                    Some(chunk) => {
                        let chunk = chunk?;
                        let chunk = chunk.cast::<PyBytes>().map_err(|_| {
                            pyo3::exceptions::PyTypeError::new_err(
                                "a WSGI application must yield bytes",
                            )
                        })?;
                        if !chunk.as_bytes().is_empty() {
                            return Ok(Some(Bytes::copy_from_slice(chunk.as_bytes())));
                        }
                    }
                }
            }
        })();
        match outcome {
            Ok(Some(chunk)) => Ok(Some(chunk)),
            Ok(None) => {
                close(py, result, config);
                Ok(None)
            }
            Err(e) => {
                let message = e.to_string();
                config.log(py, "Exception in WSGI application", Some(e));
                close(py, result, config);
                Err(message)
            }
        }
    })
}

fn close(py: Python<'_>, result: &Py<PyAny>, config: &AppConfig) {
    let result = result.bind(py);
    if let Ok(true) = result.hasattr("close") {
        if let Err(e) = result.call_method0("close") {
            config.log(py, "Exception closing a WSGI result", Some(e));
        }
    }
}

impl Stream for WsgiStream {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(chunk) = this.first.pop_front() {
            return Poll::Ready(Some(Ok(chunk)));
        }
        let (Some(iter), Some(config)) = (&this.iter, &this.config) else {
            return Poll::Ready(None);
        };
        let pending = this.pending.get_or_insert_with(|| {
            let (iter, config) = (iter.clone(), config.clone());
            tokio::task::spawn_blocking(move || {
                thread_state::keep_until_exit();
                next_chunk(&iter, &config)
            })
        });
        let next = match Pin::new(pending).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(next) => next,
        };
        this.pending = None;
        match next {
            Ok(Ok(Some(chunk))) => Poll::Ready(Some(Ok(chunk))),
            Ok(Ok(None)) => {
                this.iter = None;
                Poll::Ready(None)
            }
            Ok(Err(message)) => {
                this.iter = None;
                Poll::Ready(Some(Err(message.into())))
            }
            Err(e) => {
                this.iter = None;
                Poll::Ready(Some(Err(e.to_string().into())))
            }
        }
    }
}

impl Drop for WsgiStream {
    fn drop(&mut self) {
        // Ended early (the client went away): close the result once no `next` runs.
        let (Some(iter), Some(config)) = (self.iter.take(), self.config.take()) else {
            return;
        };
        let pending = self.pending.take();
        let closing = async move {
            if let Some(pending) = pending {
                let _ = pending.await;
            }
            let _ = tokio::task::spawn_blocking(move || {
                thread_state::keep_until_exit();
                Python::attach(|py| close(py, &iter.1, &config))
            })
            .await;
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(closing);
        }
    }
}
