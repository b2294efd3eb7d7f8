//! Serving HTTPS: certificates, the TLS configuration, and reloading it while serving.
//!
//! Built on rustls with its default cryptography provider, TLS 1.2 and 1.3 and rustls's default
//! cipher suites (fewer with [`TlsConfigBuilder::versions`] and
//! [`TlsConfigBuilder::cipher_suites`]); client certificates checked against given authorities
//! and revocation lists when asked for ([`ClientAuth`]). Turned on with the `tls` Cargo feature; private keys encrypted with a
//! password need `tls-encrypted-keys` too.
//!
//! ```no_run
//! use vireo_http::tls::TlsConfig;
//! use vireo_http::{service_fn, Response, Server};
//!
//! let tls = TlsConfig::from_pem_files("/etc/app/chain.pem", "/etc/app/key.pem")?;
//! let server = Server::bind("0.0.0.0:443")?.tls(tls);
//! let reload = server.tls_handle().expect("TLS is on");
//! // Later, from any thread: new handshakes use the new certificate, open connections keep theirs.
//! // reload.reload(TlsConfig::from_pem_files("/etc/app/chain.pem", "/etc/app/key.pem")?);
//! server.serve(service_fn(|req| {
//!     Response::text(if req.is_secure() { "https" } else { "http" })
//! }))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`crate::Server::reload_tls_on_sighup`] reloads on SIGHUP instead, when the server handles
//! signals.
//!
//! Several certificates, chosen by the name the client asks for (SNI):
//!
//! ```no_run
//! use vireo_http::tls::{TlsCert, TlsConfig};
//! let tls = TlsConfig::builder()
//!     .sni("a.example", TlsCert::from_pem_files("a.pem", "a.key")?)
//!     .sni("*.b.example", TlsCert::from_pem_files("b.pem", "b.key")?)
//!     .default(TlsCert::from_pem_files("default.pem", "default.key")?)
//!     .build()?;
//! # Ok::<(), vireo_http::tls::TlsError>(())
//! ```

mod cert;
mod client_auth;
mod config;
#[cfg(feature = "tls-encrypted-keys")]
mod encrypted_key;
mod error;
mod handle;
mod protocols;
mod resolver;
mod session;

pub use cert::TlsCert;
pub use client_auth::ClientAuth;
pub use config::{TlsConfig, TlsConfigBuilder};
pub use error::{PemSource, TlsError};
pub use handle::TlsHandle;
pub use protocols::TlsVersion;
pub use session::TlsSession;

/// rustls itself, for [`TlsConfig::from_rustls`] and [`TlsConfig::rustls_config`].
pub use tokio_rustls::rustls;

/// The application protocols offered by ALPN, most preferred first; the connection is served
/// with the one negotiated.
#[cfg(not(feature = "http2"))]
pub(crate) const ALPN_PROTOCOLS: &[&[u8]] = &[b"http/1.1"];
/// The application protocols offered by ALPN, most preferred first; the connection is served
/// with the one negotiated.
#[cfg(feature = "http2")]
pub(crate) const ALPN_PROTOCOLS: &[&[u8]] = &[b"h2", b"http/1.1"];
