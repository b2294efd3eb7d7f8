//! A per-route (or per-router) body limit.

use super::{Middleware, Next};
use crate::handler::Reply;
use crate::Request;

/// Limit request bodies to `bytes` where this middleware applies: larger bodies get 413 without
/// being read. It can lower the app's limit, or raise it for an upload route.
///
/// ```
/// use vireo::{App, Request, middleware::body_limit};
/// let mut app = App::new();
/// app.post("/upload", |req: Request| req.body().map(|b| b.len().to_string()))
///     .with(body_limit(64 * 1024 * 1024));
/// ```
pub fn body_limit(bytes: u64) -> BodyLimit {
    BodyLimit(bytes)
}

/// See [`body_limit`].
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(u64);

impl Middleware for BodyLimit {
    fn call(&self, mut req: Request, next: Next) -> Reply {
        req.set_body_limit(self.0);
        next.run(req)
    }
}
