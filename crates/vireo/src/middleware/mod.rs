//! Middleware: a function of the request and `next`, as in Express and polka.
//!
//! A middleware may change the request before calling `next.run(req)`, answer early without
//! calling it, and change the response after. It is added app-wide with
//! [`Router::use`](crate::Router), to a router, or to one route with [`crate::RouteRef::with`].
//!
//! ```
//! use vireo::{App, Next, Request};
//! let mut app = App::new();
//! app.r#use(|mut req: Request, next: Next| async move {
//!     req.set(std::time::Instant::now());
//!     let mut res = next.run(req).await;
//!     res.headers_mut().insert("x-powered-by", "vireo".parse().unwrap());
//!     res
//! });
//! ```
//!
//! Built in: [`logger`], [`trace`] (a `tracing` span per request), [`cors`], [`compression`], [`request_id`], [`timeout`],
//! [`body_limit`] and [`client_addr`] (the real client address behind proxies).

mod body_limit;
mod client_addr;
#[cfg(feature = "compression")]
mod compression;
mod cors;
mod logger;
mod request_id;
mod timeout;
mod trace;

pub use body_limit::{body_limit, BodyLimit};
pub use client_addr::{client_addr, ClientAddr, ClientAddrLayer};
#[cfg(feature = "compression")]
pub use compression::{compression, Compression, DEFAULT_THRESHOLD};
pub use cors::{cors, Cors};
pub use logger::{logger, Logger};
pub use request_id::{request_id, RequestId, RequestIdLayer};
pub use timeout::{timeout, Timeout};
pub use trace::{trace, Trace};

use crate::handler::{Endpoint, Reply};
use crate::response::IntoResponse;
use crate::Request;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

/// Something that wraps the handling of a request.
pub trait Middleware: Send + Sync + 'static {
    /// Handle `req`, calling `next.run(req)` to pass it on.
    fn call(&self, req: Request, next: Next) -> Reply;
}

impl<F, Fut> Middleware for F
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future + 'static,
    Fut::Output: IntoResponse,
{
    fn call(&self, req: Request, next: Next) -> Reply {
        let future = self(req, next);
        // A middleware that returns `next.run(req)` directly returns a `Reply`: pass it on as it
        // is, ready or not, instead of boxing a future around it. The check is on types, so it
        // is decided at compile time.
        let mut future = Some(future);
        if let Some(reply) = (&mut future as &mut dyn std::any::Any).downcast_mut::<Option<Reply>>()
        {
            return reply.take().expect("just put there");
        }
        let future = future.expect("not taken");
        Reply::pending(async move { future.await.into_response() })
    }
}

/// Every chain of an app (each route's, and the app-wide one that leads to the router), one
/// after another in one array: a [`Next`] is then a handle on the array and an index into it,
/// two words, which the Rust ABI passes in registers.
#[derive(Default)]
pub(crate) struct Chains {
    steps: Vec<Step>,
}

/// A stack of middleware and what it leads to: where its first step is in its app's
/// [`Chains`]. Compiled once and never changed.
#[derive(Clone, Copy)]
pub(crate) struct Chain {
    start: usize,
}

/// One step of a chain: a layer is never a chain's last step, so the step after it is in the
/// same chain.
#[derive(Clone)]
enum Step {
    Layer(Arc<dyn Middleware>),
    End(End),
}

/// An app's compiled chains, shared by the threads that serve it.
pub(crate) struct Program {
    steps: Box<[Step]>,
    /// The app-wide chain, where every request starts.
    entry: Chain,
}

/// An app's chains as one thread holds them: a copy of the steps of its [`Program`], which owns
/// (through its router) every chain a request can reach, so holding it keeps them all alive.
///
/// Each thread keeps its own `Rc` (see [`local_root`]) so that passing a request down a chain
/// changes no shared reference count, and its own copy of the steps, which the `Rc` points at
/// directly rather than through the shared program.
pub(crate) type Root = Rc<Local>;

pub(crate) struct Local {
    steps: Box<[Step]>,
    /// The program these steps were copied from, which tells one app's copy from another's.
    program: Arc<Program>,
}

thread_local! {
    static LOCAL_ROOTS: RefCell<Vec<Root>> = const { RefCell::new(Vec::new()) };
}

/// This thread's handle on `program`, made on the first request the thread serves for it.
pub(crate) fn local_root(program: &Arc<Program>) -> Root {
    LOCAL_ROOTS.with(|roots| {
        let mut roots = roots.borrow_mut();
        if let Some(local) = roots
            .iter()
            .find(|local| Arc::ptr_eq(&local.program, program))
        {
            return local.clone();
        }
        let local = Rc::new(Local {
            steps: program.steps.clone(),
            program: program.clone(),
        });
        roots.push(local.clone());
        // The first request this thread serves for this app: from here on it pools request
        // parts, which should go when the worker goes quiet.
        crate::request::release_parts_when_quiet();
        local
    })
}

