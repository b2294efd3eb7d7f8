//! A worker's TLS side: the handshake of each accepted connection, within the handshake timeout
//! and the cap on handshakes in progress, then the connection served over the TLS stream.

use super::conn::serve_connection;
use super::shutdown::ShutdownHandle;
use super::worker::OpenConnection;
use crate::request::Peer;
use crate::service::Service;
use crate::tls::TlsHandle;
use crate::transport::IoTransport;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// What a worker needs to accept TLS connections.
pub(crate) struct TlsAccept {
    handle: TlsHandle,
    /// One permit per handshake that may run at once on this worker.
    handshakes: Semaphore,
}

impl TlsAccept {
    pub(crate) fn new(handle: TlsHandle, max_handshakes: usize) -> TlsAccept {
        TlsAccept {
            handle,
            handshakes: Semaphore::new(max_handshakes.max(1)),
        }
    }

    /// Wait until a handshake may start on this worker. `false` if shutdown was requested.
    pub(crate) async fn wait_for_room(&self, stop: &ShutdownHandle) -> bool {
        if self.handshakes.available_permits() > 0 {
            return true;
        }
        tokio::select! {
            _ = stop.wait_to_drain() => false,
            _ = self.handshakes.acquire() => true,
        }
    }
}

/// Do the TLS handshake on an accepted connection, then serve it on a task of its own; close it if the handshake
/// fails or does not finish within the handshake timeout (counted from the accept, so time
/// spent waiting for a free handshake slot is included).
pub(crate) async fn serve_tls<T, S>(stream: T, peer: Peer, worker: OpenConnection<S>)
where
    T: AsyncRead + AsyncWrite + Unpin + 'static,
    S: Service,
{
    let tls = worker
        .tls
        .as_ref()
        .expect("TLS connections are served by a worker with TLS");
    let deadline = Instant::now() + worker.limits.tls_handshake_timeout;
    let handshake = async {
        let _permit = tls.handshakes.acquire().await.ok()?;
        let acceptor = tokio_rustls::TlsAcceptor::from(tls.handle.rustls_config());
        match acceptor.accept(stream).await {
            Ok(stream) => Some(stream),
            Err(error) => {
                tracing::debug!(remote = ?peer.addr, %error, "TLS handshake failed");
                None
            }
        }
    };
    let stream = match tokio::time::timeout_at(deadline, handshake).await {
        Ok(Some(stream)) => stream,
        Ok(None) => return,
        Err(_) => {
            tracing::debug!(remote = ?peer.addr, "TLS handshake timed out");
            return;
        }
    };
    let peer = Peer {
        secure: true,
        tls: Some(std::sync::Arc::new(crate::tls::TlsSession::of(
            stream.get_ref().1,
        ))),
        ..peer
    };
    // The connection moves to a task of its own, so the handshake's state is freed rather
    // than kept inside every connection's future.
    #[cfg(feature = "http2")]
    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
        tokio::task::spawn_local(super::h2::serve_h2(stream, peer, worker));
        return;
    }
    tokio::task::spawn_local(serve_connection(IoTransport::new(stream), peer, worker));
}
