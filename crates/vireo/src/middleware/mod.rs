//! Middleware: a function of the request and `next`, as in Express and polka.
//!
//! A middleware may change the request before calling `next.run(req)`, answer early without
//! calling it, and change the response after. It is added app-wide with
//! [`crate::Router::r#use`], to a router, or to one route with [`crate::RouteRef::with`].
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
//! Built in: [`logger`], [`cors`], [`compression`], [`request_id`], [`timeout`],
//! [`body_limit`] and [`client_addr`] (the real client address behind proxies).

mod body_limit;
mod client_addr;
mod compression;
mod cors;
mod logger;
mod request_id;
mod timeout;

pub use body_limit::{body_limit, BodyLimit};
pub use client_addr::{client_addr, ClientAddr, ClientAddrLayer};
pub use compression::{compression, Compression, DEFAULT_THRESHOLD};
pub use cors::{cors, Cors};
pub use logger::{logger, Logger};
pub use request_id::{request_id, RequestId, RequestIdLayer};
pub use timeout::{timeout, Timeout};

use crate::handler::{Endpoint, Reply};
use crate::response::IntoResponse;
use crate::Request;
use std::cell::RefCell;
use std::future::Future;
use std::ptr::NonNull;
use std::rc::Rc;
use std::sync::Arc;

/// Something that wraps the handling of a request.
pub trait Middleware: Send + Sync + 'static {
    /// Handle `req`, calling `next.run(req)` to pass it on.
    fn call(&self, req: Request, next: Next) -> Reply;

    /// The largest body this middleware lets through, if it raises the limit; the server's
    /// engine limit is raised to the largest of these.
    fn body_limit_hint(&self) -> Option<u64> {
        None
    }
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

/// A stack of middleware and what it leads to. Compiled once and never changed.
pub(crate) struct Chain {
    /// The middleware in order, then one end: never empty, and only the last step is an end.
    /// One array, so a [`Next`] is a pointer to its step and no index (two words, which the
    /// Rust ABI passes in registers; three went through memory).
    steps: Box<[Step]>,
}

/// One step of a chain.
enum Step {
    Layer(Arc<dyn Middleware>),
    End(End),
}

/// The app's root chain as this thread holds it. It owns, through its router, every chain a
/// request can reach, so holding it keeps them all alive.
///
/// Each thread keeps its own `Rc` of the root (see [`local_root`]) so that passing a request
/// down the chain changes no shared reference count: with an `Arc` per `Next`, the atomic
/// increments and decrements on one cache line (shared by every worker) were 6% of the CPU
/// of a pipelined request through two middlewares (perf, reference app, one worker).
pub(crate) type Root = Rc<Arc<Chain>>;

thread_local! {
    static LOCAL_ROOTS: RefCell<Vec<Root>> = const { RefCell::new(Vec::new()) };
}

/// This thread's handle on `root`, made on the first request the thread serves for it.
pub(crate) fn local_root(root: &Arc<Chain>) -> Root {
    LOCAL_ROOTS.with(|roots| {
        let mut roots = roots.borrow_mut();
        if let Some(local) = roots.iter().find(|local| Arc::ptr_eq(local, root)) {
            return local.clone();
        }
        let local = Rc::new(root.clone());
        roots.push(local.clone());
        // The first request this thread serves for this app: from here on it pools request
        // parts, which should go when the worker goes quiet.
        crate::request::release_parts_when_quiet();
        local
    })
}

/// Drop this thread's handle on `root`, so that the app can be freed before the thread ends.
pub(crate) fn forget_local_root(root: &Arc<Chain>) {
    let _ =
        LOCAL_ROOTS.try_with(|roots| roots.borrow_mut().retain(|local| !Arc::ptr_eq(local, root)));
}

impl Chain {
    /// The chain that runs `layers` in order, then `end`.
    pub(crate) fn new(layers: Vec<Arc<dyn Middleware>>, end: End) -> Chain {
        let steps = layers
            .into_iter()
            .map(Step::Layer)
            .chain([Step::End(end)])
            .collect();
        Chain { steps }
    }

    /// Run `req` through this chain, which `root` owns. With no middleware the end is called
    /// directly, without a `Next`. Always inlined (into the app's entry and the router): out of
    /// line it cost a call and a frame per chain on every request, and a plain `#[inline]` was
    /// not taken (callgrind).
    #[inline(always)]
    pub(crate) fn run(&self, req: Request, root: &Root) -> Reply {
        let first = self.steps.first().expect("a chain ends with its end");
        match first {
            Step::End(end) => end.call(req, root),
            Step::Layer(_) => Next {
                root: root.clone(),
                step: NonNull::from(first),
            }
            .run(req),
        }
    }

    /// As [`Chain::run`], with a handle on the root that the caller gives up: the first `Next`
    /// takes it instead of a copy. Each count change is a read-modify-write of the same word,
    /// each waiting for the last, and perf put the stalls after them among the hottest
    /// instructions of a pipelined request.
    #[inline(always)]
    pub(crate) fn run_owned(&self, req: Request, root: Root) -> Reply {
        let first = self.steps.first().expect("a chain ends with its end");
        match first {
            Step::End(end) => end.call(req, &root),
            Step::Layer(_) => Next {
                root,
                step: NonNull::from(first),
            }
            .run(req),
        }
    }
}

/// What a chain leads to: a handler, or the router (for app-wide middleware).
pub(crate) enum End {
    Endpoint(Arc<dyn Endpoint>),
    Router(Arc<crate::router::Routes>),
}

impl End {
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
    /// Keeps `step` alive.
    root: Root,
    /// The next step of a chain that `root` owns.
    step: NonNull<Step>,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}

impl Next {
    /// Pass the request to the rest of the chain and get its response.
    pub fn run(self, req: Request) -> Reply {
        // SAFETY: a `Next` is only made by `Chain::run` and here, always pointing at a step of
        // a chain that `root` owns (the root chain, or one reached through its router); `self`
        // holds `root` until this returns, and compiled chains are never changed or moved, so
        // the step is alive and unaliased by any `&mut` for the whole call.
        let step = unsafe { self.step.as_ref() };
        match step {
            Step::Layer(layer) => layer.call(
                req,
                Next {
                    root: self.root.clone(),
                    // SAFETY: a layer is never a chain's last step (`Chain::new` ends every
                    // chain with its end), so the step after it is in the same array.
                    step: unsafe { self.step.add(1) },
                },
            ),
            Step::End(end) => end.call(req, &self.root),
        }
    }
}