/// Drop this thread's handle on `program`, so that the app can be freed before the thread ends.
#[cfg(feature = "test-util")]
pub(crate) fn forget_local_root(program: &Arc<Program>) {
    let _ = LOCAL_ROOTS.try_with(|roots| {
        roots
            .borrow_mut()
            .retain(|local| !Arc::ptr_eq(&local.program, program))
    });
}

impl Chains {
    /// Add the chain that runs `layers` in order, then `end`.
    pub(crate) fn add(&mut self, layers: Vec<Arc<dyn Middleware>>, end: End) -> Chain {
        let start = self.steps.len();
        self.steps.extend(layers.into_iter().map(Step::Layer));
        self.steps.push(Step::End(end));
        Chain { start }
    }

    /// The program of these chains, where requests start at `entry`.
    pub(crate) fn finish(self, entry: Chain) -> Program {
        Program {
            steps: self.steps.into_boxed_slice(),
            entry,
        }
    }
}

impl Program {
    /// Run `req` through the app-wide chain, with this thread's handle on this program, which
    /// the first `Next` takes instead of a copy: each count change is a read-modify-write of
    /// the same word, each waiting for the last.
    #[inline(always)]
    pub(crate) fn run(&self, req: Request, root: Root) -> Reply {
        self.entry.run_owned(req, root)
    }
}

impl Chain {
    /// Run `req` through this chain, one of `root`'s. With no middleware the end is called
    /// directly, without a `Next`. Always inlined (into the app's entry and the router): out of
    /// line it cost a call and a frame per chain on every request, and a plain `#[inline]` was
    /// not taken.
    #[inline(always)]
    pub(crate) fn run(self, req: Request, root: &Root) -> Reply {
        match &root.steps[self.start] {
            Step::End(end) => end.call(req, root),
            Step::Layer(layer) => layer.call(
                req,
                Next {
                    root: root.clone(),
                    index: self.start + 1,
                },
            ),
        }
    }

    /// As [`Chain::run`], with a handle on the root that the caller gives up.
    #[inline(always)]
    fn run_owned(self, req: Request, root: Root) -> Reply {
        match &root.steps[self.start] {
            Step::End(end) => end.call(req, &root),
            Step::Layer(_) => Next {
                root,
                index: self.start,
            }
            .run(req),
        }
    }
}

/// What a chain leads to: a handler, or the router (for app-wide middleware).
#[derive(Clone)]
pub(crate) enum End {
    Endpoint(Arc<dyn Endpoint>),
    Router(Arc<crate::router::Routes>),
}

impl End {
    #[inline]
    fn call(&self, req: Request, root: &Root) -> Reply {
        match self {
            End::Endpoint(endpoint) => endpoint.call(req),
            End::Router(routes) => routes.dispatch(req, root),
        }
    }
}

/// The rest of the chain after a middleware. Call [`Next::run`] to pass the request on.
///
/// It belongs to the worker thread serving the request, so it is not `Send`.
pub struct Next {
    root: Root,
    /// The next step, in `root`'s steps.
    index: usize,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}

impl Next {
    /// Pass the request to the rest of the chain and get its response.
    pub fn run(self, req: Request) -> Reply {
        match &self.root.steps[self.index] {
            Step::Layer(layer) => layer.call(
                req,
                Next {
                    root: self.root.clone(),
                    index: self.index + 1,
                },
            ),
            Step::End(end) => end.call(req, &self.root),
        }
    }
}

#[cfg(all(test, feature = "test-util"))]
mod tests {
    use super::Next;
    use crate::{App, Request, Router, TestClient};

    #[test]
    fn a_next_is_two_words() {
        assert_eq!(
            std::mem::size_of::<Next>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    /// A middleware that appends `mark` to the request's trace.
    fn mark(mark: &'static str) -> impl Fn(Request, Next) -> crate::Reply + Send + Sync {
        move |mut req: Request, next: Next| {
            let trace = req.extensions_mut().remove::<String>().unwrap_or_default();
            req.set(trace + mark);
            next.run(req)
        }
    }

    /// An app whose routes each run a different stretch of its steps.
    fn app(name: &'static str) -> App {
        let mut app = App::new();
        app.r#use(mark(name));
        app.r#use(mark("1"));
        let trace = |req: Request| req.get::<String>().cloned().unwrap_or_default();
        app.get("/", trace);
        app.get("/own", trace).with(mark("r"));
        let mut inner = Router::new();
        inner.r#use(mark("i"));
        inner.get("/x", trace).with(mark("x"));
        inner.get("/y", trace);
        app.mount("/in", inner);
        app
    }

    #[test]
    fn apps_on_one_thread_run_their_own_chains_each_step_once() {
        let a = TestClient::new(app("a"));
        let b = TestClient::new(app("b"));
        for _ in 0..2 {
            for (client, name) in [(&a, "a"), (&b, "b")] {
                for (path, marks) in [
                    ("/", "1"),
                    ("/own", "1r"),
                    ("/in/x", "1ix"),
                    ("/in/y", "1i"),
                ] {
                    assert_eq!(client.get(path).send().text(), format!("{name}{marks}"));
                }
            }
        }
    }
}
