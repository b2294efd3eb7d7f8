//! hyper peer: hyper 1.x's HTTP/1 server on a current_thread tokio runtime, with
//! hand-written routing, since hyper has no router or middleware of its own.
//!
//! ```text
//! hyper PORT                         HTTP/1.1
//! hyper PORT --h2c                   HTTP/1.1 and HTTP/2 with prior knowledge (hyper-util's auto builder)
//! hyper PORT --tls CERT.pem KEY.pem  HTTPS with tokio-rustls, HTTP/2 or HTTP/1.1 by ALPN
//! ```
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Serialize;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

type Res = Response<Full<Bytes>>;

/// Marks stored on the request by the two "middlewares"; the /users handler reads both.
#[derive(Clone)]
struct One(bool);
#[derive(Clone)]
struct Two(bool);

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

// The two middlewares: plain functions over the request, run before routing.
fn first(mut req: Request<Incoming>) -> Request<Incoming> {
    req.extensions_mut().insert(One(true));
    req
}

fn second(mut req: Request<Incoming>) -> Request<Incoming> {
    req.extensions_mut().insert(Two(true));
    req
}

fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Res {
    let mut res = Response::new(Full::new(body.into()));
    *res.status_mut() = status;
    if !content_type.is_empty() {
        res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    res
}

fn text(body: impl Into<Bytes>) -> Res {
    respond(StatusCode::OK, "text/plain", body)
}

async fn route(req: Request<Incoming>) -> Result<Res, Infallible> {
    let path = req.uri().path();
    let res = match path {
        "/" => text("Hello, World!"),
        "/json" => {
            let body = serde_json::to_vec(&Message { message: "Hello, World!" }).unwrap();
            respond(StatusCode::OK, "application/json", body)
        }
        "/favicon.ico" => respond(StatusCode::NO_CONTENT, "", Bytes::new()),
        "/compute" => {
            // black_box keeps LLVM from folding the loop into a constant at compile time.
            let n = std::hint::black_box(1000u64);
            text((0..n).map(|i| i * i).sum::<u64>().to_string())
        }
        "/async" => {
            let ms = req
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("ms=")))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            text(format!("waited {ms}"))
        }
        _ => match path.strip_prefix("/users/") {
            Some(id) if !id.is_empty() && !id.contains('/') => {
                let ext = req.extensions();
                match (ext.get::<One>(), ext.get::<Two>()) {
                    (Some(One(true)), Some(Two(true))) => text(format!("User: {id}")),
                    _ => respond(StatusCode::INTERNAL_SERVER_ERROR, "", Bytes::new()),
                }
            }
            _ => respond(StatusCode::NOT_FOUND, "text/plain", "Not Found"),
        },
    };
    Ok(res)
}

/// How the peer serves, from its arguments after the port.
enum Mode {
    Http1,
    H2c,
    Tls(TlsAcceptor),
}

fn mode() -> Mode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => Mode::Http1,
        ["--h2c"] => Mode::H2c,
        ["--tls", cert, key] => Mode::Tls(acceptor(cert, key)),
        _ => panic!("usage: hyper PORT [--h2c | --tls CERT.pem KEY.pem]"),
    }
}

/// A TLS acceptor for one PEM certificate chain and key, offering h2 and http/1.1 by ALPN.
fn acceptor(cert: &str, key: &str) -> TlsAcceptor {
    let chain = CertificateDer::pem_file_iter(cert)
        .expect("certificate file")
        .collect::<Result<Vec<_>, _>>()
        .expect("certificate PEM");
    let key = PrivateKeyDer::from_pem_file(key).expect("key PEM");
    let mut config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("certificate and key");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}

fn port() -> u16 {
    std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mode = mode();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port())).await.expect("bind");
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        // Same as the axum peer (which is hyper underneath): no Nagle delay.
        let _ = tcp.set_nodelay(true);
        let service = service_fn(|req| route(second(first(req))));
        match &mode {
            Mode::Http1 => {
                tokio::spawn(async move {
                    let _ = http1::Builder::new()
                        // Gather the responses to pipelined requests into one write, as
                        // hyper's own TechEmpower entry does.
                        .pipeline_flush(true)
                        .serve_connection(TokioIo::new(tcp), service)
                        .await;
                });
            }
            Mode::H2c => {
                tokio::spawn(async move {
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tcp), service)
                        .await;
                });
            }
            Mode::Tls(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        }
    }
}
