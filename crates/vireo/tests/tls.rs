//! An app served over TLS answers as over plain TCP, and its requests know they are secure.

#[path = "../../vireo-http/tests/common/tls.rs"]
mod tls_support;

use tls_support::{self_signed, trusting};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;
use vireo::tls::TlsConfig;
use vireo::{App, Next, Request, RunningServer, Server};

fn serve_tls(app: App, tls: TlsConfig) -> RunningServer {
    let service = app.into_service();
    Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .limits(service.limits().clone())
        .tls(tls)
        .spawn(service)
        .unwrap()
}

/// Send `requests` on a new TLS connection and read until the server closes it.
fn exchange(server: &RunningServer, connector: &TlsConnector, requests: &[u8]) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut stream = tls_support::connect(connector, server.addr(), "localhost")
            .await
            .unwrap();
        stream.write_all(requests).await.unwrap();
        let mut reply = Vec::new();
        let _ = stream.read_to_end(&mut reply).await;
        String::from_utf8(reply).unwrap()
    })
}

#[test]
fn an_app_answers_over_tls_and_sees_a_secure_request() {
    let made = self_signed(&["localhost"]);
    let tls = TlsConfig::from_pem(made.chain_pem.as_bytes(), made.key_pem.as_bytes()).unwrap();
    let mut app = App::new();
    app.r#use(|mut req: Request, next: Next| {
        req.set(req.is_secure());
        next.run(req)
    });
    app.get("/who", |req: Request| {
        format!(
            "secure={} seen-by-middleware={} peer={}",
            req.is_secure(),
            req.get::<bool>().copied().unwrap_or_default(),
            req.remote_addr().is_some()
        )
    });
    app.post("/echo", |req: Request| {
        format!("{} {}", req.is_secure(), req.text().unwrap_or_default())
    });
    let server = serve_tls(app, tls);
    let reply = exchange(
        &server,
        &trusting(&made, &[]),
        b"GET /who HTTP/1.1\r\nHost: localhost\r\n\r\n\
          POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\
          Connection: close\r\n\r\nhello",
    );
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    assert!(
        reply.contains("\r\n\r\nsecure=true seen-by-middleware=true peer=true"),
        "{reply}"
    );
    assert!(reply.ends_with("\r\n\r\ntrue hello"), "{reply}");
    assert_eq!(reply.matches("HTTP/1.1 200 OK").count(), 2, "{reply}");
}

#[test]
fn the_test_client_is_not_secure() {
    let mut app = App::new();
    app.get("/", |req: Request| req.is_secure().to_string());
    assert_eq!(vireo::TestClient::new(app).get("/").send().text(), "false");
}

#[test]
fn a_handler_sees_the_tls_session_and_the_client_certificate() {
    use tls_support::{client_ca, presenting};
    use vireo::tls::{ClientAuth, TlsCert};
    let made = self_signed(&["localhost"]);
    let clients = client_ca();
    let tls = TlsConfig::builder()
        .default(TlsCert::from_pem(made.chain_pem.as_bytes(), made.key_pem.as_bytes()).unwrap())
        .client_auth(
            ClientAuth::from_pem(clients.ca_pem.as_bytes())
                .unwrap()
                .optional(),
        )
        .build()
        .unwrap();
    let describe = |req: &Request| {
        let session = req.tls().expect("served over TLS");
        format!(
            "version={:x} client-certs={}",
            session.protocol_version(),
            session.peer_certificates().len()
        )
    };
    let mut app = App::new();
    app.get("/tls", move |req: Request| describe(&req));
    app.post("/tls", move |req: Request| describe(&req));
    let server = serve_tls(app, tls);
    for (client, certs) in [(Some(&clients), 1), (None, 0)] {
        let reply = exchange(
            &server,
            &presenting(client),
            b"GET /tls HTTP/1.1\r\nHost: localhost\r\n\r\n\
              POST /tls HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\
              Connection: close\r\n\r\nhi",
        );
        let told = format!("\r\n\r\nversion=304 client-certs={certs}");
        assert_eq!(reply.matches(&told).count(), 2, "GET and POST: {reply}");
    }
}

#[test]
fn the_test_client_has_no_tls_session() {
    let mut app = App::new();
    app.get("/", |req: Request| req.tls().is_none().to_string());
    assert_eq!(vireo::TestClient::new(app).get("/").send().text(), "true");
}
