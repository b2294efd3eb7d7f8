//! What the engine calls with each request.

use crate::{Request, Response};
use std::future::{ready, Future, Ready};

/// Something that answers requests. The engine shares one instance across its workers and calls
/// it once per request; the future it returns runs on the worker that read the request.
///
/// Work that blocks (file I/O, a slow computation, a blocking database driver) should go
/// through [`crate::spawn_blocking`] so the worker keeps serving other connections.
///
/// An async service:
///
/// ```
/// use vireo_http::{Request, Response, Service};
/// struct Echo;
/// impl Service for Echo {
///     async fn call(&self, mut req: Request<'_>) -> Response {
///         match req.body().to_bytes().await {
///             Ok(body) => Response::new(http::StatusCode::OK, body),
///             Err(error) => Response::new(error.status(), error.to_string()),
///         }
///     }
/// }
/// ```
pub trait Service: Send + Sync + 'static {
    /// Answer one request.
    fn call<'a>(&'a self, req: Request<'a>) -> impl Future<Output = Response> + 'a;

    /// Resolves once work the service runs beyond its responses (tasks a response left
    /// running, for instance) has ended. A graceful shutdown waits for it after the worker's
    /// connections have closed, within the same shutdown timeout; by default there is none.
    fn drained(&self) -> impl Future<Output = ()> + '_ {
        ready(())
    }
}

/// A [`Service`] from a synchronous function; see [`service_fn`].
#[derive(Debug, Clone, Copy)]
pub struct ServiceFn<F>(F);

/// Make a service from a function that answers at once.
///
/// ```
/// let hello = vireo_http::service_fn(|_req| vireo_http::Response::text("Hello, World!"));
/// ```
pub fn service_fn<F>(f: F) -> ServiceFn<F>
where
    F: Fn(Request<'_>) -> Response + Send + Sync + 'static,
{
    ServiceFn(f)
}

impl<F> Service for ServiceFn<F>
where
    F: Fn(Request<'_>) -> Response + Send + Sync + 'static,
{
    fn call<'a>(&'a self, req: Request<'a>) -> impl Future<Output = Response> + 'a {
        let response: Ready<Response> = ready((self.0)(req));
        response
    }
}

/// Run blocking work on the worker's blocking pool and wait for its result without blocking the
/// worker. The pool is bounded ([`crate::Server::max_blocking_threads`]) and shrinks when idle.
/// A panic in `work` is re-raised here, so the engine answers it with a 500 as for any handler.
///
/// # Panics
/// When called outside a Vireo worker (or another Tokio runtime).
pub async fn spawn_blocking<F, T>(work: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => panic!("blocking work was cancelled because the server is shutting down"),
    }
}
