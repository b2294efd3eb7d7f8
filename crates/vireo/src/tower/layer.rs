//! A tower layer as Vireo middleware.

use super::body::{LayerBody, ResponseBody};
use super::convert::{
    error_response, from_http_response, head_from, to_http_response, RequestLine,
};
use crate::handler::Reply;
use crate::middleware::{Middleware, Next};
use crate::{IntoResponse, Request};
use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;
use vireo_http::{BoxError, Limits};

/// Run a tower [`Layer`] as Vireo middleware: add it with `app.r#use(vireo::tower::layer(..))`,
/// on a router, or on one route with `.with(..)`.
///
/// ```
/// use tower_http::set_header::SetResponseHeaderLayer;
/// use vireo::http::{HeaderName, HeaderValue};
/// let mut app = vireo::App::new();
/// app.r#use(vireo::tower::layer(SetResponseHeaderLayer::overriding(
///     HeaderName::from_static("x-served-by"),
///     HeaderValue::from_static("vireo"),
/// )));
/// app.get("/", |_req| "Hello, World!");
/// let client = vireo::TestClient::new(app);
/// assert_eq!(client.get("/").send().header("x-served-by"), Some("vireo"));
/// ```
///
/// The layer sees an `http::Request<`[`LayerBody`]`>` with the request's method, URI, header
/// fields and an empty body (the body stays with the Vireo request, read on demand as usual).
/// What the layer changes in the header fields reaches later middleware and the handler, and
/// the values it adds to the request's `http::Extensions` are there as an `http::Extensions`
/// request value (`req.get::<http::Extensions>()`); a changed method or URI is not applied.
/// The layer gets the response as an `http::Response<`[`ResponseBody`]`>` and may return any
/// body, which is then sent with `Content-Length` when its size is known and chunked otherwise.
/// A layer that fails (returns `Err`) costs a 500, logged. The layer's service must call its
/// inner service on the worker that called it (tower's `Buffer` does not), or the request gets
/// a 500.
pub fn layer<L>(layer: L) -> TowerLayer<L::Service>
where
    L: Layer<NextService>,
{
    TowerLayer {
        service: layer.layer(NextService { _private: () }),
    }
}

/// A tower layer's service as Vireo middleware, made by [`layer`].
#[derive(Debug, Clone)]
pub struct TowerLayer<S> {
    service: S,
}

/// The rest of the Vireo chain as a tower service: the inner service every layer given to
/// [`layer`] wraps.
#[derive(Debug, Clone)]
pub struct NextService {
    _private: (),
}

/// The Vireo request and the rest of its chain, parked while a tower layer has the `http`
/// request; the layer's request carries the key as an extension.
struct Parked {
    request: Request,
    next: Next,
    /// The header fields as the layer got them, to tell whether it changed them.
    original: Fingerprint,
}

/// What identifies a header map's fields without copying them: their number, and where each
/// name and value is stored. A layer can change the fields only by inserting, removing or
/// replacing entries, and each of those changes this.
#[derive(PartialEq, Eq)]
struct Fingerprint {
    len: usize,
    hash: u64,
}

impl Fingerprint {
    fn of(headers: &http::HeaderMap) -> Self {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for (name, value) in headers {
            (name.as_str().as_ptr() as usize, name.as_str().len()).hash(&mut hasher);
            (value.as_bytes().as_ptr() as usize, value.len()).hash(&mut hasher);
        }
        Fingerprint {
            len: headers.len(),
            hash: hasher.finish(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ParkedKey(u64);

thread_local! {
    static PARKED: RefCell<HashMap<u64, Parked>> = RefCell::new(HashMap::new());
    static NEXT_KEY: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Takes a parked request out again when dropped, so a layer that answers without calling its
/// inner service (or is cancelled) leaves nothing behind.
struct Unpark(u64);

impl Drop for Unpark {
    fn drop(&mut self) {
        let _ = PARKED.try_with(|parked| parked.borrow_mut().remove(&self.0));
    }
}

impl<S, B> Middleware for TowerLayer<S>
where
    S: Service<http::Request<LayerBody>, Response = http::Response<B>>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Error: Into<BoxError>,
    S::Future: 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    fn call(&self, mut req: Request, next: Next) -> Reply {
        let mut service = self.service.clone();
        let mut http_req = http::Request::new(LayerBody);
        *http_req.method_mut() = req.method().clone();
        *http_req.uri_mut() = req.uri().parse().unwrap_or_default();
        *http_req.version_mut() = req.head().version();
        *http_req.headers_mut() = req.take_headers();
        let key = NEXT_KEY.with(|k| {
            let key = k.get();
            k.set(key.wrapping_add(1));
            key
        });
        http_req.extensions_mut().insert(ParkedKey(key));
        let parked = Parked {
            original: Fingerprint::of(http_req.headers()),
            request: req,
            next,
        };
        PARKED.with(|p| p.borrow_mut().insert(key, parked));
        let unpark = Unpark(key);
        Reply::pending(async move {
            let _unpark = unpark;
            let ready = std::future::poll_fn(|cx| service.poll_ready(cx)).await;
            let result = match ready {
                Ok(()) => service.call(http_req).await,
                Err(error) => Err(error),
            };
            match result {
                Ok(response) => from_http_response(response),
                Err(error) => error_response(error.into()),
            }
        })
    }
}

impl<B> Service<http::Request<B>> for NextService {
    type Response = http::Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>>>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let parked = req
            .extensions()
            .get::<ParkedKey>()
            .and_then(|key| PARKED.try_with(|p| p.borrow_mut().remove(&key.0)).ok())
            .flatten();
        let Some(Parked {
            mut request,
            next,
            original,
        }) = parked
        else {
            return Box::pin(async {
                Ok(to_http_response(error_response(
                    "a tower layer called its inner service on another thread or twice".into(),
                )))
            });
        };
        let (mut parts, _) = req.into_parts();
        let mut changed_head = None;
        if Fingerprint::of(&parts.headers) != original {
            // The request passed the app's limits once; the layer's additions are not held to
            // them again.
            let limits = Limits {
                max_head_size: usize::MAX,
                max_target_len: usize::MAX,
                max_headers: parts.headers.len() + 1,
                ..Limits::default()
            };
            // The route was found for the request's own method and target, and its parameters
            // point into that target: only the header fields are taken from the layer.
            let line = RequestLine {
                method: request.method(),
                target: request.uri(),
                authority: None,
            };
            match head_from(line, &parts.headers, None, &limits) {
                Ok(head) => changed_head = Some(head),
                Err(refused) => return Box::pin(async { Ok(to_http_response(refused)) }),
            }
        }
        request.restore_headers(std::mem::take(&mut parts.headers), changed_head);
        parts.extensions.remove::<ParkedKey>();
        if !parts.extensions.is_empty() {
            request.set(parts.extensions);
        }
        Box::pin(async move { Ok(to_http_response(next.run(request).await.into_response())) })
    }
}
