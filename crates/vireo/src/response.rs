//! Turning what a handler returns into a response.

use crate::cookies::Cookie;
#[cfg(feature = "secure-cookies")]
use crate::cookies::{self, Key};
use crate::error::Error;
use bytes::Bytes;
use http::{header, HeaderName, HeaderValue, StatusCode};
#[cfg(feature = "json")]
use serde::Serialize;
use vireo_http::{Body, ContentType, Response};

/// Anything a handler may return.
///
/// Text (`&'static str`, `String`) is sent as `text/plain; charset=utf-8`; bytes (`Vec<u8>`,
/// `Bytes`, `&'static [u8]`) as `application/octet-stream`, untouched; [`Json`] as
/// `application/json`; `(StatusCode, body)` sets the status; `Result<T, E>` answers with either
/// side, so `?` works in handlers.
pub trait IntoResponse {
    /// Make the response.
    fn into_response(self) -> Response;
}

/// `200 OK` with this body and content type.
fn ok(body: impl Into<Body>, content_type: ContentType) -> Response {
    Response::typed(StatusCode::OK, body, content_type)
}

impl IntoResponse for Response {
    fn into_response(self) -> Response {
        self
    }
}

impl IntoResponse for &'static str {
    fn into_response(self) -> Response {
        ok(self, ContentType::Text)
    }
}

impl IntoResponse for String {
    fn into_response(self) -> Response {
        ok(self, ContentType::Text)
    }
}

impl IntoResponse for &'static [u8] {
    fn into_response(self) -> Response {
        ok(self, ContentType::OctetStream)
    }
}

impl IntoResponse for Vec<u8> {
    fn into_response(self) -> Response {
        ok(self, ContentType::OctetStream)
    }
}

impl IntoResponse for Bytes {
    fn into_response(self) -> Response {
        ok(self, ContentType::OctetStream)
    }
}

impl IntoResponse for Body {
    fn into_response(self) -> Response {
        Response::new(StatusCode::OK, self)
    }
}

/// An empty `200 OK`.
impl IntoResponse for () {
    fn into_response(self) -> Response {
        Response::new(StatusCode::OK, Body::Empty)
    }
}

/// An empty response with this status.
impl IntoResponse for StatusCode {
    fn into_response(self) -> Response {
        Response::new(self, Body::Empty)
    }
}

impl<T: IntoResponse> IntoResponse for (StatusCode, T) {
    fn into_response(self) -> Response {
        let mut res = self.1.into_response();
        res.set_status(self.0);
        res
    }
}

/// A status, extra header fields, and a body.
impl<T: IntoResponse, const N: usize> IntoResponse
    for (StatusCode, [(HeaderName, HeaderValue); N], T)
{
    fn into_response(self) -> Response {
        let mut res = self.2.into_response();
        res.set_status(self.0);
        for (name, value) in self.1 {
            res.headers_mut().insert(name, value);
        }
        res
    }
}

impl<T: IntoResponse, E: IntoResponse> IntoResponse for Result<T, E> {
    fn into_response(self) -> Response {
        match self {
            Ok(value) => value.into_response(),
            Err(error) => error.into_response(),
        }
    }
}

#[cfg(feature = "json")]
/// A JSON body, serialized with serde. Also what [`crate::Request::json`] parses into.
///
/// ```
/// use vireo::{Json, IntoResponse};
/// let res = Json(serde_json::json!({"message": "Hello, World!"})).into_response();
/// assert_eq!(res.headers()["content-type"], "application/json");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

#[cfg(feature = "json")]
impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match serde_json::to_vec(&self.0) {
            Ok(bytes) => ok(bytes, ContentType::Json),
            Err(error) => Error::internal(error).into_response(),
        }
    }
}

/// An HTML body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Html<T>(pub T);

impl<T: Into<Body>> IntoResponse for Html<T> {
    fn into_response(self) -> Response {
        ok(self.0, ContentType::Html)
    }
}

/// A redirect to another location.
///
/// ```
/// use vireo::{Redirect, IntoResponse};
/// let res = Redirect::to("/login").into_response();
/// assert_eq!(res.status(), 303);
/// assert_eq!(res.headers()["location"], "/login");
/// ```
#[derive(Debug, Clone)]
pub struct Redirect {
    status: StatusCode,
    location: String,
}

impl Redirect {
    /// `303 See Other`: after a form post, fetch this with GET.
    pub fn to(location: impl Into<String>) -> Self {
        Redirect {
            status: StatusCode::SEE_OTHER,
            location: location.into(),
        }
    }

    /// `307 Temporary Redirect`: repeat this request, same method and body, at the location.
    pub fn temporary(location: impl Into<String>) -> Self {
        Redirect {
            status: StatusCode::TEMPORARY_REDIRECT,
            location: location.into(),
        }
    }

