//! The reference app: the routes every benchmark and conformance check drives.
//!
//! ```text
//! cargo run --release -p vireo --example reference -- --addr 127.0.0.1:8080 [--workers N]
//!     [--unix PATH] [--tls-cert CHAIN.pem --tls-key KEY.pem] [--drain-delay-ms N] [--no-metrics]
//! ```
//!
//! With `--tls-cert` and `--tls-key` it serves HTTPS (ALPN `h2` and `http/1.1`). `--drain-delay-ms` keeps it
//! serving that long after SIGTERM with `/readyz` at 503, before it drains. `--no-metrics` leaves out
//! `/metrics` and the recording of every request behind it, as the benchmarks run it: no peer
//! there records metrics.
//!
//! | route | answer |
//! |---|---|
//! | `GET /` | `Hello, World!` |
//! | `GET /json` | `{"message":"Hello, World!"}` |
//! | `GET /users/:id` | `User: {id}`, through two app-wide middlewares that each store a value |
//! | `GET /favicon.ico` | 204, empty |
//! | `POST /echo` | the request body exactly, with its `Content-Type` |
//! | `GET /compute` | the sum of i*i for i in 0..1000, computed per request |
//! | `GET /sleep?ms=N` | a blocking handler: sleeps N ms on the blocking pool |
//! | `GET /async?ms=N` | an async handler: awaits a timer of N ms |
//! | `GET /stream?chunks=N` | N chunks `chunk K\n`, each written as it is made |
//! | `GET /panic` | panics: the client gets a 500, the server goes on |
//! | `GET /ws` | a WebSocket echo: text and binary messages sent back; pings and closes answered |
//! | `POST /upload` | `multipart/form-data`, streamed (up to 1 GiB): each part's name, file name, size and SHA-256 as JSON |
//! | `GET /metrics` | Prometheus metrics: requests by method, route and status, latency, in flight, connections |
//! | `GET /healthz` | `ok` while the process serves |
//! | `GET /readyz` | `ready`, and 503 from the moment a graceful shutdown begins |

use std::time::Duration;
use vireo::http::{header, HeaderValue, StatusCode};
use vireo::middleware::body_limit;
use vireo::{
    blocking, stream_iter, streaming_body, App, Error, IntoResponse, Json, Multipart, Next,
    Request, Response, Server,
};

/// The most a client may ask `/sleep` or `/async` to wait, so a request cannot hold a thread
/// or a connection for long.
const MAX_WAIT_MS: u64 = 10_000;

/// The most `/upload` accepts in all, a limit raised for that route alone.
const MAX_UPLOAD: u64 = 1 << 30;

/// The most chunks `/stream` sends.
const MAX_CHUNKS: usize = 100_000;

/// Set by the first middleware, read by `/users/:id`.
#[derive(Clone)]
struct First(&'static str);

/// Set by the second middleware, read by `/users/:id`.
#[derive(Clone)]
struct Second(u32);

#[derive(serde::Serialize)]
struct Message {
    message: &'static str,
}

fn app(metrics: bool) -> App {
    let mut app = App::new();
    if metrics {
        // First, so that its latency covers every other middleware.
        let metrics = vireo::metrics::Metrics::new();
        app.r#use(metrics.middleware());
        app.get("/metrics", metrics.handler());
    }
    app.post("/upload", streaming_body(upload))
        .with(body_limit(MAX_UPLOAD));
    // The echo needs nothing from the handshake request: letting it go at once keeps an
    // idle connection from holding its head.
    app.ws("/ws", |ws, _req| echo_socket(ws));
    app.get("/healthz", vireo::health::liveness);
    app.get("/readyz", vireo::health::readiness);
    app.r#use(|mut req: Request, next: Next| {
        req.set(First("first"));
        next.run(req)
    });
    app.r#use(|mut req: Request, next: Next| {
        req.set(Second(2));
        next.run(req)
    });
    app.get("/", |_req| "Hello, World!");
    app.get("/json", |_req| {
        Json(Message {
            message: "Hello, World!",
        })
    });
    app.get("/users/:id", users);
    app.get("/favicon.ico", |_req| StatusCode::NO_CONTENT);
    app.post("/echo", echo);
    app.get("/compute", |_req| compute().to_string());
    app.get("/sleep", blocking(sleep));
    app.get("/async", wait);
    app.get("/stream", stream);
    app.get("/panic", |_req| -> &'static str {
        panic!("the /panic route panics on purpose")
    });
    app
}

fn users(req: Request) -> Result<String, Error> {
    let (Some(First(first)), Some(Second(second))) = (req.get::<First>(), req.get::<Second>())
    else {
        return Err(Error::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "middleware did not run",
        ));
    };
    debug_assert_eq!((*first, *second), ("first", 2));
    Ok(format!("User: {}", req.param("id").unwrap_or_default()))
}

