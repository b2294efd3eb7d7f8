//! `multipart/form-data` bodies, streamed, with `multer` (the `multipart` feature).

use crate::error::{Error, Rejection};
use crate::request::BodyStream;
use crate::Request;
use bytes::Bytes;
use http::StatusCode;

/// Limits on a multipart body, beyond the route's body limit (which bounds the whole stream).
#[derive(Debug, Clone)]
pub struct MultipartLimits {
    /// Most bytes in any one part (default: no limit beyond the body limit).
    pub max_part_size: Option<u64>,
    /// Most parts (default 1,000).
    pub max_parts: usize,
}

impl Default for MultipartLimits {
    fn default() -> Self {
        MultipartLimits {
            max_part_size: None,
            max_parts: 1_000,
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
/// malformed body 400; a part over [`MultipartLimits::max_part_size`], or a body over the
/// route's limit, 413.
pub struct Multipart {
    inner: multer::Multipart<'static>,
    parts_left: usize,
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
        let body = BodyChunks(req.body_stream());
        Ok(Multipart {
            inner: multer::Multipart::with_constraints(body, boundary, constraints),
            parts_left: limits.max_parts,
        })
    }

    /// The next part, or `None` after the last. The previous part is skipped if not read.
    pub async fn next_part(&mut self) -> Result<Option<Part>, Error> {
        let field = self.inner.next_field().await.map_err(multipart_error)?;
        if field.is_some() {
            if self.parts_left == 0 {
                return Err(Error::bad_request("too many parts in the multipart body"));
            }
            self.parts_left -= 1;
        }
        Ok(field.map(|inner| Part { inner }))
    }
}

/// One part of a multipart body: a form field or a file.
pub struct Part {
    inner: multer::Field<'static>,
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Part")
            .field("name", &self.name())
            .field("file_name", &self.file_name())
            .finish_non_exhaustive()
    }
}

impl Part {
    /// The form field's name.
    pub fn name(&self) -> Option<&str> {
        self.inner.name()
    }

    /// The file name, for a file part.
    pub fn file_name(&self) -> Option<&str> {
        self.inner.file_name()
    }

    /// The part's content type, if it gave one.
    pub fn content_type(&self) -> Option<&str> {
        self.inner.content_type().map(|mime| mime.essence_str())
    }

    /// The next chunk of the part's content; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Error> {
        self.inner.chunk().await.map_err(multipart_error)
    }

    /// The whole content, in memory.
    pub async fn bytes(self) -> Result<Bytes, Error> {
        self.inner.bytes().await.map_err(multipart_error)
    }

    /// The whole content as text.
    pub async fn text(self) -> Result<String, Error> {
        self.inner.text().await.map_err(multipart_error)
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

/// The request body as multer reads it: chunks, or the error that ended the body.
struct BodyChunks(BodyStream);

impl futures_core::Stream for BodyChunks {
    type Item = Result<Bytes, BodyFailed>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::pin::Pin::new(&mut self.0)
            .poll_next(cx)
            .map(|item| item.map(|result| result.map_err(BodyFailed)))
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
