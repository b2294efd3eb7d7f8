//! Client certificates (mutual TLS): which certificate authorities sign the ones accepted, and
//! whether a client may connect without one.

use super::cert::{pem_error, provider, read};
use super::error::{PemSource, TlsError};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, CertificateRevocationListDer};
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::rustls::server::danger::ClientCertVerifier;
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::RootCertStore;

/// Asks every client for a certificate and checks it against the certificate authorities
/// given: a client whose certificate does not chain to one of them (or is expired, or not
/// meant for client authentication) fails the handshake. By default a client must show one;
/// [`ClientAuth::optional`] also lets clients without a certificate in.
///
/// ```no_run
/// use vireo_http::tls::{ClientAuth, TlsCert, TlsConfig};
/// let tls = TlsConfig::builder()
///     .default(TlsCert::from_pem_files("chain.pem", "key.pem")?)
///     .client_auth(ClientAuth::from_pem_file("clients-ca.pem")?)
///     .build()?;
/// # Ok::<(), vireo_http::tls::TlsError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClientAuth {
    roots: Arc<RootCertStore>,
    required: bool,
    crls: Vec<CertificateRevocationListDer<'static>>,
}

impl ClientAuth {
    /// The certificate authorities in a PEM file (one or more `CERTIFICATE` sections).
    pub fn from_pem_file(path: impl AsRef<Path>) -> Result<ClientAuth, TlsError> {
        let path = path.as_ref();
        ClientAuth::load(&read(path)?, PemSource::File(path.to_path_buf()))
    }

    /// The certificate authorities in PEM bytes.
    pub fn from_pem(pem: &[u8]) -> Result<ClientAuth, TlsError> {
        ClientAuth::load(pem, PemSource::Memory { certificate: true })
    }

    /// Let clients without a certificate connect too; a certificate that is shown is still
    /// checked.
    pub fn optional(mut self) -> ClientAuth {
        self.required = false;
        self
    }

    /// Also refuse client certificates revoked by the certificate revocation lists (CRLs) in a
    /// PEM file (one or more `X509 CRL` sections). With any CRL given, every certificate of a
    /// client's chain below the authority must be covered by a CRL from its issuer: one whose
    /// revocation status is unknown is refused too, and so is every certificate that a list
    /// past its next-update time covers, as nginx's and OpenSSL's CRL checks do. A list that
    /// rustls cannot use (one without a CRL number, say) is [`TlsError::InvalidCrl`].
    pub fn crls_from_pem_file(self, path: impl AsRef<Path>) -> Result<ClientAuth, TlsError> {
        let path = path.as_ref();
        self.add_crls(&read(path)?, PemSource::File(path.to_path_buf()))
    }

    /// [`ClientAuth::crls_from_pem_file`] with the PEM given as bytes.
    pub fn crls_from_pem(self, pem: &[u8]) -> Result<ClientAuth, TlsError> {
        self.add_crls(pem, PemSource::MemoryCrl)
    }

    fn add_crls(mut self, pem: &[u8], source: PemSource) -> Result<ClientAuth, TlsError> {
        let mut found = 0;
        for crl in CertificateRevocationListDer::pem_slice_iter(pem) {
            let crl = crl.map_err(|error| pem_error(&source, error))?;
            // rustls parses lists when a verifier is built: one per list names a bad one.
            WebPkiClientVerifier::builder_with_provider(self.roots.clone(), provider())
                .with_crls([crl.clone()])
                .build()
                .map_err(|error| TlsError::InvalidCrl {
                    source: source.clone(),
                    problem: error.to_string(),
                })?;
            self.crls.push(crl);
            found += 1;
        }
        if found == 0 {
            return Err(TlsError::NoCrl { source });
        }
        Ok(self)
    }

    /// Whether a client must show a certificate.
    pub fn is_required(&self) -> bool {
        self.required
    }

    fn load(pem: &[u8], source: PemSource) -> Result<ClientAuth, TlsError> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|error| pem_error(&source, error))?;
            roots
                .add(cert)
                .map_err(|error| TlsError::InvalidCaCertificate {
                    source: source.clone(),
                    problem: error.to_string(),
                })?;
        }
        if roots.is_empty() {
            return Err(TlsError::NoCertificate { source });
        }
        Ok(ClientAuth {
            roots: Arc::new(roots),
            required: true,
            crls: Vec::new(),
        })
    }

    /// The rustls verifier these settings make.
    pub(crate) fn verifier(&self) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
        let builder = WebPkiClientVerifier::builder_with_provider(self.roots.clone(), provider())
            .with_crls(self.crls.iter().cloned())
            .enforce_revocation_expiration();
        let builder = if self.required {
            builder
        } else {
            builder.allow_unauthenticated()
        };
        builder.build().map_err(|error| TlsError::ClientVerifier {
            problem: error.to_string(),
        })
    }
}
