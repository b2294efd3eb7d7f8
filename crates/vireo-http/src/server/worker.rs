//! One worker: a single-threaded runtime that accepts connections and serves them.

use super::balance::{Balancer, Handoff, Mailbox};
use super::coalesce::WriteCoalescer;
use super::conn::serve_connection;
use super::date;
use super::future_pool::FuturePool;
use super::idle::IdleRegistry;
use super::listener::{Accepted, Listener};
use super::shutdown::ShutdownHandle;
#[cfg(feature = "tls")]
use super::tls_accept::{serve_tls, TlsAccept};
use super::trim::QuietTrim;
use crate::request::Peer;
use crate::service::Service;
use crate::transport::Transport;
use crate::Limits;
use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long accepting pauses after the process runs out of descriptors or memory, unless a
/// connection closes first. Long enough not to spin, short enough to recover promptly.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Connections accepted in a row before the accept loop lets the worker's connections run, so
/// a flood of new connections cannot starve the ones already open.
const MAX_ACCEPTS_PER_WAKEUP: usize = 64;

/// How often the cached `Date` and the coarse clock are refreshed.
const DATE_REFRESH: Duration = Duration::from_secs(1);

/// What every connection of a worker shares.
/// A deadline that never comes in practice (as Tokio's own far future).
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

pub(crate) struct Worker<S> {
    pub(crate) service: Arc<S>,
    pub(crate) limits: Limits,
    /// See [`crate::Server::half_close`].
    pub(crate) half_close: bool,
    shutting_down: Cell<bool>,
    /// Tells upgraded connections that shutdown started.
    pub(crate) draining: Rc<crate::upgrade::Draining>,
    pub(crate) idle: IdleRegistry,
    coarse_now: Cell<Instant>,
    /// This worker's index in `balancer`, which counts its open connections.
    id: usize,
    balancer: Arc<Balancer>,
    closed: Notify,
    quiet_trim: QuietTrim,
    /// Blocks for the futures of connections that are serving requests.
    pub(crate) busy_futures: FuturePool,
    /// Holds responses back to the end of the worker's round while that pays.
    pub(crate) writes: WriteCoalescer,
    /// Blocks for the futures of HTTP/2 streams being served.
    #[cfg(feature = "http2")]
    pub(crate) h2_streams: FuturePool,
    /// Set when the server serves TLS: every accepted connection does a handshake first.
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<TlsAccept>,
}

