//! The request a service receives: a parsed head and a body read on demand.

use crate::body::RequestBody;
use crate::head::Head;
use std::net::SocketAddr;

/// A request: its head, owned, and its body, still on the connection.
///
/// The body borrows the connection, so it can be read as a stream or whole while the service
/// runs; the head can be taken out with [`Request::into_parts`] and kept.
#[derive(Debug)]
pub struct Request<'c> {
    head: Head,
    body: RequestBody<'c>,
    /// Lent from the connection rather than copied into every request.
    peer: &'c Peer,
}

/// What a connection knows of its peer, kept by the connection and lent to each request.
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    /// The peer's address; `None` on a transport without one (a Unix domain socket).
    pub(crate) addr: Option<SocketAddr>,
    /// The connection is encrypted (TLS), so the scheme is `https`.
    pub(crate) secure: bool,
    /// What the TLS handshake negotiated, on a TLS connection.
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<std::sync::Arc<crate::tls::TlsSession>>,
}

impl Peer {
    /// A plain (not TLS) connection from `addr`.
    pub(crate) fn plain(addr: Option<SocketAddr>) -> Peer {
        Peer {
            addr,
            secure: false,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

impl<'c> Request<'c> {
    pub(crate) fn new(head: Head, body: RequestBody<'c>, peer: &'c Peer) -> Self {
        Request { head, body, peer }
    }

    /// The parsed head: method, target, version, header fields.
    pub fn head(&self) -> &Head {
        &self.head
    }

    /// The head, to change before handing the request on (as a service that routes a prefix
    /// to another does, with [`RequestHead::strip_path_prefix`](crate::RequestHead::strip_path_prefix)).
    pub fn head_mut(&mut self) -> &mut Head {
        &mut self.head
    }

    /// The body, to read.
    pub fn body(&mut self) -> &mut RequestBody<'c> {
        &mut self.body
    }

    /// The address of the peer (the client, or the proxy in front of this server); `None` on a
    /// transport without one, such as a Unix domain socket.
    pub fn remote_addr(&self) -> Option<&'c SocketAddr> {
        self.peer.addr.as_ref()
    }

    /// Whether the request came over an encrypted connection (TLS, served with `Server::tls`
    /// and the `tls` feature): its scheme is `https`. A server behind a proxy that terminates
    /// TLS sees plain connections here; the proxy's forwarded headers tell the original scheme.
    pub fn is_secure(&self) -> bool {
        self.peer.secure
    }

    /// What the TLS handshake of this request's connection negotiated (version, cipher suite,
    /// the client's certificate); `None` on a plain connection.
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&'c std::sync::Arc<crate::tls::TlsSession>> {
        self.peer.tls.as_ref()
    }

    /// Split into the head and the body.
    pub fn into_parts(self) -> (Head, RequestBody<'c>) {
        (self.head, self.body)
    }
}
