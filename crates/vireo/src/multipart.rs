//! `multipart/form-data` bodies, streamed, with `multer` (the `multipart` feature).

use crate::error::{Error, Rejection};
use crate::request::BodyStream;
use crate::Request;
use bytes::Bytes;
use http::StatusCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Limits on a multipart body, beyond the route's body limit (which bounds the whole stream).
#[derive(Debug, Clone)]
pub struct MultipartLimits {
    /// Most bytes in any one part (default: no limit beyond the body limit).
    pub max_part_size: Option<u64>,
    /// Most parts (default 1,000).
    pub max_parts: usize,
    /// Most bytes read while looking for a part's head: the preamble before the first part,
    /// or a part's header lines (default 64 KiB). This bounds what the form holds in memory
    /// between parts, whatever the route's body limit.
    pub max_head_size: usize,
}

impl Default for MultipartLimits {
    fn default() -> Self {
        MultipartLimits {
            max_part_size: None,
            max_parts: 1_000,
            max_head_size: 64 * 1024,
        }
    }
}

/// A `multipart/form-data` request body, read part by part as it arrives: file parts need not
/// fit in memory. Use it in a [`crate::streaming_body`] handler.
///
/// ```
/// use vireo::{App, Multipart, Request, streaming_body};
/// let mut app = App::new();
/// app.post("/upload", streaming_body(|mut req: Request| async move {
///     let mut form = Multipart::from_request(&mut req)?;
///     let mut names = Vec::new();
///     while let Some(mut part) = form.next_part().await? {
///         let mut size = 0;
///         while let Some(chunk) = part.chunk().await? {
///             size += chunk.len();
///         }
///         names.push(format!("{}={size}", part.name().unwrap_or("")));
///     }
///     Ok::<_, vireo::Error>(names.join(","))
/// }));
/// let body = "--b\r\ncontent-disposition: form-data; name=\"a\"\r\n\r\nhello\r\n--b--\r\n";
/// let client = vireo::TestClient::new(app);
/// let res = client.post("/upload")
///     .header("content-type", "multipart/form-data; boundary=b").body(body).send();
/// assert_eq!(res.text(), "a=5");
/// ```
///
/// A request that is not `multipart/form-data` gets 415, one without a boundary 400; a
/// malformed body 400; a part over [`MultipartLimits::max_part_size`], a preamble or part
/// head over [`MultipartLimits::max_head_size`], or a body over the route's limit, 413.
pub struct Multipart {
    inner: multer::Multipart<'static>,
    parts_left: usize,
    search: Arc<HeadSearch>,
    /// A part dropped before its end, given back to be read through before the next one.
    unfinished: Arc<Mutex<Option<multer::Field<'static>>>>,
}

impl std::fmt::Debug for Multipart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Multipart").finish_non_exhaustive()
    }
}

impl Multipart {
    /// Read the request's body as multipart, with the default [`MultipartLimits`].
    pub fn from_request(req: &mut Request) -> Result<Self, Error> {
        Multipart::with_limits(req, MultipartLimits::default())
    }

    /// Read the request's body as multipart, with these limits.
    pub fn with_limits(req: &mut Request, limits: MultipartLimits) -> Result<Self, Error> {
        let content_type = req.header("content-type").unwrap_or("");
        let boundary = multer::parse_boundary(content_type).map_err(|error| match error {
            multer::Error::NoMultipart | multer::Error::DecodeContentType(_) => Error::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "expected multipart/form-data",
            ),
            other => Error::bad_request(other.to_string()),
        })?;
        let mut size = multer::SizeLimit::new();
        if let Some(max) = limits.max_part_size {
            size = size.per_field(max);
        }
        let constraints = multer::Constraints::new().size_limit(size);
        let search = Arc::new(HeadSearch::new(limits.max_head_size));
        let body = BodyChunks {
            body: req.body_stream(),
            search: search.clone(),
        };
        Ok(Multipart {
            inner: multer::Multipart::with_constraints(body, boundary, constraints),
            parts_left: limits.max_parts,
            search,
            unfinished: Arc::default(),
        })
    }

    /// The next part, or `None` after the last. The previous part is skipped if not read.
    pub async fn next_part(&mut self) -> Result<Option<Part>, Error> {
        // A skipped part's content is read through here, as content, so that it does not
        // count against the head limit.
        let unfinished = self.unfinished.lock().map(|mut slot| slot.take());
        if let Ok(Some(mut field)) = unfinished {
            while field.chunk().await.map_err(multipart_error)?.is_some() {}
        }
        let field = {
            let _searching = self.search.begin();
            self.inner.next_field().await.map_err(multipart_error)?
        };
        if field.is_some() {
            if self.parts_left == 0 {
                return Err(Error::bad_request("too many parts in the multipart body"));
            }
            self.parts_left -= 1;
        }
        Ok(field.map(|inner| Part {
            inner: Some(inner),
            give_back: self.unfinished.clone(),
        }))
    }
}

/// What multer has been fed while it looks for a part's head: multer keeps every byte until
/// it finds the head, so the feed stops past the limit.
struct HeadSearch {
    active: AtomicBool,
    /// Bytes fed since the search began.
    fed: AtomicUsize,
    /// Bytes fed since multer last looked through what it holds.
    batch: AtomicUsize,
    max: usize,
}

