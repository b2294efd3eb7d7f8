//! Middleware: app-wide, per router and per route; built-in and hand-written.
//!
//! ```text
//! RUST_LOG=info cargo run -p vireo --example middleware
//! curl -i localhost:8080/api/hello -H 'authorization: Bearer secret'
//! ```

use std::time::{Duration, Instant};
use vireo::http::StatusCode;
use vireo::middleware::{compression, cors, logger, request_id, timeout};
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
fn tracing_subscriber_init() {
    struct Stderr;
    impl tracing::Subscriber for Stderr {
        fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
            *meta.level() <= tracing::Level::INFO
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            struct Line(String);
            impl tracing::field::Visit for Line {
                fn record_debug(
                    &mut self,
                    field: &tracing::field::Field,
                    value: &dyn std::fmt::Debug,
                ) {
                    self.0.push_str(&format!(" {}={value:?}", field.name()));
                }
            }
            let mut line = Line(event.metadata().level().to_string());
            event.record(&mut line);
            eprintln!("{}", line.0);
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }
    let _ = tracing::subscriber::set_global_default(Stderr);
}
