//! Asking a running server to shut down gracefully.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// A handle that starts a graceful shutdown: stop accepting, close idle connections, let
/// requests in progress finish (answered with `Connection: close`), then return from
/// [`crate::Server::serve`]. Clone it freely; any clone works from any thread.
#[derive(Debug, Clone, Default)]
pub struct ShutdownHandle(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    requested: AtomicBool,
    notify: Notify,
    /// How long the server goes on serving after a shutdown is requested, in milliseconds.
    drain_delay_ms: AtomicU64,
    /// When the shutdown was first requested.
    requested_at: std::sync::OnceLock<std::time::Instant>,
}

impl ShutdownHandle {
    /// Start a graceful shutdown. Calling it again does nothing more.
    pub fn shutdown(&self) {
        self.0.requested_at.get_or_init(std::time::Instant::now);
        self.0.requested.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether a shutdown was requested.
    pub fn is_requested(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }

    /// Set how long the server goes on serving after a shutdown is requested.
    pub(crate) fn set_drain_delay(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.0.drain_delay_ms.store(ms, Ordering::SeqCst);
    }

    /// Wait until a shutdown is requested and the drain delay has passed: when the workers stop
    /// accepting and start draining.
    pub(crate) async fn wait_to_drain(&self) {
        self.wait().await;
        let delay = Duration::from_millis(self.0.drain_delay_ms.load(Ordering::SeqCst));
        if let (false, Some(requested_at)) = (delay.is_zero(), self.0.requested_at.get()) {
            // A deadline from the request, not a delay from now: this is awaited afresh each
            // time the accept loop goes round.
            tokio::time::sleep_until((*requested_at + delay).into()).await;
        }
    }

    /// Wait until a shutdown is requested.
    pub async fn wait(&self) {
        let notified = self.0.notify.notified();
        let mut notified = std::pin::pin!(notified);
        notified.as_mut().enable();
        if self.is_requested() {
            return;
        }
        notified.await;
    }
}
