//! Serving HTTPS: requests over TLS 1.3 and 1.2, ALPN, certificates chosen by SNI, reloading,
//! the handshake timeout and cap, typed configuration errors, and plain HTTP sent to the TLS port.

mod common;

use common::run;
use common::tls::{accepting_any, connect, self_signed, served_cert, SelfSigned};
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::PrivateKeyDer;
use tokio_rustls::TlsConnector;
use vireo_http::tls::{PemSource, TlsCert, TlsConfig, TlsError};
use vireo_http::{service_fn, Limits, Request, Response, RunningServer, Server};

fn tls_cert(cert: &SelfSigned) -> TlsCert {
    TlsCert::from_pem(cert.chain_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap()
}

fn scheme(req: Request<'_>) -> Response {
    Response::text(if req.is_secure() { "https" } else { "http" })
}

fn serve(config: TlsConfig, limits: Limits) -> RunningServer {
    Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .limits(limits)
        .tls(config)
        .spawn(service_fn(scheme))
        .unwrap()
}

fn client(versions: &[&'static rustls::SupportedProtocolVersion], alpn: &[&[u8]]) -> TlsConnector {
    accepting_any(versions, alpn)
}

fn default_client() -> TlsConnector {
    accepting_any(rustls::DEFAULT_VERSIONS, &[b"http/1.1"])
}

/// One keep-alive request; the response's body.
async fn get(stream: &mut TlsStream<TcpStream>) -> String {
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before a whole response");
        reply.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&reply);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .expect("a content-length")
                .parse()
                .unwrap();
            if body.len() >= length {
                return body.to_owned();
            }
        }
    }
}

#[test]
fn answers_over_tls_1_3_and_1_2_and_says_the_request_is_secure() {
    let cert = self_signed(&["localhost"]);
    let server = serve(TlsConfig::from_cert(tls_cert(&cert)), Limits::default());
    run(async {
        for (version, expected) in [
            (&rustls::version::TLS13, rustls::ProtocolVersion::TLSv1_3),
            (&rustls::version::TLS12, rustls::ProtocolVersion::TLSv1_2),
        ] {
            let connector = client(&[version], &[b"http/1.1"]);
            let mut stream = connect(&connector, server.addr(), "localhost")
                .await
                .unwrap();
            assert_eq!(stream.get_ref().1.protocol_version(), Some(expected));
            assert_eq!(served_cert(&stream), cert.der);
            assert_eq!(get(&mut stream).await, "https");
            assert_eq!(get(&mut stream).await, "https", "kept alive");
        }
    });
}

#[test]
fn a_plain_server_says_the_request_is_not_secure() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .spawn(service_fn(scheme))
        .unwrap();
    run(async {
        let mut tcp = TcpStream::connect(server.addr()).await.unwrap();
        tcp.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut reply = String::new();
        tcp.read_to_string(&mut reply).await.unwrap();
        assert!(reply.ends_with("\r\n\r\nhttp"), "{reply}");
    });
}

#[test]
fn alpn_prefers_h2_and_refuses_a_client_with_no_protocol_in_common() {
    let cert = self_signed(&["localhost"]);
    let server = serve(TlsConfig::from_cert(tls_cert(&cert)), Limits::default());
    run(async {
        // The tests build with the `http2` feature, so `h2` is offered first.
        let both = client(rustls::DEFAULT_VERSIONS, &[b"h2", b"http/1.1"]);
        let stream = connect(&both, server.addr(), "localhost").await.unwrap();
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));

        let http1 = client(rustls::DEFAULT_VERSIONS, &[b"http/1.1"]);
        let mut stream = connect(&http1, server.addr(), "localhost").await.unwrap();
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
        assert_eq!(get(&mut stream).await, "https");

        let none = client(rustls::DEFAULT_VERSIONS, &[]);
        let mut stream = connect(&none, server.addr(), "localhost").await.unwrap();
        assert_eq!(stream.get_ref().1.alpn_protocol(), None);
        assert_eq!(get(&mut stream).await, "https", "ALPN is optional");

        let h3_only = client(rustls::DEFAULT_VERSIONS, &[b"h3"]);
        let refused = connect(&h3_only, server.addr(), "localhost").await;
        assert!(refused.is_err(), "no protocol in common");
    });
}

