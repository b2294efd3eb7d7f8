//! One handler shape: a function of the request, sync, async or marked blocking.

use crate::response::IntoResponse;
use crate::Request;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use vireo_http::Response;

/// The response of a handler, or of the rest of a middleware chain: ready at once for sync
/// handlers (no allocation), or a boxed future for async and blocking ones.
///
/// Two words, so that a layer returning `next.run(req)` has the reply written straight into
/// the slot of the layer above instead of copying it.
#[must_use = "a Reply does nothing unless awaited"]
pub struct Reply(Served<'static>);

/// A response made at once, or a future still making it: what a layer returns (as a [`Reply`])
/// and what the app hands the engine, borrowing the app while it runs. A plain enum rather than
/// an `async` block, so the common, sync case builds no future state to move and poll.
pub(crate) enum Served<'a> {
    Ready(Response),
    Later(Pin<Box<dyn Future<Output = Response> + 'a>>),
}

impl Reply {
    /// A reply that is already made.
    pub fn ready(response: Response) -> Self {
        Reply(Served::Ready(response))
    }

    /// A reply still being made.
    pub fn pending(future: impl Future<Output = Response> + 'static) -> Self {
        Reply(Served::Later(Box::pin(future)))
    }

    /// The response, if it is already made; else the future that makes it.
    pub(crate) fn into_state(self) -> Result<Response, Pin<Box<dyn Future<Output = Response>>>> {
        match self.0 {
            Served::Ready(response) => Ok(response),
            Served::Later(future) => Err(future),
        }
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Served::Ready(_) => f.write_str("Reply::Ready"),
            Served::Later(_) => f.write_str("Reply::Pending"),
        }
    }
}

impl Future for Reply {
    type Output = Response;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl Future for Served<'_> {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = self.get_mut();
        match this {
            Served::Ready(_) => match std::mem::replace(this, Served::Later(Box::pin(Completed))) {
                Served::Ready(response) => Poll::Ready(response),
                Served::Later(_) => unreachable!("matched as ready just above"),
            },
            Served::Later(future) => future.as_mut().poll(cx),
        }
    }
}

/// What a ready response is replaced by once taken: a future with no state, so boxing it
/// allocates nothing, that refuses to be polled again.
struct Completed;

impl Future for Completed {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Response> {
        panic!("a reply is not polled after it completes")
    }
}

/// A handler with its type erased, as the router stores it. Public only so [`Handler`] can
/// name it; not meant to be implemented outside this crate.
#[doc(hidden)]
pub trait Endpoint: Send + Sync + 'static {
    /// Answer one request.
    fn call(&self, req: Request) -> Reply;
}

/// A function that answers requests. Implemented for:
///
/// - `Fn(Request) -> R` where `R:` [`IntoResponse`]: a sync handler, run on the worker. Right
///   for anything that does not block: it costs no allocation.
/// - `Fn(Request) -> impl Future<Output = R>`: an async handler, run on the worker.
/// - [`blocking`]`(Fn(Request) -> R)`: a blocking handler, run on the engine's bounded blocking
///   pool so the worker goes on serving other connections.
///
/// The body is read before the handler runs, so every handler sees it with
/// [`Request::body`], [`Request::json`] and friends.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Vireo handler",
    label = "expected `Fn(Request) -> impl IntoResponse`, or an async fn of `Request`",
    note = "a handler takes `vireo::Request` by value and returns text, bytes, `Json`, `Response`, `(StatusCode, _)` or `Result<_, _>` of those, or a future of one; blocking work goes in `vireo::blocking(...)`"
)]
pub trait Handler<Marker>: Send + Sync + 'static {
    #[doc(hidden)]
    fn into_endpoint(self) -> Arc<dyn Endpoint>;
}

#[doc(hidden)]
#[derive(Debug)]
pub struct IsSync;
#[doc(hidden)]
#[derive(Debug)]
pub struct IsAsync;
#[doc(hidden)]
#[derive(Debug)]
pub struct IsBlocking;

struct SyncFn<F>(Arc<F>);

impl<F, R> Endpoint for SyncFn<F>
where
    F: Fn(Request) -> R + Send + Sync + 'static,
    R: IntoResponse + 'static,
{
    fn call(&self, mut req: Request) -> Reply {
        if req.body_is_ready() {
            return Reply::ready((self.0)(req).into_response());
        }
        let f = self.0.clone();
        Reply::pending(async move {
            if let Err(error) = req.load_body().await {
                return error.into_response();
            }
            f(req).into_response()
        })
    }
}

impl<F, R> Handler<(IsSync, R)> for F
where
    F: Fn(Request) -> R + Send + Sync + 'static,
    R: IntoResponse + 'static,
{
    fn into_endpoint(self) -> Arc<dyn Endpoint> {
        Arc::new(SyncFn(Arc::new(self)))
    }
}

