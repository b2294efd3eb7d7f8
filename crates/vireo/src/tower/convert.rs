//! Requests and responses across the tower boundary.

use super::body::{from_http_body, ResponseBody};
use crate::{Error, IntoResponse};
use http::header::{CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use http::StatusCode;
use vireo_http::{BoxError, Head, Limits, Response};

/// A Vireo response as an `http` one.
pub(crate) fn to_http_response(mut res: Response) -> http::Response<ResponseBody> {
    let mut out = http::Response::new(ResponseBody::new(res.take_body()));
    *out.status_mut() = res.status();
    *out.headers_mut() = std::mem::take(res.headers_mut());
    *out.extensions_mut() = std::mem::take(res.extensions_mut());
    out
}

/// An `http` response as a Vireo one.
pub(crate) fn from_http_response<B>(res: http::Response<B>) -> Response
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = res.into_parts();
    let mut out = Response::new(parts.status, from_http_body(body));
    *out.headers_mut() = parts.headers;
    *out.extensions_mut() = parts.extensions;
    out
}

/// The head of an `http` request as Vireo parses it, so every check the engine makes on the
/// wire applies here too. With `read_body_len`, the body has been read and is that many bytes:
/// framing fields the request came with are replaced by its `Content-Length`; without, they
/// are kept. A request with neither `Host` nor an authority in its URI gets `host: localhost`.
pub(crate) fn head_of(
    parts: &http::request::Parts,
    read_body_len: Option<usize>,
    limits: &Limits,
) -> Result<Head, Response> {
    let line = RequestLine {
        method: &parts.method,
        target: parts.uri.path_and_query().map_or("/", |pq| pq.as_str()),
        authority: parts.uri.authority().map(|a| a.as_str()),
    };
    head_from(line, &parts.headers, read_body_len, limits)
}

/// What a head is rebuilt with besides its header fields.
pub(crate) struct RequestLine<'a> {
    pub(crate) method: &'a http::Method,
    /// Origin-form: path and query.
    pub(crate) target: &'a str,
    /// The host when the header fields name none.
    pub(crate) authority: Option<&'a str>,
}

/// [`head_of`] from its request line and header fields.
pub(crate) fn head_from(
    line: RequestLine<'_>,
    headers: &http::HeaderMap,
    read_body_len: Option<usize>,
    limits: &Limits,
) -> Result<Head, Response> {
    let mut raw = Vec::with_capacity(256);
    raw.extend_from_slice(line.method.as_str().as_bytes());
    raw.push(b' ');
    raw.extend_from_slice(line.target.as_bytes());
    raw.extend_from_slice(b" HTTP/1.1\r\n");
    if !headers.contains_key(HOST) {
        field(
            &mut raw,
            b"host",
            line.authority.unwrap_or("localhost").as_bytes(),
        );
    }
    for (name, value) in headers {
        let framing = name == CONTENT_LENGTH || name == TRANSFER_ENCODING;
        if !(framing && read_body_len.is_some()) {
            field(&mut raw, name.as_str().as_bytes(), value.as_bytes());
        }
    }
    if let Some(len @ 1..) = read_body_len {
        field(&mut raw, b"content-length", len.to_string().as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    Head::parse(&raw, limits)
        .map(|(head, _)| head)
        .map_err(|error| Error::new(error.status(), error.to_string()).into_response())
}

fn field(raw: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    raw.extend_from_slice(name);
    raw.extend_from_slice(b": ");
    raw.extend_from_slice(value);
    raw.extend_from_slice(b"\r\n");
}

/// The answer when a tower service or layer fails instead of answering.
pub(crate) fn error_response(error: BoxError) -> Response {
    tracing::error!(%error, "a tower service failed");
    Error::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response()
}
