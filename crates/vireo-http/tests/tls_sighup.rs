//! SIGHUP reloads the TLS configuration from its files. In a test binary of its own: the signal
//! goes to the whole process.

use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{self, ClientConfig, DigitallySignedStruct, SignatureScheme};
use vireo_http::tls::TlsConfig;
use vireo_http::{service_fn, Response, Server};

/// Accepts any certificate: the test looks at which one was served.
#[derive(Debug)]
struct AnyCert(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn write_cert(dir: &std::path::Path) -> Vec<u8> {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::write(dir.join("key.pem"), made.signing_key.serialize_pem()).unwrap();
    std::fs::write(dir.join("chain.pem"), made.cert.pem()).unwrap();
    made.cert.der().to_vec()
}

#[test]
fn sighup_reloads_the_certificate_files() {
    let dir = tempfile::tempdir().unwrap();
    let first = write_cert(dir.path());
    let (chain, key) = (dir.path().join("chain.pem"), dir.path().join("key.pem"));
    let load = move || TlsConfig::from_pem_files(&chain, &key);
    let (ready, ready_rx) = std::sync::mpsc::channel();
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .tls(load().unwrap())
        .reload_tls_on_sighup(load)
        .handle_signals(true)
        .on_ready(move |_| ready.send(()).unwrap())
        .spawn(service_fn(|_req| Response::text("ok")))
        .unwrap();
    ready_rx.recv().unwrap();

    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let served = || {
        runtime.block_on(async {
            let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
            let name = ServerName::try_from("localhost").unwrap();
            let stream = connector.connect(name, tcp).await.unwrap();
            stream.get_ref().1.peer_certificates().unwrap()[0].to_vec()
        })
    };
    assert_eq!(served(), first);

    let second = write_cert(dir.path());
    let status = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // The signal is handled on the server's signal thread: wait for it, within a bound.
    let mut now_served = served();
    for _ in 0..600 {
        if now_served == second {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        now_served = served();
    }
    assert_eq!(now_served, second, "the reloaded certificate");
}
