//! The request a handler receives.

use crate::error::{Error, Rejection};
use crate::tree::Captures;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde::de::DeserializeOwned;
use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use tokio::sync::oneshot;
use vireo_http::proto::BodyKind;
use vireo_http::{BodyError, Head};

/// A request for the body, sent from the handler's side to the connection that holds it.
pub(crate) struct BodyRequest {
    pub(crate) limit: u64,
    pub(crate) reply: oneshot::Sender<Result<Bytes, BodyError>>,
}

/// Where the body is.
enum BodySource {
    /// Read, or there was none.
    Ready(Bytes),
    /// Still on the connection: ask for it through this channel.
    Pending(oneshot::Sender<BodyRequest>),
    /// Reading it failed with this error.
    Failed(Error),
}

/// A request: method, path, route parameters, query, header fields, cookies, body, typed
/// per-request extensions, and the app's shared state.
///
/// By the time a handler runs the body has been read (within the route's limit), so every
/// accessor here is synchronous. Middleware that needs the body first calls
/// [`Request::load_body`].
pub struct Request {
    head: Head,
    prefix_len: usize,
    captures: Captures,
    body: BodySource,
    body_limit: u64,
    headers: OnceLock<HeaderMap>,
    extensions: http::Extensions,
    state: Arc<http::Extensions>,
    remote_addr: Option<SocketAddr>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", self.method())
            .field("target", &self.head.target())
            .field("remote_addr", &self.remote_addr)
            .finish_non_exhaustive()
    }
}

impl Request {
    pub(crate) fn new(
        head: Head,
        body: Option<oneshot::Sender<BodyRequest>>,
        ready_body: Bytes,
        body_limit: u64,
        state: Arc<http::Extensions>,
        remote_addr: Option<SocketAddr>,
    ) -> Self {
        Request {
            head,
            prefix_len: 0,
            captures: Captures::default(),
            body: match body {
                Some(channel) => BodySource::Pending(channel),
                None => BodySource::Ready(ready_body),
            },
            body_limit,
            headers: OnceLock::new(),
            extensions: http::Extensions::new(),
            state,
            remote_addr,
        }
    }

    pub(crate) fn set_route(&mut self, captures: Captures, prefix_len: usize) {
        self.captures = captures;
        self.prefix_len = prefix_len;
    }

    /// The request method.
    pub fn method(&self) -> &Method {
        self.head.method()
    }

    /// The path, without the query; inside a router mounted at a prefix, without the prefix.
    pub fn path(&self) -> &str {
        match &self.head.path()[self.prefix_len..] {
            "" => "/",
            path => path,
        }
    }

    /// The whole path as the client sent it, prefix included, without the query.
    pub fn original_path(&self) -> &str {
        self.head.path()
    }

    /// The request target as the client sent it: path and query.
    pub fn uri(&self) -> &str {
        self.head.path_and_query()
    }

    /// The raw query string, after `?`.
    pub fn query_string(&self) -> Option<&str> {
        self.head.query()
    }

