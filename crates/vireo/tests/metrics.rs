//! Prometheus metrics: recorded by route template, method and status, scraped over a real
//! socket and parsed.
#![cfg(feature = "metrics")]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use vireo::metrics::Metrics;
use vireo::{App, Request, TestClient};

fn app(metrics: &Metrics) -> App {
    let mut app = App::new();
    app.r#use(metrics.middleware());
    app.get("/metrics", metrics.handler());
    app.get("/users/:id", |req: Request| {
        format!("User: {}", req.param("id").unwrap())
    });
    app.post("/echo", |req: Request| req.body().cloned());
    let mut api = vireo::Router::new();
    api.get("/items/:id", |_req| "item");
    app.mount("/api", api);
    app
}

/// The samples of a scrape in the text format: `name{labels}` to value, comments skipped.
fn parse(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a sample is `series value`");
            (
                series.to_owned(),
                value.parse().expect("a sample's value is a number"),
            )
        })
        .collect()
}

#[test]
fn requests_are_counted_by_route_template_method_and_status() {
    let metrics = Metrics::new();
    let client = TestClient::new(app(&metrics));
    for id in 1..=3 {
        assert_eq!(client.get(&format!("/users/{id}")).send().status(), 200);
    }
    client.get("/api/items/9").send();
    client.get("/nowhere").send();
    client.post("/echo").body("12345").send();
    client
        .request(
            vireo::http::Method::from_bytes(b"BREW").unwrap(),
            "/users/1",
        )
        .send();

    let samples = parse(client.get("/metrics").send().text());
    let count = |labels: &str| {
        samples
            .get(&format!("http_requests_total{{{labels}}}"))
            .copied()
    };
    assert_eq!(
        count(r#"method="GET",route="/users/:id",status="200""#),
        Some(3.0)
    );
    assert_eq!(
        count(r#"method="GET",route="/api/items/:id",status="200""#),
        Some(1.0)
    );
    assert_eq!(
        count(r#"method="GET",route="unmatched",status="404""#),
        Some(1.0)
    );
    assert_eq!(
        count(r#"method="POST",route="/echo",status="200""#),
        Some(1.0)
    );
    assert_eq!(
        count(r#"method="OTHER",route="unmatched",status="501""#),
        Some(1.0)
    );
    assert_eq!(
        samples.get(r#"http_request_duration_seconds_count{method="GET",route="/users/:id"}"#),
        Some(&3.0)
    );
    assert_eq!(samples.get("http_request_body_bytes_total"), Some(&5.0));
    // "User: 1" three times, "item", "12345", and the 404 and 501 bodies: at least these.
    assert!(samples["http_response_body_bytes_total"] >= (3 * 7 + 4 + 5) as f64);
    // The scrape itself is in flight while it is made.
    assert_eq!(samples.get("http_requests_in_flight"), Some(&1.0));
}

#[test]
fn open_connections_are_reported_per_worker_when_served() {
    let metrics = Metrics::new();
    let server = vireo::serve_ephemeral(app(&metrics)).unwrap();
    let idle = TcpStream::connect(server.addr()).unwrap();
    let mut scrape = TcpStream::connect(server.addr()).unwrap();
    // Both connections are open on the one worker by the time the second is answered.
    write!(
        scrape,
        "GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    scrape.read_to_string(&mut answer).unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1;
    let samples = parse(body);
    assert_eq!(
        samples.get(r#"vireo_connections_open{worker="0"}"#),
        Some(&2.0),
        "{body}"
    );
    drop(idle);
}

/// Send `request` on a new connection and read the answer to its end (`connection: close`).
fn exchange(addr: std::net::SocketAddr, request: &str) -> String {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn chunked_uploads_and_streamed_responses_are_counted_as_they_go() {
    let metrics = Metrics::new();
    let mut app = app(&metrics);
    app.get("/stream", |_req| {
        vireo::Response::new(
            vireo::http::StatusCode::OK,
            vireo::stream_iter((0..3).map(|_| vec![b'x'; 1000])),
        )
    });
    let server = vireo::serve_ephemeral(app).unwrap();
    let echoed = exchange(
        server.addr(),
        "POST /echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n\
         5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    );
    assert!(echoed.ends_with("\r\n\r\nhello world"), "{echoed}");
    let streamed = exchange(
        server.addr(),
        "GET /stream HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert!(
        streamed.contains("transfer-encoding: chunked"),
        "{streamed}"
    );

    let scrape = exchange(
        server.addr(),
        "GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    let samples = parse(scrape.split_once("\r\n\r\n").unwrap().1);
    // The chunked upload's 11 bytes, counted as the handler read them.
    assert_eq!(samples.get("http_request_body_bytes_total"), Some(&11.0));
    // The echo's 11 bytes, and the stream's three chunks of 1,000 as they were sent.
    assert_eq!(
        samples.get("http_response_body_bytes_total"),
        Some(&3011.0),
        "{scrape}"
    );
}
