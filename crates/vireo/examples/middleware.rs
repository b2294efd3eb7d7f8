//! Middleware: app-wide, per router and per route; built-in and hand-written.
//!
//! ```text
//! RUST_LOG=info cargo run -p vireo --example middleware
//! curl -i localhost:8080/api/hello -H 'authorization: Bearer secret'
//! ```

use std::time::{Duration, Instant};
use vireo::http::StatusCode;
use vireo::middleware::{compression, cors, logger, request_id, timeout, trace};
use vireo::{App, Next, Request, Router};

/// Answers 401 early unless the request carries the right token.
async fn require_token(req: Request, next: Next) -> vireo::Response {
    use vireo::IntoResponse;
    if req.header("authorization") != Some("Bearer secret") {
        return (StatusCode::UNAUTHORIZED, "missing or wrong token").into_response();
    }
    next.run(req).await
}

fn main() -> std::io::Result<()> {
    tracing_subscriber_init();
    let mut api = Router::new();
    api.r#use(require_token);
    api.get("/hello", |req: Request| {
        format!("hello from {}", req.path())
    });
    api.get("/slow", |_req| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        "finally"
    })
    .with(timeout(Duration::from_secs(1)));

    let mut app = App::new();
    app.r#use(logger());
    app.r#use(request_id());
    app.r#use(trace());
    app.r#use(cors());
    app.r#use(compression());
    app.r#use(|req: Request, next: Next| async move {
        let started = Instant::now();
        let mut res = next.run(req).await;
        let took = format!("{}us", started.elapsed().as_micros());
        res.headers_mut()
            .insert("x-response-time", took.parse().expect("ascii"));
        res
    });
    app.mount("/api", api);
    let server = vireo::Server::bind("127.0.0.1:8080")?;
    let server = server.on_ready(|addr| println!("listening on http://{addr}"));
    app.serve(server)
}

/// Print `tracing` events (the logger middleware's lines) to stderr.
/// Log to stderr through `tracing-subscriber`, at the level `RUST_LOG` asks for (`info` if unset).
fn tracing_subscriber_init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
}
