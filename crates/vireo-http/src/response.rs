//! The response a service returns: status, header fields and a body.

pub use crate::proto::ContentType;
use bytes::Bytes;
use futures_core::Stream;
use http::{HeaderMap, StatusCode};
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;

/// The error a streaming body may end with. The connection is then closed without the final
/// chunk, so the client sees the body is incomplete.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A stream of body chunks, sent with chunked encoding as each is produced.
pub type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>;

/// Trailer fields, made once a streamed body has ended (a checksum, a final status).
pub type TrailersFuture = Pin<Box<dyn Future<Output = HeaderMap> + Send>>;

/// A response body.
pub enum Body {
    /// No body.
    Empty,
    /// Bytes known at compile time: sent without copying or counting references.
    Static(&'static [u8]),
    /// Bytes held in memory.
    Bytes(Bytes),
    /// Bytes held in a vector, as a `String` or `Vec<u8>` body is kept: taken as it is, where
    /// making it [`Body::Bytes`] would allocate when the vector has spare capacity.
    Vec(Vec<u8>),
    /// Chunks produced over time; each is written when it is produced, and the next is not
    /// asked for until the client has taken the last, so a slow reader holds back the producer.
    /// Sent with chunked encoding (close-delimited to HTTP/1.0 clients).
    Stream(BodyStream),
    /// Chunks produced over time, adding up to exactly this many bytes: sent with
    /// `Content-Length`, such as a file. A stream that yields more or fewer bytes ends the
    /// connection, since the framing can no longer be trusted.
    SizedStream(u64, BodyStream),
    /// A stream as [`Body::Stream`], then the trailer fields its future makes once the stream
    /// has ended: sent as HTTP/2 trailers, or in the last chunk of HTTP/1.1's chunked encoding.
    /// An HTTP/1.0 client, which has no chunked encoding, gets the body without them. Fields
    /// that frame or route a message (`Content-Length`, `Transfer-Encoding`, `Host`, connection
    /// options and the like) are left out, as RFC 9110 §6.5.1 asks.
    StreamWithTrailers(Box<TrailedStream>),
}

/// A streamed body and the trailer fields that follow it: what [`Body::StreamWithTrailers`]
/// holds (boxed, so a body stays small to move).
pub struct TrailedStream {
    /// The body's chunks.
    pub stream: BodyStream,
    /// The trailer fields, made once the stream has ended.
    pub trailers: TrailersFuture,
}

impl fmt::Debug for TrailedStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrailedStream").finish_non_exhaustive()
    }
}

impl Body {
    /// The body's length, when it is known before sending.
    pub fn len(&self) -> Option<u64> {
        match self {
            Body::Empty => Some(0),
            Body::Static(b) => Some(b.len() as u64),
            Body::Bytes(b) => Some(b.len() as u64),
            Body::Vec(v) => Some(v.len() as u64),
            Body::Stream(_) | Body::StreamWithTrailers(_) => None,
            Body::SizedStream(len, _) => Some(*len),
        }
    }

    /// The bytes of a body held in memory ([`Body::Static`], [`Body::Bytes`], [`Body::Vec`]),
    /// an empty slice for [`Body::Empty`], and `None` for a streamed one.
    pub fn in_memory(&self) -> Option<&[u8]> {
        match self {
            Body::Empty => Some(&[]),
            Body::Static(b) => Some(b),
            Body::Bytes(b) => Some(b),
            Body::Vec(v) => Some(v),
            Body::Stream(_) | Body::SizedStream(..) | Body::StreamWithTrailers(_) => None,
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
        Body::Stream(Box::pin(MapChunks { chunks: stream }))
    }

    /// A streaming body followed by trailer fields, which `trailers` makes once the stream has
    /// ended (see [`Body::StreamWithTrailers`]).
    pub fn stream_with_trailers<S, B, E, T>(stream: S, trailers: T) -> Body
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: Into<Bytes>,
        E: Into<BoxError>,
        T: Future<Output = HeaderMap> + Send + 'static,
    {
        Body::StreamWithTrailers(Box::new(TrailedStream {
            stream: Box::pin(MapChunks { chunks: stream }),
            trailers: Box::pin(trailers),
        }))
    }
}

pin_project_lite::pin_project! {
    struct MapChunks<S> {
        #[pin]
        chunks: S,
    }
}

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
        self.project()
            .chunks
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
            Body::Vec(v) => write!(f, "Body::Vec({} bytes)", v.len()),
            Body::Stream(_) => f.write_str("Body::Stream"),
            Body::StreamWithTrailers(_) => f.write_str("Body::StreamWithTrailers"),
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
        Body::Vec(s.into_bytes())
    }
}