#[test]
fn sni_picks_the_certificate_for_the_name_asked_for() {
    let a = self_signed(&["a.example"]);
    let b = self_signed(&["x.b.example"]);
    let fallback = self_signed(&["localhost"]);
    let config = TlsConfig::builder()
        .sni("a.example", tls_cert(&a))
        .sni("*.b.example", tls_cert(&b))
        .default(tls_cert(&fallback))
        .build()
        .unwrap();
    let server = serve(config, Limits::default());
    run(async {
        let connector = default_client();
        for (name, expected) in [
            ("a.example", &a.der),
            ("A.EXAMPLE", &a.der),
            ("x.b.example", &b.der),
            ("c.example", &fallback.der),
            // An IP address is not sent as SNI.
            ("127.0.0.1", &fallback.der),
        ] {
            let mut stream = connect(&connector, server.addr(), name).await.unwrap();
            assert_eq!(&served_cert(&stream), expected, "for {name}");
            assert_eq!(get(&mut stream).await, "https");
        }
    });
}

#[test]
fn without_a_default_a_name_without_a_certificate_fails_the_handshake() {
    let a = self_signed(&["a.example"]);
    let config = TlsConfig::builder()
        .sni("a.example", tls_cert(&a))
        .build()
        .unwrap();
    let server = serve(config, Limits::default());
    run(async {
        let connector = default_client();
        assert!(connect(&connector, server.addr(), "a.example")
            .await
            .is_ok());
        assert!(connect(&connector, server.addr(), "z.example")
            .await
            .is_err());
    });
}

#[test]
fn reload_serves_new_connections_the_new_certificate_and_keeps_open_ones() {
    let old = self_signed(&["localhost"]);
    let new = self_signed(&["localhost"]);
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(2)
        .tls(TlsConfig::from_cert(tls_cert(&old)));
    let handle = server.tls_handle().expect("TLS is on");
    let server = server.spawn(service_fn(scheme)).unwrap();
    run(async {
        let connector = default_client();
        let mut kept = connect(&connector, server.addr(), "localhost")
            .await
            .unwrap();
        assert_eq!(served_cert(&kept), old.der);
        assert_eq!(get(&mut kept).await, "https");

        handle.reload(TlsConfig::from_cert(tls_cert(&new)));
        for _ in 0..4 {
            let mut fresh = connect(&connector, server.addr(), "localhost")
                .await
                .unwrap();
            assert_eq!(served_cert(&fresh), new.der);
            assert_eq!(get(&mut fresh).await, "https");
        }
        assert_eq!(get(&mut kept).await, "https", "the open connection goes on");
        assert_eq!(served_cert(&kept), old.der);
    });
}

/// Read until the server closes; `Ok` with what it sent, or the error that ended it.
async fn read_until_closed(tcp: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut got = Vec::new();
    tcp.read_to_end(&mut got).await.map(|_| got)
}

