//! A certificate chain and its private key, loaded from PEM and checked to belong together.

use super::error::{PemSource, TlsError};
use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, InconsistentKeys};

/// A certificate chain (the server's certificate first, then the intermediates) with its
/// private key, ready to serve. Cheap to clone.
#[derive(Clone)]
pub struct TlsCert {
    pub(crate) key: Arc<CertifiedKey>,
}

impl fmt::Debug for TlsCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsCert")
            .field("chain_len", &self.key.cert.len())
            .finish_non_exhaustive()
    }
}

impl TlsCert {
    /// Load a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or SEC1) from files.
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsCert, TlsError> {
        let (cert_path, key_path) = (cert_chain.as_ref(), key.as_ref());
        let cert_pem = read(cert_path)?;
        let key_pem = read(key_path)?;
        load(
            &cert_pem,
            PemSource::File(cert_path.to_path_buf()),
            &key_pem,
            PemSource::File(key_path.to_path_buf()),
            None,
        )
    }

    /// Load a PEM certificate chain and a private key encrypted with `password` (PKCS#8
    /// `ENCRYPTED PRIVATE KEY`) from files. A key that is not encrypted is loaded as it is.
    #[cfg(feature = "tls-encrypted-keys")]
    pub fn from_pem_files_with_password(
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
        password: &[u8],
    ) -> Result<TlsCert, TlsError> {
        let (cert_path, key_path) = (cert_chain.as_ref(), key.as_ref());
        load(
            &read(cert_path)?,
            PemSource::File(cert_path.to_path_buf()),
            &read(key_path)?,
            PemSource::File(key_path.to_path_buf()),
            Some(password),
        )
    }

    /// [`TlsCert::from_pem_files_with_password`], from bytes.
    #[cfg(feature = "tls-encrypted-keys")]
    pub fn from_pem_with_password(
        cert_chain: &[u8],
        key: &[u8],
        password: &[u8],
    ) -> Result<TlsCert, TlsError> {
        load(
            cert_chain,
            PemSource::Memory { certificate: true },
            key,
            PemSource::Memory { certificate: false },
            Some(password),
        )
    }

    /// Load a PEM certificate chain and a PEM private key from bytes.
    pub fn from_pem(cert_chain: &[u8], key: &[u8]) -> Result<TlsCert, TlsError> {
        load(
            cert_chain,
            PemSource::Memory { certificate: true },
            key,
            PemSource::Memory { certificate: false },
            None,
        )
    }

    /// Use a chain and key rustls already holds.
    pub fn from_certified_key(key: Arc<CertifiedKey>) -> TlsCert {
        TlsCert { key }
    }

    /// The end-entity certificate, DER-encoded.
    pub fn end_entity_der(&self) -> &[u8] {
        self.key.cert.first().map_or(&[], |cert| cert.as_ref())
    }
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| TlsError::Read {
        path: path.to_path_buf(),
        error,
    })
}

/// The provider the process installed as rustls's default, or rustls's own default.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
}

pub(crate) fn pem_error(source: &PemSource, error: pem::Error) -> TlsError {
    TlsError::Pem {
        source: source.clone(),
        problem: match error {
            pem::Error::MissingSectionEnd { end_marker } => format!(
                "a section does not end (no {:?} line)",
                String::from_utf8_lossy(&end_marker)
            ),
            pem::Error::IllegalSectionStart { line } => format!(
                "malformed section start {:?}",
                String::from_utf8_lossy(&line)
            ),
            pem::Error::Base64Decode(problem) => format!("bad base64: {problem}"),
            other => other.to_string(),
        },
    }
}

/// What to run on a key whose encryption is not supported.
pub(crate) const CONVERT: &str =
    "openssl pkcs8 -topk8 -v2 aes-256-cbc -v2prf hmacWithSHA256 -in OLD -out NEW";

/// The private key in `pem`, decrypted with `password` when it is encrypted.
fn private_key(
    pem: &[u8],
    source: &PemSource,
    password: Option<&[u8]>,
) -> Result<PrivateKeyDer<'static>, TlsError> {
    let encrypted = |problem: &str| TlsError::EncryptedKey {
        source: source.clone(),
        problem: problem.to_owned(),
    };
    if contains(pem, b"Proc-Type: 4,ENCRYPTED") {
        return Err(encrypted(&format!(
            "the private key uses OpenSSL's legacy encryption; convert it to PKCS#8 with `{}`",
            CONVERT
        )));
    }
    if contains(pem, b"-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        #[cfg(feature = "tls-encrypted-keys")]
        if let Some(password) = password {
            return super::encrypted_key::decrypt(pem, password, source);
        }
        #[cfg(not(feature = "tls-encrypted-keys"))]
        let _ = password;
        return Err(encrypted(if cfg!(feature = "tls-encrypted-keys") {
            "the private key is encrypted: give its password"
        } else {
            "the private key is encrypted: decrypting it needs the `tls-encrypted-keys` feature"
        }));
    }
    match PrivateKeyDer::from_pem_slice(pem) {
        Ok(key) => Ok(key),
        Err(pem::Error::NoItemsFound) => Err(TlsError::NoPrivateKey {
            source: source.clone(),
        }),
        Err(error) => Err(pem_error(source, error)),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

fn load(
    cert_pem: &[u8],
    cert_source: PemSource,
    key_pem: &[u8],
    key_source: PemSource,
    password: Option<&[u8]>,
) -> Result<TlsCert, TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| pem_error(&cert_source, error))?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            source: cert_source,
        });
    }
    let key = private_key(key_pem, &key_source, password)?;
    let signing_key = provider()
        .key_provider
        .load_private_key(key)
        .map_err(|error| TlsError::UnsupportedKey {
            source: key_source.clone(),
            problem: error.to_string(),
        })?;
    let certified = CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        // `Unknown`: the certificate's key could not be compared (an unusual algorithm);
        // rustls serves it anyway, as it does in its own configuration builder.
        Ok(()) | Err(rustls::Error::InconsistentKeys(InconsistentKeys::Unknown)) => {}
        Err(rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => {
            return Err(TlsError::KeyMismatch {
                certificate: cert_source,
                key: key_source,
            })
        }
        Err(error) => return Err(TlsError::Rustls(error)),
    }
    Ok(TlsCert {
        key: Arc::new(certified),
    })
}