impl From<Vec<u8>> for Body {
    fn from(v: Vec<u8>) -> Self {
        Body::Vec(v)
    }
}

impl From<Bytes> for Body {
    fn from(b: Bytes) -> Self {
        Body::Bytes(b)
    }
}

/// This type's pool in [`RESPONSES`]; pool 0 holds parts with an empty header map.
fn pool_of(content_type: ContentType) -> usize {
    1 + content_type as usize
}

/// Responses' parts kept per thread, per kind: with an empty header map, and with a map holding
/// just one [`ContentType`]. A response takes its parts here and gives them back when it is
/// dropped, so building a response with a few headers does not allocate once warm.
const RESPONSE_POOL_SIZE: usize = 64;

type ResponsePools = [Vec<Box<Parts>>; 1 + ContentType::ALL.len()];

#[allow(clippy::vec_box)] // the boxes are what responses hold; pooling them saves the allocation
mod pool {
    use super::*;
    thread_local! {
        pub(super) static RESPONSES: RefCell<ResponsePools> =
            const { RefCell::new([const { Vec::new() }; 1 + ContentType::ALL.len()]) };
    }
}
use pool::RESPONSES;

/// Free every response part this thread's pools hold.
pub(crate) fn release_pooled_responses() {
    let _ = RESPONSES.try_with(|pools| std::mem::take(&mut *pools.borrow_mut()));
}

/// Parts from the pool of kind `pool`, if it has some.
fn pooled_parts(pool: usize) -> Option<Box<Parts>> {
    RESPONSES
        .try_with(|pools| pools.borrow_mut()[pool].pop())
        .ok()
        .flatten()
}

/// What a response holds. Boxed, so that a response moved through every middleware layer and
/// handler future is one pointer; pooled, so the header map keeps its allocation.
struct Parts {
    status: StatusCode,
    headers: HeaderMap,
    /// Set while the map holds exactly this type's field and nothing else, as it was taken
    /// from that type's pool; cleared when the fields are borrowed to change.
    untouched: Option<ContentType>,
    body: Body,
    extensions: http::Extensions,
}

impl Parts {
    /// Put the body into parts from the pool, which hold none (the drop empties them): written
    /// over without dropping the empty one.
    fn set_pooled_body(&mut self, body: Body) {
        debug_assert!(matches!(self.body, Body::Empty));
        std::mem::forget(std::mem::replace(&mut self.body, body));
    }

    /// Parts with this status and body and no header fields, from the pool when it has some.
    /// Always inlined, into `Response::new` and `Response::typed`.
    #[inline(always)]
    fn plain(status: StatusCode, body: impl Into<Body>) -> Box<Parts> {
        // The body is converted where it is stored, after the pool is asked, so it is not built
        // on the stack and copied.
        match pooled_parts(0) {
            Some(mut parts) => {
                parts.status = status;
                parts.set_pooled_body(body.into());
                parts
            }
            None => Parts::new(status, body.into()),
        }
    }

    fn new(status: StatusCode, body: Body) -> Box<Parts> {
        Box::new(Parts {
            status,
            headers: HeaderMap::new(),
            untouched: None,
            body,
            extensions: http::Extensions::new(),
        })
    }
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
    /// Taken out only by the drop, back to the pool. Not an `Option`: a never-null pointer
    /// leaves `Option<Response>` one word, and an enum of a response or a boxed future two
    /// (see the framework's `Reply`).
    parts: ManuallyDrop<Box<Parts>>,
}

impl Response {
    /// A response with this status and body, and no header fields.
    pub fn new(status: StatusCode, body: impl Into<Body>) -> Self {
        Response {
            parts: ManuallyDrop::new(Parts::plain(status, body)),
        }
    }

