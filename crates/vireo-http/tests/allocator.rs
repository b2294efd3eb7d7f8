//! `Server::tune_allocator(true)`: the arena cap is set when the server starts and the
//! allocator is trimmed when a worker goes quiet, and serving goes on unchanged through both.

mod common;

use common::get_and_close;
use std::time::Duration;
use vireo_http::{service_fn, Response, Server};

fn get(addr: std::net::SocketAddr) -> String {
    get_and_close(std::net::TcpStream::connect(addr).unwrap())
}

#[test]
fn a_tuned_server_serves_before_and_after_trimming_when_quiet() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(2)
        .tune_allocator(true)
        .spawn(service_fn(|_req| Response::text(vec![b'x'; 100_000])))
        .unwrap();
    for _ in 0..20 {
        assert!(get(server.addr()).starts_with("HTTP/1.1 200 OK\r\n"));
    }
    // A whole tick without activity: each worker empties its pools and trims the allocator.
    std::thread::sleep(Duration::from_millis(2500));
    let reply = get(server.addr());
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    assert!(reply.ends_with(&"x".repeat(100_000)));
    server.shutdown().unwrap();
}
