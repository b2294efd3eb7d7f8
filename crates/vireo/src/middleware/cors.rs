//! Cross-Origin Resource Sharing.

use super::{Middleware, Next};
use crate::handler::Reply;
use crate::Request;
use http::{header, HeaderValue, Method, StatusCode};
use vireo_http::{Body, Response};

/// A CORS policy. [`cors`] allows any origin; narrow it with [`Cors::allow_origins`].
///
/// Preflight requests (`OPTIONS` with `Access-Control-Request-Method`) are answered here with
/// `204` and the allowed methods and headers; other requests from an allowed origin get
/// `Access-Control-Allow-Origin` on their response.
///
/// Add it app-wide, or on a mounted router for that router's paths: a path with no `OPTIONS`
/// route gets an automatic `OPTIONS` answer, which the app's and the routers' middleware see
/// but a route's own middleware (`.with`) does not, so `cors` on a single route cannot answer
/// its preflights.
///
/// ```
/// use vireo::middleware::cors;
/// let mut app = vireo::App::new();
/// app.r#use(cors().allow_origins(["https://app.example"]).allow_credentials());
/// app.get("/", |_req| "hi");
/// let client = vireo::TestClient::new(app);
/// let res = client.get("/").header("origin", "https://app.example").send();
/// assert_eq!(res.header("access-control-allow-origin"), Some("https://app.example"));
/// let res = client.get("/").header("origin", "https://evil.example").send();
/// assert_eq!(res.header("access-control-allow-origin"), None);
/// ```
#[derive(Debug, Clone)]
pub struct Cors {
    origins: Option<Vec<String>>,
    methods: HeaderValue,
    headers: Option<HeaderValue>,
    credentials: bool,
    max_age: HeaderValue,
}

/// A permissive CORS policy: any origin, the common methods, any requested headers.
pub fn cors() -> Cors {
    Cors {
        origins: None,
        methods: HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        headers: None,
        credentials: false,
        max_age: HeaderValue::from_static("86400"),
    }
}

impl Cors {
    /// Allow only these origins.
    pub fn allow_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Allow these methods in preflight answers.
    pub fn allow_methods(mut self, methods: &[Method]) -> Self {
        let list = methods
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        if let Ok(value) = HeaderValue::from_str(&list) {
            self.methods = value;
        }
        self
    }

    /// Allow these request headers (default: whatever the preflight asks for).
    pub fn allow_headers(mut self, headers: &[&str]) -> Self {
        self.headers = HeaderValue::from_str(&headers.join(", ")).ok();
        self
    }

    /// Let the browser send cookies and credentials (the origin is then echoed, never `*`).
    ///
    /// Without [`Cors::allow_origins`], every origin's credentialed requests are allowed, so
    /// any site a signed-in user visits can read what it asks for; name the origins. The
    /// opaque origin `null` (sandboxed frames, `file:` pages) is never allowed credentials.
    pub fn allow_credentials(mut self) -> Self {
        self.credentials = true;
        self
    }

    /// The value of `Access-Control-Allow-Origin` for a request from `origin`, if allowed.
    fn allowed_origin(&self, origin: &str) -> Option<HeaderValue> {
        match &self.origins {
            Some(list) if !list.iter().any(|o| o == origin) => None,
            _ if self.credentials && origin == "null" => None,
            None if !self.credentials => Some(HeaderValue::from_static("*")),
            _ => HeaderValue::from_str(origin).ok(),
        }
    }

    fn decorate(&self, response: &mut Response, origin: HeaderValue) {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        if self.credentials {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
        if self.origins.is_some() || self.credentials {
            headers.append(header::VARY, HeaderValue::from_static("origin"));
        }
    }
}

impl Middleware for Cors {
    fn call(&self, req: Request, next: Next) -> Reply {
        let Some(origin) = req.header("origin").and_then(|o| self.allowed_origin(o)) else {
            // The answer still depends on Origin when the policy does: a cache must not hand
            // this one to an origin that would have been allowed (Fetch §3.2.5).
            if self.origins.is_some() || self.credentials {
                return Reply::pending(async move {
                    let mut response = next.run(req).await;
                    response
                        .headers_mut()
                        .append(header::VARY, HeaderValue::from_static("origin"));
                    response
                });
            }
            return next.run(req);
        };
        let preflight = req.method() == Method::OPTIONS
            && req.header("access-control-request-method").is_some();
        if preflight {
            let mut res = Response::new(StatusCode::NO_CONTENT, Body::Empty);
            self.decorate(&mut res, origin);
            let requested = req
                .headers()
                .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
                .cloned();
            let headers = res.headers_mut();
            headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, self.methods.clone());
            if let Some(allowed) = self.headers.clone().or(requested) {
                headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, allowed);
            }
            headers.insert(header::ACCESS_CONTROL_MAX_AGE, self.max_age.clone());
            return Reply::ready(res);
        }
        let policy = self.clone();
        Reply::pending(async move {
            let mut res = next.run(req).await;
            policy.decorate(&mut res, origin);
            res
        })
    }
}
