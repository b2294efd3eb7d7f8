//! Offering fewer TLS versions or cipher suites than rustls's defaults.

mod common;

use common::run;
use common::tls::{accepting_any, request_over, self_signed, serve_reporting_tls};
use tokio_rustls::rustls::version::{TLS12, TLS13};
use tokio_rustls::TlsConnector;
use vireo_http::tls::{TlsCert, TlsConfig, TlsConfigBuilder, TlsError, TlsVersion};
use vireo_http::RunningServer;

fn builder() -> TlsConfigBuilder {
    let cert = self_signed(&["localhost"]);
    TlsConfig::builder()
        .default(TlsCert::from_pem(cert.chain_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap())
}

/// The version and suite the server says it negotiated (`version=303 suite=cca9`), or `None`
/// when it refused the connection.
async fn negotiated(server: &RunningServer, connector: &TlsConnector) -> Option<String> {
    let reply = request_over(connector, server.addr()).await?;
    let last = reply.lines().last()?;
    Some(last.split(" certs=").next()?.to_owned())
}

#[test]
fn a_server_offering_tls12_only_refuses_a_tls13_only_client() {
    let server = serve_reporting_tls(builder().versions(&[TlsVersion::Tls12]).build().unwrap());
    run(async {
        let reply = negotiated(&server, &accepting_any(&[&TLS12, &TLS13], &[b"http/1.1"])).await;
        assert!(reply.unwrap().starts_with("version=303 "));
        assert_eq!(
            negotiated(&server, &accepting_any(&[&TLS13], &[b"http/1.1"])).await,
            None
        );
    });
}

#[test]
fn a_server_offering_tls13_only_refuses_a_tls12_only_client() {
    let server = serve_reporting_tls(builder().versions(&[TlsVersion::Tls13]).build().unwrap());
    run(async {
        let reply = negotiated(&server, &accepting_any(&[&TLS12, &TLS13], &[b"http/1.1"])).await;
        assert!(reply.unwrap().starts_with("version=304 "));
        assert_eq!(
            negotiated(&server, &accepting_any(&[&TLS12], &[b"http/1.1"])).await,
            None
        );
    });
}

#[test]
fn the_suites_named_are_the_only_ones_negotiated() {
    // The test certificate has an ECDSA key, so its TLS 1.2 suites are the ECDHE_ECDSA ones.
    let config = builder()
        .versions(&[TlsVersion::Tls12])
        .cipher_suites(["ECDHE-ECDSA-CHACHA20-POLY1305"])
        .build()
        .unwrap();
    let server = serve_reporting_tls(config);
    run(async {
        let reply = negotiated(&server, &accepting_any(&[&TLS12], &[b"http/1.1"])).await;
        // TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 is 0xcca9; the client prefers AES-GCM.
        assert_eq!(reply.as_deref(), Some("version=303 suite=cca9"));
    });
    let config = builder()
        .cipher_suites(["TLS_CHACHA20_POLY1305_SHA256"])
        .build()
        .unwrap();
    let server = serve_reporting_tls(config);
    run(async {
        let reply = negotiated(&server, &accepting_any(&[&TLS13], &[b"http/1.1"])).await;
        assert_eq!(reply.as_deref(), Some("version=304 suite=1303"));
    });
}

#[test]
fn unknown_suites_and_no_versions_are_typed_errors() {
    let error = builder().cipher_suites(["RC4-MD5"]).build().unwrap_err();
    assert!(
        matches!(error, TlsError::UnknownCipherSuite { .. }),
        "{error:?}"
    );
    let error = builder().versions(&[]).build().unwrap_err();
    assert!(matches!(error, TlsError::NoProtocolVersion), "{error:?}");
}

#[test]
fn tls12_alone_with_no_suite_for_the_key_is_a_typed_error() {
    // The test certificate's key is ECDSA; these suites are for RSA keys.
    let rsa_only = ["ECDHE-RSA-AES128-GCM-SHA256"];
    let error = builder()
        .versions(&[TlsVersion::Tls12])
        .cipher_suites(rsa_only)
        .build()
        .unwrap_err();
    assert!(
        matches!(error, TlsError::NoUsableCipherSuite { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("ECDSA"), "{error}");
    // With TLS 1.3 offered too, its suites serve every key.
    assert!(builder().cipher_suites(rsa_only).build().is_ok());
}
