//! # Vireo
//!
//! An Express-style web framework on the Vireo HTTP/1.1 engine.
mod app;
mod error;
mod handler;
pub mod middleware;
mod request;
mod response;
mod router;
mod static_files;
mod streaming;
mod test_client;
mod tree;

pub use app::{App, AppService};
pub use bytes::Bytes;
pub use error::{Error, Rejection};
pub use handler::{blocking, Blocking, Handler, Reply};
pub use middleware::{Middleware, Next};
pub use request::Request;
pub use response::{Cookie, Html, IntoResponse, Json, Redirect, ResponseExt, SameSite};
pub use router::{RouteRef, Router};
pub use static_files::{serve_dir, ServeDir};
pub use streaming::{stream_body, stream_iter, Event, Sse};
pub use test_client::{serve_ephemeral, TestClient, TestRequest, TestResponse};
pub use vireo_http::{http, Body, Limits, Response, RunningServer, Server};