/// Send every text or binary message back; the socket answers pings and closes itself.
async fn echo_socket(mut ws: vireo::ws::WebSocket) {
    while let Some(Ok(message)) = ws.recv().await {
        if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
            break;
        }
    }
}

/// What `/upload` reports of one part.
#[derive(serde::Serialize)]
struct PartSummary {
    name: Option<String>,
    filename: Option<String>,
    size: u64,
    sha256: String,
}

/// Hash each part of a multipart upload as it streams in, never holding a part whole.
async fn upload(mut req: Request) -> Result<Json<Vec<PartSummary>>, Error> {
    use sha2::Digest;
    let mut form = Multipart::from_request(&mut req)?;
    let mut parts = Vec::new();
    while let Some(mut part) = form.next_part().await? {
        let mut hasher = sha2::Sha256::new();
        let mut size = 0;
        while let Some(chunk) = part.chunk().await? {
            size += chunk.len() as u64;
            hasher.update(&chunk);
        }
        parts.push(PartSummary {
            name: part.name().map(str::to_owned),
            filename: part.file_name().map(str::to_owned),
            size,
            sha256: format!("{:x}", hasher.finalize()),
        });
    }
    Ok(Json(parts))
}

fn echo(req: Request) -> Result<Response, Error> {
    let mut res = Response::new(StatusCode::OK, req.body()?.clone());
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .cloned()
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    res.headers_mut().insert(header::CONTENT_TYPE, content_type);
    Ok(res)
}

fn compute() -> u64 {
    // `black_box` keeps the compiler from folding the loop into a constant: the point of the
    // route is to do the work on every request.
    (0..std::hint::black_box(1000u64)).map(|i| i * i).sum()
}

fn wait_ms(req: &Request) -> Result<u64, Error> {
    let ms: u64 = req
        .query_param("ms")
        .ok_or_else(|| Error::bad_request("missing ?ms=N"))?
        .parse()
        .map_err(|_| Error::bad_request("ms must be a whole number of milliseconds"))?;
    if ms > MAX_WAIT_MS {
        return Err(Error::bad_request(format!(
            "ms must be at most {MAX_WAIT_MS}"
        )));
    }
    Ok(ms)
}

fn sleep(req: Request) -> Result<String, Error> {
    let ms = wait_ms(&req)?;
    std::thread::sleep(Duration::from_millis(ms));
    Ok(format!("slept {ms}"))
}

async fn wait(req: Request) -> Result<String, Error> {
    let ms = wait_ms(&req)?;
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    Ok(format!("waited {ms}"))
}

fn stream(req: Request) -> Result<impl IntoResponse, Error> {
    let chunks: usize = req
        .query_param("chunks")
        .map_or(Ok(10), |n| n.parse())
        .map_err(|_| Error::bad_request("chunks must be a whole number"))?;
    if chunks > MAX_CHUNKS {
        return Err(Error::bad_request(format!(
            "chunks must be at most {MAX_CHUNKS}"
        )));
    }
    let body = stream_iter((0..chunks).map(|k| format!("chunk {k}\n")));
    let mut res = Response::new(StatusCode::OK, body);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    Ok(res)
}

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:8080");
    let mut workers = None;
    let mut unix = None;
    let mut drain_delay = Duration::ZERO;
    let (mut tls_cert, mut tls_key) = (None, None);
    let mut metrics = true;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--no-metrics" {
            metrics = false;
            continue;
        }
        match (flag.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value,
            ("--unix", Some(path)) => unix = Some(path),
            ("--drain-delay-ms", Some(value)) => match value.parse::<u64>() {
                Ok(ms) => drain_delay = Duration::from_millis(ms),
                _ => usage("--drain-delay-ms takes a whole number of milliseconds"),
            },
            ("--tls-cert", Some(path)) => tls_cert = Some(path),
            ("--tls-key", Some(path)) => tls_key = Some(path),
            ("--workers", Some(value)) => match value.parse::<usize>() {
                Ok(n) if n > 0 => workers = Some(n),
                _ => usage("--workers takes a positive number"),
            },
            _ => usage(&format!("unknown argument `{flag}`")),
        }
    }
    let mut server = match unix {
        Some(path) => Server::bind_unix(path)?,
        None => Server::bind(&addr)?,
    };
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => {
            server = server.tls(vireo::tls::TlsConfig::from_pem_files(cert, key)?);
        }
        (None, None) => {}
        _ => usage("--tls-cert and --tls-key go together"),
    }
    let server = server
        .drain_delay(drain_delay)
        .on_ready(|addr| println!("listening on {addr}"));
    app(metrics).serve(server)
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "{problem}\nusage: reference [--addr HOST:PORT | --unix PATH] [--workers N] \
         [--tls-cert CHAIN.pem --tls-key KEY.pem] [--drain-delay-ms N] [--no-metrics]"
    );
    std::process::exit(2);
}
