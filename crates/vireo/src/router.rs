//! Registering routes, and the compiled route table that dispatches requests.

use crate::error::{Error, Rejection};
use crate::handler::{Endpoint, Handler, Reply};
use crate::middleware::{Chain, Chains, End, Middleware, Root};
use crate::response::IntoResponse;
use crate::tree::Tree;
use crate::Request;
use http::{header, HeaderValue, Method};
use std::collections::HashMap;
use std::panic::Location;
use std::sync::Arc;

/// A route as registered.
struct RouteDef {
    method: Option<Method>,
    path: String,
    endpoint: Arc<dyn Endpoint>,
    middleware: Vec<Arc<dyn Middleware>>,
    location: &'static Location<'static>,
}

/// A set of routes with their middleware, which can be mounted at a prefix.
///
/// ```
/// use vireo::{App, Router};
/// let mut api = Router::new();
/// api.get("/users/:id", |req: vireo::Request| format!("user {}", req.param("id").unwrap()));
/// let mut app = App::new();
/// app.mount("/api", api);
/// ```
#[derive(Default)]
pub struct Router {
    routes: Vec<RouteDef>,
    middleware: Vec<Arc<dyn Middleware>>,
    mounts: Vec<(String, Router)>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field(
                "routes",
                &self
                    .routes
                    .iter()
                    .map(|r| (&r.method, &r.path))
                    .collect::<Vec<_>>(),
            )
            .field(
                "mounts",
                &self.mounts.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// A route just registered, to add route-level middleware to.
pub struct RouteRef<'r>(&'r mut RouteDef);

impl std::fmt::Debug for RouteRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RouteRef({:?} {})", self.0.method, self.0.path)
    }
}

impl RouteRef<'_> {
    /// Add a middleware to this route only; the first added runs first.
    pub fn with(self, middleware: impl Middleware) -> Self {
        self.0.middleware.push(Arc::new(middleware));
        self
    }
}

macro_rules! method_fns {
    ($($(#[$doc:meta])* $name:ident => $method:expr;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name<M>(&mut self, path: &str, handler: impl Handler<M>) -> RouteRef<'_> {
                self.add(Some($method), path, handler.into_endpoint())
            }
        )*
    };
}

impl Router {
    /// An empty router.
    pub fn new() -> Self {
        Router::default()
    }

    method_fns! {
        /// Answer `GET` (and `HEAD`, unless a `HEAD` route is registered) at `path`.
        get => Method::GET;
        /// Answer `POST` at `path`.
        post => Method::POST;
        /// Answer `PUT` at `path`.
        put => Method::PUT;
        /// Answer `PATCH` at `path`.
        patch => Method::PATCH;
        /// Answer `DELETE` at `path`.
        delete => Method::DELETE;
        /// Answer `HEAD` at `path`.
        head => Method::HEAD;
        /// Answer `OPTIONS` at `path`, in place of the automatic answer (`204` with the
        /// path's methods in `Allow`) that every path gets.
        options => Method::OPTIONS;
    }

    /// Accept WebSockets at `path` (a `GET` route) with the default [`WsConfig`](crate::ws::WsConfig):
    /// the handshake is checked (`400` or `426` when it is not a WebSocket handshake), and
    /// `handler` runs with the connection and the request (route parameters included).
    ///
    /// ```no_run
    /// use vireo::ws::{Message, WebSocket};
    /// let mut app = vireo::App::new();
    /// app.ws("/echo", |mut ws: WebSocket, _req: vireo::Request| async move {
    ///     while let Some(Ok(message)) = ws.recv().await {
    ///         if message.is_text() || message.is_binary() {
    ///             let _ = ws.send(message).await;
    ///         }
    ///     }
    /// });
    /// ```
    #[track_caller]
    pub fn ws<F, Fut>(&mut self, path: &str, handler: F) -> RouteRef<'_>
    where
        F: Fn(crate::ws::WebSocket, Request) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + 'static,
    {
        self.ws_with(path, crate::ws::WsConfig::default(), handler)
    }

