//! Which TLS versions and cipher suites a server offers: a subset of rustls's defaults, the
//! suites named as the IANA registry, rustls or OpenSSL name them.

use super::error::TlsError;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::{self, SupportedCipherSuite, SupportedProtocolVersion};

/// A TLS version the engine speaks. Older versions (TLS 1.0 and 1.1, deprecated by RFC 8996)
/// are not offered at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TlsVersion {
    /// TLS 1.2 (RFC 5246).
    Tls12,
    /// TLS 1.3 (RFC 8446).
    Tls13,
}

impl TlsVersion {
    fn rustls(self) -> &'static SupportedProtocolVersion {
        match self {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
        }
    }
}

/// rustls's versions for `versions`, newest first; an empty list is an error.
pub(crate) fn rustls_versions(
    versions: &[TlsVersion],
) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
    let mut sorted = versions.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted.dedup();
    if sorted.is_empty() {
        return Err(TlsError::NoProtocolVersion);
    }
    Ok(sorted.into_iter().map(TlsVersion::rustls).collect())
}

/// OpenSSL's names for the TLS 1.2 suites rustls offers (its TLS 1.3 names are the IANA ones).
const OPENSSL_TLS12_NAMES: [(&str, &str); 6] = [
    (
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384",
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        "ECDHE-RSA-CHACHA20-POLY1305",
    ),
];

/// The names a suite answers to: rustls's (`TLS13_AES_128_GCM_SHA256`), the IANA registry's
/// (`TLS_AES_128_GCM_SHA256`, `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`) and OpenSSL's
/// (`ECDHE-RSA-AES128-GCM-SHA256`).
fn names_of(suite: &SupportedCipherSuite) -> Vec<String> {
    let (Some(rustls_name), Some(iana)) = (suite.suite().as_str(), iana_name(suite)) else {
        return Vec::new();
    };
    let mut names = vec![rustls_name.to_owned()];
    if iana != rustls_name {
        names.push(iana);
    }
    if let Some((_, openssl)) = OPENSSL_TLS12_NAMES
        .iter()
        .find(|(iana, _)| *iana == rustls_name)
    {
        names.push((*openssl).to_owned());
    }
    names
}

/// A suite's IANA name: rustls's, but `TLS_` rather than `TLS13_` for TLS 1.3's.
fn iana_name(suite: &SupportedCipherSuite) -> Option<String> {
    let name = suite.suite().as_str()?;
    Some(match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name.to_owned(),
    })
}

/// `provider` offering only the suites named. Names of TLS 1.2 suites choose among TLS 1.2's,
/// names of TLS 1.3 suites among TLS 1.3's; a version none of whose suites is named keeps all
/// of its own, as OpenSSL keeps its TLS 1.3 suites whatever its cipher list says. Names are
/// matched without regard to case; one that names no suite of the provider is an error.
pub(crate) fn with_suites(
    provider: &CryptoProvider,
    names: &[String],
) -> Result<CryptoProvider, TlsError> {
    if names.is_empty() {
        return Ok(provider.clone());
    }
    let mut chosen: Vec<SupportedCipherSuite> = Vec::new();
    for name in names {
        let suite = provider
            .cipher_suites
            .iter()
            .find(|suite| names_of(suite).iter().any(|n| n.eq_ignore_ascii_case(name)))
            .ok_or_else(|| TlsError::UnknownCipherSuite {
                name: name.clone(),
                offered: offered(provider),
            })?;
        if !chosen.contains(suite) {
            chosen.push(*suite);
        }
    }
    let is_tls13 = |suite: &SupportedCipherSuite| matches!(suite, SupportedCipherSuite::Tls13(_));
    let mut suites = Vec::new();
    for tls13 in [true, false] {
        let named: Vec<_> = chosen
            .iter()
            .filter(|s| is_tls13(s) == tls13)
            .copied()
            .collect();
        if named.is_empty() {
            suites.extend(
                provider
                    .cipher_suites
                    .iter()
                    .filter(|s| is_tls13(s) == tls13),
            );
        } else {
            suites.extend(named);
        }
    }
    Ok(CryptoProvider {
        cipher_suites: suites,
        ..provider.clone()
    })
}

/// The suites `provider` offers, by their IANA names, for an error message.
fn offered(provider: &CryptoProvider) -> Vec<String> {
    provider
        .cipher_suites
        .iter()
        .filter_map(iana_name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::cert::provider;

    fn suite_names(provider: &CryptoProvider) -> Vec<&'static str> {
        provider
            .cipher_suites
            .iter()
            .filter_map(|s| s.suite().as_str())
            .collect()
    }

    #[test]
    fn every_spelling_names_the_same_suite() {
        for name in [
            "ECDHE-RSA-AES128-GCM-SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "tls_ecdhe_rsa_with_aes_128_gcm_sha256",
        ] {
            let chosen = with_suites(&provider(), &[name.to_owned()]).unwrap();
            let names = suite_names(&chosen);
            assert!(
                names.contains(&"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
                "{name}"
            );
            assert!(
                !names.contains(&"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
                "{name}"
            );
        }
        for name in ["TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"] {
            let names = suite_names(&with_suites(&provider(), &[name.to_owned()]).unwrap());
            assert!(names.contains(&"TLS13_AES_256_GCM_SHA384"), "{name}");
            assert!(!names.contains(&"TLS13_AES_128_GCM_SHA256"), "{name}");
        }
    }

    #[test]
    fn naming_only_tls12_suites_keeps_every_tls13_suite() {
        let all = provider();
        let chosen = with_suites(&all, &["ECDHE-ECDSA-AES256-GCM-SHA384".to_owned()]).unwrap();
        let tls13 = |p: &CryptoProvider| {
            p.cipher_suites
                .iter()
                .filter(|s| matches!(s, SupportedCipherSuite::Tls13(_)))
                .count()
        };
        assert_eq!(tls13(&chosen), tls13(&all));
        assert_eq!(chosen.cipher_suites.len(), tls13(&all) + 1);
    }

    #[test]
    fn an_unknown_name_says_what_is_offered() {
        let error = with_suites(&provider(), &["RC4-MD5".to_owned()]).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("\"RC4-MD5\""), "{message}");
        assert!(
            message.contains("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            "{message}"
        );
    }

    #[test]
    fn versions_are_newest_first_and_never_empty() {
        let versions =
            rustls_versions(&[TlsVersion::Tls12, TlsVersion::Tls13, TlsVersion::Tls12]).unwrap();
        assert_eq!(versions, [&rustls::version::TLS13, &rustls::version::TLS12]);
        assert!(matches!(
            rustls_versions(&[]),
            Err(TlsError::NoProtocolVersion)
        ));
    }
}
