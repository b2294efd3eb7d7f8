//! Live figures of a running server, for metrics.

use super::balance::Balancer;
use std::sync::{Arc, OnceLock};

/// Live figures of a server, readable from any thread: take one with
/// [`Server::stats`](crate::Server::stats) before serving. Clone it freely.
#[derive(Debug, Clone, Default)]
pub struct ServerStats(Arc<OnceLock<Arc<Balancer>>>);

impl ServerStats {
    /// Connections open on each worker, by worker index; empty until the server has started.
    pub fn open_connections(&self) -> Vec<usize> {
        self.0.get().map_or_else(Vec::new, |balancer| {
            (0..balancer.workers()).map(|w| balancer.open(w)).collect()
        })
    }

    /// Start reporting the figures of a server that has started with this balancer.
    pub(crate) fn attach(&self, balancer: Arc<Balancer>) {
        let _ = self.0.set(balancer);
    }
}
