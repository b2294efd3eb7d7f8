//! A streamed response body compressed with gzip as it is sent, for `GZipMiddleware`: each
//! chunk is compressed and flushed (`Z_SYNC_FLUSH`) when it is made, as Starlette's does, so
//! a client reading an event stream or a long response gets every chunk when it is produced.

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use futures_core::Stream;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};
use vireo_http::{Body, BodyStream, BoxError};

/// `body` compressed with gzip at `level` (0 to 9); bodies held in memory are compressed in
/// Python, so only streams come here.
pub(crate) fn gzip_body(body: Body, level: u32) -> Body {
    let wrap = |stream| -> BodyStream {
        Box::pin(GzipStream {
            inner: Some(stream),
            encoder: GzEncoder::new(Vec::new(), Compression::new(level)),
        })
    };
    match body {
        Body::Stream(stream) | Body::SizedStream(_, stream) => Body::Stream(wrap(stream)),
        Body::StreamWithTrailers(mut trailed) => {
            let stream = std::mem::replace(&mut trailed.stream, Box::pin(Ended));
            trailed.stream = wrap(stream);
            Body::StreamWithTrailers(trailed)
        }
        in_memory => in_memory,
    }
}

/// The chunks of `inner`, compressed; `None` once it has ended and the gzip trailer is out.
struct GzipStream {
    inner: Option<BodyStream>,
    encoder: GzEncoder<Vec<u8>>,
}

impl GzipStream {
    /// What the encoder has made so far.
    fn take_output(&mut self) -> Bytes {
        Bytes::from(std::mem::take(self.encoder.get_mut()))
    }
}

impl Stream for GzipStream {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            let Some(inner) = this.inner.as_mut() else {
                return Poll::Ready(None);
            };
            match inner.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(error))) => {
                    this.inner = None;
                    return Poll::Ready(Some(Err(error)));
                }
                Poll::Ready(Some(Ok(chunk))) => {
                    if chunk.is_empty() {
                        continue;
                    }
                    if let Err(error) = this
                        .encoder
                        .write_all(&chunk)
                        .and_then(|()| this.encoder.flush())
                    {
                        this.inner = None;
                        return Poll::Ready(Some(Err(error.into())));
                    }
                    return Poll::Ready(Some(Ok(this.take_output())));
                }
                Poll::Ready(None) => {
                    this.inner = None;
                    let result = this.encoder.try_finish().map(|()| this.take_output());
                    return Poll::Ready(Some(result.map_err(Into::into)));
                }
            }
        }
    }
}

/// A stream with nothing in it: what a trailed body holds while its stream is swapped.
struct Ended;

impl Stream for Ended {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzDecoder;
    use std::task::Waker;

    fn chunks(body: Body) -> Vec<Bytes> {
        let Body::Stream(mut stream) = body else {
            panic!("not a stream")
        };
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = Vec::new();
        while let Poll::Ready(Some(chunk)) = stream.as_mut().poll_next(&mut cx) {
            out.push(chunk.expect("no error"));
        }
        out
    }

    #[test]
    fn each_chunk_is_flushed_and_the_whole_decompresses_to_the_body() {
        let parts: Vec<Result<Bytes, BoxError>> = vec![
            Ok(Bytes::from_static(b"chunk 0\n")),
            Ok(Bytes::new()),
            Ok(Bytes::from_static(b"chunk 1\n")),
        ];
        let body = Body::stream(ready_stream(parts));
        let out = chunks(gzip_body(body, 9));
        // One compressed piece per non-empty chunk, then the gzip trailer.
        assert_eq!(out.len(), 3);
        let mut partial = GzDecoder::new(Vec::new());
        partial.write_all(&out[0]).unwrap();
        partial.flush().unwrap();
        assert_eq!(
            partial.get_ref(),
            b"chunk 0\n",
            "the first chunk decodes on its own"
        );
        let mut whole = GzDecoder::new(Vec::new());
        whole.write_all(&out.concat()).unwrap();
        assert_eq!(whole.finish().unwrap(), b"chunk 0\nchunk 1\n");
    }

    #[test]
    fn a_sized_stream_becomes_chunked_and_memory_is_left_alone() {
        let body = Body::SizedStream(3, Box::pin(ready_stream(vec![Ok(Bytes::from("abc"))])));
        assert!(matches!(gzip_body(body, 6), Body::Stream(_)));
        let in_memory = Body::Bytes(Bytes::from_static(b"x"));
        assert!(matches!(gzip_body(in_memory, 6), Body::Bytes(_)));
    }

    /// A stream of the given items, ready at once.
    fn ready_stream(
        items: Vec<Result<Bytes, BoxError>>,
    ) -> impl Stream<Item = Result<Bytes, BoxError>> + Send {
        struct Iter(std::vec::IntoIter<Result<Bytes, BoxError>>);
        impl Stream for Iter {
            type Item = Result<Bytes, BoxError>;
            fn poll_next(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
            ) -> Poll<Option<Self::Item>> {
                Poll::Ready(self.0.next())
            }
        }
        Iter(items.into_iter())
    }
}
