//! A per-route time limit.

use super::{Middleware, Next};
use crate::error::{Error, Rejection};
use crate::handler::Reply;
use crate::response::IntoResponse;
use crate::Request;
use http::{header, HeaderValue};
use std::time::Duration;

/// Answer `503 Service Unavailable` when the rest of the chain takes longer than `limit`, and
/// close the connection. The handler's future is dropped; a blocking handler's thread finishes
/// its work, but its answer is discarded.
///
/// ```
/// use std::time::Duration;
/// use vireo::{App, middleware::timeout};
/// let mut app = App::new();
/// app.get("/slow", |_req| async {
///     tokio::time::sleep(Duration::from_secs(60)).await;
///     "too late"
/// })
/// .with(timeout(Duration::from_millis(10)));
/// let res = vireo::TestClient::new(app).get("/slow").send();
/// assert_eq!(res.status(), 503);
/// ```
pub fn timeout(limit: Duration) -> Timeout {
    Timeout(limit)
}

/// See [`timeout`].
#[derive(Debug, Clone, Copy)]
pub struct Timeout(Duration);

impl Middleware for Timeout {
    fn call(&self, req: Request, next: Next) -> Reply {
        let limit = self.0;
        Reply::pending(async move {
            match tokio::time::timeout(limit, next.run(req)).await {
                Ok(response) => response,
                Err(_) => {
                    let mut res = Error::from(Rejection::Timeout).into_response();
                    res.headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                    res
                }
            }
        })
    }
}
