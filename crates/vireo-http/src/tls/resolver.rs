//! Choosing a certificate by the server name the client asks for (SNI).

use std::collections::HashMap;
use std::sync::Arc;
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;

/// Certificates by exact name, by wildcard (`*.example.com` matches one more label), and a
/// default for clients that send no name or one that matches none.
#[derive(Debug, Default)]
pub(crate) struct SniResolver {
    /// Lowercase names, without a trailing dot.
    pub(crate) exact: HashMap<String, Arc<CertifiedKey>>,
    /// The part after `*.`, lowercase.
    pub(crate) wildcard: HashMap<String, Arc<CertifiedKey>>,
    pub(crate) default: Option<Arc<CertifiedKey>>,
}

impl SniResolver {
    pub(crate) fn find(&self, name: Option<&str>) -> Option<Arc<CertifiedKey>> {
        let found = name.and_then(|name| {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            self.exact.get(&name).or_else(|| {
                let (_, parent) = name.split_once('.')?;
                self.wildcard.get(parent)
            })
        });
        found.or(self.default.as_ref()).cloned()
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.find(client_hello.server_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_rustls::rustls::crypto::aws_lc_rs::sign::any_supported_type;

    fn key(name: &str) -> Arc<CertifiedKey> {
        let cert = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
        let signing = any_supported_type(&rustls_pki_types::PrivateKeyDer::Pkcs8(
            cert.signing_key.serialize_der().into(),
        ))
        .unwrap();
        Arc::new(CertifiedKey::new(vec![cert.cert.der().clone()], signing))
    }

    #[test]
    fn exact_then_wildcard_then_default() {
        let (a, any_b, fallback) = (key("a.example"), key("x.b.example"), key("default"));
        let mut resolver = SniResolver::default();
        resolver.exact.insert("a.example".into(), a.clone());
        resolver.wildcard.insert("b.example".into(), any_b.clone());
        let find = |r: &SniResolver, name| r.find(name).map(|k| k.cert[0].clone());
        assert_eq!(find(&resolver, Some("A.Example.")), Some(a.cert[0].clone()));
        assert_eq!(
            find(&resolver, Some("x.b.example")),
            Some(any_b.cert[0].clone())
        );
        assert_eq!(
            find(&resolver, Some("y.x.b.example")),
            None,
            "one label only"
        );
        assert_eq!(find(&resolver, Some("b.example")), None);
        assert_eq!(find(&resolver, None), None);
        resolver.default = Some(fallback.clone());
        assert_eq!(
            find(&resolver, Some("c.example")),
            Some(fallback.cert[0].clone())
        );
        assert_eq!(find(&resolver, None), Some(fallback.cert[0].clone()));
    }
}
