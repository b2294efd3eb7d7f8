//! The application: routes, middleware, state and error handling, served by the engine.

use crate::error::{Error, ErrorMarker};
use crate::handler::Served;
use crate::middleware::{local_root, Chains, End, Program};
use crate::request::{BodyReply, BodyRequest, BodySource, ConnectionTls, Request};
use crate::response::IntoResponse;
use crate::router::Router;
use crate::state::{MissingState, State};
use bytes::Bytes;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use tokio::sync::oneshot;
use vireo_http::BodyKind;
use vireo_http::{Limits, Response, RunningServer, Server};

type ErrorHandler = dyn Fn(&Error) -> Response + Send + Sync;

/// A web application: a [`Router`] (every routing method is available on `App` through it)
/// plus app-wide state, a central error handler and limits.
///
/// ```
/// use vireo::{App, Json, Request};
/// let mut app = App::new();
/// app.get("/", |_req| "Hello, World!");
/// app.get("/users/:id", |req: Request| format!("User: {}", req.param("id").unwrap()));
/// app.get("/json", |_req| async { Json(serde_json::json!({"message": "Hello, World!"})) });
///
/// let client = vireo::TestClient::new(app);
/// assert_eq!(client.get("/users/7").send().text(), "User: 7");
/// ```
pub struct App {
    router: Router,
    state: http::Extensions,
    error_handler: Option<Arc<ErrorHandler>>,
    /// Set by [`App::limits`]; without it the app is served with the server's limits.
    limits: Option<Limits>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("router", &self.router)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

impl Deref for App {
    type Target = Router;
    fn deref(&self) -> &Router {
        &self.router
    }
}

impl DerefMut for App {
    fn deref_mut(&mut self) -> &mut Router {
        &mut self.router
    }
}

impl App {
    /// An app with no routes and the engine's default limits.
    pub fn new() -> Self {
        App {
            router: Router::new(),
            state: http::Extensions::new(),
            error_handler: None,
            limits: None,
        }
    }

    /// Share a value with every handler, read with [`Request::state`] at request time, or
    /// fetched once with [`App::state_of`] when routes are registered. A second value of the
    /// same type replaces the first.
    pub fn state<T: Send + Sync + 'static>(&mut self, value: T) -> &mut Self {
        self.state.insert(Arc::new(value));
        self
    }

    /// The state of type `T` registered with [`App::state`], as a handle for handlers to
    /// capture: asked for while routes are registered, a missing state is an error at
    /// start-up rather than a 500 on each request (see [`State`]).
    pub fn state_of<T: Send + Sync + 'static>(&self) -> Result<State<T>, MissingState> {
        self.state
            .get::<Arc<T>>()
            .map(|value| State(value.clone()))
            .ok_or_else(MissingState::of::<T>)
    }

    /// Reshape every error response (rejections, 404, 405, handler errors) in one place.
    ///
    /// ```
    /// use vireo::{App, Json};
    /// let mut app = App::new();
    /// app.on_error(|err| {
    ///     let body = serde_json::json!({"error": err.message(), "status": err.status().as_u16()});
    ///     (err.status(), Json(body))
    /// });
    /// let client = vireo::TestClient::new(app);
    /// assert_eq!(client.get("/missing").send().text(), r#"{"error":"Not Found","status":404}"#);
    /// ```
    pub fn on_error<F, R>(&mut self, handler: F) -> &mut Self
    where
        F: Fn(&Error) -> R + Send + Sync + 'static,
        R: IntoResponse,
    {
        self.error_handler = Some(Arc::new(move |error| handler(error).into_response()));
        self
    }

    /// The engine limits to serve with. Their `max_body_size` is also the default body limit
    /// of every route. Without this, [`App::serve`] and [`App::spawn`] use the server's limits
    /// ([`Server::limits`]), and [`App::into_service`] and the test client the defaults
    /// ([`Limits::default`]). Set here, they replace the server's.
    pub fn limits(&mut self, limits: Limits) -> &mut Self {
        self.limits = Some(limits);
        self
    }

    /// Compile the routes into a service the engine can run, with the limits set by
    /// [`App::limits`], or the defaults.
    pub fn into_service(self) -> AppService {
        let limits = self.limits.clone().unwrap_or_default();
        let default_body_limit = limits.max_body_size;
        let mut chains = Chains::default();
        let (layers, routes) = self.router.compile(&mut chains);
        let entry = chains.add(layers, End::Router(Arc::new(routes)));
        AppService(Arc::new(Compiled {
            program: Arc::new(chains.finish(entry)),
            state: Arc::new(self.state),
            error_handler: self.error_handler,
            default_body_limit,
            limits,
        }))
    }

    /// Serve on `server` until SIGTERM, SIGINT or a shutdown through its handle; returns after a
    /// graceful shutdown.
    ///
    /// ```no_run
    /// let mut app = vireo::App::new();
    /// app.get("/", |_req| "Hello, World!");
    /// let server = vireo::Server::bind("127.0.0.1:8080")?;
    /// println!("listening on http://{}", server.local_addr()?);
    /// app.serve(server)
    /// # ; Ok::<(), std::io::Error>(())
    /// ```
    pub fn serve(mut self, server: Server) -> std::io::Result<()> {
        self.state(crate::health::Serving::of(&server));
        let (server, service) = self.settle_limits(server);
        server.handle_signals(true).serve(service)
    }

    /// Serve on `server` in the background, on its own threads, until shut down through the
    /// returned [`RunningServer`] (signals are left alone: for tests and embedding).
    pub fn spawn(mut self, server: Server) -> std::io::Result<RunningServer> {
        self.state(crate::health::Serving::of(&server));
        let (server, service) = self.settle_limits(server);
        server.spawn(service)
    }

    /// One set of limits for the server and the app: the app's if it set any, else the
    /// server's.
    fn settle_limits(mut self, server: Server) -> (Server, AppService) {
        let limits = self
            .limits
            .get_or_insert_with(|| server.configured_limits().clone())
            .clone();
        (server.limits(limits), self.into_service())
    }

    /// Bind `addr` and serve, as [`App::serve`].
    pub fn listen(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        self.serve(Server::bind(addr)?)
    }
}