/// Bytes fed to multer before it is made to look through them: it reads all that is ready
/// before it looks, so without a pause a fast client's burst would count as one head.
const SEARCH_BATCH: usize = 16 * 1024;

impl HeadSearch {
    fn new(max: usize) -> Self {
        HeadSearch {
            active: AtomicBool::new(false),
            fed: AtomicUsize::new(0),
            batch: AtomicUsize::new(0),
            max,
        }
    }

    /// Start counting; counting stops when the guard drops.
    fn begin(&self) -> SearchGuard<'_> {
        self.fed.store(0, Ordering::Relaxed);
        self.batch.store(0, Ordering::Relaxed);
        self.active.store(true, Ordering::Relaxed);
        SearchGuard(self)
    }
}

struct SearchGuard<'a>(&'a HeadSearch);

impl Drop for SearchGuard<'_> {
    fn drop(&mut self) {
        self.0.active.store(false, Ordering::Relaxed);
    }
}

/// One part of a multipart body: a form field or a file.
pub struct Part {
    /// Taken only by the methods that consume the part, and by its drop.
    inner: Option<multer::Field<'static>>,
    give_back: Arc<Mutex<Option<multer::Field<'static>>>>,
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Part")
            .field("name", &self.name())
            .field("file_name", &self.file_name())
            .finish_non_exhaustive()
    }
}

/// A part holds its field from `next_part` until a method that consumes it, or its drop.
const HOLDS_FIELD: &str = "a part holds its field until consumed";

impl Part {
    fn field(&self) -> &multer::Field<'static> {
        self.inner.as_ref().expect(HOLDS_FIELD)
    }

    /// The field, taken for good: its drop then has nothing to give back.
    fn into_field(mut self) -> multer::Field<'static> {
        self.inner.take().expect(HOLDS_FIELD)
    }

    /// The form field's name.
    pub fn name(&self) -> Option<&str> {
        self.field().name()
    }

    /// The file name, for a file part.
    pub fn file_name(&self) -> Option<&str> {
        self.field().file_name()
    }

    /// The part's content type, if it gave one.
    pub fn content_type(&self) -> Option<&str> {
        self.field().content_type().map(|mime| mime.essence_str())
    }

    /// The next chunk of the part's content; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Error> {
        let field = self.inner.as_mut().expect(HOLDS_FIELD);
        field.chunk().await.map_err(multipart_error)
    }

    /// The whole content, in memory.
    pub async fn bytes(self) -> Result<Bytes, Error> {
        self.into_field().bytes().await.map_err(multipart_error)
    }

    /// The whole content as text.
    pub async fn text(self) -> Result<String, Error> {
        self.into_field().text().await.map_err(multipart_error)
    }
}

impl Drop for Part {
    fn drop(&mut self) {
        if let Some(field) = self.inner.take() {
            if let Ok(mut slot) = self.give_back.lock() {
                *slot = Some(field);
            }
        }
    }
}

/// The client-facing error for a multipart failure.
fn multipart_error(error: multer::Error) -> Error {
    match error {
        multer::Error::FieldSizeExceeded { .. } | multer::Error::StreamSizeExceeded { .. } => {
            Error::from(Rejection::BodyTooLarge)
        }
        multer::Error::StreamReadFailed(inner) => match inner.downcast::<BodyFailed>() {
            Ok(failed) => failed.0,
            Err(other) => Error::bad_request(other.to_string()),
        },
        other => Error::bad_request(format!("malformed multipart body: {other}")),
    }
}

/// The request body as multer reads it: chunks, or the error that ended the body. While
/// multer looks for a part's head, the feed pauses every [`SEARCH_BATCH`] bytes so multer
/// looks through what it has, and fails past the head limit.
struct BodyChunks {
    body: BodyStream,
    search: Arc<HeadSearch>,
}

impl futures_core::Stream for BodyChunks {
    type Item = Result<Bytes, BodyFailed>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let search = &self.search;
        let searching = search.active.load(Ordering::Relaxed);
        if searching {
            if search.batch.load(Ordering::Relaxed) >= SEARCH_BATCH {
                search.batch.store(0, Ordering::Relaxed);
                cx.waker().wake_by_ref();
                return std::task::Poll::Pending;
            }
            if search.fed.load(Ordering::Relaxed) > search.max {
                let message = format!(
                    "a multipart part's head, or the preamble before the first part, is over {} bytes",
                    search.max
                );
                let error = Error::new(StatusCode::PAYLOAD_TOO_LARGE, message);
                return std::task::Poll::Ready(Some(Err(BodyFailed(error))));
            }
        }
        let polled = std::pin::Pin::new(&mut self.body).poll_next(cx);
        if let std::task::Poll::Ready(Some(Ok(chunk))) = &polled {
            if searching {
                self.search.fed.fetch_add(chunk.len(), Ordering::Relaxed);
                self.search.batch.fetch_add(chunk.len(), Ordering::Relaxed);
            }
        }
        polled.map(|item| item.map(|result| result.map_err(BodyFailed)))
    }
}

/// The body's own error, carried through multer and given back as it was.
#[derive(Debug)]
struct BodyFailed(Error);

impl std::fmt::Display for BodyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.message())
    }
}

impl std::error::Error for BodyFailed {}
