//! Request logging through `tracing`. Off unless added.

use super::{Middleware, Next};
use crate::handler::Reply;
use crate::Request;
use std::time::Instant;

/// Log each request at `INFO` after it is answered: method, path, status and time taken.
///
/// ```
/// let mut app = vireo::App::new();
/// app.r#use(vireo::middleware::logger());
/// ```
pub fn logger() -> Logger {
    Logger
}

/// See [`logger`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Logger;

impl Middleware for Logger {
    fn call(&self, req: Request, next: Next) -> Reply {
        let started = Instant::now();
        let method = req.method().clone();
        let path = req.original_path().to_owned();
        Reply::pending(async move {
            let response = next.run(req).await;
            tracing::info!(
                %method,
                path,
                status = response.status().as_u16(),
                micros = started.elapsed().as_micros() as u64,
                "request"
            );
            response
        })
    }
}