struct AsyncFn<F>(Arc<F>);

impl<F, Fut> Endpoint for AsyncFn<F>
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future + 'static,
    Fut::Output: IntoResponse,
{
    fn call(&self, mut req: Request) -> Reply {
        if req.body_is_ready() {
            let future = (self.0)(req);
            return Reply::pending(async move { future.await.into_response() });
        }
        let f = self.0.clone();
        Reply::pending(async move {
            if let Err(error) = req.load_body().await {
                return error.into_response();
            }
            f(req).await.into_response()
        })
    }
}

impl<F, Fut> Handler<(IsAsync, Fut)> for F
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future + 'static,
    Fut::Output: IntoResponse,
{
    fn into_endpoint(self) -> Arc<dyn Endpoint> {
        Arc::new(AsyncFn(Arc::new(self)))
    }
}

/// A handler marked as blocking: see [`blocking`].
#[derive(Debug, Clone)]
pub struct Blocking<F>(Arc<F>);

/// Mark a handler as blocking (it sleeps, does file or database I/O with a blocking driver, or
/// computes for long). It runs on the engine's bounded, elastic blocking pool; the worker keeps
/// serving other connections meanwhile. A panic in it still costs only a 500.
///
/// ```
/// use vireo::{App, blocking};
/// let mut app = App::new();
/// app.get("/report", blocking(|_req| {
///     std::thread::sleep(std::time::Duration::from_millis(5));
///     "done"
/// }));
/// ```
pub fn blocking<F, R>(handler: F) -> Blocking<F>
where
    F: Fn(Request) -> R + Send + Sync + 'static,
    R: IntoResponse + Send + 'static,
{
    Blocking(Arc::new(handler))
}

impl<F, R> Endpoint for Blocking<F>
where
    F: Fn(Request) -> R + Send + Sync + 'static,
    R: IntoResponse + Send + 'static,
{
    fn call(&self, mut req: Request) -> Reply {
        let f = self.0.clone();
        Reply::pending(async move {
            if let Err(error) = req.load_body().await {
                return error.into_response();
            }
            vireo_http::spawn_blocking(move || f(req).into_response()).await
        })
    }
}

impl<F, R> Handler<IsBlocking> for Blocking<F>
where
    F: Fn(Request) -> R + Send + Sync + 'static,
    R: IntoResponse + Send + 'static,
{
    fn into_endpoint(self) -> Arc<dyn Endpoint> {
        Arc::new(self)
    }
}

/// A handler that reads the body itself: see [`streaming_body`].
#[derive(Debug, Clone)]
pub struct StreamingBody<F>(Arc<F>);

/// Mark an async handler as reading the request body itself, as a stream
/// ([`Request::body_stream`], or [`crate::Multipart`]), instead of having it read whole before
/// it runs: for uploads larger than memory. The body limit still applies as bytes arrive; raise
/// it for the route with [`crate::middleware::body_limit`].
///
/// ```
/// use vireo::{App, Request, streaming_body, middleware::body_limit};
/// let mut app = App::new();
/// app.post("/upload", streaming_body(|mut req: Request| async move {
///     let mut body = req.body_stream();
///     let mut size = 0;
///     while let Some(chunk) = body.next_chunk().await {
///         size += chunk?.len(); // write it to disk here
///     }
///     Ok::<_, vireo::Error>(format!("{size} bytes"))
/// }))
/// .with(body_limit(1 << 30));
/// ```
pub fn streaming_body<F, Fut>(handler: F) -> StreamingBody<F>
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future + 'static,
    Fut::Output: IntoResponse,
{
    StreamingBody(Arc::new(handler))
}

impl<F, Fut> Endpoint for StreamingBody<F>
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future + 'static,
    Fut::Output: IntoResponse,
{
    fn call(&self, req: Request) -> Reply {
        let future = (self.0)(req);
        Reply::pending(async move { future.await.into_response() })
    }
}

#[doc(hidden)]
#[derive(Debug)]
pub struct IsStreaming;

impl<F, Fut> Handler<(IsStreaming, Fut)> for StreamingBody<F>
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future + 'static,
    Fut::Output: IntoResponse,
{
    fn into_endpoint(self) -> Arc<dyn Endpoint> {
        Arc::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::{Reply, Served};

    #[test]
    fn a_reply_and_a_served_response_are_two_words() {
        let two_words = 2 * std::mem::size_of::<usize>();
        assert_eq!(std::mem::size_of::<Reply>(), two_words);
        assert_eq!(std::mem::size_of::<Served<'_>>(), two_words);
    }
}
