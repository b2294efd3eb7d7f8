//! The request a handler receives.

use crate::cookies;
#[cfg(feature = "secure-cookies")]
use crate::cookies::Key;
use crate::error::{Error, Rejection};
use crate::extensions::Extensions;
use crate::tree::{Captures, Tree};
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde::de::DeserializeOwned;
use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use tokio::sync::oneshot;
use vireo_http::BodyKind;
use vireo_http::{BodyError, Head};

/// A request for the body, sent from the handler's side to the connection that holds it.
pub(crate) struct BodyRequest {
    pub(crate) limit: u64,
    pub(crate) reply: BodyReply,
    /// Told the size of each piece of the body as it is read (see [`Request::observe_body`]).
    pub(crate) observer: Option<BodyObserver>,
}

/// Called with the size of each piece of a request body read from the connection.
pub(crate) type BodyObserver = Arc<dyn Fn(u64) + Send + Sync>;

/// How the connection hands the body over.
pub(crate) enum BodyReply {
    /// Read whole, then sent at once.
    Whole(oneshot::Sender<Result<Bytes, BodyError>>),
    /// Sent chunk by chunk as it is read, each when the last has been taken.
    Chunks(tokio::sync::mpsc::Sender<BodyChunk>),
}

/// One message of a body sent chunk by chunk: a chunk, a failure, or `None` once the body has
/// ended. The explicit end tells a whole body from one cut short when the connection stopped
/// serving it (the handler answered first).
pub(crate) type BodyChunk = Option<Result<Bytes, BodyError>>;

/// A connection's TLS session, as the engine lends it (nothing without the `tls` feature).
#[cfg(feature = "tls")]
pub(crate) type ConnectionTls = Arc<vireo_http::tls::TlsSession>;
/// A connection's TLS session, as the engine lends it (nothing without the `tls` feature).
#[cfg(not(feature = "tls"))]
pub(crate) type ConnectionTls = ();

/// Where the body is.
pub(crate) enum BodySource {
    /// There was none.
    Empty,
    /// Read.
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
    /// Taken only by the drop, which sends them back to the pool: `Some` as long as anything
    /// can use the request.
    parts: Option<Box<Parts>>,
}

/// What a request holds. Boxed and pooled per thread: the request is moved through every
/// middleware and into every handler, so it is one pointer to move, and its extension slots
/// keep their allocation from one request to the next. Pooled parts go when the worker goes
/// quiet.
struct Parts {
    head: Option<Head>,
    prefix_len: usize,
    captures: Captures,
    body: BodySource,
    body_limit: u64,
    headers: OnceLock<HeaderMap>,
    extensions: Extensions,
    state: Option<Arc<http::Extensions>>,
    /// Where the router writes the route template it matched, when middleware asked for it.
    route_slot: Option<Arc<RouteSlot>>,
    /// Told the body's size as it is read, when middleware asked for it.
    body_observer: Option<BodyObserver>,
    /// [`NO_PEER`] when there is none. Not an `Option`, so the address is copied straight from
    /// the connection into the pooled parts.
    remote_addr: SocketAddr,
    /// The connection is encrypted (TLS).
    secure: bool,
    /// What the connection's TLS handshake negotiated, when the engine served TLS.
    #[cfg(feature = "tls")]
    tls: Option<Arc<vireo_http::tls::TlsSession>>,
}

/// Where the router writes the template of the route it matched (`/users/:id`), for middleware
/// that labels requests by route after the rest of the chain has run.
#[derive(Debug, Default)]
pub(crate) struct RouteSlot(std::sync::Mutex<Option<Arc<str>>>);

impl RouteSlot {
    /// The matched route's template; `None` if no route matched.
    pub(crate) fn get(&self) -> Option<Arc<str>> {
        self.lock().clone()
    }

