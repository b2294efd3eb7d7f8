//! Where `vireo serve`'s TLS configuration comes from (certificate, key, password, client
//! authorities and revocation lists), kept to be read again on SIGHUP, and the versions and
//! cipher suites offered.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use vireo_http::tls::{ClientAuth, TlsCert, TlsConfig, TlsError, TlsVersion};

/// Where a listener's TLS configuration comes from, to load it again on SIGHUP.
pub(crate) struct TlsFiles {
    certfile: String,
    keyfile: String,
    password: Option<String>,
    /// The authorities' file, and whether a client certificate is required.
    client_auth: Option<(String, bool)>,
    /// Certificate revocation list files for client certificates.
    crls: Vec<String>,
    versions: Vec<TlsVersion>,
    cipher_suites: Vec<String>,
}

/// What TLS 1.2 and 1.3 are called in `versions`.
fn tls_version(name: &str) -> PyResult<TlsVersion> {
    match name {
        "1.2" => Ok(TlsVersion::Tls12),
        "1.3" => Ok(TlsVersion::Tls13),
        other => Err(PyValueError::new_err(format!(
            "TLS: version {other:?} is not offered; the versions are \"1.2\" and \"1.3\""
        ))),
    }
}

/// The rest of a listener's TLS settings, beside its certificate and client authorities.
pub(crate) struct TlsPolicy {
    pub crls: Vec<String>,
    pub versions: Vec<String>,
    pub cipher_suites: Vec<String>,
}

impl TlsFiles {
    /// `cert_reqs` as Python's `ssl`: 0 no client certificate asked for, 1 optional, 2
    /// required, signed by an authority in `ca_certs`.
    pub(crate) fn new(
        certfile: String,
        keyfile: String,
        password: Option<String>,
        ca_certs: Option<String>,
        cert_reqs: u8,
        policy: TlsPolicy,
    ) -> PyResult<TlsFiles> {
        let client_auth =
            match (cert_reqs, ca_certs) {
                (0, _) => None,
                (1 | 2, Some(ca_certs)) => Some((ca_certs, cert_reqs == 2)),
                (1 | 2, None) => return Err(PyValueError::new_err(
                    "TLS: asking clients for a certificate needs the authorities that sign them \
                     (--ssl-ca-certs, or ssl_ca_certs)",
                )),
                (other, _) => {
                    return Err(PyValueError::new_err(format!(
                    "TLS: ssl_cert_reqs must be 0 (none), 1 (optional) or 2 (required), not {other}"
                )))
                }
            };
        if client_auth.is_none() && !policy.crls.is_empty() {
            return Err(PyValueError::new_err(
                "TLS: a certificate revocation list checks client certificates, which are not \
                 asked for (--ssl-cert-reqs 1 or 2, or ssl_cert_reqs)",
            ));
        }
        let versions = match policy.versions.is_empty() {
            true => vec![TlsVersion::Tls12, TlsVersion::Tls13],
            false => policy
                .versions
                .iter()
                .map(|v| tls_version(v))
                .collect::<PyResult<_>>()?,
        };
        Ok(TlsFiles {
            certfile,
            keyfile,
            password,
            client_auth,
            crls: policy.crls,
            versions,
            cipher_suites: policy.cipher_suites,
        })
    }

    pub(crate) fn load(&self) -> Result<TlsConfig, TlsError> {
        let cert = match &self.password {
            Some(password) => TlsCert::from_pem_files_with_password(
                &self.certfile,
                &self.keyfile,
                password.as_bytes(),
            )?,
            None => TlsCert::from_pem_files(&self.certfile, &self.keyfile)?,
        };
        let mut builder = TlsConfig::builder()
            .default(cert)
            .versions(&self.versions)
            .cipher_suites(&self.cipher_suites);
        if let Some((ca_certs, required)) = &self.client_auth {
            let mut auth = ClientAuth::from_pem_file(ca_certs)?;
            for crl in &self.crls {
                auth = auth.crls_from_pem_file(crl)?;
            }
            builder = builder.client_auth(if *required { auth } else { auth.optional() });
        }
        builder.build()
    }

    /// Load again, and say how it went in the `vireo` log.
    pub(crate) fn reload(&self) -> Result<TlsConfig, TlsError> {
        let loaded = self.load();
        Python::attach(|py| {
            let (level, message) = match &loaded {
                Ok(_) => (
                    "info",
                    format!("SIGHUP: TLS certificate reloaded from {}", self.certfile),
                ),
                Err(e) => (
                    "error",
                    format!("SIGHUP: TLS not reloaded, keeping the current certificate: {e}"),
                ),
            };
            let logged = py
                .import("logging")
                .and_then(|logging| logging.call_method1("getLogger", ("vireo",)))
                .and_then(|logger| logger.call_method1(level, (message,)));
            if let Err(e) = logged {
                e.print(py);
            }
        });
        loaded
    }
}