#[test]
fn a_silent_client_is_closed_after_the_handshake_timeout() {
    let cert = self_signed(&["localhost"]);
    let limits = Limits {
        tls_handshake_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let server = serve(TlsConfig::from_cert(tls_cert(&cert)), limits);
    run(async {
        let mut silent = TcpStream::connect(server.addr()).await.unwrap();
        // Closed by the server: the end of the stream (or a reset), not the test's bound.
        let closed = read_until_closed(&mut silent).await;
        assert!(closed.map_or(true, |sent| sent.is_empty()));
        let mut stream = connect(&default_client(), server.addr(), "localhost")
            .await
            .unwrap();
        assert_eq!(get(&mut stream).await, "https");
    });
}

#[test]
fn handshakes_beyond_the_cap_wait_for_one_to_end() {
    let cert = self_signed(&["localhost"]);
    let limits = Limits {
        max_tls_handshakes_per_worker: 1,
        ..Limits::default()
    };
    let server = serve(TlsConfig::from_cert(tls_cert(&cert)), limits);
    run(async {
        // Takes the worker's one handshake slot, and holds it by sending nothing.
        let silent = TcpStream::connect(server.addr()).await.unwrap();
        let addr = server.addr();
        let waiting = tokio::spawn(async move {
            let mut stream = connect(&default_client(), addr, "localhost").await.unwrap();
            get(&mut stream).await
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!waiting.is_finished(), "a second handshake ran at once");
        drop(silent);
        assert_eq!(waiting.await.unwrap(), "https");
    });
}

#[test]
fn plain_http_to_the_tls_port_is_closed_and_the_server_goes_on() {
    let cert = self_signed(&["localhost"]);
    let server = serve(TlsConfig::from_cert(tls_cert(&cert)), Limits::default());
    run(async {
        let mut plain = TcpStream::connect(server.addr()).await.unwrap();
        plain
            .write_all(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
            .await
            .unwrap();
        if let Ok(sent) = read_until_closed(&mut plain).await {
            // At most a TLS alert record (content type 21), never an HTTP answer.
            assert!(sent.is_empty() || sent[0] == 21, "{sent:?}");
        }
        let mut stream = connect(&default_client(), server.addr(), "localhost")
            .await
            .unwrap();
        assert_eq!(get(&mut stream).await, "https");
    });
}

#[test]
fn configuration_errors_are_typed_and_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let SelfSigned {
        chain_pem: cert_pem,
        key_pem,
        ..
    } = self_signed(&["localhost"]);
    let other_key_pem = self_signed(&["localhost"]).key_pem;
    let cert = dir.path().join("chain.pem");
    let key = dir.path().join("key.pem");
    let other_key = dir.path().join("other-key.pem");
    let garbage = dir.path().join("garbage.pem");
    let broken = dir.path().join("broken.pem");
    std::fs::write(&cert, &cert_pem).unwrap();
    std::fs::write(&key, &key_pem).unwrap();
    std::fs::write(&other_key, &other_key_pem).unwrap();
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\nMIIB\n").unwrap();
    let missing = dir.path().join("missing.pem");

    assert!(TlsConfig::from_pem_files(&cert, &key).is_ok());

    let error = TlsConfig::from_pem_files(&missing, &key).unwrap_err();
    assert!(matches!(&error, TlsError::Read { path, error }
        if path == &missing && error.kind() == io::ErrorKind::NotFound));
    assert!(error.to_string().contains("missing.pem"), "{error}");

    let error = TlsConfig::from_pem_files(&garbage, &key).unwrap_err();
    assert!(
        matches!(&error, TlsError::NoCertificate { source: PemSource::File(p) } if p == &garbage)
    );
    assert!(error.to_string().contains("garbage.pem"), "{error}");
    assert!(error.to_string().contains("no certificate"), "{error}");

    let error = TlsConfig::from_pem_files(&broken, &key).unwrap_err();
    assert!(matches!(&error, TlsError::Pem { source: PemSource::File(p), .. } if p == &broken));
    assert!(error.to_string().contains("broken.pem"), "{error}");

    let error = TlsConfig::from_pem_files(&cert, &cert).unwrap_err();
    assert!(matches!(&error, TlsError::NoPrivateKey { source: PemSource::File(p) } if p == &cert));
    assert!(error.to_string().contains("no private key"), "{error}");

    let error = TlsConfig::from_pem_files(&cert, &other_key).unwrap_err();
    assert!(matches!(&error, TlsError::KeyMismatch { .. }));
    let message = error.to_string();
    assert!(
        message.contains("other-key.pem") && message.contains("chain.pem"),
        "{message}"
    );
    assert!(message.contains("does not match"), "{message}");

    let error = TlsConfig::from_pem(cert_pem.as_bytes(), b"").unwrap_err();
    assert!(matches!(
        &error,
        TlsError::NoPrivateKey {
            source: PemSource::Memory { certificate: false }
        }
    ));

    let error = TlsConfig::builder()
        .sni(
            "not a name",
            TlsCert::from_pem(cert_pem.as_bytes(), key_pem.as_bytes()).unwrap(),
        )
        .build()
        .unwrap_err();
    assert!(matches!(&error, TlsError::InvalidServerName { name } if name == "not a name"));

    assert!(matches!(
        TlsConfig::builder().build().unwrap_err(),
        TlsError::NoCertificates
    ));

    let mut h2 = (**TlsConfig::from_pem_files(&cert, &key)
        .unwrap()
        .rustls_config())
    .clone();
    h2.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    assert!(
        TlsConfig::from_rustls(Arc::new(h2.clone())).is_ok(),
        "h2 with `http2`"
    );
    h2.alpn_protocols = vec![b"h3".to_vec(), b"http/1.1".to_vec()];
    let error = TlsConfig::from_rustls(Arc::new(h2)).unwrap_err();
    assert!(matches!(&error, TlsError::UnsupportedAlpn { protocol } if protocol == "h3"));

    let io_error: io::Error = TlsConfig::from_pem_files(&cert, &other_key)
        .unwrap_err()
        .into();
    assert_eq!(io_error.kind(), io::ErrorKind::InvalidInput);
}

/// `key_pem` (PKCS#8) encrypted with `password` as `openssl pkcs8 -topk8` does: PBES2 with
/// PBKDF2-SHA256 and AES-256-CBC; with `cipher_oid_last` in place of the last byte of
/// AES-256-CBC's object identifier (`42`), to name another cipher.
fn encrypt_key(key_pem: &str, password: &[u8], cipher_oid_last: u8) -> String {
    use pkcs8::der::pem::LineEnding;
    use pkcs8::pkcs5::pbes2;
    let der = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let info = pkcs8::PrivateKeyInfo::try_from(der.secret_der()).unwrap();
    let params = pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, b"saltsalt", &[7; 16]).unwrap();
    let mut encrypted = info
        .encrypt_with_params(params, password)
        .unwrap()
        .as_bytes()
        .to_vec();
    let aes_256_cbc = [
        0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 42,
    ];
    let at = encrypted
        .windows(aes_256_cbc.len())
        .position(|w| w == aes_256_cbc)
        .unwrap();
    encrypted[at + aes_256_cbc.len() - 1] = cipher_oid_last;
    pkcs8::der::pem::encode_string("ENCRYPTED PRIVATE KEY", LineEnding::LF, &encrypted).unwrap()
}

#[test]
fn an_encrypted_private_key_is_loaded_with_its_password_and_refused_without() {
    let cert = self_signed(&["localhost"]);
    let encrypted = encrypt_key(&cert.key_pem, b"s3cret", 42);
    assert!(encrypted.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
    let chain = cert.chain_pem.as_bytes();

    let loaded = TlsCert::from_pem_with_password(chain, encrypted.as_bytes(), b"s3cret").unwrap();
    assert_eq!(loaded.end_entity_der(), cert.der);
    let server = serve(TlsConfig::from_cert(loaded), Limits::default());
    run(async {
        let mut stream = connect(&default_client(), server.addr(), "localhost")
            .await
            .unwrap();
        assert_eq!(get(&mut stream).await, "https");
    });

    let error = TlsCert::from_pem_with_password(chain, encrypted.as_bytes(), b"wrong").unwrap_err();
    assert!(matches!(error, TlsError::KeyPassword { .. }), "{error:?}");
    assert!(error.to_string().contains("wrong password"), "{error}");

    let error = TlsCert::from_pem(chain, encrypted.as_bytes()).unwrap_err();
    assert!(matches!(error, TlsError::EncryptedKey { .. }), "{error:?}");
    assert!(error.to_string().contains("give its password"), "{error}");

    let plain = TlsCert::from_pem_with_password(chain, cert.key_pem.as_bytes(), b"unused");
    assert!(
        plain.is_ok(),
        "a key that is not encrypted needs no password"
    );

    // AES-256-GCM (2.16.840.1.101.3.4.1.46) is not a PBES2 cipher this supports.
    let gcm = encrypt_key(&cert.key_pem, b"s3cret", 46);
    let error = TlsCert::from_pem_with_password(chain, gcm.as_bytes(), b"s3cret").unwrap_err();
    assert!(matches!(error, TlsError::EncryptedKey { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("not supported") && message.contains("-v2prf hmacWithSHA256"),
        "{message}"
    );

    let legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\
                  DEK-Info: AES-256-CBC,00000000000000000000000000000000\n\nAAAA\n\
                  -----END RSA PRIVATE KEY-----\n";
    let error = TlsCert::from_pem_with_password(chain, legacy.as_bytes(), b"x").unwrap_err();
    assert!(matches!(error, TlsError::EncryptedKey { .. }), "{error:?}");
    assert!(
        error.to_string().contains("openssl pkcs8 -topk8"),
        "{error}"
    );
}

fn serve_without_half_close() -> RunningServer {
    let cert = self_signed(&["localhost"]);
    common::serve_with(
        Server::bind("127.0.0.1:0")
            .unwrap()
            .half_close(false)
            .tls(TlsConfig::from_cert(tls_cert(&cert))),
    )
}

/// Read from `stream` until what was read holds `text`.
async fn read_until(stream: &mut TlsStream<TcpStream>, text: &str) {
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains(text) {
        let mut chunk = [0u8; 1024];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the connection closed before {text:?}");
        seen.extend_from_slice(&chunk[..n]);
    }
}

/// Wait until `counter` reaches `count`.
fn wait_for_count(counter: &std::sync::atomic::AtomicUsize, count: usize, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while counter.load(std::sync::atomic::Ordering::SeqCst) < count {
        assert!(std::time::Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Without half-closes, as over TCP: a pipelined request behind a slow one is not a close,
/// and a client that leaves (sending `close_notify`) while a service works on its request,
/// with or without a body it has read, cancels that work.
#[test]
fn without_half_close_a_tls_client_that_leaves_cancels_the_work_on_its_request() {
    let server = serve_without_half_close();
    run(async {
        let mut stream = connect(&default_client(), server.addr(), "localhost")
            .await
            .unwrap();
        let pipelined =
            b"GET /slow?100 HTTP/1.1\r\nHost: t\r\n\r\nGET /next HTTP/1.1\r\nHost: t\r\n\r\n";
        stream.write_all(pipelined).await.unwrap();
        read_until(&mut stream, "GET /next").await;
        stream
            .write_all(b"GET /until-dropped HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let dropped = common::DROPPED.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(dropped, 0, "the work goes on while the client stays");
        stream.shutdown().await.unwrap();
    });
    wait_for_count(&common::DROPPED, 1, "the request was never dropped");
    // With a body the service has read, the close is seen the same way.
    run(async {
        let mut stream = connect(&default_client(), server.addr(), "localhost")
            .await
            .unwrap();
        stream
            .write_all(b"POST /until-dropped HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let dropped = common::DROPPED.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(dropped, 1, "the work goes on while the client stays");
        stream.shutdown().await.unwrap();
    });
    wait_for_count(
        &common::DROPPED,
        2,
        "the request with a body was never dropped",
    );
}

/// Without half-closes, a client that leaves over TLS (with a `close_notify`, or by dropping
/// the connection without one) ends a streamed body that waits on its producer.
#[test]
fn without_half_close_a_tls_client_that_leaves_ends_a_streamed_body_waiting_on_its_producer() {
    let server = serve_without_half_close();
    for (left, close_notify) in [(1, true), (2, false)] {
        run(async {
            let mut stream = connect(&default_client(), server.addr(), "localhost")
                .await
                .unwrap();
            stream
                .write_all(b"GET /stream-until-dropped HTTP/1.1\r\nHost: t\r\n\r\n")
                .await
                .unwrap();
            read_until(&mut stream, "first").await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            let dropped = common::STREAMS_DROPPED.load(std::sync::atomic::Ordering::SeqCst);
            assert_eq!(dropped, left - 1, "the body waits while the client stays");
            if close_notify {
                stream.shutdown().await.unwrap();
            }
        });
        let what = format!("the body was never dropped (close_notify: {close_notify})");
        wait_for_count(&common::STREAMS_DROPPED, left, &what);
    }
}