    /// Empty the slot, for another request.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn clear(&mut self) {
        self.lock().take();
    }

    fn set(&self, route: &Arc<str>) {
        let mut slot = self.lock();
        if slot.is_none() {
            *slot = Some(route.clone());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<str>>> {
        // Nothing can panic while the lock is held.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The peer address of a request that came from no connection (the test client): `0.0.0.0:0`,
/// which no real peer can have.
pub(crate) const NO_PEER: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::UNSPECIFIED,
    0,
));

/// Request parts kept per thread for reuse.
const PARTS_POOL_SIZE: usize = 256;

#[allow(clippy::vec_box)] // the boxes are what requests hold; pooling them saves the allocation
mod pool {
    thread_local! {
        pub(super) static PARTS: std::cell::RefCell<Vec<Box<super::Parts>>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
}

/// Free this thread's pooled request parts (and the app state they keep); the engine calls it
/// when the worker goes quiet, once `release_parts_when_quiet` has registered it.
fn release_pooled_parts() {
    let _ = pool::PARTS.try_with(|pool| std::mem::take(&mut *pool.borrow_mut()));
}

/// Have the engine free this thread's pooled request parts whenever the worker goes quiet, as it
/// frees its own pools.
pub(crate) fn release_parts_when_quiet() {
    vireo_http::release_when_quiet(release_pooled_parts);
}

impl Drop for Request {
    fn drop(&mut self) {
        let Some(mut parts) = self.parts.take() else {
            return;
        };
        parts.head = None;
        // Most requests have no body and never build a header map: test before replacing, so
        // those skip the out-of-line drop of a value that holds nothing.
        if !matches!(parts.body, BodySource::Empty) {
            parts.body = BodySource::Empty;
        }
        if parts.headers.get().is_some() {
            parts.headers = OnceLock::new();
        }
        parts.extensions.clear();
        if parts.route_slot.is_some() {
            parts.route_slot = None;
        }
        if parts.body_observer.is_some() {
            parts.body_observer = None;
        }
        #[cfg(feature = "tls")]
        if parts.tls.is_some() {
            parts.tls = None;
        }
        // The app's state stays with pooled parts: the next request on this thread is almost
        // always for the same app, and then takes it without touching the shared count.
        if !vireo_http::on_worker_thread() {
            // Dropped on a blocking-pool thread: nothing there would reuse it.
            return;
        }
        // During thread teardown the pool may be gone; the parts are then simply freed.
        let _ = pool::PARTS.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() < PARTS_POOL_SIZE {
                pool.push(parts);
            }
        });
    }
}

/// The client-facing error for a body that could not be read: 413 over the limit, else 400.
fn body_error(error: BodyError) -> Error {
    match error {
        BodyError::TooLarge { .. } => Error::from(Rejection::BodyTooLarge),
        error => Error::rejection(Rejection::BodyUnreadable, Some(error.to_string())),
    }
}

/// A request body as a stream of chunks: [`Request::body_stream`]. A `Stream` of
/// `Result<Bytes, Error>`, or read with [`BodyStream::next_chunk`].
pub struct BodyStream {
    state: StreamState,
}

enum StreamState {
    Done,
    One(Result<Bytes, Error>),
    Chunks(tokio::sync::mpsc::Receiver<BodyChunk>),
}

impl std::fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyStream").finish_non_exhaustive()
    }
}

impl BodyStream {
    /// The next chunk; `None` once the body has ended (or failed).
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes, Error>> {
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut *self).poll_next_chunk(cx)).await
    }

    fn poll_next_chunk(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Bytes, Error>>> {
        use std::task::Poll;
        match std::mem::replace(&mut self.state, StreamState::Done) {
            StreamState::Done => Poll::Ready(None),
            StreamState::One(item) => Poll::Ready(Some(item)),
            StreamState::Chunks(mut receiver) => match receiver.poll_recv(cx) {
                Poll::Pending => {
                    self.state = StreamState::Chunks(receiver);
                    Poll::Pending
                }
                Poll::Ready(Some(None)) => Poll::Ready(None),
                Poll::Ready(Some(Some(Ok(chunk)))) => {
                    self.state = StreamState::Chunks(receiver);
                    Poll::Ready(Some(Ok(chunk)))
                }
                Poll::Ready(Some(Some(Err(error)))) => Poll::Ready(Some(Err(body_error(error)))),
                // The connection stopped serving the body before its end: never a clean end.
                Poll::Ready(None) => Poll::Ready(Some(Err(Error::rejection(
                    Rejection::BodyUnreadable,
                    Some(
                        "the request body was cut short: the response began before it was read"
                            .into(),
                    ),
                )))),
            },
        }
    }
}

impl futures_core::Stream for BodyStream {
    type Item = Result<Bytes, Error>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.get_mut().poll_next_chunk(cx)
    }
}

/// Out of line and cold, so that an accessor's test of its parts is one compare and a branch
/// never taken.
#[cold]
#[inline(never)]
fn parts_gone() -> ! {
    unreachable!("a request holds its parts until dropped")
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", self.method())
            .field("target", &self.head_ref().target())
            .field("remote_addr", &self.remote_addr())
            .finish_non_exhaustive()
    }
}

