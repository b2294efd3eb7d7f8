//! The TLS configuration a server serves with, and its builder.

use super::cert::{provider, TlsCert};
use super::client_auth::ClientAuth;
use super::error::TlsError;
use super::protocols::{rustls_versions, with_suites, TlsVersion};
use super::resolver::SniResolver;
use super::ALPN_PROTOCOLS;
use rustls_pki_types::DnsName;
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::rustls::{self, ServerConfig};

/// How a server does TLS: its certificates and the rustls settings, made with
/// [`TlsConfig::from_pem_files`], [`TlsConfig::from_pem`], [`TlsConfig::builder`] (several
/// certificates chosen by SNI) or [`TlsConfig::from_rustls`]. Cheap to clone.
///
/// TLS 1.2 and 1.3 with rustls's default cipher suites and provider (fewer with the builder's
/// [`TlsConfigBuilder::versions`] and [`TlsConfigBuilder::cipher_suites`]); ALPN offers
/// `http/1.1` (and `h2` first with the `http2` feature); no client certificates unless the
/// builder's [`TlsConfigBuilder::client_auth`] asks for them.
#[derive(Clone, Debug)]
pub struct TlsConfig {
    pub(crate) server: Arc<ServerConfig>,
}

impl TlsConfig {
    /// One certificate chain and its private key, from PEM files.
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsConfig, TlsError> {
        TlsConfig::builder()
            .default(TlsCert::from_pem_files(cert_chain, key)?)
            .build()
    }

    /// One certificate chain and its private key, from PEM bytes.
    pub fn from_pem(cert_chain: &[u8], key: &[u8]) -> Result<TlsConfig, TlsError> {
        TlsConfig::builder()
            .default(TlsCert::from_pem(cert_chain, key)?)
            .build()
    }

    /// Serve one certificate to every client.
    pub fn from_cert(cert: TlsCert) -> TlsConfig {
        TlsConfig::builder()
            .default(cert)
            .build()
            .expect("a default certificate and rustls's default settings are a valid configuration")
    }

    /// Several certificates, chosen by the name the client asks for.
    pub fn builder() -> TlsConfigBuilder {
        <TlsConfigBuilder as Default>::default()
    }

    /// A rustls configuration made elsewhere, served as it is (client authentication, other
    /// versions or suites, a custom certificate resolver). Its ALPN list may be empty or name
    /// only `http/1.1` and `http/1.0`, and `h2` with the `http2` feature: the engine speaks
    /// nothing else.
    pub fn from_rustls(config: Arc<ServerConfig>) -> Result<TlsConfig, TlsError> {
        if let Some(other) = config
            .alpn_protocols
            .iter()
            .find(|p| !super::ALPN_PROTOCOLS.contains(&p.as_slice()) && p.as_slice() != b"http/1.0")
        {
            return Err(TlsError::UnsupportedAlpn {
                protocol: String::from_utf8_lossy(other).into_owned(),
            });
        }
        Ok(TlsConfig { server: config })
    }

    /// The rustls configuration new handshakes use.
    pub fn rustls_config(&self) -> &Arc<ServerConfig> {
        &self.server
    }
}

/// Builds a [`TlsConfig`] with a certificate per server name (SNI) and a default.
///
/// A client that asks for a name gets the certificate for that name (exact first, then a
/// wildcard such as `*.example.com`, which matches one more label); a client that asks for no
/// name, or one without a certificate here, gets the default; with no default, its handshake
/// fails.
#[derive(Debug, Default)]
pub struct TlsConfigBuilder {
    names: Vec<(String, TlsCert)>,
    default: Option<TlsCert>,
    client_auth: Option<ClientAuth>,
    versions: Option<Vec<TlsVersion>>,
    cipher_suites: Vec<String>,
}

impl TlsConfigBuilder {
    /// Serve `cert` to clients that ask for `name` (a DNS name, or `*.` and one).
    pub fn sni(mut self, name: impl Into<String>, cert: TlsCert) -> Self {
        self.names.push((name.into(), cert));
        self
    }

