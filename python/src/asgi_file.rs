//! A file sent with ASGI's `http.response.pathsend`: read on the blocking pool in chunks as
//! the client takes them, so the app's loop never reads it.

use bytes::Bytes;
use futures_core::Stream;
use std::fs::File;
use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::task::JoinHandle;
use vireo_http::BoxError;

const CHUNK: usize = 64 * 1024;

type Read64 = (File, std::io::Result<Bytes>);

pub(crate) struct FileStream {
    file: Option<File>,
    pending: Option<JoinHandle<Read64>>,
}

impl FileStream {
    pub(crate) fn new(file: File) -> Self {
        FileStream {
            file: Some(file),
            pending: None,
        }
    }
}

/// The next chunk of `file`; empty at its end.
pub(crate) fn read_chunk(file: &mut File) -> std::io::Result<Bytes> {
    let mut buf = vec![0; CHUNK];
    let n = file.read(&mut buf)?;
    buf.truncate(n);
    Ok(Bytes::from(buf))
}

impl Stream for FileStream {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.pending.is_none() {
            let Some(mut file) = this.file.take() else {
                return Poll::Ready(None);
            };
            this.pending = Some(tokio::task::spawn_blocking(move || {
                let chunk = read_chunk(&mut file);
                (file, chunk)
            }));
        }
        let Some(pending) = this.pending.as_mut() else {
            return Poll::Ready(None);
        };
        let done = match Pin::new(pending).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(done) => done,
        };
        this.pending = None;
        match done {
            Ok((file, Ok(chunk))) if !chunk.is_empty() => {
                this.file = Some(file);
                Poll::Ready(Some(Ok(chunk)))
            }
            Ok((_, Ok(_))) => Poll::Ready(None),
            Ok((_, Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Err(e) => Poll::Ready(Some(Err(e.to_string().into()))),
        }
    }
}
