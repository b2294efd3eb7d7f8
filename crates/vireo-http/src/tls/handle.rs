//! The configuration a running server does handshakes with, replaceable while it serves.

use super::config::TlsConfig;
use std::fmt;
use std::sync::{Arc, RwLock};
use tokio_rustls::rustls::ServerConfig;

/// Replaces a running server's TLS configuration: [`crate::Server::tls_handle`].
///
/// Handshakes that start after [`TlsHandle::reload`] use the new configuration (its
/// certificates, its settings); connections already open, and handshakes already under way,
/// keep the one they started with. Cheap to clone, and usable from any thread.
#[derive(Clone)]
pub struct TlsHandle {
    current: Arc<RwLock<Arc<ServerConfig>>>,
}

impl fmt::Debug for TlsHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsHandle").finish_non_exhaustive()
    }
}

impl TlsHandle {
    pub(crate) fn new(config: TlsConfig) -> TlsHandle {
        TlsHandle {
            current: Arc::new(RwLock::new(config.server)),
        }
    }

    /// Serve new handshakes with `config` from now on.
    pub fn reload(&self, config: TlsConfig) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = config.server;
    }

    /// The configuration new handshakes use.
    pub fn current(&self) -> TlsConfig {
        TlsConfig {
            server: self.rustls_config(),
        }
    }

    /// What a new handshake starts with.
    pub(crate) fn rustls_config(&self) -> Arc<ServerConfig> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
