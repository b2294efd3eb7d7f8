//! tower interop: the app as a tower service (driven by `oneshot` and served by hyper), and
//! tower-http layers running as Vireo middleware.
#![cfg(feature = "tower")]

use bytes::Bytes;
use http_body_util::BodyExt;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;
use vireo::http::{header, StatusCode};
use vireo::{App, Limits, Request, TestClient};

fn app() -> App {
    let mut app = App::new();
    app.get("/", |_req| "Hello, World!");
    app.post("/echo", |req: Request| req.body().cloned());
    app.get("/header", |req: Request| {
        req.header("x-request-id").unwrap_or("none").to_owned()
    });
    app.get("/slow", |_req| async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        "late"
    });
    app.get("/big", |_req| "a".repeat(4096));
    app.get("/panic", |_req| -> &'static str { panic!("on purpose") });
    app
}

async fn call(
    service: vireo::tower::TowerService,
    req: http::Request<String>,
) -> (StatusCode, http::HeaderMap, Bytes) {
    let res = service.oneshot(req).await.unwrap();
    let (parts, body) = res.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

#[tokio::test]
async fn an_app_answers_as_a_tower_service() {
    let service = app().into_tower_with_threads(1);
    let get = http::Request::get("/").body(String::new()).unwrap();
    let (status, headers, body) = call(service.clone(), get).await;
    assert_eq!(status, 200);
    assert_eq!(&body[..], b"Hello, World!");
    assert_eq!(headers[header::CONTENT_TYPE], "text/plain; charset=utf-8");

    let post = http::Request::post("/echo")
        .body("ping".to_owned())
        .unwrap();
    assert_eq!(&call(service.clone(), post).await.2[..], b"ping");

    let missing = http::Request::get("/nope").body(String::new()).unwrap();
    assert_eq!(call(service.clone(), missing).await.0, 404);

    let panics = http::Request::get("/panic").body(String::new()).unwrap();
    assert_eq!(call(service.clone(), panics).await.0, 500);
    let after = http::Request::get("/").body(String::new()).unwrap();
    assert_eq!(call(service, after).await.0, 200);
}

#[tokio::test]
async fn a_tower_request_over_the_body_limit_gets_413() {
    let mut app = app();
    app.limits(Limits {
        max_body_size: 8,
        ..Limits::default()
    });
    let service = app.into_tower_with_threads(1);
    let post = http::Request::post("/echo")
        .body("0123456789".to_owned())
        .unwrap();
    assert_eq!(call(service, post).await.0, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn a_tower_request_is_held_to_the_engine_limits() {
    let mut app = app();
    app.limits(Limits {
        max_target_len: 16,
        ..Limits::default()
    });
    let service = app.into_tower_with_threads(1);
    let long = format!("/{}", "a".repeat(64));
    let get = http::Request::get(long).body(String::new()).unwrap();
    assert_eq!(call(service, get).await.0, StatusCode::URI_TOO_LONG);
}

#[test]
fn hyper_serves_an_app_over_a_socket() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let service = app().into_tower_with_threads(1);
    runtime.spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nabcde"), "{answer}");
}

#[test]
fn tower_http_layers_run_as_middleware() {
    use tower_http::request_id::{MakeRequestUuid, SetRequestIdLayer};
    use tower_http::trace::TraceLayer;
    let responses = Arc::new(AtomicUsize::new(0));
    let seen = responses.clone();
    let mut app = app();
    app.r#use(vireo::tower::layer(TraceLayer::new_for_http().on_response(
        move |_: &http::Response<_>, _: Duration, _: &tracing::Span| {
            seen.fetch_add(1, Ordering::SeqCst);
        },
    )));
    app.r#use(vireo::tower::layer(SetRequestIdLayer::x_request_id(
        MakeRequestUuid,
    )));
    let server = vireo::serve_ephemeral(app).unwrap();
    let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
    let answer = exchange(&mut stream, "/header");
    let id = answer.rsplit("\r\n").next().unwrap();
    assert_eq!(
        id.len(),
        36,
        "a UUID set by the layer reaches the handler: {answer}"
    );
    let answer = exchange(&mut stream, "/");
    assert!(
        answer.contains("\r\ncontent-length: 13\r\n"),
        "a body whose size the layer keeps is still sent with its length: {answer}"
    );
    assert_eq!(responses.load(Ordering::SeqCst), 2);
}