struct Compiled {
    program: Arc<Program>,
    state: Arc<http::Extensions>,
    error_handler: Option<Arc<ErrorHandler>>,
    default_body_limit: u64,
    limits: Limits,
}

/// A compiled [`App`], ready for the engine ([`vireo_http::Service`]) or the test client.
#[derive(Clone)]
pub struct AppService(Arc<Compiled>);

impl std::fmt::Debug for AppService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppService")
    }
}

impl AppService {
    /// The engine limits this app asks for.
    pub fn limits(&self) -> &Limits {
        &self.0.limits
    }

    /// A request for this app, with the body `body` makes (see [`Request::new`]).
    pub(crate) fn request(
        &self,
        head: vireo_http::Head,
        body: impl FnOnce() -> BodySource,
        remote: &std::net::SocketAddr,
        secure: bool,
    ) -> Request {
        Request::new(
            head,
            body,
            self.0.default_body_limit,
            &self.0.state,
            remote,
            secure,
        )
    }

    /// Let go of the handle this thread keeps on the app's middleware and routes (made by the
    /// first request served on it), so they can be freed before the thread ends. (Request
    /// parts, which keep the app's state, are pooled only on the engine's workers, which end
    /// with the server.)
    #[cfg(feature = "test-util")]
    pub(crate) fn forget_on_this_thread(&self) {
        crate::middleware::forget_local_root(&self.0.program);
    }

    /// Run a request through the app-wide middleware, the router and the handler, then the
    /// error handler. Always inlined into the service call, so that the `Served` is built
    /// where the connection keeps it rather than returned through memory and copied.
    #[inline(always)]
    pub(crate) fn respond(&self, req: Request) -> Served<'_> {
        let root = local_root(&self.0.program);
        let reply = self.0.program.run(req, root).into_state();
        // Tested once here: an app with no error handler makes no call for one, and the
        // handler's own future is awaited as it is.
        let Some(handler) = self.0.error_handler.as_deref() else {
            return match reply {
                Ok(response) => Served::Ready(response),
                Err(future) => Served::Later(future),
            };
        };
        match reply {
            Ok(response) => Served::Ready(handle_error(handler, response)),
            // Wrapped so the error handler sees the response, which costs a second allocation.
            Err(future) => {
                Served::Later(Box::pin(async move { handle_error(handler, future.await) }))
            }
        }
    }
}

/// The error handler's response in place of one made from an error.
fn handle_error(handler: &ErrorHandler, response: Response) -> Response {
    match response.extensions().get::<ErrorMarker>() {
        Some(ErrorMarker(error)) => handler(error),
        None => response,
    }
}

impl vireo_http::Service for AppService {
    fn call<'a>(&'a self, req: vireo_http::Request<'a>) -> impl Future<Output = Response> + 'a {
        let remote = req.remote_addr().unwrap_or(&crate::request::NO_PEER);
        let secure = req.is_secure();
        #[cfg(feature = "tls")]
        let tls = req.tls();
        #[cfg(not(feature = "tls"))]
        let tls = None;
        let (head, body) = req.into_parts();
        if head.body_kind() == BodyKind::Empty {
            let request = self.request(head, || BodySource::Empty, remote, secure);
            return self.respond(request.with_tls(tls));
        }
        // Boxed: the future that lends the body is large, and only requests with a body need
        // it; the connection's own state (what an idle keep-alive connection costs) stays small.
        Served::Later(Box::pin(
            self.respond_with_body(head, body, remote, secure, tls),
        ))
    }
}

impl AppService {
    /// Serve a request whose body is still on the connection. The handler side asks for the
    /// body when it needs it; a request refused before that never reads it.
    async fn respond_with_body(
        &self,
        head: vireo_http::Head,
        mut body: vireo_http::RequestBody<'_>,
        remote: &std::net::SocketAddr,
        secure: bool,
        tls: Option<&ConnectionTls>,
    ) -> Response {
        let (ask, asked) = oneshot::channel::<BodyRequest>();
        let request = self.request(head, move || BodySource::Pending(ask), remote, secure);
        let respond = self.respond(request.with_tls(tls));
        let serve_body = async {
            if let Ok(BodyRequest {
                limit,
                reply,
                observer,
            }) = asked.await
            {
                body.set_limit(limit);
                let observe = |chunk: &Bytes| {
                    if let Some(observer) = &observer {
                        observer(chunk.len() as u64);
                    }
                };
                match reply {
                    BodyReply::Whole(reply) => {
                        let whole = body.to_bytes().await;
                        if let Ok(bytes) = &whole {
                            observe(bytes);
                        }
                        let _ = reply.send(whole);
                    }
                    // Each chunk waits for the handler to take the last: a slow reader holds
                    // back the client, and the body is never all in memory.
                    BodyReply::Chunks(chunks) => loop {
                        let item = match body.chunk().await {
                            Ok(Some(chunk)) => {
                                observe(&chunk);
                                Ok(chunk)
                            }
                            Ok(None) => {
                                let _ = chunks.send(None).await;
                                break;
                            }
                            Err(error) => Err(error),
                        };
                        let failed = item.is_err();
                        if chunks.send(Some(item)).await.is_err() || failed {
                            break;
                        }
                    },
                }
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            biased;
            response = respond => response,
            () = serve_body => unreachable!("serving the body never finishes on its own"),
        }
    }
}
