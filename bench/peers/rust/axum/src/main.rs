//! axum peer: the benchmark routes on a current_thread tokio runtime (one core).
//!
//! ```text
//! axum PORT                         HTTP/1.1 (and h2c) with axum::serve
//! axum PORT --tls CERT.pem KEY.pem  HTTPS with tokio-rustls, HTTP/2 or HTTP/1.1 by ALPN
//! ```
use std::sync::Arc;
use std::time::Duration;

use axum::{
    extract::{Path, Query, Request},
    http::{header, StatusCode},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
    serve::ListenerExt,
    Extension, Json, Router,
};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::{Deserialize, Serialize};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// Marks stored on the request by the two middlewares; the /users handler reads both.
#[derive(Clone)]
struct One(bool);
#[derive(Clone)]
struct Two(bool);

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Deserialize)]
struct Wait {
    ms: Option<u64>,
}

async fn first(mut req: Request, next: Next) -> Response {
    req.extensions_mut().insert(One(true));
    next.run(req).await
}

async fn second(mut req: Request, next: Next) -> Response {
    req.extensions_mut().insert(Two(true));
    next.run(req).await
}

async fn user(
    Path(id): Path<String>,
    Extension(one): Extension<One>,
    Extension(two): Extension<Two>,
) -> Response {
    if one.0 && two.0 {
        format!("User: {id}").into_response()
    } else {
        StatusCode::INTERNAL_SERVER_ERROR.into_response()
    }
}

async fn compute() -> String {
    // black_box keeps LLVM from folding the loop into a constant at compile time.
    let n = std::hint::black_box(1000u64);
    (0..n).map(|i| i * i).sum::<u64>().to_string()
}

async fn wait(Query(q): Query<Wait>) -> String {
    let ms = q.ms.unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("waited {ms}")
}

fn port() -> u16 {
    std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080)
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

/// What axum::serve does, with a TLS handshake before hyper takes the connection.
async fn serve_tls(app: Router, acceptor: TlsAcceptor) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port())).await.expect("bind");
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        let _ = tcp.set_nodelay(true);
        let (acceptor, app) = (acceptor.clone(), app.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else { return };
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(tls), TowerToHyperService::new(app))
                .await;
        });
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let app = Router::new()
        .route("/", get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "Hello, World!") }))
        .route("/json", get(|| async { Json(Message { message: "Hello, World!" }) }))
        .route("/users/{id}", get(user))
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/compute", get(compute))
        .route("/async", get(wait))
        // Layers wrap outside-in: `second` is added last so it runs first; order does not matter here.
        .layer(middleware::from_fn(first))
        .layer(middleware::from_fn(second));

    let args: Vec<String> = std::env::args().skip(2).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => {}
        ["--tls", cert, key] => return serve_tls(app, acceptor(cert, key)).await,
        _ => panic!("usage: axum PORT [--tls CERT.pem KEY.pem]"),
    }

    // axum::serve leaves Nagle's algorithm on for accepted sockets. A response
    // written in two pieces (head, then body) could then wait for the client's
    // delayed ACK, so we set TCP_NODELAY as axum's own docs show; the other
    // peers either do the same by default or write each response in one piece.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port()))
        .await
        .expect("bind")
        .tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
    axum::serve(listener, app).await.expect("serve");
}
