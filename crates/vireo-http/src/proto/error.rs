//! Why a request was refused at the protocol level, and the status that answers it.

use http::StatusCode;
use std::fmt;

/// A request the protocol layer refuses. Each variant maps to one status code; after any of them
/// the connection is closed, because the framing of what follows can no longer be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtoError {
    /// Malformed syntax or framing (RFC 9112 §2.2, §3, §5, §6, §7.1): 400.
    BadRequest(&'static str),
    /// The head is larger than the limit, or has too many fields: 431.
    HeadTooLarge,
    /// The request target is longer than the limit: 414.
    UriTooLong,
    /// A transfer coding other than `chunked` (RFC 9112 §6.1): 501.
    UnsupportedTransferCoding,
    /// A method the engine does not serve (`CONNECT`): 501.
    UnsupportedMethod,
    /// A major protocol version other than 1 (RFC 9110 §15.6.6): 505.
    VersionNotSupported,
    /// An `Expect` value other than `100-continue` (RFC 9110 §10.1.1): 417.
    ExpectationFailed,
    /// A start line that names a protocol other than HTTP (`DESCRIBE x RTSP/1.0`, an invalid
    /// HTTP/2 preface): the client is not speaking HTTP/1, so the server closes the connection
    /// without an answer it could not read (RFC 9112 §2.2 asks for a 400 only for what appears
    /// to be an HTTP request; RFC 9113 §3.4 ends a connection with an invalid preface). 400
    /// where a status is needed.
    NotHttp,
}

impl ProtoError {
    /// The status code that answers this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ProtoError::BadRequest(_) | ProtoError::NotHttp => StatusCode::BAD_REQUEST,
            ProtoError::HeadTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ProtoError::UriTooLong => StatusCode::URI_TOO_LONG,
            ProtoError::UnsupportedTransferCoding | ProtoError::UnsupportedMethod => {
                StatusCode::NOT_IMPLEMENTED
            }
            ProtoError::VersionNotSupported => StatusCode::HTTP_VERSION_NOT_SUPPORTED,
            ProtoError::ExpectationFailed => StatusCode::EXPECTATION_FAILED,
        }
    }
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtoError::BadRequest(why) => write!(f, "bad request: {why}"),
            ProtoError::HeadTooLarge => f.write_str("request head too large"),
            ProtoError::UriTooLong => f.write_str("request target too long"),
            ProtoError::UnsupportedTransferCoding => f.write_str("unsupported transfer coding"),
            ProtoError::UnsupportedMethod => f.write_str("unsupported method"),
            ProtoError::VersionNotSupported => f.write_str("HTTP version not supported"),
            ProtoError::ExpectationFailed => f.write_str("expectation not supported"),
            ProtoError::NotHttp => f.write_str("not an HTTP request line"),
        }
    }
}

impl std::error::Error for ProtoError {}