impl Request {
    /// A request with this head, the body `body` makes, and the app's limit and state.
    ///
    /// The body source is made by a function, called where it is stored once the pool has been
    /// asked, so it is not built on the stack and copied.
    pub(crate) fn new(
        head: Head,
        body: impl FnOnce() -> BodySource,
        body_limit: u64,
        state: &Arc<http::Extensions>,
        remote_addr: &SocketAddr,
        secure: bool,
    ) -> Self {
        let pooled = pool::PARTS
            .try_with(|pool| pool.borrow_mut().pop())
            .ok()
            .flatten();
        let parts = match pooled {
            Some(mut parts) => {
                parts.head = Some(head);
                parts.prefix_len = 0;
                parts.captures.clear();
                // Pooled parts hold no body (see the drop): write over it without dropping.
                debug_assert!(matches!(parts.body, BodySource::Empty));
                std::mem::forget(std::mem::replace(&mut parts.body, body()));
                parts.body_limit = body_limit;
                if !parts.state.as_ref().is_some_and(|s| Arc::ptr_eq(s, state)) {
                    parts.state = Some(state.clone());
                }
                parts.remote_addr = *remote_addr;
                parts.secure = secure;
                #[cfg(feature = "tls")]
                debug_assert!(parts.tls.is_none(), "cleared when pooled");
                parts
            }
            None => Box::new(Parts {
                head: Some(head),
                prefix_len: 0,
                captures: Captures::default(),
                body: body(),
                body_limit,
                headers: OnceLock::new(),
                extensions: Extensions::default(),
                state: Some(state.clone()),
                route_slot: None,
                body_observer: None,
                remote_addr: *remote_addr,
                secure,
                #[cfg(feature = "tls")]
                tls: None,
            }),
        };
        Request { parts: Some(parts) }
    }

    fn head_ref(&self) -> &Head {
        self.p()
            .head
            .as_ref()
            .expect("a request holds its head until dropped")
    }

    fn p(&self) -> &Parts {
        self.parts.as_deref().unwrap_or_else(|| parts_gone())
    }

    fn p_mut(&mut self) -> &mut Parts {
        self.parts.as_deref_mut().unwrap_or_else(|| parts_gone())
    }

