//! Asking a running server to shut down gracefully.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
}

impl ShutdownHandle {
    /// Start a graceful shutdown. Calling it again does nothing more.
    pub fn shutdown(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether a shutdown was requested.
    pub fn is_requested(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
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