    /// [`Router::ws`] with its own limits and subprotocols.
    #[track_caller]
    pub fn ws_with<F, Fut>(
        &mut self,
        path: &str,
        config: crate::ws::WsConfig,
        handler: F,
    ) -> RouteRef<'_>
    where
        F: Fn(crate::ws::WebSocket, Request) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + 'static,
    {
        let handler = Arc::new(handler);
        let route = move |req: Request| crate::ws::accept(req, &config, handler.clone());
        self.add(Some(Method::GET), path, route.into_endpoint())
    }

    /// Answer every method at `path` (methods with their own route there go to it).
    #[track_caller]
    pub fn all<M>(&mut self, path: &str, handler: impl Handler<M>) -> RouteRef<'_> {
        self.add(None, path, handler.into_endpoint())
    }

    /// Answer `method` at `path`.
    #[track_caller]
    pub fn route<M>(
        &mut self,
        method: Method,
        path: &str,
        handler: impl Handler<M>,
    ) -> RouteRef<'_> {
        self.add(Some(method), path, handler.into_endpoint())
    }

    #[track_caller]
    fn add(
        &mut self,
        method: Option<Method>,
        path: &str,
        endpoint: Arc<dyn Endpoint>,
    ) -> RouteRef<'_> {
        self.routes.push(RouteDef {
            method,
            path: path.to_owned(),
            endpoint,
            middleware: Vec::new(),
            location: Location::caller(),
        });
        RouteRef(self.routes.last_mut().expect("just pushed"))
    }

    /// Add middleware. On an [`crate::App`] it runs for every request, before routing (so it
    /// sees 404s too); on a mounted router, for that router's routes and the automatic
    /// `OPTIONS` answer at their paths (for a path with routes from several routers, the
    /// first router's), but not for a 404 or a 405. Named after Express's
    /// `app.use`; `use` is a Rust keyword, hence `r#use`.
    pub fn r#use(&mut self, middleware: impl Middleware) -> &mut Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Serve `router` under `prefix`: a route `/users` in it answers `prefix/users`. Inside,
    /// [`Request::path`] is the path without the prefix; [`Request::original_path`] has it.
    ///
    /// # Panics
    /// If `prefix` has a parameter (`:id`) or a wildcard (`*rest`): a prefix is literal, so
    /// the path the mounted routes see can be cut from the request's.
    #[track_caller]
    pub fn mount(&mut self, prefix: &str, router: Router) -> &mut Self {
        if let Some(segment) = prefix
            .split('/')
            .find(|s| s.starts_with(':') || s.starts_with('*'))
        {
            panic!(
                "mount prefix `{prefix}` has `{segment}`: a prefix is literal; put parameters \
                 in the mounted router's routes"
            );
        }
        self.mounts
            .push((prefix.trim_end_matches('/').to_owned(), router));
        self
    }

    /// Split into the app-wide middleware and the compiled routes, whose chains go in `chains`.
    pub(crate) fn compile(self, chains: &mut Chains) -> (Vec<Arc<dyn Middleware>>, Routes) {
        let mut routes = Routes::default();
        let Router {
            routes: defs,
            middleware,
            mounts,
        } = self;
        let root = Router {
            routes: defs,
            middleware: Vec::new(),
            mounts,
        };
        let mut stacks = HashMap::new();
        root.compile_into(&mut routes, chains, &mut stacks, "", &[]);
        routes.add_options_targets(chains, stacks);
        (middleware, routes)
    }

    fn compile_into(
        self,
        routes: &mut Routes,
        chains: &mut Chains,
        stacks: &mut HashMap<String, RouterStack>,
        prefix: &str,
        outer: &[Arc<dyn Middleware>],
    ) {
        let mut stack = outer.to_vec();
        stack.extend(self.middleware);
        for def in self.routes {
            let path = match (prefix, def.path.as_str()) {
                (p, "/") if !p.is_empty() => p.to_owned(),
                (p, path) => format!("{p}{path}"),
            };
            // A mounted router's middleware also sees the path's automatic `OPTIONS` answer,
            // made once every route is in and the path's methods are known.
            if !stack.is_empty() {
                stacks.entry(path.clone()).or_insert_with(|| RouterStack {
                    layers: stack.clone(),
                    prefix_len: prefix.len(),
                    location: def.location,
                });
            }
            let mut layers = stack.clone();
            layers.extend(def.middleware);
            let target = Target {
                chain: chains.add(layers, End::Endpoint(def.endpoint)),
                prefix_len: prefix.len(),
                route: Arc::from(path.as_str()),
                location: def.location,
            };
            routes.insert(def.method, &path, target);
        }
        for (mount, router) in self.mounts {
            router.compile_into(routes, chains, stacks, &format!("{prefix}{mount}"), &stack);
        }
    }
}

