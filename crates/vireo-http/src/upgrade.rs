//! Protocol upgrades (`101 Switching Protocols`): a service hands its connection to another
//! protocol, such as WebSockets.
//!
//! A service answers with [`Response::upgrade`], giving a function that receives the
//! connection. The engine writes the `101` head (with `Connection: upgrade`), stops reading
//! HTTP/1.1 from the connection and runs the function with an [`Upgraded`] stream: first the
//! bytes the client sent after the request head, then the transport's own (TCP, Unix or TLS).
//! The upgraded connection runs on the worker that accepted it, and counts as open for graceful
//! shutdown: [`Upgraded::shutdown_requested`] says when the server starts to drain, and the
//! server waits for the function to return up to its shutdown timeout.

use crate::transport::Transport;
use crate::Response;
use http::StatusCode;
use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// A future the upgrade function returns: it runs on the worker's thread, so it need not be
/// `Send`.
pub type UpgradeFuture = Pin<Box<dyn Future<Output = ()>>>;

pub(crate) type UpgradeFn = Box<dyn FnOnce(Upgraded) -> UpgradeFuture + Send>;

/// The function that takes over an upgraded connection, kept in a response's extensions.
/// Cloning shares it; it runs at most once.
#[derive(Clone)]
pub struct OnUpgrade(Arc<Mutex<Option<UpgradeFn>>>);

impl OnUpgrade {
    /// Wrap the function that takes the upgraded connection.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: FnOnce(Upgraded) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let f: UpgradeFn = Box::new(move |io| Box::pin(f(io)));
        OnUpgrade(Arc::new(Mutex::new(Some(f))))
    }

    /// The function, unless it was already taken.
    pub(crate) fn take(&self) -> Option<UpgradeFn> {
        self.0.lock().ok()?.take()
    }
}

impl fmt::Debug for OnUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnUpgrade").finish_non_exhaustive()
    }
}

impl Response {
    /// A `101 Switching Protocols` response that hands the connection to `f` once written.
    /// Add the `Upgrade` field (and any other) with [`Response::headers_mut`]; the engine adds
    /// `Connection: upgrade`. An HTTP/1.0 request cannot be upgraded: the engine answers
    /// `400` instead.
    ///
    /// ```
    /// use vireo_http::Response;
    /// let mut res = Response::upgrade(|mut io| async move {
    ///     use tokio::io::AsyncWriteExt;
    ///     let _ = io.write_all(b"hello in the new protocol").await;
    /// });
    /// res.headers_mut().insert(http::header::UPGRADE, "echo".parse().unwrap());
    /// assert_eq!(res.status(), http::StatusCode::SWITCHING_PROTOCOLS);
    /// ```
    pub fn upgrade<F, Fut>(f: F) -> Response
    where
        F: FnOnce(Upgraded) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let mut response = Response::new(StatusCode::SWITCHING_PROTOCOLS, crate::Body::Empty);
        response.extensions_mut().insert(OnUpgrade::new(f));
        response
    }
}

/// Whether the server is draining, shared by a worker and its upgraded connections.
#[derive(Default)]
pub(crate) struct Draining {
    started: Cell<bool>,
    notify: Notify,
}

impl Draining {
    pub(crate) fn start(&self) {
        self.started.set(true);
        self.notify.notify_waiters();
    }
}

/// An upgraded connection: the bytes read past the request head, then the transport.
/// Implements tokio's `AsyncRead` and `AsyncWrite`. Not `Send`: it stays on the worker that
/// accepted the connection.
pub struct Upgraded {
    io: Box<dyn Transport>,
    unread: Vec<u8>,
    start: usize,
    draining: Rc<Draining>,
}

impl Upgraded {
    pub(crate) fn new(io: Box<dyn Transport>, unread: Vec<u8>, draining: Rc<Draining>) -> Self {
        Upgraded {
            io,
            unread,
            start: 0,
            draining,
        }
    }

    /// Wait until a read may make progress, without a buffer: a protocol that lends its
    /// connections a buffer only while bytes are there waits here while idle.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.start < self.unread.len() {
            return Poll::Ready(Ok(()));
        }
        self.io.poll_read_ready(cx)
    }

    /// Tell the transport that a read came back with less than the room it had: a socket
    /// then waits for new bytes instead of trying a read that would find none.
    pub fn mark_drained(&self) {
        if self.start >= self.unread.len() {
            self.io.mark_drained();
        }
    }

    /// Whether the server has started a graceful shutdown.
    pub fn is_shutting_down(&self) -> bool {
        self.draining.started.get()
    }

    /// Completes when the server starts a graceful shutdown (at once if it has). The
    /// connection should then close soon: the server waits for it only up to its shutdown
    /// timeout.
    pub fn shutdown_requested(&self) -> impl Future<Output = ()> + 'static {
        let draining = self.draining.clone();
        async move {
            loop {
                let notified = draining.notify.notified();
                let mut notified = std::pin::pin!(notified);
                notified.as_mut().enable();
                if draining.started.get() {
                    return;
                }
                notified.await;
            }
        }
    }
}

impl fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upgraded")
            .field("unread", &(self.unread.len() - self.start))
            .finish_non_exhaustive()
    }
}

impl AsyncRead for Upgraded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.start < this.unread.len() {
            let n = buf.remaining().min(this.unread.len() - this.start);
            buf.put_slice(&this.unread[this.start..this.start + n]);
            this.start += n;
            if this.start == this.unread.len() {
                this.unread = Vec::new();
                this.start = 0;
            }
            return Poll::Ready(Ok(()));
        }
        let n = std::task::ready!(this.io.poll_read(cx, buf.initialize_unfilled()))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Upgraded {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_shutdown(cx)
    }
}
