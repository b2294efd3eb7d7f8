//! Errors are responses: every rejection the framework makes, and every error a handler
//! returns, becomes an [`Error`] with a status and a message, which a central error handler
//! ([`crate::App::on_error`]) can reshape.

use crate::response::IntoResponse;
use http::StatusCode;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use vireo_http::Response;

macro_rules! define_rejections {
    ($( $(#[$doc:meta])* $kind:ident => $status:ident, $message:literal; )*) => {
        /// Every way the framework can refuse a request, each with its status and message,
        /// defined in this one place.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Rejection {
            $( $(#[$doc])* $kind, )*
        }

        impl Rejection {
            /// The status this rejection answers with.
            pub fn status(self) -> StatusCode {
                match self { $( Rejection::$kind => StatusCode::$status, )* }
            }

            /// The message sent to the client.
            pub fn message(self) -> &'static str {
                match self { $( Rejection::$kind => $message, )* }
            }
        }
    };
}

define_rejections! {
    /// No route matches the path.
    NotFound => NOT_FOUND, "Not Found";
    /// The path exists, but not with this method.
    MethodNotAllowed => METHOD_NOT_ALLOWED, "Method Not Allowed";
    /// No route anywhere answers this method, and it is not a standard one (RFC 9110 §9.1).
    MethodNotImplemented => NOT_IMPLEMENTED, "Not Implemented";
    /// The body is larger than the limit for this route.
    BodyTooLarge => PAYLOAD_TOO_LARGE, "Request body too large";
    /// The body could not be read: malformed framing, or the client went away.
    BodyUnreadable => BAD_REQUEST, "Request body could not be read";
    /// The body is not UTF-8 text.
    InvalidUtf8 => BAD_REQUEST, "Request body is not valid UTF-8";
    /// A JSON body was expected but `Content-Type` is not `application/json`.
    JsonContentType => UNSUPPORTED_MEDIA_TYPE, "Expected Content-Type: application/json";
    /// The body is not valid JSON.
    JsonSyntax => BAD_REQUEST, "Malformed JSON";
    /// The body is valid JSON of the wrong shape for the handler.
    JsonShape => UNPROCESSABLE_ENTITY, "JSON does not match the expected shape";
    /// A form body was expected but `Content-Type` is not `application/x-www-form-urlencoded`.
    FormContentType => UNSUPPORTED_MEDIA_TYPE, "Expected Content-Type: application/x-www-form-urlencoded";
    /// The form body does not match the expected shape.
    FormInvalid => UNPROCESSABLE_ENTITY, "Form data does not match the expected shape";
    /// The query string does not match the expected shape.
    QueryInvalid => BAD_REQUEST, "Invalid query string";
    /// A route parameter the handler asked for is not in the route.
    ParamMissing => INTERNAL_SERVER_ERROR, "Route parameter missing";
    /// A route parameter could not be parsed as the type the handler asked for.
    ParamInvalid => BAD_REQUEST, "Invalid route parameter";
    /// A header could not be parsed as the handler asked.
    HeaderInvalid => BAD_REQUEST, "Invalid header";
    /// The handler asked for app state of a type that was never registered.
    StateMissing => INTERNAL_SERVER_ERROR, "Application state missing";
    /// The request took longer than the route's timeout.
    Timeout => SERVICE_UNAVAILABLE, "Request timed out";
}

/// An error that becomes a response: a status, a message for the client, and optionally the
/// rejection it came from and an underlying cause (logged, never sent).
///
/// Any `std::error::Error` converts into a 500 whose message hides the cause, so `?` works in
/// handlers that return `Result<_, vireo::Error>`.
///
/// ```
/// use vireo::{Error, http::StatusCode};
/// let e = Error::new(StatusCode::CONFLICT, "name taken");
/// assert_eq!(e.status(), StatusCode::CONFLICT);
/// assert_eq!(e.message(), "name taken");
/// ```
#[derive(Clone)]
pub struct Error {
    status: StatusCode,
    message: Cow<'static, str>,
    rejection: Option<Rejection>,
    detail: Option<String>,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// An error with this status and client-facing message.
    pub fn new(status: StatusCode, message: impl Into<Cow<'static, str>>) -> Self {
        Error {
            status,
            message: message.into(),
            rejection: None,
            detail: None,
            source: None,
        }
    }

    /// `400 Bad Request` with this message.
    pub fn bad_request(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(StatusCode::BAD_REQUEST, message)
    }

    /// `404 Not Found` with this message.
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(StatusCode::NOT_FOUND, message)
    }

    /// `422 Unprocessable Entity` with this message: well-formed input that fails validation.
    pub fn unprocessable(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    /// `500 Internal Server Error` caused by `source`, which is logged and not sent.
    pub fn internal(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error {
            source: Some(Arc::new(source)),
            ..Error::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
        }
    }

    /// The error for a rejection, with a detail appended to its message (such as which field
    /// of the JSON was wrong).
    pub fn rejection(rejection: Rejection, detail: Option<String>) -> Self {
        Error {
            status: rejection.status(),
            message: Cow::Borrowed(rejection.message()),
            rejection: Some(rejection),
            detail,
            source: None,
        }
    }

    /// The status the error answers with.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The message for the client.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Detail added to the message, if any.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The framework rejection this error is, if it is one.
    pub fn as_rejection(&self) -> Option<Rejection> {
        self.rejection
    }

    /// The underlying cause, if any.
    pub fn source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }

    /// The default response: the status, and the message (and detail) as plain text.
    pub fn default_response(&self) -> Response {
        let text = match &self.detail {
            Some(detail) => format!("{}: {detail}", self.message),
            None => self.message.to_string(),
        };
        let mut res = Response::text(text);
        res.set_status(self.status);
        res
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("status", &self.status)
            .field("message", &self.message)
            .field("rejection", &self.rejection)
            .field("detail", &self.detail)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        if let Some(source) = &self.source {
            write!(f, " (caused by: {source})")?;
        }
        Ok(())
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for Error {
    fn from(source: E) -> Self {
        Error::internal(source)
    }
}

impl From<Rejection> for Error {
    fn from(rejection: Rejection) -> Self {
        Error::rejection(rejection, None)
    }
}

/// Kept on a response made from an [`Error`], so the app's error handler can reshape it.
#[derive(Clone, Debug)]
pub(crate) struct ErrorMarker(pub(crate) Error);

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        if let Some(source) = &self.source {
            tracing::error!(status = self.status.as_u16(), error = %source, "handler error");
        }
        let mut res = self.default_response();
        res.extensions_mut().insert(ErrorMarker(self));
        res
    }
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        Error::from(self).into_response()
    }
}
