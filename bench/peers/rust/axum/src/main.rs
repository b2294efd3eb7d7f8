//! axum peer: the benchmark routes on a current_thread tokio runtime (one core).
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
use serde::{Deserialize, Serialize};

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
