//! TLS for the tests: self-signed certificates, and clients that trust one of them or any.
//! The framework's tests include this file too.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::crypto::{
    aws_lc_rs, verify_tls12_signature, verify_tls13_signature, CryptoProvider,
};
use tokio_rustls::rustls::pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime,
};
use tokio_rustls::rustls::{
    self, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    SupportedProtocolVersion,
};
use tokio_rustls::TlsConnector;

/// A self-signed certificate and its key.
pub struct SelfSigned {
    pub chain_pem: String,
    pub key_pem: String,
    pub der: Vec<u8>,
}

/// A self-signed certificate for `names`.
pub fn self_signed(names: &[&str]) -> SelfSigned {
    let names = names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let made = rcgen::generate_simple_self_signed(names).unwrap();
    SelfSigned {
        chain_pem: made.cert.pem(),
        key_pem: made.signing_key.serialize_pem(),
        der: made.cert.der().to_vec(),
    }
}

/// A client that trusts only `cert`, offering `alpn`.
pub fn trusting(cert: &SelfSigned, alpn: &[&[u8]]) -> TlsConnector {
    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from(cert.der.clone())).unwrap();
    let mut config = ClientConfig::builder_with_provider(Arc::new(aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    TlsConnector::from(Arc::new(config))
}

/// A client that accepts any certificate (for tests that look at which one was served),
/// speaking `versions` and offering `alpn`.
pub fn accepting_any(
    versions: &[&'static SupportedProtocolVersion],
    alpn: &[&[u8]],
) -> TlsConnector {
    let provider = Arc::new(aws_lc_rs::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    TlsConnector::from(Arc::new(config))
}

/// A certificate authority, and a client certificate it signed.
pub struct ClientCa {
    pub ca_pem: String,
    pub client_chain: Vec<CertificateDer<'static>>,
    pub client_key_der: Vec<u8>,
}

/// A new certificate authority for client certificates and one client certificate from it.
pub fn client_ca() -> ClientCa {
    client_cert(&client_authority(), None)
}

/// A new self-signed certificate authority.
fn client_authority() -> rcgen::CertifiedIssuer<'static, rcgen::KeyPair> {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// A client certificate `ca` signs, with this serial number if given.
fn client_cert(
    ca: &rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
    serial: Option<u64>,
) -> ClientCa {
    use rcgen::{CertificateParams, ExtendedKeyUsagePurpose, KeyPair, SerialNumber};
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.serial_number = serial.map(SerialNumber::from);
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, ca).unwrap();
    ClientCa {
        ca_pem: ca.pem(),
        client_chain: vec![cert.der().clone()],
        client_key_der: key.serialize_der(),
    }
}

/// A certificate authority with two client certificates, the second revoked by the
/// certificate revocation list (PEM) that comes third, whose next update was due in 2021 when
/// `expired`.
pub fn client_ca_revoking_one(expired: bool) -> (ClientCa, ClientCa, String) {
    use rcgen::{
        date_time_ymd, CertificateRevocationListParams, KeyIdMethod, RevokedCertParams,
        SerialNumber,
    };
    let ca = client_authority();
    let crl = CertificateRevocationListParams {
        this_update: date_time_ymd(2020, 1, 1),
        next_update: date_time_ymd(if expired { 2021 } else { 2100 }, 1, 1),
        crl_number: SerialNumber::from(1u64),
        issuing_distribution_point: None,
        revoked_certs: vec![RevokedCertParams {
            serial_number: SerialNumber::from(2u64),
            revocation_time: date_time_ymd(2020, 1, 1),
            reason_code: None,
            invalidity_date: None,
        }],
        key_identifier_method: KeyIdMethod::Sha256,
    }
    .signed_by(&ca)
    .unwrap();
    (
        client_cert(&ca, Some(1)),
        client_cert(&ca, Some(2)),
        crl.pem().unwrap(),
    )
}

/// A server that answers every request with what its TLS session negotiated:
/// `version=<hex> suite=<hex> certs=<client certificates> first=<digest of the first>`.
pub fn serve_reporting_tls(config: vireo_http::tls::TlsConfig) -> vireo_http::RunningServer {
    use vireo_http::{service_fn, Request, Response, Server};
    Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .tls(config)
        .spawn(service_fn(|req: Request<'_>| {
            let tls = req.tls().expect("a TLS connection has its session");
            Response::text(format!(
                "version={:x} suite={:x} certs={} first={}",
                tls.protocol_version(),
                tls.cipher_suite(),
                tls.peer_certificates().len(),
                tls.peer_certificates().first().map_or(0, |c| digest(c))
            ))
        }))
        .unwrap()
}

/// The same for the same bytes, within this test process.
pub fn digest(bytes: &[u8]) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// One request on a new connection: the whole response, or `None` when the server refused the
/// connection (in the handshake, or, with TLS 1.3, by an alert before any response).
pub async fn request_over(connector: &TlsConnector, addr: SocketAddr) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = connect(connector, addr, "localhost").await.ok()?;
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.ok()?;
    (!reply.is_empty()).then_some(reply)
}

/// A client that accepts any server certificate and shows `client`'s certificate, or none.
pub fn presenting(client: Option<&ClientCa>) -> TlsConnector {
    let provider = Arc::new(aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(provider)));
    let mut config = match client {
        Some(client) => builder
            .with_client_auth_cert(
                client.client_chain.clone(),
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(client.client_key_der.clone())),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    TlsConnector::from(Arc::new(config))
}

/// Open a TLS connection to `addr`, asking for the server name `name`.
pub async fn connect(
    connector: &TlsConnector,
    addr: SocketAddr,
    name: &str,
) -> io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from(name.to_owned()).unwrap();
    connector.connect(name, tcp).await
}

/// The certificate the server presented on `stream`.
pub fn served_cert(stream: &TlsStream<TcpStream>) -> Vec<u8> {
    stream.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

/// Accepts any certificate, but checks the handshake's signatures as a real client would.
#[derive(Debug)]
struct AnyCert(Arc<CryptoProvider>);

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
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
