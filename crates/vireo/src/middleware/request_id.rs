//! A request id on every request and response.

use super::{Middleware, Next};
use crate::handler::Reply;
use crate::Request;
use http::{HeaderName, HeaderValue};
use std::sync::atomic::{AtomicU64, Ordering};

/// The header that carries the id both ways.
const HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Longest incoming id accepted; a longer one is replaced, so clients cannot bloat logs.
const MAX_INCOMING_LEN: usize = 128;

/// The id of the current request, set by [`request_id`]; read it with `req.get::<RequestId>()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// Give each request an id: the client's `X-Request-Id` if it sent a sane one, otherwise a new
/// one unique within this process. The id is stored on the request as [`RequestId`] and sent
/// back in `X-Request-Id`.
///
/// ```
/// let mut app = vireo::App::new();
/// app.r#use(vireo::middleware::request_id());
/// app.get("/", |req: vireo::Request| req.get::<vireo::middleware::RequestId>().unwrap().0.clone());
/// let res = vireo::TestClient::new(app).get("/").header("x-request-id", "abc-1").send();
/// assert_eq!(res.text(), "abc-1");
/// assert_eq!(res.header("x-request-id"), Some("abc-1"));
/// ```
pub fn request_id() -> RequestIdLayer {
    RequestIdLayer {
        prefix: std::process::id(),
        next: AtomicU64::new(0),
    }
}

/// See [`request_id`].
#[derive(Debug)]
pub struct RequestIdLayer {
    prefix: u32,
    next: AtomicU64,
}

fn acceptable(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_INCOMING_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

impl Middleware for RequestIdLayer {
    fn call(&self, mut req: Request, next: Next) -> Reply {
        let id = match req.header("x-request-id").filter(|id| acceptable(id)) {
            Some(id) => id.to_owned(),
            None => format!(
                "{:x}-{:x}",
                self.prefix,
                self.next.fetch_add(1, Ordering::Relaxed)
            ),
        };
        req.set(RequestId(id.clone()));
        Reply::pending(async move {
            let mut response = next.run(req).await;
            if let Ok(value) = HeaderValue::try_from(id) {
                response.headers_mut().insert(HEADER, value);
            }
            response
        })
    }
}