/// The middleware of the router that registered a path's first route (its own and the
/// routers' it is mounted in, outermost first), for the path's automatic `OPTIONS` answer.
struct RouterStack {
    layers: Vec<Arc<dyn Middleware>>,
    prefix_len: usize,
    location: &'static Location<'static>,
}

/// The automatic answer to `OPTIONS` as an endpoint, at the end of a router's middleware.
struct AutoOptions(Option<HeaderValue>);

impl Endpoint for AutoOptions {
    fn call(&self, _req: Request) -> Reply {
        options_answer(self.0.as_ref())
    }
}

/// One registered handler with its middleware.
struct Target {
    chain: Chain,
    prefix_len: usize,
    /// The route's full path template, prefixes included, as metrics label it.
    route: Arc<str>,
    location: &'static Location<'static>,
}

/// The handlers registered at one path, by method.
#[derive(Default)]
struct Methods {
    by_method: Vec<(Method, Target)>,
    any: Option<Target>,
    allow: Option<HeaderValue>,
    /// The automatic `OPTIONS` answer through the middleware of the router that registered
    /// the path, when it has any; `None` answers directly.
    options: Option<Target>,
}

impl Methods {
    fn select(&self, method: &Method) -> Option<&Target> {
        let exact = |m: &Method| self.by_method.iter().find(|(k, _)| k == m).map(|(_, t)| t);
        exact(method)
            .or_else(|| {
                (*method == Method::HEAD)
                    .then(|| exact(&Method::GET))
                    .flatten()
            })
            .or(self.any.as_ref())
    }
}

/// The compiled route table.
#[derive(Default)]
pub(crate) struct Routes {
    tree: Tree<Methods>,
    /// Every method some route answers, for telling an unknown method (501) from one this path
    /// does not have (405).
    methods: Vec<Method>,
    /// The `Allow` field for `OPTIONS *`: every method some route answers.
    allow_all: Option<HeaderValue>,
}

/// The methods RFC 9110 defines, which every server knows even where no route has them.
pub(crate) static STANDARD_METHODS: [Method; 9] = [
    Method::GET,
    Method::HEAD,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::CONNECT,
    Method::OPTIONS,
    Method::TRACE,
    Method::PATCH,
];

/// Whether the method is one of RFC 9110's.
fn is_standard(method: &Method) -> bool {
    STANDARD_METHODS.contains(method)
}

/// The `Allow` field for these methods; `HEAD` is allowed wherever `GET` is, and `OPTIONS`
/// everywhere, since every path answers it.
fn allow_header<'m>(methods: impl Iterator<Item = &'m Method>) -> Option<HeaderValue> {
    let mut names: Vec<&str> = methods.map(Method::as_str).collect();
    if names.contains(&"GET") {
        names.push("HEAD");
    }
    names.push("OPTIONS");
    names.sort_unstable();
    names.dedup();
    HeaderValue::from_str(&names.join(", ")).ok()
}

impl Routes {
    /// Put each path's automatic `OPTIONS` answer behind its router's middleware.
    fn add_options_targets(&mut self, chains: &mut Chains, stacks: HashMap<String, RouterStack>) {
        for (path, stack) in stacks {
            let Ok(methods) = self.tree.entry(&path, Methods::default) else {
                continue; // the path was refused when its route was inserted
            };
            let answer = AutoOptions(methods.allow.clone());
            methods.options = Some(Target {
                chain: chains.add(stack.layers, End::Endpoint(Arc::new(answer))),
                prefix_len: stack.prefix_len,
                route: Arc::from(path.as_str()),
                location: stack.location,
            });
        }
    }

