//! Liveness and readiness over a real socket: readiness turns to 503 as soon as a graceful
//! shutdown is requested, while the drain delay keeps the server serving.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use vireo::{health, App, Server, TestClient};

fn app() -> App {
    let mut app = App::new();
    app.get("/healthz", health::liveness);
    app.get("/readyz", health::readiness);
    app.get("/", |_req| "Hello, World!");
    app
}

/// One request on a fresh connection; the status code of the answer, or `None` if the
/// connection was refused or closed without one.
fn status(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.get(9..12)?.parse().ok()
}

#[test]
fn readiness_fails_at_once_on_shutdown_while_the_drain_delay_keeps_serving() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .drain_delay(Duration::from_millis(600));
    let handle = server.shutdown_handle();
    let running = app().spawn(server).unwrap();
    let addr = running.addr();
    assert_eq!(status(addr, "/readyz"), Some(200));
    assert_eq!(status(addr, "/healthz"), Some(200));

    handle.shutdown();
    assert_eq!(status(addr, "/readyz"), Some(503));
    assert_eq!(status(addr, "/healthz"), Some(200));
    assert_eq!(
        status(addr, "/"),
        Some(200),
        "new connections are still served"
    );

    let mut running = running;
    running.join().unwrap();
    assert_eq!(status(addr, "/"), None, "after the delay the server stops");
}

#[test]
fn an_app_without_a_server_is_ready() {
    let client = TestClient::new(app());
    assert_eq!(client.get("/readyz").send().text(), "ready");
    assert_eq!(client.get("/healthz").send().text(), "ok");
}

#[test]
fn connections_arriving_during_the_drain_delay_do_not_extend_it() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .drain_delay(Duration::from_millis(500));
    let handle = server.shutdown_handle();
    let mut running = app().spawn(server).unwrap();
    let addr = running.addr();
    handle.shutdown();
    let started = std::time::Instant::now();
    // Keep connecting while the server serves; it must stop accepting once the delay is over.
    while status(addr, "/") == Some(200) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "still accepting long after the drain delay"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    running.join().unwrap();
}
