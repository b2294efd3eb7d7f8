//! Testing an app: a client that calls it without a socket, and a helper that serves it on an
//! ephemeral port for socket-level tests.

use crate::app::{App, AppService};
use crate::request::{BodySource, NO_PEER};
use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use serde::Serialize;
use vireo_http::{Body, RunningServer, Server};

/// Calls an app in-process: the request goes through the same parser, middleware, router and
/// handlers as one from a socket.
///
/// ```
/// let mut app = vireo::App::new();
/// app.post("/echo", |req: vireo::Request| req.body().cloned());
/// let client = vireo::TestClient::new(app);
/// let res = client.post("/echo").body("ping").send();
/// assert_eq!(res.status(), 200);
/// assert_eq!(res.text(), "ping");
/// ```
pub struct TestClient {
    service: AppService,
    runtime: tokio::runtime::Runtime,
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
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a Tokio runtime for the test client"),
        }
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

/// A request being built by a [`TestClient`].
#[derive(Debug)]
#[must_use = "a test request is sent with `send`"]
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

    /// Set a JSON body and `Content-Type: application/json`.
    pub fn json<T: Serialize>(self, value: &T) -> Self {
        let body = serde_json::to_vec(value).expect("the test value serializes to JSON");
        self.header("content-type", "application/json").body(body)
    }

    /// Send the request and wait for the whole response.
    ///
    /// # Panics
    /// If the request head is not valid HTTP (a bad header name or value).
    pub fn send(self) -> TestResponse {
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
        let request = service.request(parsed, move || BodySource::Ready(self.body), &NO_PEER);
        let is_head = self.method == Method::HEAD;
        self.client.runtime.block_on(async {
            let mut response = service.respond(request).await;
            let body = match response.take_body() {
                _ if is_head => Bytes::new(),
                Body::Empty => Bytes::new(),
                Body::Static(bytes) => Bytes::from_static(bytes),
                Body::Bytes(bytes) => bytes,
                Body::Stream(mut stream) | Body::SizedStream(_, mut stream) => {
                    let mut all = Vec::new();
                    while let Some(chunk) =
                        std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await
                    {
                        all.extend_from_slice(&chunk.expect("the streamed body fails"));
                    }
                    Bytes::from(all)
                }
            };
            TestResponse {
                status: response.status(),
                headers: response.headers().clone(),
                body,
            }
        })
    }
}

/// A whole response received by a [`TestClient`].
#[derive(Debug, Clone)]
pub struct TestResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl TestResponse {
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
    let service = app.into_service();
    let limits = service.limits().clone();
    Server::bind("127.0.0.1:0")?
        .workers(1)
        .limits(limits)
        .spawn(service)
}
