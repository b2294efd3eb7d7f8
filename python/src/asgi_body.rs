//! A streamed ASGI response body: the chunks `send` queues, taken by the engine as the client
//! reads them, so a slow client holds back the app.

use crate::asgi_channel::{Exchange, Phase};
use bytes::Bytes;
use futures_core::Stream;
use pyo3::prelude::*;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use vireo_http::BoxError;

pub(crate) struct AsgiBody {
    ex: Arc<Exchange>,
    done: bool,
}

impl AsgiBody {
    pub(crate) fn new(ex: Arc<Exchange>) -> Self {
        AsgiBody { ex, done: false }
    }
}

impl Stream for AsgiBody {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        let mut inner = this.ex.lock();
        if let Some(chunk) = inner.out.pop_front() {
            inner.queued -= chunk.len();
            let release = inner.send_waiter.is_some();
            drop(inner);
            if release {
                Python::attach(|py| this.ex.drained(py));
            }
            return Poll::Ready(Some(Ok(chunk)));
        }
        if let Some((file, _)) = inner.file.as_mut() {
            // A file after streamed chunks: read here, a chunk at a time (the usual
            // `pathsend` right after the head is read on the blocking pool instead).
            match crate::asgi_file::read_chunk(file) {
                Ok(chunk) if !chunk.is_empty() => return Poll::Ready(Some(Ok(chunk))),
                Ok(_) => inner.file = None,
                Err(e) => {
                    inner.file = None;
                    drop(inner);
                    this.done = true;
                    Python::attach(|py| this.ex.finish(py));
                    return Poll::Ready(Some(Err(e.into())));
                }
            }
        }
        if matches!(inner.phase, Phase::Complete) {
            drop(inner);
            this.done = true;
            Python::attach(|py| this.ex.finish(py));
            return Poll::Ready(None);
        }
        if let Some(message) = inner.failed.clone() {
            drop(inner);
            this.done = true;
            Python::attach(|py| this.ex.finish(py));
            return Poll::Ready(Some(Err(message.into())));
        }
        inner.stream_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for AsgiBody {
    fn drop(&mut self) {
        // Dropped unfinished: the client went away (or a HEAD response needs no body).
        if !self.done {
            Python::attach(|py| self.ex.client_left(py));
        }
    }
}
