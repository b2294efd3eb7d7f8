//! tower-http layers as Vireo middleware, next to the same work done natively.
//!
//! ```text
//! cargo run --release -p vireo --example tower_layers -- --addr 127.0.0.1:8080 [--native]
//! ```
//!
//! `GET /` answers `Hello, World!` with an `x-served-by: vireo` response header, set by tower-http's
//! `SetResponseHeaderLayer`, or with `--native` by the equivalent Vireo middleware, so the two
//! paths can be measured against each other. Logs go to stderr at the level `RUST_LOG` sets
//! (`warn` by default).

use vireo::http::{HeaderName, HeaderValue};
use vireo::{App, Next, Request, Server};

const SERVED_BY: HeaderName = HeaderName::from_static("x-served-by");

fn app(native: bool) -> App {
    let mut app = App::new();
    if native {
        app.r#use(|req: Request, next: Next| async move {
            let mut res = next.run(req).await;
            res.headers_mut()
                .insert(SERVED_BY, HeaderValue::from_static("vireo"));
            res
        });
    } else {
        app.r#use(vireo::tower::layer(
            tower_http::set_header::SetResponseHeaderLayer::overriding(
                SERVED_BY,
                HeaderValue::from_static("vireo"),
            ),
        ));
    }
    app.get("/", |_req| "Hello, World!");
    app
}

fn main() -> std::io::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let mut addr = String::from("127.0.0.1:8080");
    let mut workers = None;
    let mut native = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--native" => native = true,
            "--addr" => {
                addr = args
                    .next()
                    .unwrap_or_else(|| usage("--addr takes HOST:PORT"))
            }
            "--workers" => match args.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if n > 0 => workers = Some(n),
                _ => usage("--workers takes a positive number"),
            },
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    let mut server = Server::bind(&addr)?;
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    let server = server.on_ready(|addr| println!("listening on {addr}"));
    app(native).serve(server)
}

fn usage(problem: &str) -> ! {
    eprintln!("{problem}\nusage: tower_layers [--addr HOST:PORT] [--workers N] [--native]");
    std::process::exit(2);
}
