//! Where `vireo serve`'s TLS configuration comes from (certificate, key, password, client
//! authorities), kept to be read again on SIGHUP.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use vireo_http::tls::{ClientAuth, TlsCert, TlsConfig, TlsError};

/// Where a listener's TLS configuration comes from, to load it again on SIGHUP.
pub(crate) struct TlsFiles {
    certfile: String,
    keyfile: String,
    password: Option<String>,
    /// The authorities' file, and whether a client certificate is required.
    client_auth: Option<(String, bool)>,
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
        Ok(TlsFiles {
            certfile,
            keyfile,
            password,
            client_auth,
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
        let mut builder = TlsConfig::builder().default(cert);
        if let Some((ca_certs, required)) = &self.client_auth {
            let auth = ClientAuth::from_pem_file(ca_certs)?;
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