    /// `308 Permanent Redirect`: the resource has moved for good.
    pub fn permanent(location: impl Into<String>) -> Self {
        Redirect {
            status: StatusCode::PERMANENT_REDIRECT,
            location: location.into(),
        }
    }
}

impl IntoResponse for Redirect {
    fn into_response(self) -> Response {
        match HeaderValue::try_from(self.location) {
            Ok(location) => {
                let mut res = Response::new(self.status, Body::Empty);
                res.headers_mut().insert(header::LOCATION, location);
                res
            }
            Err(_) => Error::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "redirect location is not a valid header value",
            )
            .into_response(),
        }
    }
}

/// Helpers on [`Response`] for the framework's needs.
pub trait ResponseExt {
    /// Add a `Set-Cookie` field, the name and value percent-encoded (so no value can add an
    /// attribute).
    ///
    /// A cookie that cannot be sent as given (an empty name, or a `;` or control character in
    /// its path or domain) is refused with a `500 Internal Server Error` [`Error`] whose cause
    /// is logged, and the response is left as it was.
    ///
    /// ```
    /// use vireo::{http::StatusCode, Cookie, Response, ResponseExt};
    /// let mut res = Response::new(StatusCode::OK, "hi");
    /// res.set_cookie(&Cookie::new("theme", "dark; bold").http_only())?;
    /// assert_eq!(res.headers()["set-cookie"], "theme=dark%3B%20bold; HttpOnly; Path=/");
    /// assert!(res.set_cookie(&Cookie::new("a", "b").path("/; Domain=evil")).is_err());
    /// # Ok::<(), vireo::Error>(())
    /// ```
    fn set_cookie(&mut self, cookie: &Cookie) -> Result<(), Error>;

    #[cfg(feature = "secure-cookies")]
    /// Add a `Set-Cookie` field whose value is signed with `key`: the client can read it but
    /// not change it, nor move it to a cookie of another name. Read it back with
    /// [`crate::Request::signed_cookie`]. Refused as [`ResponseExt::set_cookie`] refuses.
    ///
    /// The signature is [`cookie`]'s HMAC-SHA256, computed over the name as well as the value,
    /// so these cookies are checked by `Request::signed_cookie`, not by `cookie`'s `SignedJar`.
    fn set_signed_cookie(&mut self, key: &Key, cookie: &Cookie) -> Result<(), Error>;

    #[cfg(feature = "secure-cookies")]
    /// Add a `Set-Cookie` field whose value is encrypted and authenticated with `key`
    /// (AES-256-GCM, the name authenticated too, by [`cookie`]'s `PrivateJar`): the client can
    /// neither read nor change it. Read it back with [`crate::Request::private_cookie`].
    /// Refused as [`ResponseExt::set_cookie`] refuses.
    fn set_private_cookie(&mut self, key: &Key, cookie: &Cookie) -> Result<(), Error>;

    /// Set a header field from strings, replacing any earlier value of that name.
    ///
    /// The name may be in any case (field names are case-insensitive, RFC 9110 §5.1; it is sent
    /// in lowercase). A name that is not a token, or a value with a control character such as
    /// CR or LF, is refused with a `500 Internal Server Error` [`Error`] whose cause (the
    /// invalid name or value) is logged, not sent; the response is left as it was. Return it
    /// with `?` from a handler, or handle it yourself.
    ///
    /// ```
    /// use vireo::{http::StatusCode, Response, ResponseExt};
    /// let mut res = Response::new(StatusCode::OK, "hi");
    /// res.set_header("X-Request-Source", "docs")?;
    /// assert_eq!(res.headers()["x-request-source"], "docs");
    /// assert!(res.set_header("not a name", "v").is_err());
    /// assert!(res.set_header("x-ok", "no\r\nsplitting").is_err());
    /// # Ok::<(), vireo::Error>(())
    /// ```
    fn set_header(&mut self, name: &str, value: &str) -> Result<(), Error>;
}

impl ResponseExt for Response {
    fn set_cookie(&mut self, cookie: &Cookie) -> Result<(), Error> {
        let value = cookie.header_value()?;
        self.headers_mut().append(header::SET_COOKIE, value);
        Ok(())
    }

    #[cfg(feature = "secure-cookies")]
    fn set_signed_cookie(&mut self, key: &Key, cookie: &Cookie) -> Result<(), Error> {
        // Checked before signing, so the error names the cookie as the caller built it.
        cookie.header_value()?;
        self.set_cookie(&cookies::sign(key, cookie))
    }

    #[cfg(feature = "secure-cookies")]
    fn set_private_cookie(&mut self, key: &Key, cookie: &Cookie) -> Result<(), Error> {
        cookie.header_value()?;
        self.set_cookie(&cookies::encrypt(key, cookie))
    }

    fn set_header(&mut self, name: &str, value: &str) -> Result<(), Error> {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(Error::internal)?;
        let value = HeaderValue::try_from(value).map_err(Error::internal)?;
        self.headers_mut().insert(name, value);
        Ok(())
    }
}