#[test]
fn a_layer_that_changes_the_uri_and_a_header_keeps_the_route_and_its_parameters() {
    use tower::util::MapRequestLayer;
    let mut app = App::new();
    app.get("/files/*path", |req: Request| {
        format!(
            "{} {}",
            req.param("path").unwrap_or_default(),
            req.header("x-seen").unwrap_or("none")
        )
    })
    .with(vireo::tower::layer(MapRequestLayer::new(
        |mut req: http::Request<vireo::tower::LayerBody>| {
            *req.uri_mut() = http::Uri::from_static("/");
            req.headers_mut()
                .insert("x-seen", http::HeaderValue::from_static("yes"));
            req
        },
    )));
    let client = TestClient::new(app);
    let res = client.get("/files/a/b/").send();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.text(),
        "a/b/ yes",
        "the header reaches the handler, the changed URI does not"
    );
}

/// One GET on a kept-alive connection; the answer, read up to its `content-length`.
fn exchange(stream: &mut std::net::TcpStream, path: &str) -> String {
    write!(stream, "GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let mut byte = [0u8; 1];
    while !answer.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        answer.push(byte[0]);
    }
    let head = String::from_utf8(answer.clone()).unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0; len];
    stream.read_exact(&mut body).unwrap();
    head + std::str::from_utf8(&body).unwrap()
}

#[test]
fn a_tower_layer_can_answer_without_the_handler() {
    use tower_http::validate_request::ValidateRequestHeaderLayer;
    let mut app = App::new();
    app.get("/open", |_req| "open");
    #[allow(deprecated)] // `bearer` is enough to show a layer refusing a request
    app.get("/secret", |_req| "secret")
        .with(vireo::tower::layer(ValidateRequestHeaderLayer::bearer(
            "s3cret",
        )));
    let client = TestClient::new(app);
    assert_eq!(
        client.get("/secret").send().status(),
        StatusCode::UNAUTHORIZED
    );
    let ok = client
        .get("/secret")
        .header("authorization", "Bearer s3cret")
        .send();
    assert_eq!(ok.text(), "secret");
    assert_eq!(client.get("/open").send().text(), "open");
    // Many refusals leave nothing parked behind: the next request still goes through.
    for _ in 0..100 {
        assert_eq!(client.get("/secret").send().status(), 401);
    }
    assert_eq!(client.get("/open").send().text(), "open");
}

#[test]
fn tower_http_cors_compression_and_timeout_layers_work() {
    use tower_http::compression::CompressionLayer;
    use tower_http::cors::CorsLayer;
    use tower_http::timeout::TimeoutLayer;
    let mut app = app();
    app.r#use(vireo::tower::layer(CorsLayer::permissive()));
    app.r#use(vireo::tower::layer(CompressionLayer::new()));
    app.r#use(vireo::tower::layer(TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        Duration::from_millis(50),
    )));
    app.r#use(vireo::tower::layer(
        tower::limit::ConcurrencyLimitLayer::new(4),
    ));
    let client = TestClient::new(app);

    let preflight = client
        .request(http::Method::OPTIONS, "/")
        .header("origin", "https://a.example")
        .header("access-control-request-method", "GET")
        .send();
    assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));

    let big = client.get("/big").header("accept-encoding", "gzip").send();
    assert_eq!(big.header("content-encoding"), Some("gzip"));
    let mut plain = String::new();
    flate2_decode(big.bytes(), &mut plain);
    assert_eq!(plain, "a".repeat(4096));

    assert_eq!(
        client.get("/slow").send().status(),
        StatusCode::REQUEST_TIMEOUT
    );
    assert_eq!(client.get("/").send().text(), "Hello, World!");
}

fn flate2_decode(gzipped: &[u8], out: &mut String) {
    flate2::read::GzDecoder::new(gzipped)
        .read_to_string(out)
        .unwrap();
}
