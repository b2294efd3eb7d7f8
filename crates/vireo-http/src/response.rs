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

/// The `Content-Type` most responses carry. A response made with [`Response::typed`] starts
/// from a pooled header map that already holds the field, and gives it back unchanged if
/// nothing changed its fields: inserting and clearing the field through `HeaderMap` costs more
/// than the rest of encoding a small response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentType {
    /// `text/plain; charset=utf-8`
    Text,
    /// `text/html; charset=utf-8`
    Html,
    /// `application/json`
    Json,
    /// `application/octet-stream`
    OctetStream,
}

impl ContentType {
    const ALL: [ContentType; 4] = [
        ContentType::Text,
        ContentType::Html,
        ContentType::Json,
        ContentType::OctetStream,
    ];

    /// The field value.
    pub const fn value(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            ContentType::Text => "text/plain; charset=utf-8",
            ContentType::Html => "text/html; charset=utf-8",
            ContentType::Json => "application/json",
            ContentType::OctetStream => "application/octet-stream",
        })
    }

    /// This type's pool in [`HEADER_MAPS`]; pool 0 holds empty maps.
    fn pool(self) -> usize {
        1 + self as usize
    }
}

/// Header maps kept per thread, per kind: empty ones, and ones holding just one
/// [`ContentType`]. A response takes a map here and gives it back when it is dropped, so
/// building a response with a few headers does not allocate once warm. The maps are boxed so a
/// `Response` is small to move and to hold in a connection's state.
const HEADER_MAP_POOL_SIZE: usize = 64;

type HeaderMapPools = [Vec<Box<HeaderMap>>; 1 + ContentType::ALL.len()];

#[allow(clippy::vec_box)] // the boxes are what responses hold; pooling them saves the allocation
mod pool {
    use super::*;
    thread_local! {
        pub(super) static HEADER_MAPS: RefCell<HeaderMapPools> =
            const { RefCell::new([const { Vec::new() }; 1 + ContentType::ALL.len()]) };
    }
}
use pool::HEADER_MAPS;

/// Free every header map this thread's pools hold.
pub(crate) fn release_pooled_header_maps() {
    let _ = HEADER_MAPS.try_with(|pools| std::mem::take(&mut *pools.borrow_mut()));
}

/// A map from the pool of kind `pool`, if it has one.
fn pooled_header_map(pool: usize) -> Option<Box<HeaderMap>> {
    HEADER_MAPS
        .try_with(|pools| pools.borrow_mut()[pool].pop())
        .ok()
        .flatten()
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
    /// Set while the map holds exactly this type's field and nothing else, as it was taken
    /// from that type's pool; cleared when the fields are borrowed to change.
    untouched: Option<ContentType>,
    body: Body,
    extensions: http::Extensions,
}

impl Response {
    /// A response with this status and body, and no header fields.
    pub fn new(status: StatusCode, body: impl Into<Body>) -> Self {
        Response {
            status,
            headers: Some(pooled_header_map(0).unwrap_or_default()),
            untouched: None,
            body: body.into(),
            extensions: http::Extensions::new(),
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
        let headers = pooled_header_map(content_type.pool()).unwrap_or_else(|| {
            let mut map = pooled_header_map(0).unwrap_or_default();
            map.insert(http::header::CONTENT_TYPE, content_type.value());
            map
        });
        Response {
            status,
            headers: Some(headers),
            untouched: Some(content_type),
            body: body.into(),
            extensions: http::Extensions::new(),
        }
    }

    /// `200 OK` with a `text/plain; charset=utf-8` body.
    pub fn text(body: impl Into<Body>) -> Self {
        Response::typed(StatusCode::OK, body, ContentType::Text)
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
        self.untouched = None;
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
        let pool = match self.untouched {
            Some(content_type) => content_type.pool(),
            None => {
                headers.clear();
                0
            }
        };
        // During thread teardown the pools may be gone; the map is then simply freed.
        let _ = HEADER_MAPS.try_with(|pools| {
            let pool = &mut pools.borrow_mut()[pool];
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

#[cfg(test)]
mod tests {
    use super::*;
    use http::header;

    fn pooled(pool: usize) -> usize {
        HEADER_MAPS.with(|pools| pools.borrow()[pool].len())
    }

    #[test]
    fn a_typed_map_goes_back_to_its_pool_only_while_untouched() {
        crate::server::buffers::mark_worker_thread();
        drop(Response::typed(StatusCode::OK, "{}", ContentType::Json));
        assert_eq!(pooled(ContentType::Json.pool()), 1);
        let res = Response::typed(StatusCode::OK, "{}", ContentType::Json);
        assert_eq!(
            pooled(ContentType::Json.pool()),
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
            pooled(ContentType::Json.pool()),
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
    fn every_content_type_has_its_own_pool_and_value() {
        crate::server::buffers::mark_worker_thread();
        for content_type in ContentType::ALL {
            let res = Response::typed(StatusCode::OK, "", content_type);
            assert_eq!(res.headers()[header::CONTENT_TYPE], content_type.value());
            drop(res);
            let again = Response::typed(StatusCode::OK, "", content_type);
            assert_eq!(again.headers()[header::CONTENT_TYPE], content_type.value());
        }
    }
}