impl<S: Service> Worker<S> {
    pub(crate) fn new(
        service: Arc<S>,
        limits: Limits,
        balancer: Arc<Balancer>,
        id: usize,
        trim_allocator: bool,
    ) -> Self {
        Worker {
            service,
            limits,
            half_close: true,
            shutting_down: Cell::new(false),
            draining: Rc::default(),
            idle: IdleRegistry::default(),
            coarse_now: Cell::new(Instant::now()),
            id,
            balancer,
            closed: Notify::new(),
            quiet_trim: QuietTrim::new(trim_allocator),
            busy_futures: FuturePool::default(),
            writes: WriteCoalescer::default(),
            #[cfg(feature = "http2")]
            h2_streams: FuturePool::default(),
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.get()
    }

    fn open(&self) -> usize {
        self.balancer.open(self.id)
    }

    /// Count a connection as open until the returned guard is dropped.
    pub(crate) fn track_connection(self: &Rc<Self>) -> OpenConnection<S> {
        self.balancer.opened(self.id);
        OpenConnection(self.clone())
    }

    /// Serve a connection accepted here, or hand it to a worker that holds fewer.
    fn take_connection(self: &Rc<Self>, accepted: Accepted) {
        let cap = self.limits.max_connections_per_worker;
        let target = self.balancer.pick(self.id, cap);
        if target != self.id {
            let handed = match accepted.into_handoff() {
                Ok(handoff) => self.balancer.hand_off(target, handoff),
                Err(error) => {
                    tracing::debug!(%error, "could not hand a connection over; closing it");
                    return;
                }
            };
            match handed {
                Ok(()) => return,
                // The other worker has stopped: serve it here after all.
                Err(returned) => return self.adopt(returned, false),
            }
        }
        self.serve(accepted, self.track_connection());
    }

    /// Serve a connection another worker accepted and handed here (`counted`: the handoff
    /// already counts it as this worker's).
    fn adopt(self: &Rc<Self>, handoff: Handoff, counted: bool) {
        let guard = if counted {
            OpenConnection(self.clone())
        } else {
            self.track_connection()
        };
        match handoff.into_accepted() {
            Ok(accepted) => self.serve(accepted, guard),
            Err(error) => tracing::debug!(%error, "could not take a handed-over connection"),
        }
    }

    fn serve(&self, accepted: Accepted, guard: OpenConnection<S>) {
        match accepted {
            Accepted::Tcp(stream, remote) => {
                let peer = Peer::plain(Some(remote));
                #[cfg(feature = "tls")]
                if self.tls.is_some() {
                    tokio::task::spawn_local(serve_tls(stream, peer, guard));
                    return;
                }
                #[cfg(feature = "http2")]
                {
                    tokio::task::spawn_local(super::h2::serve_plain(stream, peer, guard));
                }
                #[cfg(not(feature = "http2"))]
                tokio::task::spawn_local(serve_connection(stream, peer, guard));
            }
            Accepted::Unix(stream) => {
                let peer = Peer::plain(None);
                #[cfg(feature = "tls")]
                if self.tls.is_some() {
                    tokio::task::spawn_local(serve_tls(stream, peer, guard));
                    return;
                }
                tokio::task::spawn_local(serve_connection(stream, peer, guard));
            }
        }
    }

    /// Serve the connections other workers hand to this one, for as long as the worker runs.
    pub(crate) async fn receive_handoffs(self: &Rc<Self>, mut mailbox: Mailbox) {
        while let Some(handoff) = mailbox.recv().await {
            self.adopt(handoff, true);
        }
    }

    /// Wait until an idle connection (with slot `slot` in the idle registry) has bytes to
    /// read. `false` if it should close instead: the keep-alive timeout passed, the server is
    /// shutting down, or the socket failed.
    // A plain fn returning the poll_fn, not an async fn: an async fn would hold its arguments
    // twice, and this future is part of every idle connection's.
    pub(crate) fn wait_readable<'a, T: Transport>(
        &'a self,
        stream: &'a T,
        slot: usize,
    ) -> impl Future<Output = bool> + 'a {
        std::future::poll_fn(move |cx| {
            if let Poll::Ready(ready) = stream.poll_read_ready(cx) {
                self.idle.resume(slot);
                self.quiet_trim.mark_active();
                return Poll::Ready(ready.is_ok());
            }
            if self.is_shutting_down() || self.idle.wait(slot, cx.waker()) {
                return Poll::Ready(false);
            }
            Poll::Pending
        })
    }

    /// A time no earlier than now, read without a clock call: the ticker's last reading plus
    /// its period. Keep-alive timeouts measured from it are never early, and at most a second late.
    pub(crate) fn coarse_now(&self) -> Instant {
        self.coarse_now.get() + DATE_REFRESH
    }

    /// While the worker runs: refresh the coarse clock, close connections idle past the
    /// keep-alive timeout, re-render the cached `Date` once a second, and give freed memory
    /// back to the system once the worker goes quiet.
    pub(crate) async fn tick(&self) {
        let period = DATE_REFRESH.min(self.limits.keep_alive_timeout / 2);
        let mut tick = tokio::time::interval(period.max(Duration::from_millis(1)));
        let mut dated = Instant::now() - DATE_REFRESH;
        loop {
            tick.tick().await;
            let now = Instant::now();
            self.coarse_now.set(now);
            if let Some(cutoff) = now.checked_sub(self.limits.keep_alive_timeout) {
                self.idle.expire(Some(cutoff));
            }
            if now.duration_since(dated) >= DATE_REFRESH {
                dated = now;
                date::refresh();
            }
            self.quiet_trim.on_tick(|| {
                self.busy_futures.release();
                #[cfg(feature = "http2")]
                self.h2_streams.release();
            });
        }
    }

    /// Accept connections until shutdown is requested.
    pub(crate) async fn accept_loop(self: &Rc<Self>, listener: Listener, stop: &ShutdownHandle) {
        let mut exhausted_logged = false;
        loop {
            for _ in 0..MAX_ACCEPTS_PER_WAKEUP {
                while self.open() >= self.limits.max_connections_per_worker {
                    if !self.wait_for_close(None, stop).await {
                        return;
                    }
                }
                #[cfg(feature = "tls")]
                if let Some(tls) = &self.tls {
                    if !tls.wait_for_room(stop).await {
                        return;
                    }
                }
                let accepted = tokio::select! {
                    biased;
                    _ = stop.wait_to_drain() => return,
                    accepted = listener.accept() => accepted,
                };
                match accepted {
                    Ok(accepted) => {
                        exhausted_logged = false;
                        self.quiet_trim.mark_active();
                        self.take_connection(accepted);
                    }
                    Err(error) if is_resource_exhaustion(&error) => {
                        if !exhausted_logged {
                            tracing::warn!(%error, "accept failed; pausing until a connection closes");
                            exhausted_logged = true;
                        }
                        if !self.wait_for_close(Some(ACCEPT_BACKOFF), stop).await {
                            return;
                        }
                    }
                    Err(error) => tracing::debug!(%error, "accept failed"),
                }
            }
            tokio::task::yield_now().await;
        }
    }

    /// Wait until a connection closes (or `limit` passes). `false` if shutdown was requested.
    async fn wait_for_close(&self, limit: Option<Duration>, stop: &ShutdownHandle) -> bool {
        let closed = self.closed.notified();
        let sleep = tokio::time::sleep(limit.unwrap_or(Duration::MAX / 4));
        tokio::select! {
            _ = stop.wait_to_drain() => false,
            _ = closed => true,
            _ = sleep => true,
        }
    }

    /// Close idle connections, let the others finish, then let the service finish its own work
    /// ([`Service::drained`]), waiting up to `timeout` in all.
    pub(crate) async fn drain(&self, timeout: Duration) {
        self.shutting_down.set(true);
        self.draining.start();
        self.idle.expire(None);
        let all_closed = async {
            loop {
                let closed = self.closed.notified();
                let mut closed = std::pin::pin!(closed);
                closed.as_mut().enable();
                if self.open() == 0 {
                    return;
                }
                closed.await;
            }
        };
        let now = tokio::time::Instant::now();
        // A timeout too long to add is as good as none.
        let deadline = now.checked_add(timeout).unwrap_or(now + FAR_FUTURE);
        if tokio::time::timeout_at(deadline, all_closed).await.is_err() {
            tracing::warn!(
                open = self.open(),
                "shutdown timeout passed with connections still open; dropping them"
            );
            return;
        }
        if tokio::time::timeout_at(deadline, self.service.drained())
            .await
            .is_err()
        {
            tracing::warn!("shutdown timeout passed with the service's work unfinished");
        }
    }
}

/// Keeps a worker's count of open connections right, however the connection ends. Counted
/// from the accept, before the connection's task first runs, so the cap holds within a burst.
pub(crate) struct OpenConnection<S>(Rc<Worker<S>>);

impl<S> OpenConnection<S> {
    /// The worker, for tasks of this connection that the guard itself does not go to.
    #[cfg(feature = "http2")]
    pub(crate) fn worker(&self) -> Rc<Worker<S>> {
        self.0.clone()
    }
}

impl<S> std::ops::Deref for OpenConnection<S> {
    type Target = Worker<S>;
    fn deref(&self) -> &Worker<S> {
        &self.0
    }
}

impl<S> Drop for OpenConnection<S> {
    fn drop(&mut self) {
        self.0.balancer.closed(self.0.id);
        self.0.closed.notify_waiters();
    }
}

fn is_resource_exhaustion(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}