    /// Match this request's path in `tree`, keeping the route's parameters.
    pub(crate) fn find_route<'t, T>(&mut self, tree: &'t Tree<T>) -> Option<&'t T> {
        let parts = self.p_mut();
        let head = parts
            .head
            .as_ref()
            .expect("a request holds its head until dropped");
        tree.find(head.path_bytes(), &mut parts.captures)
    }

    /// The header map, moved out (built first if it has not been): a tower layer gets it.
    #[cfg(feature = "tower")]
    pub(crate) fn take_headers(&mut self) -> HeaderMap {
        self.headers();
        self.p_mut().headers.take().unwrap_or_default()
    }

    /// Give back the header map [`Request::take_headers`] took. With `head`, a tower layer
    /// changed the fields, and `head` is the request's head with those fields.
    #[cfg(feature = "tower")]
    pub(crate) fn restore_headers(&mut self, headers: HeaderMap, head: Option<Head>) {
        let parts = self.p_mut();
        if let Some(head) = head {
            parts.head = Some(head);
        }
        parts.headers = OnceLock::from(headers);
    }

    /// Have the router write the template of the route it matches into `slot`.
    pub(crate) fn observe_route(&mut self, slot: Arc<RouteSlot>) {
        self.p_mut().route_slot = Some(slot);
    }

    /// Have the body reader tell `observer` the size of each piece of the body it reads from
    /// the connection, whenever that happens (a body streamed into the response included).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn observe_body(&mut self, observer: BodyObserver) {
        self.p_mut().body_observer = Some(observer);
    }

    /// Tell an observer (see [`Request::observe_route`]) the route this request matched.
    #[inline]
    pub(crate) fn record_route(&self, route: &Arc<str>) {
        if let Some(slot) = &self.p().route_slot {
            slot.set(route);
        }
    }

    /// How much of the path the router this request was routed through is mounted at.
    pub(crate) fn set_prefix_len(&mut self, prefix_len: usize) {
        self.p_mut().prefix_len = prefix_len;
    }

    /// The request method.
    pub fn method(&self) -> &Method {
        self.head_ref().method()
    }

    /// The path, without the query; inside a router mounted at a prefix, without the prefix.
    pub fn path(&self) -> &str {
        match &self.head_ref().path()[self.p().prefix_len..] {
            "" => "/",
            path => path,
        }
    }

    /// The whole path as the client sent it, prefix included, without the query.
    pub fn original_path(&self) -> &str {
        self.head_ref().path()
    }

    /// The request target as the client sent it: path and query.
    pub fn uri(&self) -> &str {
        self.head_ref().path_and_query()
    }

    /// The raw query string, after `?`.
    pub fn query_string(&self) -> Option<&str> {
        self.head_ref().query()
    }

    /// The query string parsed into `T` with serde (`?page=2&tag=a` into a struct). A key
    /// given more than once (`?tag=a&tag=b`) fills a `Vec` field; into a single value, the
    /// last one counts.
    pub fn query<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_html_form::from_str(self.head_ref().query().unwrap_or(""))
            .map_err(|e| Error::rejection(Rejection::QueryInvalid, Some(e.to_string())))
    }

    /// One query parameter, percent-decoded; the first if it is repeated.
    pub fn query_param(&self, name: &str) -> Option<Cow<'_, str>> {
        form_pairs(self.head_ref().query()?.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }

    /// A route parameter (`:id` in `/users/:id`), percent-decoded.
    pub fn param(&self, name: &str) -> Option<Cow<'_, str>> {
        let path = self.head_ref().path_bytes();
        self.p()
            .captures
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, start, end)| decode_param(&path[start..end]))
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
    pub fn params(&self) -> impl Iterator<Item = (&str, Cow<'_, str>)> + '_ {
        let path = self.head_ref().path_bytes();
        self.p()
            .captures
            .iter()
            .map(move |(name, start, end)| (name, decode_param(&path[start..end])))
    }

    /// The first value of a header field as text, if it is present and visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head_ref()
            .header(name)
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    /// The raw values of every field named `name` (any case), in order, without building
    /// the `HeaderMap`.
    pub(crate) fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> {
        self.head_ref()
            .headers()
            .filter(move |(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    }

    /// All header fields as an `http::HeaderMap`, built on first use.
    pub fn headers(&self) -> &HeaderMap {
        self.p().headers.get_or_init(|| {
            let mut map = HeaderMap::with_capacity(self.head_ref().headers().len());
            for (name, value) in self.head_ref().headers() {
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

    /// The value of a cookie the client sent, percent-decoded; the first if several have the
    /// name.
    pub fn cookie(&self, name: &str) -> Option<Cow<'_, str>> {
        self.cookies().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Every cookie the client sent, as (name, value), percent-decoded. Pairs that do not parse,
    /// or do not decode to UTF-8, are skipped.
    pub fn cookies(&self) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
        self.head_ref()
            .headers()
            .filter(|(name, _)| name.eq_ignore_ascii_case("cookie"))
            .filter_map(|(_, value)| std::str::from_utf8(value).ok())
            .flat_map(cookies::parse)
    }

    #[cfg(feature = "secure-cookies")]
    /// The value of a cookie set with [`crate::ResponseExt::set_signed_cookie`] and the same
    /// `key`; `None` if there is none, or its signature does not match (changed by the client,
    /// signed with another key, or signed for a cookie of another name).
    ///
    /// ```
    /// use vireo::{App, Cookie, Key, Request, Response, ResponseExt, http::StatusCode};
    /// let mut app = App::new();
    /// app.state(Key::generate());
    /// app.get("/login", |req: Request| -> Result<Response, vireo::Error> {
    ///     let mut res = Response::new(StatusCode::OK, "welcome");
    ///     res.set_signed_cookie(req.state::<Key>()?, &Cookie::new("user", "ada").http_only())?;
    ///     Ok(res)
    /// });
    /// app.get("/me", |req: Request| -> Result<String, vireo::Error> {
    ///     Ok(format!("{:?}", req.signed_cookie(req.state::<Key>()?, "user")))
    /// });
    /// let client = vireo::TestClient::new(app);
    /// let set = client.get("/login").send().header("set-cookie").unwrap().to_owned();
    /// let pair = set.split(';').next().unwrap();
    /// assert_eq!(client.get("/me").header("cookie", pair).send().text(), r#"Some("ada")"#);
    /// assert_eq!(client.get("/me").header("cookie", "user=ada").send().text(), "None");
    /// ```
    pub fn signed_cookie(&self, key: &Key, name: &str) -> Option<String> {
        self.cookies()
            .filter(|(n, _)| n == name)
            .find_map(|(_, value)| cookies::verify(key, name, &value))
    }

    #[cfg(feature = "secure-cookies")]
    /// The value of a cookie set with [`crate::ResponseExt::set_private_cookie`] and the same
    /// `key`, decrypted; `None` if there is none, or it does not decrypt and authenticate with
    /// this key and name.
    pub fn private_cookie(&self, key: &Key, name: &str) -> Option<String> {
        self.cookies()
            .filter(|(n, _)| n == name)
            .find_map(|(_, value)| cookies::decrypt(key, name, &value))
    }

    /// The address of the peer (the client, or a proxy in front); `None` in the test client.
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        let addr = self.p().remote_addr;
        (addr != NO_PEER).then_some(addr)
    }

    /// Whether the request came over an encrypted connection (the server serves TLS): its
    /// scheme is `https`. Behind a proxy that terminates TLS this is `false`, and the proxy's
    /// forwarded headers tell the original scheme; `false` in the test client.
    pub fn is_secure(&self) -> bool {
        self.p().secure
    }

    /// What the TLS handshake of the request's connection negotiated: the version, the cipher
    /// suite and the client's certificate chain (see `vireo::tls::ClientAuth`). `None` on a
    /// plain connection, behind a proxy that terminates TLS, and in the test client.
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&vireo_http::tls::TlsSession> {
        self.p().tls.as_deref()
    }

    /// Carry the connection's TLS session, if it has one.
    pub(crate) fn with_tls(mut self, tls: Option<&ConnectionTls>) -> Self {
        #[cfg(feature = "tls")]
        if let Some(tls) = tls {
            self.p_mut().tls = Some(tls.clone());
        }
        #[cfg(not(feature = "tls"))]
        let _ = (&mut self, tls);
        self
    }

    /// The parsed head, as the engine read it.
    pub fn head(&self) -> &Head {
        self.head_ref()
    }

    /// Typed values attached to this request by middleware.
    pub fn extensions(&self) -> &Extensions {
        &self.p().extensions
    }

    /// Typed values attached to this request, to change.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.p_mut().extensions
    }

    /// Attach a typed value to this request (for later middleware and the handler), returning
    /// the value of the same type attached before, if any. The room for a value stays with the
    /// request's pooled parts, so a value of a type set before on this thread needs no
    /// allocation.
    pub fn set<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        self.p_mut().extensions.insert(value)
    }

    /// A typed value attached to this request.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.p().extensions.get::<T>()
    }

    /// App-wide state registered with [`crate::App::state`]: a 500 if none of type `T` was.
    /// [`crate::App::state_of`] fetches it once at registration instead, so a missing state
    /// stops the start rather than failing requests.
    pub fn state<T: Send + Sync + 'static>(&self) -> Result<&T, Error> {
        self.p()
            .state
            .as_ref()
            .and_then(|state| state.get::<Arc<T>>())
            .map(|s| &**s)
            .ok_or_else(|| {
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
        self.p().body_limit
    }

    /// Change the body limit, before the body is read.
    pub fn set_body_limit(&mut self, limit: u64) {
        self.p_mut().body_limit = limit;
    }

    /// Read the body from the connection, if that has not happened yet. The client is sent
    /// `100 Continue` now if it asked for it. A body over the limit is refused with 413
    /// without being read.
    pub async fn load_body(&mut self) -> Result<&Bytes, Error> {
        let limit = self.p().body_limit;
        match std::mem::replace(&mut self.p_mut().body, BodySource::Empty) {
            BodySource::Empty => {}
            BodySource::Ready(bytes) if bytes.len() as u64 > limit => {
                self.p_mut().body = BodySource::Failed(Error::from(Rejection::BodyTooLarge));
            }
            BodySource::Ready(bytes) => self.p_mut().body = BodySource::Ready(bytes),
            BodySource::Failed(error) => self.p_mut().body = BodySource::Failed(error),
            BodySource::Pending(_) if matches!(self.head_ref().body_kind(), BodyKind::Length(n) if n > limit) =>
            {
                self.p_mut().body = BodySource::Failed(Error::from(Rejection::BodyTooLarge));
            }
            BodySource::Pending(channel) => {
                let (reply, result) = oneshot::channel();
                let _ = channel.send(BodyRequest {
                    limit,
                    observer: self.p().body_observer.clone(),
                    reply: BodyReply::Whole(reply),
                });
                self.p_mut().body = match result.await {
                    Ok(Ok(bytes)) => BodySource::Ready(bytes),
                    Ok(Err(error)) => BodySource::Failed(body_error(error)),
                    Err(_) => BodySource::Failed(Error::from(Rejection::BodyUnreadable)),
                };
            }
        }
        self.body()
    }

    /// The body as a stream of chunks, read from the connection as they are taken, within the
    /// body limit (a chunk that goes over it is an error, 413): for bodies too large to hold in
    /// memory. The body is read by the handler this way only in a [`crate::streaming_body`]
    /// handler (any other has read it whole before it runs, and then the stream yields it as
    /// one chunk). Taking the stream leaves the request without a body.
    ///
    /// ```
    /// use vireo::{App, Request, streaming_body};
    /// let mut app = App::new();
    /// app.post("/count", streaming_body(|mut req: Request| async move {
    ///     let mut body = req.body_stream();
    ///     let mut total = 0;
    ///     while let Some(chunk) = body.next_chunk().await {
    ///         total += chunk?.len();
    ///     }
    ///     Ok::<_, vireo::Error>(total.to_string())
    /// }));
    /// let client = vireo::TestClient::new(app);
    /// assert_eq!(client.post("/count").body("12345").send().text(), "5");
    /// ```
    pub fn body_stream(&mut self) -> BodyStream {
        let limit = self.p().body_limit;
        let state = match std::mem::replace(&mut self.p_mut().body, BodySource::Empty) {
            BodySource::Empty => StreamState::Done,
            BodySource::Ready(bytes) if bytes.len() as u64 > limit => {
                StreamState::One(Err(Error::from(Rejection::BodyTooLarge)))
            }
            BodySource::Ready(bytes) => StreamState::One(Ok(bytes)),
            BodySource::Failed(error) => StreamState::One(Err(error)),
            BodySource::Pending(_) if matches!(self.head_ref().body_kind(), BodyKind::Length(n) if n > limit) => {
                StreamState::One(Err(Error::from(Rejection::BodyTooLarge)))
            }
            BodySource::Pending(channel) => {
                let (chunks, receiver) = tokio::sync::mpsc::channel(1);
                let _ = channel.send(BodyRequest {
                    limit,
                    observer: self.p().body_observer.clone(),
                    reply: BodyReply::Chunks(chunks),
                });
                StreamState::Chunks(receiver)
            }
        };
        BodyStream { state }
    }

    /// Whether the body is here and within the limit, so the handler can run without waiting.
    pub(crate) fn body_is_ready(&self) -> bool {
        match &self.p().body {
            BodySource::Empty => true,
            BodySource::Ready(bytes) => bytes.len() as u64 <= self.p().body_limit,
            BodySource::Pending(_) | BodySource::Failed(_) => false,
        }
    }

    /// The body bytes, exactly as received.
    pub fn body(&self) -> Result<&Bytes, Error> {
        static NO_BODY: Bytes = Bytes::new();
        match &self.p().body {
            BodySource::Empty => Ok(&NO_BODY),
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

    #[cfg(feature = "json")]
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
    /// 422 if it does not match `T`. Repeated keys fill a `Vec` field, as in [`Request::query`].
    pub fn form<T: DeserializeOwned>(&self) -> Result<T, Error> {
        if !self.content_type_is(|t| t == "application/x-www-form-urlencoded") {
            return Err(Error::from(Rejection::FormContentType));
        }
        serde_html_form::from_bytes(self.body()?)
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

/// A route parameter's text, percent-decoded; borrowed from the path when it has no escape.
fn decode_param(raw: &[u8]) -> Cow<'_, str> {
    if raw.contains(&b'%') {
        percent_encoding::percent_decode(raw).decode_utf8_lossy()
    } else {
        // The path is visible ASCII, so this borrows: only the parameter is checked as text.
        std::str::from_utf8(raw).map_or_else(|_| String::from_utf8_lossy(raw), Cow::Borrowed)
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

#[cfg(test)]
mod tests {
    use super::Request;

    #[test]
    fn a_request_is_one_word() {
        assert_eq!(std::mem::size_of::<Request>(), std::mem::size_of::<usize>());
    }
}
