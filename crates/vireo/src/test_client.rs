//! Testing an app: a client that calls it without a socket, from plain tests or async ones, and
//! a helper that serves it on an ephemeral port for socket-level tests.

use crate::app::{App, AppService};
use crate::request::{BodySource, NO_PEER};
use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
#[cfg(feature = "json")]
use serde::Serialize;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::OnceLock;
use vireo_http::{Body, RunningServer, Server};

/// Calls an app in-process: the request goes through the same parser, middleware, router and
/// handlers as one from a socket.
///
/// In a plain `#[test]`, finish a request with [`TestRequest::send`], which blocks on a runtime
/// of the client's own:
///
/// ```
/// let mut app = vireo::App::new();
/// app.post("/echo", |req: vireo::Request| req.body().cloned());
/// let client = vireo::TestClient::new(app);
/// let res = client.post("/echo").body("ping").send();
/// assert_eq!(res.status(), 200);
/// assert_eq!(res.text(), "ping");
/// ```
///
/// In an async test (`#[tokio::test]`, either flavour), `.await` the request instead (or call
/// [`TestRequest::send_async`]): it runs on the test's runtime.
///
/// ```
/// # async fn test() {
/// let mut app = vireo::App::new();
/// app.get("/", |_req| async { "hello" });
/// let client = vireo::TestClient::new(app);
/// assert_eq!(client.get("/").await.text(), "hello");
/// # }
/// ```
pub struct TestClient {
    service: AppService,
    /// For the blocking `send` only, made on its first use: an async test never makes one, so
    /// it never drops one inside its runtime either (which Tokio forbids).
    runtime: OnceLock<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestClient")
    }
}

impl Drop for TestClient {
    fn drop(&mut self) {
        self.service.forget_on_this_thread();
    }
}

impl TestClient {
    /// A client for `app`.
    pub fn new(app: App) -> Self {
        TestClient {
            service: app.into_service(),
            runtime: OnceLock::new(),
        }
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime.get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a Tokio runtime for the test client")
        })
    }

    /// Start a request with any method.
    pub fn request(&self, method: Method, target: &str) -> TestRequest<'_> {
        TestRequest {
            client: self,
            method,
            target: target.to_owned(),
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// Start a `GET`.
    pub fn get(&self, target: &str) -> TestRequest<'_> {
        self.request(Method::GET, target)
    }

    /// Start a `POST`.
    pub fn post(&self, target: &str) -> TestRequest<'_> {
        self.request(Method::POST, target)
    }

    /// Start a `PUT`.
    pub fn put(&self, target: &str) -> TestRequest<'_> {
        self.request(Method::PUT, target)
    }

    /// Start a `PATCH`.
    pub fn patch(&self, target: &str) -> TestRequest<'_> {
        self.request(Method::PATCH, target)
    }

    /// Start a `DELETE`.
    pub fn delete(&self, target: &str) -> TestRequest<'_> {
        self.request(Method::DELETE, target)
    }

    /// Start a `HEAD`.
    pub fn head(&self, target: &str) -> TestRequest<'_> {
        self.request(Method::HEAD, target)
    }

    /// Start an `OPTIONS` (`*` for the server as a whole).
    pub fn options(&self, target: &str) -> TestRequest<'_> {
        self.request(Method::OPTIONS, target)
    }
}