    /// A response with this status, body and `Content-Type`, and no other header field.
    ///
    /// ```
    /// use vireo_http::{ContentType, Response};
    /// let res = Response::typed(http::StatusCode::OK, "{}", ContentType::Json);
    /// assert_eq!(res.headers()["content-type"], "application/json");
    /// ```
    pub fn typed(status: StatusCode, body: impl Into<Body>, content_type: ContentType) -> Self {
        // As in `new`, the body is converted only once its place is known.
        let parts = match pooled_parts(pool_of(content_type)) {
            Some(mut parts) => {
                parts.status = status;
                parts.set_pooled_body(body.into());
                parts
            }
            None => {
                let mut parts = Parts::plain(status, body);
                parts
                    .headers
                    .insert(http::header::CONTENT_TYPE, content_type.value());
                parts
            }
        };
        let mut res = Response {
            parts: ManuallyDrop::new(parts),
        };
        res.p_mut().untouched = Some(content_type);
        res
    }

    /// `200 OK` with a `text/plain; charset=utf-8` body.
    pub fn text(body: impl Into<Body>) -> Self {
        Response::typed(StatusCode::OK, body, ContentType::Text)
    }

    fn p(&self) -> &Parts {
        &self.parts
    }

    fn p_mut(&mut self) -> &mut Parts {
        &mut self.parts
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.p().status
    }

    /// Change the status code.
    pub fn set_status(&mut self, status: StatusCode) {
        self.p_mut().status = status;
    }

    /// The header fields.
    pub fn headers(&self) -> &HeaderMap {
        &self.p().headers
    }

    /// The header fields, to change.
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        let parts = self.p_mut();
        parts.untouched = None;
        &mut parts.headers
    }

    /// The `Content-Type` this response was made with by [`Response::typed`], while that is
    /// still its only header field (nothing has borrowed the fields to change them).
    pub(crate) fn only_content_type(&self) -> Option<ContentType> {
        self.p().untouched
    }

    /// Typed values attached to the response for the layers it passes through on its way out
    /// (the framework keeps the error a response was made from here). Never sent.
    pub fn extensions(&self) -> &http::Extensions {
        &self.p().extensions
    }

    /// Typed values attached to the response, to change.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        &mut self.p_mut().extensions
    }

    /// The body.
    pub fn body(&self) -> &Body {
        &self.p().body
    }

    /// Replace the body.
    pub fn set_body(&mut self, body: impl Into<Body>) {
        self.p_mut().body = body.into();
    }

    /// Take the body out, leaving [`Body::Empty`].
    pub fn take_body(&mut self) -> Body {
        std::mem::replace(&mut self.p_mut().body, Body::Empty)
    }
}

