//! What can go wrong in setting TLS up, each naming the file (or input) and the problem.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Where PEM text came from: a file, or bytes given in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PemSource {
    /// Read from this file.
    File(PathBuf),
    /// Given as bytes: the certificate chain (`true`) or the private key (`false`).
    Memory {
        /// The certificate chain, rather than the private key.
        certificate: bool,
    },
    /// Certificate revocation lists given as bytes.
    MemoryCrl,
}

impl fmt::Display for PemSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PemSource::File(path) => write!(f, "{}", path.display()),
            PemSource::Memory { certificate: true } => f.write_str("the certificate PEM given"),
            PemSource::Memory { certificate: false } => f.write_str("the private key PEM given"),
            PemSource::MemoryCrl => f.write_str("the revocation list PEM given"),
        }
    }
}

/// Setting TLS up failed. Each message names the file (or input) and what is wrong with it.
#[derive(Debug)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read (missing, unreadable).
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The text is not valid PEM.
    Pem {
        /// Where it came from.
        source: PemSource,
        /// What the PEM parser found.
        problem: String,
    },
    /// No `CERTIFICATE` section in the certificate chain.
    NoCertificate {
        /// Where it came from.
        source: PemSource,
    },
    /// No private key section (`PRIVATE KEY`, `RSA PRIVATE KEY`, `EC PRIVATE KEY`).
    NoPrivateKey {
        /// Where it came from.
        source: PemSource,
    },
    /// The private key is of a kind rustls cannot sign with, or is malformed.
    UnsupportedKey {
        /// Where it came from.
        source: PemSource,
        /// What rustls said.
        problem: String,
    },
    /// The private key is not the key of the first certificate in the chain.
    KeyMismatch {
        /// The certificate chain.
        certificate: PemSource,
        /// The private key.
        key: PemSource,
    },
    /// The private key is encrypted and no password was given, or with an encryption that is
    /// not supported (OpenSSL's legacy format, PBES1, SHA-1 or DES based schemes).
    EncryptedKey {
        /// Where it came from.
        source: PemSource,
        /// What is wrong, and what to do about it.
        problem: String,
    },
    /// The encrypted private key could not be decrypted with the password given.
    KeyPassword {
        /// Where it came from.
        source: PemSource,
        /// What the decryption said.
        problem: String,
    },
    /// A certificate authority for client certificates is not a usable certificate.
    InvalidCaCertificate {
        /// Where it came from.
        source: PemSource,
        /// What rustls said.
        problem: String,
    },
    /// rustls could not make a client-certificate verifier from the authorities given.
    ClientVerifier {
        /// What rustls said.
        problem: String,
    },
    /// A name given for SNI is not a valid DNS name.
    InvalidServerName {
        /// The name.
        name: String,
    },
    /// A configuration with no certificate at all.
    NoCertificates,
    /// A rustls configuration offers an application protocol the engine does not speak.
    UnsupportedAlpn {
        /// The protocol, as text.
        protocol: String,
    },
    /// No TLS version left to offer.
    NoProtocolVersion,
    /// A cipher suite name that names none of the suites rustls offers.
    UnknownCipherSuite {
        /// The name given.
        name: String,
        /// The suites offered, by their IANA names.
        offered: Vec<String>,
    },
    /// TLS 1.2 is the only version offered and none of the cipher suites offered can be used
    /// with a certificate's key.
    NoUsableCipherSuite {
        /// The key's algorithm.
        key: String,
    },
    /// A certificate revocation list that rustls cannot use (not DER, a version 1 list, one
    /// without a CRL number).
    InvalidCrl {
        /// Where it came from.
        source: PemSource,
        /// What rustls said.
        problem: String,
    },
    /// No `X509 CRL` section in a certificate revocation list file.
    NoCrl {
        /// Where it came from.
        source: PemSource,
    },
    /// rustls refused the configuration.
    Rustls(tokio_rustls::rustls::Error),
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Read { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            TlsError::Pem { source, problem } => write!(f, "{source}: not valid PEM: {problem}"),
            TlsError::NoCertificate { source } => write!(
                f,
                "{source}: no certificate found (expected a -----BEGIN CERTIFICATE----- section)"
            ),
            TlsError::NoPrivateKey { source } => write!(
                f,
                "{source}: no private key found (expected a PKCS#8, PKCS#1 or SEC1 PEM section)"
            ),
            TlsError::UnsupportedKey { source, problem } => {
                write!(f, "{source}: unusable private key: {problem}")
            }
            TlsError::KeyMismatch { certificate, key } => write!(
                f,
                "the private key in {key} does not match the certificate in {certificate}"
            ),
            TlsError::EncryptedKey { source, problem } => write!(f, "{source}: {problem}"),
            TlsError::KeyPassword { source, problem } => write!(
                f,
                "{source}: cannot decrypt the private key (wrong password?): {problem}"
            ),
            TlsError::InvalidCaCertificate { source, problem } => {
                write!(f, "{source}: unusable certificate authority: {problem}")
            }
            TlsError::ClientVerifier { problem } => {
                write!(f, "cannot check client certificates: {problem}")
            }
            TlsError::InvalidServerName { name } => {
                write!(f, "{name:?} is not a valid server name for SNI")
            }
            TlsError::NoCertificates => f.write_str("a TLS configuration needs a certificate"),
            TlsError::UnsupportedAlpn { protocol } => write!(
                f,
                "ALPN protocol {protocol:?} is not supported: the engine speaks http/1.1 (and h2 with the http2 feature)"
            ),
            TlsError::NoProtocolVersion => {
                f.write_str("a TLS configuration needs at least one TLS version (1.2 or 1.3)")
            }
            TlsError::UnknownCipherSuite { name, offered } => write!(
                f,
                "unknown cipher suite {name:?}; the suites offered are {}",
                offered.join(", ")
            ),
            TlsError::NoUsableCipherSuite { key } => write!(
                f,
                "with TLS 1.2 only, none of the cipher suites offered works with the {key} key \
                 of a certificate (name ECDHE_ECDSA suites for an ECDSA key, ECDHE_RSA ones for \
                 an RSA key)"
            ),
            TlsError::InvalidCrl { source, problem } => write!(
                f,
                "{source}: unusable certificate revocation list: {problem} (a list needs a CRL \
                 number, as RFC 5280 requires)"
            ),
            TlsError::NoCrl { source } => write!(
                f,
                "{source}: no certificate revocation list found (expected a -----BEGIN X509 CRL----- section)"
            ),
            TlsError::Rustls(error) => write!(f, "rustls: {error}"),
        }
    }
}

impl std::error::Error for TlsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TlsError::Read { error, .. } => Some(error),
            TlsError::Rustls(error) => Some(error),
            _ => None,
        }
    }
}

impl From<TlsError> for io::Error {
    fn from(error: TlsError) -> io::Error {
        let kind = match &error {
            TlsError::Read { error, .. } => error.kind(),
            _ => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, error)
    }
}