    /// The query string parsed into `T` with serde (`?page=2&tag=a` into a struct).
    pub fn query<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_urlencoded::from_str(self.head.query().unwrap_or(""))
            .map_err(|e| Error::rejection(Rejection::QueryInvalid, Some(e.to_string())))
    }

    /// One query parameter, percent-decoded; the first if it is repeated.
    pub fn query_param(&self, name: &str) -> Option<Cow<'_, str>> {
        form_pairs(self.head.query()?.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }

    /// A route parameter (`:id` in `/users/:id`), percent-decoded.
    pub fn param(&self, name: &str) -> Option<Cow<'_, str>> {
        let path = self.head.path();
        self.captures
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, start, end)| {
                percent_encoding::percent_decode_str(&path[start..end]).decode_utf8_lossy()
            })
    }

    /// A route parameter parsed as `T`: 400 if it does not parse.
    ///
    /// ```
    /// let mut app = vireo::App::new();
    /// app.get("/users/:id", |req: vireo::Request| -> Result<String, vireo::Error> {
    ///     let id: u64 = req.param_as("id")?;
    ///     Ok(format!("user {}", id + 1))
    /// });
    /// let client = vireo::TestClient::new(app);
    /// assert_eq!(client.get("/users/41").send().text(), "user 42");
    /// assert_eq!(client.get("/users/x").send().status(), 400);
    /// ```
    pub fn param_as<T: std::str::FromStr>(&self, name: &str) -> Result<T, Error>
    where
        T::Err: std::fmt::Display,
    {
        let raw = self.param(name).ok_or_else(|| {
            Error::rejection(
                Rejection::ParamMissing,
                Some(format!("no parameter `{name}` in this route")),
            )
        })?;
        raw.parse().map_err(|e: T::Err| {
            Error::rejection(Rejection::ParamInvalid, Some(format!("`{name}`: {e}")))
        })
    }

    /// Every route parameter, in path order, percent-decoded.
    pub fn params(&self) -> impl Iterator<Item = (&'static str, Cow<'_, str>)> + '_ {
        let path = self.head.path();
        self.captures.iter().map(move |(name, start, end)| {
            (
                name,
                percent_encoding::percent_decode_str(&path[start..end]).decode_utf8_lossy(),
            )
        })
    }

    /// The first value of a header field as text, if it is present and visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head
            .header(name)
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    /// All header fields as an `http::HeaderMap`, built on first use.
    pub fn headers(&self) -> &HeaderMap {
        self.headers.get_or_init(|| {
            let mut map = HeaderMap::with_capacity(self.head.headers().len());
            for (name, value) in self.head.headers() {
                if let (Ok(name), Ok(value)) = (
                    HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_bytes(value),
                ) {
                    map.append(name, value);
                }
            }
            map
        })
    }

    /// The value of a cookie the client sent.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.cookies().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every cookie the client sent, as (name, value).
    pub fn cookies(&self) -> impl Iterator<Item = (&str, &str)> {
        self.head
            .headers()
            .filter(|(name, _)| name.eq_ignore_ascii_case("cookie"))
            .filter_map(|(_, value)| std::str::from_utf8(value).ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                Some((name.trim(), value.trim().trim_matches('"')))
            })
    }

    /// The address of the peer (the client, or a proxy in front); `None` in the test client.
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.remote_addr
    }

    /// The parsed head, as the engine read it.
    pub fn head(&self) -> &Head {
        &self.head
    }

    /// Typed values attached to this request by middleware.
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// Typed values attached to this request, to change.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        &mut self.extensions
    }

    /// Attach a typed value to this request (for later middleware and the handler).
    pub fn set<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.extensions.insert(value);
    }

    /// A typed value attached to this request.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// App-wide state registered with [`crate::App::state`]: a 500 if none of type `T` was.
    pub fn state<T: Send + Sync + 'static>(&self) -> Result<&T, Error> {
        self.state.get::<Arc<T>>().map(|s| &**s).ok_or_else(|| {
            Error::rejection(
                Rejection::StateMissing,
                Some(format!(
                    "no state of type {} was registered",
                    std::any::type_name::<T>()
                )),
            )
        })
    }

    /// The most body bytes this request may have.
    pub fn body_limit(&self) -> u64 {
        self.body_limit
    }

    /// Change the body limit, before the body is read.
    pub fn set_body_limit(&mut self, limit: u64) {
        self.body_limit = limit;
    }

    /// Read the body from the connection, if that has not happened yet. The client is sent
    /// `100 Continue` now if it asked for it. A body over the limit is refused with 413
    /// without being read.
    pub async fn load_body(&mut self) -> Result<&Bytes, Error> {
        let limit = self.body_limit;
        match std::mem::replace(&mut self.body, BodySource::Ready(Bytes::new())) {
            BodySource::Ready(bytes) if bytes.len() as u64 > limit => {
                self.body = BodySource::Failed(Error::from(Rejection::BodyTooLarge));
            }
            BodySource::Ready(bytes) => self.body = BodySource::Ready(bytes),
            BodySource::Failed(error) => self.body = BodySource::Failed(error),
            BodySource::Pending(_) if matches!(self.head.body_kind(), BodyKind::Length(n) if n > limit) =>
            {
                self.body = BodySource::Failed(Error::from(Rejection::BodyTooLarge));
            }
            BodySource::Pending(channel) => {
                let (reply, result) = oneshot::channel();
                let _ = channel.send(BodyRequest { limit, reply });
                self.body = match result.await {
                    Ok(Ok(bytes)) => BodySource::Ready(bytes),
                    Ok(Err(BodyError::TooLarge { .. })) => {
                        BodySource::Failed(Error::from(Rejection::BodyTooLarge))
                    }
                    Ok(Err(error)) => BodySource::Failed(Error::rejection(
                        Rejection::BodyUnreadable,
                        Some(error.to_string()),
                    )),
                    Err(_) => BodySource::Failed(Error::from(Rejection::BodyUnreadable)),
                };
            }
        }
        self.body()
    }

    /// Whether the body is here and within the limit, so the handler can run without waiting.
    pub(crate) fn body_is_ready(&self) -> bool {
        matches!(&self.body, BodySource::Ready(bytes) if bytes.len() as u64 <= self.body_limit)
    }

    /// The body bytes, exactly as received.
    pub fn body(&self) -> Result<&Bytes, Error> {
        match &self.body {
            BodySource::Ready(bytes) => Ok(bytes),
            BodySource::Failed(error) => Err(error.clone()),
            BodySource::Pending(_) => Err(Error::rejection(
                Rejection::BodyUnreadable,
                Some("the body has not been loaded; call load_body first".into()),
            )),
        }
    }

    /// The body as UTF-8 text: 400 if it is not.
    pub fn text(&self) -> Result<&str, Error> {
        std::str::from_utf8(self.body()?)
            .map_err(|e| Error::rejection(Rejection::InvalidUtf8, Some(e.to_string())))
    }

    /// The body parsed as JSON into `T`: 415 without a JSON content type, 400 for malformed
    /// JSON, 422 for JSON of the wrong shape.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        if !self.content_type_is(|t| t == "application/json" || t.ends_with("+json")) {
            return Err(Error::from(Rejection::JsonContentType));
        }
        serde_json::from_slice(self.body()?).map_err(|e| {
            let rejection = match e.classify() {
                serde_json::error::Category::Data => Rejection::JsonShape,
                _ => Rejection::JsonSyntax,
            };
            Error::rejection(rejection, Some(e.to_string()))
        })
    }

    /// The body parsed as an URL-encoded form into `T`: 415 without the form content type,
    /// 422 if it does not match `T`.
    pub fn form<T: DeserializeOwned>(&self) -> Result<T, Error> {
        if !self.content_type_is(|t| t == "application/x-www-form-urlencoded") {
            return Err(Error::from(Rejection::FormContentType));
        }
        serde_urlencoded::from_bytes(self.body()?)
            .map_err(|e| Error::rejection(Rejection::FormInvalid, Some(e.to_string())))
    }

    fn content_type_is(&self, accept: impl Fn(&str) -> bool) -> bool {
        self.header("content-type")
            .map(|t| {
                t.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            })
            .is_some_and(|t| accept(&t))
    }
}

/// `key=value` pairs of an URL-encoded string, percent- and plus-decoded.
fn form_pairs(input: &[u8]) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    input
        .split(|&b| b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let mut parts = pair.splitn(2, |&b| b == b'=');
            let key = parts.next().unwrap_or_default();
            let value = parts.next().unwrap_or_default();
            (decode_form_component(key), decode_form_component(value))
        })
}

fn decode_form_component(raw: &[u8]) -> Cow<'_, str> {
    if raw.contains(&b'+') {
        let spaced: Vec<u8> = raw
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        Cow::Owned(
            percent_encoding::percent_decode(&spaced)
                .decode_utf8_lossy()
                .into_owned(),
        )
    } else {
        percent_encoding::percent_decode(raw).decode_utf8_lossy()
    }
}
