//! The response a service returns: status, header fields and a body.

use bytes::Bytes;
use futures_core::Stream;
use http::{HeaderMap, HeaderValue, StatusCode};
use std::cell::RefCell;
use std::fmt;
use std::pin::Pin;

/// The error a streaming body may end with. The connection is then closed without the final
/// chunk, so the client sees the body is incomplete.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A stream of body chunks, sent with chunked encoding as each is produced.
pub type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>;

/// A response body.
pub enum Body {
    /// No body.
    Empty,
    /// Bytes known at compile time: sent without copying or counting references.
    Static(&'static [u8]),
    /// Bytes held in memory.
    Bytes(Bytes),
    /// Chunks produced over time; each is written when it is produced, and the next is not
    /// asked for until the client has taken the last, so a slow reader holds back the producer.
    /// Sent with chunked encoding (close-delimited to HTTP/1.0 clients).
    Stream(BodyStream),
    /// Chunks produced over time, adding up to exactly this many bytes: sent with
    /// `Content-Length`, such as a file. A stream that yields more or fewer bytes ends the
    /// connection, since the framing can no longer be trusted.
    SizedStream(u64, BodyStream),
}

impl Body {
    /// The body's length, when it is known before sending.
    pub fn len(&self) -> Option<u64> {
        match self {
            Body::Empty => Some(0),
            Body::Static(b) => Some(b.len() as u64),
            Body::Bytes(b) => Some(b.len() as u64),
            Body::Stream(_) => None,
            Body::SizedStream(len, _) => Some(*len),
        }
    }

    /// Whether the body is known to be empty.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// A streaming body from any stream of byte chunks.
    pub fn stream<S, B, E>(stream: S) -> Body
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: Into<Bytes>,
        E: Into<BoxError>,
    {
        Body::Stream(Box::pin(MapChunks(stream)))
    }
}

struct MapChunks<S>(S);

impl<S, B, E> Stream for MapChunks<S>
where
    S: Stream<Item = Result<B, E>>,
    B: Into<Bytes>,
    E: Into<BoxError>,
{
    type Item = Result<Bytes, BoxError>;

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        // SAFETY: `MapChunks` is a plain wrapper with no Drop and no other field; `self.0` is
        // never moved out of the pinned `MapChunks`, so projecting the pin to it is sound.
        let inner = unsafe { self.map_unchecked_mut(|s| &mut s.0) };
        inner
            .poll_next(cx)
            .map(|item| item.map(|r| r.map(Into::into).map_err(Into::into)))
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Body::Empty => f.write_str("Body::Empty"),
            Body::Static(b) => write!(f, "Body::Static({} bytes)", b.len()),
            Body::Bytes(b) => write!(f, "Body::Bytes({} bytes)", b.len()),
            Body::Stream(_) => f.write_str("Body::Stream"),
            Body::SizedStream(len, _) => write!(f, "Body::SizedStream({len} bytes)"),
        }
    }
}

impl From<&'static str> for Body {
    fn from(s: &'static str) -> Self {
        Body::Static(s.as_bytes())
    }
}

impl From<&'static [u8]> for Body {
    fn from(b: &'static [u8]) -> Self {
        Body::Static(b)
    }
}

impl From<String> for Body {
    fn from(s: String) -> Self {
        Body::Bytes(Bytes::from(s))
    }
}

impl From<Vec<u8>> for Body {
    fn from(v: Vec<u8>) -> Self {
        Body::Bytes(Bytes::from(v))
    }
}

impl From<Bytes> for Body {
    fn from(b: Bytes) -> Self {
        Body::Bytes(b)
    }
}

/// Header maps kept per thread: a response takes a cleared map here and gives it back when it
/// is dropped, so building a response with a few headers does not allocate once warm. The maps
/// are boxed so a `Response` is small to move and to hold in a connection's state.
const HEADER_MAP_POOL_SIZE: usize = 64;

#[allow(clippy::vec_box)] // the boxes are what responses hold; pooling them saves the allocation
mod pool {
    use super::*;
    thread_local! {
        pub(super) static HEADER_MAPS: RefCell<Vec<Box<HeaderMap>>> = const { RefCell::new(Vec::new()) };
    }
}
use pool::HEADER_MAPS;

/// Free every header map this thread's pool holds.
pub(crate) fn release_pooled_header_maps() {
    let _ = HEADER_MAPS.try_with(|pool| std::mem::take(&mut *pool.borrow_mut()));
}

fn pooled_header_map() -> Box<HeaderMap> {
    HEADER_MAPS
        .try_with(|pool| pool.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// An HTTP response.
///
/// ```
/// use vireo_http::{Response, Body};
/// use http::{header, StatusCode};
/// let mut res = Response::new(StatusCode::CREATED, "made");
/// res.headers_mut().insert(header::CONTENT_TYPE, "text/plain".parse().unwrap());
/// assert_eq!(res.status(), StatusCode::CREATED);
/// assert_eq!(res.body().len(), Some(4));
/// ```
pub struct Response {
    status: StatusCode,
    /// Always `Some` until the response is dropped, when the map goes back to the pool.
    headers: Option<Box<HeaderMap>>,
    body: Body,
    extensions: http::Extensions,
}

impl Response {
    /// A response with this status and body, and no header fields.
    pub fn new(status: StatusCode, body: impl Into<Body>) -> Self {
        Response {
            status,
            headers: Some(pooled_header_map()),
            body: body.into(),
            extensions: http::Extensions::new(),
        }
    }

    /// `200 OK` with a `text/plain; charset=utf-8` body.
    pub fn text(body: impl Into<Body>) -> Self {
        let mut res = Response::new(StatusCode::OK, body);
        res.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        res
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Change the status code.
    pub fn set_status(&mut self, status: StatusCode) {
        self.status = status;
    }

    /// The header fields.
    pub fn headers(&self) -> &HeaderMap {
        self.headers
            .as_deref()
            .expect("a response holds its headers until dropped")
    }

    /// The header fields, to change.
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        self.headers
            .as_deref_mut()
            .expect("a response holds its headers until dropped")
    }

    /// Typed values attached to the response for the layers it passes through on its way out
    /// (the framework keeps the error a response was made from here). Never sent.
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// Typed values attached to the response, to change.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        &mut self.extensions
    }

    /// The body.
    pub fn body(&self) -> &Body {
        &self.body
    }

    /// Replace the body.
    pub fn set_body(&mut self, body: impl Into<Body>) {
        self.body = body.into();
    }

    /// Take the body out, leaving [`Body::Empty`].
    pub fn take_body(&mut self) -> Body {
        std::mem::replace(&mut self.body, Body::Empty)
    }
}

impl Drop for Response {
    fn drop(&mut self) {
        let Some(mut headers) = self.headers.take() else {
            return;
        };
        if !crate::server::buffers::on_worker_thread() {
            return;
        }
        headers.clear();
        // During thread teardown the pool may be gone; the map is then simply freed.
        let _ = HEADER_MAPS.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() < HEADER_MAP_POOL_SIZE {
                pool.push(headers);
            }
        });
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", self.headers())
            .field("body", &self.body)
            .finish()
    }
}