    fn insert(&mut self, method: Option<Method>, path: &str, target: Target) {
        let location = target.location;
        let methods = self
            .tree
            .entry(path, Methods::default)
            .unwrap_or_else(|error| {
                panic!("invalid route `{path}` registered at {location}: {error}")
            });
        let existing = match &method {
            Some(m) => methods
                .by_method
                .iter()
                .find(|(k, _)| k == m)
                .map(|(_, t)| t),
            None => methods.any.as_ref(),
        };
        if let Some(existing) = existing {
            let name = method.as_ref().map_or("ALL", Method::as_str);
            panic!(
                "route {name} {path} registered at {location} conflicts with the same route registered at {}",
                existing.location
            );
        }
        match method {
            Some(m) => {
                if !self.methods.contains(&m) {
                    self.methods.push(m.clone());
                }
                methods.by_method.push((m, target))
            }
            None => methods.any = Some(target),
        }
        methods.allow = allow_header(methods.by_method.iter().map(|(m, _)| m));
        self.allow_all = allow_header(self.methods.iter());
    }

    /// Whether no route answers `method` and it is not a standard one: 501, not 404 or 405.
    fn unknown_method(&self, method: &Method) -> bool {
        !is_standard(method) && !self.methods.contains(method)
    }

    /// Route a request to its handler's chain: 404 if no path matches, 405 (with `Allow`) if
    /// the path has no handler for the method, and `OPTIONS` answered from the routes when no
    /// handler takes it.
    pub(crate) fn dispatch(&self, mut req: Request, root: &Root) -> Reply {
        let Some(methods) = req.find_route(&self.tree) else {
            return self.no_route(&req);
        };
        let target = match (methods.select(req.method()), &methods.options) {
            (Some(target), _) => target,
            (None, Some(options)) if *req.method() == Method::OPTIONS => options,
            (None, _) => return self.no_method(methods, req.method()),
        };
        req.set_prefix_len(target.prefix_len);
        req.record_route(&target.route);
        target.chain.run(req, root)
    }

    /// 404, or 501 for a method nothing answers; `OPTIONS *` (asterisk-form, about the server
    /// as a whole: RFC 9110 §9.3.7) gets `204` with every method some route answers. Out of
    /// line, so the routed path stays short.
    #[cold]
    #[inline(never)]
    fn no_route(&self, req: &Request) -> Reply {
        let method = req.method();
        // The engine lets an asterisk-form target through for OPTIONS only, as the path `*`.
        if *method == Method::OPTIONS && req.original_path() == "*" {
            return options_answer(self.allow_all.as_ref());
        }
        let rejection = if self.unknown_method(method) {
            Rejection::MethodNotImplemented
        } else {
            Rejection::NotFound
        };
        Reply::ready(Error::from(rejection).into_response())
    }

    /// 405 with `Allow`, or 501 for a method nothing answers. Out of line, as `no_route`.
    #[cold]
    #[inline(never)]
    fn no_method(&self, methods: &Methods, method: &Method) -> Reply {
        if *method == Method::OPTIONS {
            return options_answer(methods.allow.as_ref());
        }
        if self.unknown_method(method) {
            return Reply::ready(Error::from(Rejection::MethodNotImplemented).into_response());
        }
        let mut res = Error::from(Rejection::MethodNotAllowed).into_response();
        if let Some(allow) = &methods.allow {
            res.headers_mut().insert(header::ALLOW, allow.clone());
        }
        Reply::ready(res)
    }
}

/// The automatic answer to `OPTIONS`: `204` with the methods in `Allow`.
fn options_answer(allow: Option<&HeaderValue>) -> Reply {
    let mut res = vireo_http::Response::new(http::StatusCode::NO_CONTENT, vireo_http::Body::Empty);
    let allow = allow.cloned();
    res.headers_mut().insert(
        header::ALLOW,
        allow.unwrap_or(HeaderValue::from_static("OPTIONS")),
    );
    Reply::ready(res)
}
