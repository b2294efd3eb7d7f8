//! What a TLS connection negotiated, kept by the connection for the requests on it.

use rustls_pki_types::CertificateDer;
use tokio_rustls::rustls::ServerConnection;

/// The TLS version, cipher suite and client certificate of a connection, from
/// [`crate::Request::tls`].
#[derive(Debug, Clone)]
pub struct TlsSession {
    protocol_version: u16,
    cipher_suite: u16,
    peer_certificates: Vec<CertificateDer<'static>>,
}

impl TlsSession {
    pub(crate) fn of(connection: &ServerConnection) -> TlsSession {
        TlsSession {
            protocol_version: connection.protocol_version().map_or(0, u16::from),
            cipher_suite: connection
                .negotiated_cipher_suite()
                .map_or(0, |suite| u16::from(suite.suite())),
            peer_certificates: connection
                .peer_certificates()
                .map(<[_]>::to_vec)
                .unwrap_or_default(),
        }
    }

    /// The TLS version as on the wire: `0x0303` for TLS 1.2, `0x0304` for TLS 1.3.
    pub fn protocol_version(&self) -> u16 {
        self.protocol_version
    }

    /// The cipher suite's IANA number (`0x1301` is `TLS_AES_128_GCM_SHA256`).
    pub fn cipher_suite(&self) -> u16 {
        self.cipher_suite
    }

    /// The certificate chain the client showed, its own certificate first, already checked
    /// against the [`super::ClientAuth`] authorities; empty when it showed none.
    pub fn peer_certificates(&self) -> &[CertificateDer<'static>] {
        &self.peer_certificates
    }
}