    /// Serve `cert` to clients whose name has no certificate of its own.
    pub fn default(mut self, cert: TlsCert) -> Self {
        self.default = Some(cert);
        self
    }

    /// Ask clients for a certificate and check it as `auth` says (mutual TLS).
    pub fn client_auth(mut self, auth: ClientAuth) -> Self {
        self.client_auth = Some(auth);
        self
    }

    /// Offer only these TLS versions (by default both 1.2 and 1.3).
    pub fn versions(mut self, versions: &[TlsVersion]) -> Self {
        self.versions = Some(versions.to_vec());
        self
    }

    /// Offer only the cipher suites named, by their IANA names
    /// (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`, `TLS_AES_256_GCM_SHA384`), rustls's
    /// (`TLS13_AES_256_GCM_SHA384`) or OpenSSL's (`ECDHE-RSA-AES128-GCM-SHA256`), in any case.
    /// Names of TLS 1.2 suites choose among TLS 1.2's and names of TLS 1.3 suites among TLS
    /// 1.3's; a version none of whose suites is named keeps all of rustls's defaults for it
    /// (as OpenSSL's cipher list leaves TLS 1.3 alone). [`TlsConfigBuilder::build`] fails on a
    /// name that is not one of rustls's default suites.
    pub fn cipher_suites<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.cipher_suites = names
            .into_iter()
            .map(|name| name.as_ref().trim().to_owned())
            .filter(|name| !name.is_empty())
            .collect();
        self
    }

    /// The configuration; fails on a name that is not a DNS name, without any certificate,
    /// with no TLS version, on an unknown cipher suite, or when TLS 1.2 alone is offered and
    /// none of its suites left can be used with a certificate's key (an ECDSA key needs an
    /// `ECDHE_ECDSA` suite, an RSA key an `ECDHE_RSA` one).
    pub fn build(self) -> Result<TlsConfig, TlsError> {
        if self.names.is_empty() && self.default.is_none() {
            return Err(TlsError::NoCertificates);
        }
        let versions = match &self.versions {
            Some(versions) => rustls_versions(versions)?,
            None => rustls::DEFAULT_VERSIONS.to_vec(),
        };
        let provider = Arc::new(with_suites(&provider(), &self.cipher_suites)?);
        if !versions.contains(&&rustls::version::TLS13) {
            let certs = self
                .default
                .iter()
                .chain(self.names.iter().map(|(_, cert)| cert));
            for cert in certs {
                let algorithm = cert.key.key.algorithm();
                let usable = provider.cipher_suites.iter().any(|suite| {
                    suite.version() == &rustls::version::TLS12
                        && suite.usable_for_signature_algorithm(algorithm)
                });
                if !usable {
                    return Err(TlsError::NoUsableCipherSuite {
                        key: format!("{algorithm:?}"),
                    });
                }
            }
        }
        let mut resolver = SniResolver {
            default: self.default.map(|cert| cert.key),
            ..SniResolver::default()
        };
        for (name, cert) in self.names {
            let lower = name.trim_end_matches('.').to_ascii_lowercase();
            let (table, host) = match lower.strip_prefix("*.") {
                Some(parent) => (&mut resolver.wildcard, parent),
                None => (&mut resolver.exact, lower.as_str()),
            };
            if DnsName::try_from(host).is_err() {
                return Err(TlsError::InvalidServerName { name });
            }
            table.insert(host.to_owned(), cert.key);
        }
        let versions = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(TlsError::Rustls)?;
        let verified = match &self.client_auth {
            Some(auth) => versions.with_client_cert_verifier(auth.verifier()?),
            None => versions.with_no_client_auth(),
        };
        let mut server = verified.with_cert_resolver(Arc::new(resolver));
        server.alpn_protocols = ALPN_PROTOCOLS.iter().map(|p| p.to_vec()).collect();
        Ok(TlsConfig {
            server: Arc::new(server),
        })
    }
}