/// A request being built by a [`TestClient`]: finish it with [`TestRequest::send`] in a plain
/// test, or `.await` it ([`TestRequest::send_async`]) in an async one.
#[derive(Debug)]
#[must_use = "a test request is sent with `send`, or `.await` in an async test"]
pub struct TestRequest<'c> {
    client: &'c TestClient,
    method: Method,
    target: String,
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl TestRequest<'_> {
    /// Add a header field.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Set the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    #[cfg(feature = "json")]
    /// Set a JSON body and `Content-Type: application/json`.
    pub fn json<T: Serialize>(self, value: &T) -> Self {
        let body = serde_json::to_vec(value).expect("the test value serializes to JSON");
        self.header("content-type", "application/json").body(body)
    }

    /// Send the request and wait for the whole response, blocking the thread.
    ///
    /// # Panics
    /// If the request head is not valid HTTP (a bad header name or value), or if called from
    /// inside an async runtime (an async test), where blocking would stall the runtime: there,
    /// `.await` the request instead.
    pub fn send(self) -> TestResponse {
        if tokio::runtime::Handle::try_current().is_ok() {
            panic!(
                "TestRequest::send blocks, and this thread runs an async runtime: \
                 in an async test, `.await` the request (or call `send_async`) instead"
            );
        }
        let runtime = self.client.runtime();
        runtime.block_on(self.send_async())
    }

    /// Send the request and wait for the whole response, on the runtime that polls the
    /// returned future (as `#[tokio::test]` does, on either flavour). The same as `.await` on
    /// the request.
    ///
    /// The future is not `Send`: await it in the test's own task.
    ///
    /// # Panics
    /// If the request head is not valid HTTP (a bad header name or value).
    pub async fn send_async(self) -> TestResponse {
        let mut head = format!("{} {} HTTP/1.1\r\nhost: test\r\n", self.method, self.target);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !self.body.is_empty() {
            head.push_str(&format!("content-length: {}\r\n", self.body.len()));
        }
        head.push_str("\r\n");
        let service = &self.client.service;
        let (parsed, _) = vireo_http::Head::parse(head.as_bytes(), service.limits())
            .unwrap_or_else(|e| panic!("the test request is not valid HTTP: {e}"));
        let request = service.request(
            parsed,
            move || BodySource::Ready(self.body),
            &NO_PEER,
            false,
        );
        let is_head = self.method == Method::HEAD;
        let mut response = service.respond(request).await;
        let mut trailers = HeaderMap::new();
        let body = match response.take_body() {
            _ if is_head => Bytes::new(),
            Body::Empty => Bytes::new(),
            Body::Static(bytes) => Bytes::from_static(bytes),
            Body::Bytes(bytes) => bytes,
            Body::Vec(vec) => Bytes::from(vec),
            Body::Stream(stream) | Body::SizedStream(_, stream) => collect(stream).await,
            Body::StreamWithTrailers(trailed) => {
                let body = collect(trailed.stream).await;
                trailers = trailed.trailers.await;
                body
            }
        };
        TestResponse {
            status: response.status(),
            headers: response.headers().clone(),
            body,
            trailers,
        }
    }
}

/// `.await` on a request sends it: [`TestRequest::send_async`].
impl<'c> IntoFuture for TestRequest<'c> {
    type Output = TestResponse;
    type IntoFuture = Pin<Box<dyn Future<Output = TestResponse> + 'c>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send_async())
    }
}

/// A whole response received by a [`TestClient`].
#[derive(Debug, Clone)]
pub struct TestResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    trailers: HeaderMap,
}

/// Every chunk of a streamed body.
async fn collect(mut stream: vireo_http::BodyStream) -> Bytes {
    let mut all = Vec::new();
    while let Some(chunk) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
        all.extend_from_slice(&chunk.expect("the streamed body fails"));
    }
    Bytes::from(all)
}

impl TestResponse {
    /// The trailer fields sent after a streamed body (empty when there are none).
    pub fn trailers(&self) -> &HeaderMap {
        &self.trailers
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The header fields.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// One header field as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.body
    }

    /// The body as text.
    ///
    /// # Panics
    /// If the body is not UTF-8.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("the response body is UTF-8")
    }

    #[cfg(feature = "json")]
    /// The body parsed as JSON.
    ///
    /// # Panics
    /// If the body is not JSON of that shape.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body).expect("the response body is JSON of that shape")
    }
}

/// Serve `app` on `127.0.0.1` at a free port, on one worker, for socket-level tests. The server
/// shuts down when the returned value is dropped.
pub fn serve_ephemeral(app: App) -> std::io::Result<RunningServer> {
    app.spawn(Server::bind("127.0.0.1:0")?.workers(1))
}
