//! Bodies at the tower boundary: Vireo's response body as an `http_body::Body`, and any
//! `http_body::Body` back as Vireo's.

use bytes::{Buf, Bytes};
use futures_core::Stream;
use http_body::{Body as HttpBody, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use vireo_http::{Body, BoxError, TrailedStream, TrailersFuture};

/// A Vireo response body as an [`http_body::Body`]: what [`TowerService`](super::TowerService)
/// responses carry, and what a tower layer's inner service returns.
pub struct ResponseBody {
    body: Body,
    /// The trailers of a [`Body::StreamWithTrailers`], sent as a last frame once its stream ends.
    trailers: Option<TrailersFuture>,
}

impl ResponseBody {
    pub(crate) fn new(body: Body) -> Self {
        match body {
            Body::StreamWithTrailers(trailed) => ResponseBody {
                body: Body::Stream(trailed.stream),
                trailers: Some(trailed.trailers),
            },
            body => ResponseBody {
                body,
                trailers: None,
            },
        }
    }

    /// The Vireo body back, with its trailers.
    fn into_body(self) -> Body {
        match (self.body, self.trailers) {
            (Body::Stream(stream), Some(trailers)) => {
                Body::StreamWithTrailers(Box::new(TrailedStream { stream, trailers }))
            }
            (body, _) => body,
        }
    }

    /// Once the body's stream has ended: its trailers as the last frame, if it has any.
    fn poll_trailers(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let Some(trailers) = self.trailers.as_mut() else {
            return Poll::Ready(None);
        };
        let made = std::task::ready!(trailers.as_mut().poll(cx));
        self.trailers = None;
        Poll::Ready(Some(Ok(Frame::trailers(made))))
    }
}

/// An empty body, as layers that answer on their own (CORS preflight, timeouts) make.
impl Default for ResponseBody {
    fn default() -> Self {
        ResponseBody::new(Body::Empty)
    }
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ResponseBody").field(&self.body).finish()
    }
}

impl HttpBody for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let chunk = match std::mem::replace(&mut self.body, Body::Empty) {
            Body::Empty => return Poll::Ready(None),
            Body::Static(bytes) => Bytes::from_static(bytes),
            Body::Bytes(bytes) => bytes,
            Body::Vec(vec) => Bytes::from(vec),
            Body::Stream(mut stream) => {
                let next = stream.as_mut().poll_next(cx);
                if let Poll::Ready(None) = next {
                    return self.poll_trailers(cx);
                }
                self.body = Body::Stream(stream);
                return next.map(|chunk| chunk.map(|result| result.map(Frame::data)));
            }
            // Made into a stream and trailers by `new`.
            Body::StreamWithTrailers(_) => return Poll::Ready(None),
            Body::SizedStream(len, mut stream) => {
                let next = stream.as_mut().poll_next(cx);
                let left = match &next {
                    Poll::Ready(Some(Ok(chunk))) => len.saturating_sub(chunk.len() as u64),
                    _ => len,
                };
                self.body = Body::SizedStream(left, stream);
                return next.map(|chunk| chunk.map(|result| result.map(Frame::data)));
            }
        };
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.body, Body::Empty) && self.trailers.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match self.body.len() {
            Some(len) => SizeHint::with_exact(len),
            None => SizeHint::default(),
        }
    }
}

/// The request body a tower layer sees: always empty. The body stays with the Vireo request,
/// read on demand and within the route's limit as usual, so a layer cannot read or replace it.
#[derive(Debug, Default, Clone, Copy)]
pub struct LayerBody;

impl HttpBody for LayerBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        true
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(0)
    }
}

/// Any `http_body::Body` as a Vireo body. A [`ResponseBody`] a layer passed through untouched is
/// unwrapped, and a body whose data is already all there is taken as bytes, so both are sent as
/// a plain response; any other is sent with `Content-Length` when its size is known exactly,
/// streamed (chunked) otherwise. The trailers of a body that is not Vireo's are dropped.
pub(crate) fn from_http_body<B>(body: B) -> Body
where
    B: HttpBody + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let mut body = Some(body);
    if let Some(ours) = (&mut body as &mut dyn std::any::Any).downcast_mut::<Option<ResponseBody>>()
    {
        return ours.take().map_or(Body::Empty, ResponseBody::into_body);
    }
    let Some(body) = body else {
        return Body::Empty;
    };
    if body.is_end_stream() {
        return Body::Empty;
    }
    let exact = body.size_hint().exact();
    let mut body = Box::pin(body);
    let mut first = None;
    if exact.is_some() {
        // One poll with a waker that wakes nothing: a body that is already complete (the
        // common case of a wrapped in-memory body) then needs no stream.
        let mut cx = Context::from_waker(std::task::Waker::noop());
        if let Poll::Ready(Some(Ok(frame))) = body.as_mut().poll_frame(&mut cx) {
            if let Ok(mut data) = frame.into_data() {
                let bytes = data.copy_to_bytes(data.remaining());
                if body.is_end_stream() {
                    return Body::Bytes(bytes);
                }
                first = Some(bytes);
            }
        }
    }
    let chunks = Box::pin(DataFrames { first, body });
    match exact {
        Some(len) => Body::SizedStream(len, chunks),
        None => Body::Stream(chunks),
    }
}

/// The data frames of a body as a stream of chunks, after a first chunk already taken;
/// trailers are skipped.
struct DataFrames<B> {
    first: Option<Bytes>,
    body: Pin<Box<B>>,
}

impl<B> Stream for DataFrames<B>
where
    B: HttpBody,
    B::Error: Into<BoxError>,
{
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(first)));
        }
        loop {
            return match self.body.as_mut().poll_frame(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error.into()))),
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(mut data) => Poll::Ready(Some(Ok(data.copy_to_bytes(data.remaining())))),
                    Err(_trailers) => continue,
                },
            };
        }
    }
}
