//! An app as a `tower::Service`.

use super::body::ResponseBody;
use super::convert::{error_response, head_of, to_http_response};
use crate::app::AppService;
use crate::request::{BodySource, NO_PEER};
use crate::{App, Error, IntoResponse};
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio_util::task::LocalPoolHandle;
use vireo_http::BoxError;

/// An [`App`] as a `tower::Service<http::Request<B>>`, made by [`App::into_tower`].
///
/// Each request's body is read first (within the app's body limit: 413 over it), then the
/// request runs through the app on a small pool of threads that each keep the app's per-thread
/// state, as the engine's workers do; the returned future is `Send`, as hyper and tower-based
/// frameworks need. A handler that panics costs a 500. The client address is taken from a
/// `std::net::SocketAddr` request extension, when the host puts one there, and a request is
/// secure (`Request::is_secure`) when its URI has the `https` scheme.
#[derive(Clone)]
pub struct TowerService {
    app: AppService,
    pool: LocalPoolHandle,
}

impl std::fmt::Debug for TowerService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TowerService")
            .field("threads", &self.pool.num_threads())
            .finish()
    }
}

impl App {
    /// This app as a `tower::Service`, run on as many threads as the machine has cores.
    ///
    /// ```
    /// use tower::ServiceExt;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut app = vireo::App::new();
    /// app.get("/", |_req| "Hello, World!");
    /// let response = app
    ///     .into_tower()
    ///     .oneshot(http::Request::get("/").body(String::new()).unwrap())
    ///     .await
    ///     .unwrap();
    /// assert_eq!(response.status(), 200);
    /// # });
    /// ```
    pub fn into_tower(self) -> TowerService {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.into_tower_with_threads(threads)
    }

    /// This app as a `tower::Service`, run on `threads` threads (at least one).
    pub fn into_tower_with_threads(self, threads: usize) -> TowerService {
        TowerService {
            app: self.into_service(),
            pool: LocalPoolHandle::new(threads.max(1)),
        }
    }
}

impl<B> tower_service::Service<http::Request<B>> for TowerService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let app = self.app.clone();
        let pool = self.pool.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let limit = usize::try_from(app.limits().max_body_size).unwrap_or(usize::MAX);
            let body = match Limited::new(body, limit).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(error) if error.is::<http_body_util::LengthLimitError>() => {
                    let refused = Error::from(crate::Rejection::BodyTooLarge).into_response();
                    return Ok(to_http_response(refused));
                }
                Err(error) => return Ok(to_http_response(error_response(error))),
            };
            let head = match head_of(&parts, Some(body.len()), app.limits()) {
                Ok(head) => head,
                Err(refused) => return Ok(to_http_response(refused)),
            };
            let remote = parts
                .extensions
                .get::<SocketAddr>()
                .copied()
                .unwrap_or(NO_PEER);
            let secure = parts.uri.scheme() == Some(&http::uri::Scheme::HTTPS);
            let response = pool
                .spawn_pinned(move || respond(app, head, body, (remote, secure)))
                .await;
            Ok(match response {
                Ok(response) => response,
                Err(join_error) => to_http_response(error_response(join_error.into())),
            })
        })
    }
}

/// Run one request through the app, on a pool thread.
async fn respond(
    app: AppService,
    head: vireo_http::Head,
    body: Bytes,
    (remote, secure): (SocketAddr, bool),
) -> http::Response<ResponseBody> {
    let source = if body.is_empty() {
        BodySource::Empty
    } else {
        BodySource::Ready(body)
    };
    let request = app.request(head, move || source, &remote, secure);
    to_http_response(app.respond(request).await)
}
