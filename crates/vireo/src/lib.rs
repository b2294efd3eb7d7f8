//! # Vireo
//!
//! An Express-style web framework on the Vireo HTTP engine ([`vireo_http`]).
//!
//! ```
//! use vireo::{App, Json, Next, Request};
//!
//! let mut app = App::new();
//! app.r#use(|mut req: Request, next: Next| {
//!     req.set(42u32);
//!     next.run(req)
//! });
//! app.get("/", |_req| "Hello, World!");
//! app.get("/users/:id", |req: Request| {
//!     format!("User: {} (answer {})", req.param("id").unwrap(), req.get::<u32>().unwrap())
//! });
//! app.get("/json", |_req| async { Json(serde_json::json!({"message": "Hello, World!"})) });
//!
//! // Serve it with `app.listen("127.0.0.1:8080")`; test it without a socket:
//! let client = vireo::TestClient::new(app);
//! assert_eq!(client.get("/users/7").send().text(), "User: 7 (answer 42)");
//! assert_eq!(client.post("/users/7").send().status(), 405);
//! assert_eq!(client.get("/nope").send().status(), 404);
//! ```
//!
//! - **Routing** ([`Router`]): `:param` and a trailing `*wildcard`, matched in one pass over a
//!   tree; static segments win over parameters; `HEAD` falls back to `GET`; 404, and 405 with
//!   `Allow`; `OPTIONS` (and `OPTIONS *`) answered with `204` and `Allow` unless a route takes
//!   it; routers mounted at a prefix; a conflicting route panics at start-up naming the
//!   line that registered it.
//! - **Handlers** ([`Handler`]): one shape, `Fn(Request) -> impl IntoResponse`, sync or async;
//!   blocking ones wrapped in [`blocking`].
//! - **Requests** ([`Request`]): params, query (raw and typed), header fields, cookies (plain,
//!   signed or private, with [`Cookie`] and [`Key`]), the body as bytes, text, JSON or form;
//!   typed extensions; app state.
//! - **Middleware** ([`middleware`]): functions of the request and [`Next`]; built in: logging,
//!   CORS, compression, request id, timeout, body limit.
//! - **WebSockets** ([`ws`], [`Router::ws`]): the handshake checked, messages with limits, an
//!   idle ping, the close handshake, split halves for broadcasting.
//! - **Errors** ([`Error`], [`Rejection`]): every failure is a response with a precise status;
//!   [`App::on_error`] reshapes them all.
//! - **Testing** ([`TestClient`], blocking in plain tests and awaited in async ones;
//!   [`serve_ephemeral`]).
#![deny(missing_docs)]
#![deny(unreachable_pub)]
#![forbid(unsafe_code)]

mod app;
mod cookies;
mod error;
mod extensions;
mod handler;
pub mod health;
#[cfg(feature = "metrics")]
pub mod metrics;
pub mod middleware;
#[cfg(feature = "multipart")]
mod multipart;
mod request;
mod response;
mod router;
mod state;
mod static_files;
mod streaming;
#[cfg(feature = "test-util")]
mod test_client;
#[cfg(feature = "tower")]
pub mod tower;
mod tree;
pub mod ws;

pub use app::{App, AppService};
pub use bytes::Bytes;
/// The [`cookie`](https://docs.rs/cookie) crate that [`Cookie`], [`Key`] and [`SameSite`] come
/// from, for what they do not cover (`CookieJar`, `Expiration`, the `time` types).
pub use cookie;
#[cfg(feature = "secure-cookies")]
pub use cookies::Key;
pub use cookies::{Cookie, SameSite};
pub use error::{Error, Rejection};
pub use extensions::Extensions;
pub use handler::{blocking, streaming_body, Blocking, Handler, Reply, StreamingBody};
pub use middleware::{Middleware, Next};
#[cfg(feature = "multipart")]
pub use multipart::{Multipart, MultipartLimits, Part};
pub use request::{BodyStream, Request};
#[cfg(feature = "json")]
pub use response::Json;
pub use response::{Html, IntoResponse, Redirect, ResponseExt};
pub use router::{RouteRef, Router};
pub use state::{MissingState, State};
pub use static_files::{serve_dir, ServeDir};
pub use streaming::{stream_body, stream_iter, Event, Sse};
#[cfg(feature = "test-util")]
pub use test_client::{serve_ephemeral, TestClient, TestRequest, TestResponse};
pub use vireo_http::{
    http, Body, Limits, Response, RunningServer, Server, ServerStats, ShutdownHandle,
};

/// Serving HTTPS: certificates, SNI, client certificates, reloading (the `tls` feature). See
/// [`Server::tls`].
#[cfg(feature = "tls")]
pub use vireo_http::tls;

/// The README's examples, compiled and run as doctests so they stay true.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
