//! Client certificates (mutual TLS): required or optional, checked against the authorities
//! given, and told to the service with the TLS version.

mod common;

use common::run;
use common::tls::{
    client_ca, client_ca_revoking_one, digest, presenting, request_over, self_signed,
    serve_reporting_tls, ClientCa,
};
use tokio_rustls::TlsConnector;
use vireo_http::tls::{ClientAuth, TlsCert, TlsConfig, TlsError};
use vireo_http::RunningServer;

fn serve(auth: ClientAuth) -> RunningServer {
    let cert = self_signed(&["localhost"]);
    let config = TlsConfig::builder()
        .default(TlsCert::from_pem(cert.chain_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap())
        .client_auth(auth)
        .build()
        .unwrap();
    serve_reporting_tls(config)
}

async fn request(server: &RunningServer, connector: &TlsConnector) -> Option<String> {
    request_over(connector, server.addr()).await
}

/// Client certificates signed by `ca`'s authority, checked against the revocation list given.
fn checked_against(ca: &ClientCa, crl_pem: &str) -> ClientAuth {
    ClientAuth::from_pem(ca.ca_pem.as_bytes())
        .unwrap()
        .crls_from_pem(crl_pem.as_bytes())
        .unwrap()
}

#[test]
fn a_required_client_certificate_must_be_shown_and_signed_by_the_authority() {
    let ours = client_ca();
    let theirs = client_ca();
    let server = serve(ClientAuth::from_pem(ours.ca_pem.as_bytes()).unwrap());
    run(async {
        let reply = request(&server, &presenting(Some(&ours))).await.unwrap();
        let told = format!("certs=1 first={}", digest(&ours.client_chain[0]));
        assert!(
            reply.ends_with(&told),
            "the service is told the client's certificate: {reply}"
        );
        let tls13_suites = ["suite=1301 ", "suite=1302 ", "suite=1303 "];
        assert!(reply.contains("version=304 "), "{reply}");
        assert!(tls13_suites.iter().any(|s| reply.contains(s)), "{reply}");
        assert_eq!(
            request(&server, &presenting(None)).await,
            None,
            "no certificate"
        );
        assert_eq!(
            request(&server, &presenting(Some(&theirs))).await,
            None,
            "a certificate from another authority"
        );
        let reply = request(&server, &presenting(Some(&ours))).await;
        assert!(reply.is_some(), "the server goes on after refusing clients");
    });
}

#[test]
fn an_optional_client_certificate_may_be_left_out_but_is_checked_when_shown() {
    let ours = client_ca();
    let theirs = client_ca();
    let auth = ClientAuth::from_pem(ours.ca_pem.as_bytes())
        .unwrap()
        .optional();
    assert!(!auth.is_required());
    let server = serve(auth);
    run(async {
        let shown = request(&server, &presenting(Some(&ours))).await.unwrap();
        let told = format!("certs=1 first={}", digest(&ours.client_chain[0]));
        assert!(shown.ends_with(&told), "{shown}");
        let none = request(&server, &presenting(None)).await.unwrap();
        assert!(none.ends_with("certs=0 first=0"), "{none}");
        assert_eq!(
            request(&server, &presenting(Some(&theirs))).await,
            None,
            "a certificate from another authority"
        );
    });
}

#[test]
fn an_authority_file_without_a_usable_certificate_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "no certificates here\n").unwrap();
    let error = ClientAuth::from_pem_file(&empty).unwrap_err();
    assert!(matches!(error, TlsError::NoCertificate { .. }), "{error:?}");
    assert!(error.to_string().contains("empty.pem"), "{error}");

    let error = ClientAuth::from_pem_file(dir.path().join("missing.pem")).unwrap_err();
    assert!(matches!(error, TlsError::Read { .. }), "{error:?}");

    let not_der = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    let error = ClientAuth::from_pem(not_der.as_bytes()).unwrap_err();
    assert!(
        matches!(error, TlsError::InvalidCaCertificate { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("certificate authority"),
        "{error}"
    );
}

#[test]
fn a_certificate_revocation_list_refuses_the_certificates_it_revokes() {
    let (good, revoked, crl_pem) = client_ca_revoking_one(false);
    let server = serve(checked_against(&good, &crl_pem));
    run(async {
        let reply = request(&server, &presenting(Some(&good))).await;
        assert!(reply.is_some(), "a certificate the list does not revoke");
        assert_eq!(
            request(&server, &presenting(Some(&revoked))).await,
            None,
            "a revoked certificate"
        );
    });
    // Without the list, the same certificate is accepted: it is the list that refuses it.
    let server = serve(ClientAuth::from_pem(good.ca_pem.as_bytes()).unwrap());
    run(async {
        assert!(request(&server, &presenting(Some(&revoked)))
            .await
            .is_some());
    });
}

#[test]
fn a_list_past_its_next_update_refuses_every_certificate_it_covers() {
    let (good, _, crl_pem) = client_ca_revoking_one(true);
    let server = serve(checked_against(&good, &crl_pem));
    run(async {
        assert_eq!(request(&server, &presenting(Some(&good))).await, None);
    });
}

#[test]
fn a_certificate_revocation_list_rustls_cannot_use_is_a_typed_error() {
    let ours = client_ca();
    let auth = ClientAuth::from_pem(ours.ca_pem.as_bytes()).unwrap();
    let not_a_list = "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n";
    let error = auth.crls_from_pem(not_a_list.as_bytes()).unwrap_err();
    assert!(matches!(error, TlsError::InvalidCrl { .. }), "{error:?}");
    assert!(
        error.to_string().contains("the revocation list PEM given"),
        "{error}"
    );
}

#[test]
fn a_certificate_revocation_list_file_without_a_list_is_a_typed_error() {
    let ours = client_ca();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("crl.pem");
    std::fs::write(&empty, &ours.ca_pem).unwrap();
    let auth = ClientAuth::from_pem(ours.ca_pem.as_bytes()).unwrap();
    let error = auth.clone().crls_from_pem_file(&empty).unwrap_err();
    assert!(matches!(error, TlsError::NoCrl { .. }), "{error:?}");
    assert!(error.to_string().contains("crl.pem"), "{error}");
    let error = auth
        .crls_from_pem_file(dir.path().join("missing.pem"))
        .unwrap_err();
    assert!(matches!(error, TlsError::Read { .. }), "{error:?}");
}
