//! The framework over a real socket (`serve_ephemeral`): when the body is read, and so when
//! `100 Continue` is sent, depends on routing and limits.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use vireo::middleware::body_limit;
use vireo::{serve_ephemeral, App, Request};

fn app() -> App {
    let mut app = App::new();
    app.post("/upload", |req: Request| {
        req.body().map(|b| b.len().to_string())
    });
    app.post("/small", |req: Request| {
        req.body().map(|b| b.len().to_string())
    })
    .with(body_limit(4));
    app
}

/// Send `bytes`, then read one response (an interim 100, or a final one with its body).
fn exchange(stream: &mut TcpStream, bytes: &[u8]) -> String {
    stream.write_all(bytes).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let mut fields = [httparse::EMPTY_HEADER; 16];
        let mut parsed = httparse::Response::new(&mut fields);
        if let Ok(httparse::Status::Complete(head)) = parsed.parse(&got) {
            let length = parsed
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .map_or(0, |h| {
                    std::str::from_utf8(h.value).unwrap().parse().unwrap()
                });
            if got.len() >= head + length {
                return String::from_utf8_lossy(&got).into_owned();
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&got).into_owned(),
            Ok(n) => got.extend_from_slice(&chunk[..n]),
        }
    }
}

#[test]
fn continue_is_sent_when_the_handler_is_about_to_run() {
    let server = serve_ephemeral(app()).unwrap();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    let interim = exchange(
        &mut stream,
        b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
    );
    assert_eq!(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    let reply = exchange(&mut stream, b"hello");
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    assert!(reply.ends_with("\r\n\r\n5"), "{reply}");
}

#[test]
fn no_continue_for_a_request_refused_before_its_handler() {
    let server = serve_ephemeral(app()).unwrap();
    for (request, status) in [
        (&b"POST /missing HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"[..], "404"),
        (&b"POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"[..], "413"),
    ] {
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        let reply = exchange(&mut stream, request);
        assert!(reply.starts_with(&format!("HTTP/1.1 {status} ")), "{reply}");
        assert!(!reply.contains("100 Continue"), "{reply}");
        assert!(reply.contains("connection: close"), "the unsent body forces a close: {reply}");
    }
}

#[test]
fn a_route_raises_the_body_limit_above_the_apps_and_others_keep_it() {
    let mut app = App::new();
    app.limits(vireo::Limits {
        max_body_size: 8,
        ..vireo::Limits::default()
    });
    app.post("/upload", |req: Request| {
        req.body().map(|b| b.len().to_string())
    })
    .with(body_limit(64 * 1024));
    app.post("/other", |req: Request| {
        req.body().map(|b| b.len().to_string())
    });
    let server = serve_ephemeral(app).unwrap();
    let body = vec![b'x'; 20_000];
    for (path, expected) in [("/upload", "200 OK"), ("/other", "413 ")] {
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        let head = format!("POST {path} HTTP/1.1\r\nHost: t\r\nContent-Length: 20000\r\n\r\n");
        let reply = exchange(&mut stream, &[head.as_bytes(), &body].concat());
        assert!(
            reply.starts_with(&format!("HTTP/1.1 {expected}")),
            "{path}: {reply}"
        );
        if path == "/upload" {
            assert!(reply.ends_with("\r\n\r\n20000"), "{reply}");
        }
    }
}

/// Serve `app` on a one-worker server given `server_limits`, and the status code of a 20-byte
/// POST.
fn status_of_a_20_byte_body(app: App, server_limits: vireo::Limits) -> String {
    let server = vireo::Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .limits(server_limits);
    let running = app.spawn(server).unwrap();
    let mut stream = TcpStream::connect(running.addr()).unwrap();
    let reply = exchange(
        &mut stream,
        b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 20\r\n\r\nxxxxxxxxxxxxxxxxxxxx",
    );
    reply.split(' ').nth(1).unwrap_or_default().to_owned()
}

#[test]
fn an_app_without_limits_of_its_own_is_served_with_the_servers() {
    let small = vireo::Limits {
        max_body_size: 8,
        ..vireo::Limits::default()
    };
    assert_eq!(
        status_of_a_20_byte_body(app(), small.clone()),
        "413",
        "the server's body limit applies to an app that set none"
    );
    let mut app = app();
    app.limits(vireo::Limits::default());
    assert_eq!(
        status_of_a_20_byte_body(app, small),
        "200",
        "limits set on the app replace the server's"
    );
}

#[test]
fn client_addr_reads_every_x_forwarded_for_line() {
    // The peer (127.0.0.1) is the trusted proxy; it appended its own line after the one the
    // client sent, so the client is the address on the last line, not the forged first one.
    let mut app = App::new();
    app.r#use(vireo::middleware::client_addr(["127.0.0.1"
        .parse()
        .unwrap()]));
    app.get("/who", |req: Request| {
        req.get::<vireo::middleware::ClientAddr>()
            .map_or("none".to_owned(), |c| c.0.to_string())
    });
    let server = serve_ephemeral(app).unwrap();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    let reply = exchange(
        &mut stream,
        b"GET /who HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n",
    );
    assert!(reply.ends_with("\r\n\r\n203.0.113.7"), "{reply}");
}