impl Drop for Response {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once and nothing uses the parts after it.
        let mut parts = unsafe { ManuallyDrop::take(&mut self.parts) };
        if !crate::pool::on_worker_thread() {
            return;
        }
        // Most bodies are empty or static bytes (which the connection copies where they lie),
        // with nothing to drop: those are written over without the out-of-line drop.
        if matches!(parts.body, Body::Empty | Body::Static(_)) {
            std::mem::forget(std::mem::replace(&mut parts.body, Body::Empty));
        } else {
            parts.body = Body::Empty;
        }
        parts.extensions.clear();
        let pool = match parts.untouched {
            Some(content_type) => pool_of(content_type),
            None => {
                parts.headers.clear();
                0
            }
        };
        // During thread teardown the pools may be gone; the parts are then simply freed.
        let _ = RESPONSES.try_with(|pools| {
            let pool = &mut pools.borrow_mut()[pool];
            if pool.len() < RESPONSE_POOL_SIZE {
                pool.push(parts);
            }
        });
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status())
            .field("headers", self.headers())
            .field("body", self.body())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{header, HeaderValue};

    fn pooled(pool: usize) -> usize {
        RESPONSES.with(|pools| pools.borrow()[pool].len())
    }

    #[test]
    fn in_memory_bodies_give_their_bytes_and_streams_none() {
        let mut text = String::with_capacity(64);
        text.push_str("spare capacity");
        let body = Body::from(text);
        assert!(matches!(body, Body::Vec(_)), "taken as it is: {body:?}");
        assert_eq!(body.in_memory(), Some(&b"spare capacity"[..]));
        assert_eq!(body.len(), Some(14));
        assert_eq!(Body::from(vec![1u8, 2]).in_memory(), Some(&[1u8, 2][..]));
        assert_eq!(Body::from("s").in_memory(), Some(&b"s"[..]));
        assert_eq!(
            Body::from(Bytes::from_static(b"b")).in_memory(),
            Some(&b"b"[..])
        );
        assert_eq!(Body::Empty.in_memory(), Some(&[][..]));
        let stream = Body::stream(futures_util::stream::empty::<Result<Bytes, BoxError>>());
        assert_eq!(stream.in_memory(), None);
    }

    #[test]
    fn a_typed_map_goes_back_to_its_pool_only_while_untouched() {
        crate::pool::mark_worker_thread();
        drop(Response::typed(StatusCode::OK, "{}", ContentType::Json));
        assert_eq!(pooled(pool_of(ContentType::Json)), 1);
        let res = Response::typed(StatusCode::OK, "{}", ContentType::Json);
        assert_eq!(
            pooled(pool_of(ContentType::Json)),
            0,
            "the pooled map was taken"
        );
        assert_eq!(res.headers().len(), 1);
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
        drop(res);

        let mut res = Response::typed(StatusCode::OK, "{}", ContentType::Json);
        res.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/csv"));
        res.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        drop(res);
        assert_eq!(
            pooled(pool_of(ContentType::Json)),
            0,
            "a changed map is not typed"
        );
        assert_eq!(pooled(0), 1, "it goes back empty");
        let res = Response::typed(StatusCode::OK, "{}", ContentType::Json);
        assert_eq!(res.headers().len(), 1, "the changed map came back cleared");
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
        let plain = Response::new(StatusCode::OK, "x");
        assert!(plain.headers().is_empty());
    }

    #[test]
    fn a_response_is_one_never_null_word() {
        let word = std::mem::size_of::<usize>();
        assert_eq!(std::mem::size_of::<Response>(), word);
        assert_eq!(
            std::mem::size_of::<Option<Response>>(),
            word,
            "None fits in the null pointer"
        );
    }

    #[test]
    fn pooled_parts_keep_nothing_of_the_response_they_served() {
        crate::pool::mark_worker_thread();
        let owner = std::sync::Arc::new(7u8);
        let mut res = Response::new(StatusCode::OK, Bytes::from_owner(ArcOwner(owner.clone())));
        res.extensions_mut().insert(owner.clone());
        res.set_status(StatusCode::ACCEPTED);
        drop(res);
        assert_eq!(
            std::sync::Arc::strong_count(&owner),
            1,
            "the body and the extensions were dropped with the response"
        );
        let reused = Response::new(StatusCode::OK, "next");
        assert_eq!(reused.status(), StatusCode::OK);
        assert_eq!(reused.body().len(), Some(4));
        assert!(reused.extensions().get::<std::sync::Arc<u8>>().is_none());
    }

    /// Bytes owned through a shared count, so a test can tell when the body is dropped.
    struct ArcOwner(std::sync::Arc<u8>);

    impl AsRef<[u8]> for ArcOwner {
        fn as_ref(&self) -> &[u8] {
            std::slice::from_ref(&*self.0)
        }
    }

    #[test]
    fn every_content_type_has_its_own_pool_and_value() {
        crate::pool::mark_worker_thread();
        for content_type in ContentType::ALL {
            let line = [b"content-type: ", content_type.value().as_bytes(), b"\r\n"].concat();
            let mut encoded = Vec::new();
            content_type.put_field_line(&mut encoded);
            assert_eq!(encoded, line, "{content_type:?}");
            let res = Response::typed(StatusCode::OK, "", content_type);
            assert_eq!(res.headers()[header::CONTENT_TYPE], content_type.value());
            drop(res);
            let again = Response::typed(StatusCode::OK, "", content_type);
            assert_eq!(again.headers()[header::CONTENT_TYPE], content_type.value());
        }
    }
}
