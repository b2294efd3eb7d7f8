//! The hand-off of a connection after `101 Switching Protocols`.

use std::io::{Read, Write};
use std::net::TcpStream;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vireo_http::{service_fn, Response, Server};

/// Read until `needle` has been seen, or the stream ends.
fn read_until(stream: &mut TcpStream, needle: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(needle.len()).any(|w| w == needle) {
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    got
}

fn upgrading_server() -> vireo_http::RunningServer {
    Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .spawn(service_fn(|req| {
            if req.head().path() != "/upgrade" {
                return Response::text("plain");
            }
            let mut res = Response::upgrade(|mut io| async move {
                // Echo in upper case until the peer closes.
                let mut buf = [0u8; 256];
                loop {
                    match io.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            let upper = buf[..n].to_ascii_uppercase();
                            if io.write_all(&upper).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
            res.headers_mut()
                .insert(http::header::UPGRADE, "shout".parse().unwrap());
            res
        }))
        .unwrap()
}

#[test]
fn bytes_pipelined_after_the_head_reach_the_upgraded_stream_then_the_socket() {
    let server = upgrading_server();
    let mut client = TcpStream::connect(server.addr()).unwrap();
    client
        .write_all(b"GET /upgrade HTTP/1.1\r\nhost: x\r\nupgrade: shout\r\nconnection: upgrade\r\n\r\nearly bytes;")
        .unwrap();
    let got = read_until(&mut client, b"EARLY BYTES;");
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{text}"
    );
    assert!(text.contains("upgrade: shout\r\n"), "{text}");
    assert!(
        text.contains("connection: upgrade\r\n\r\nEARLY BYTES;"),
        "{text}"
    );
    // After the hand-off the socket carries the new protocol, not HTTP.
    client.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let got = read_until(&mut client, b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(got, b"GET / HTTP/1.1\r\n\r\n");
}

#[test]
fn an_http10_request_cannot_be_upgraded() {
    let server = upgrading_server();
    let mut client = TcpStream::connect(server.addr()).unwrap();
    client
        .write_all(b"GET /upgrade HTTP/1.0\r\nupgrade: shout\r\nconnection: upgrade\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    client.read_to_end(&mut got).unwrap();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
}

#[test]
fn ordinary_requests_on_the_same_server_are_unaffected() {
    let server = upgrading_server();
    let mut client = TcpStream::connect(server.addr()).unwrap();
    client
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    client.read_to_end(&mut got).unwrap();
    let text = String::from_utf8_lossy(&got);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 2, "{text}");
}

#[test]
fn shutdown_tells_the_upgraded_connection_and_waits_for_it() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .spawn(service_fn(|_req| {
            Response::upgrade(|mut io| async move {
                let _ = io.write_all(b"ready;").await;
                io.shutdown_requested().await;
                assert!(io.is_shutting_down());
                let _ = io.write_all(b"bye").await;
            })
        }))
        .unwrap();
    let mut client = TcpStream::connect(server.addr()).unwrap();
    client
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nupgrade: x\r\nconnection: upgrade\r\n\r\n")
        .unwrap();
    let head = read_until(&mut client, b"ready;");
    assert!(
        head.ends_with(b"\r\n\r\nready;"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    let stopping = std::thread::spawn(move || server.shutdown());
    let mut rest = Vec::new();
    client.read_to_end(&mut rest).unwrap();
    assert_eq!(rest, b"bye");
    stopping.join().unwrap().unwrap();
}

#[test]
fn a_panic_in_the_upgraded_connection_closes_only_that_connection() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .spawn(service_fn(|req| {
            if req.head().path() == "/panic" {
                return Response::upgrade(|_io| async move { panic!("the new protocol failed") });
            }
            Response::text("still serving")
        }))
        .unwrap();
    let mut client = TcpStream::connect(server.addr()).unwrap();
    client
        .write_all(b"GET /panic HTTP/1.1\r\nhost: x\r\nupgrade: x\r\nconnection: upgrade\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    client.read_to_end(&mut got).unwrap();
    assert!(got.starts_with(b"HTTP/1.1 101 "));
    let mut other = TcpStream::connect(server.addr()).unwrap();
    other
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    other.read_to_end(&mut got).unwrap();
    assert!(
        got.ends_with(b"still serving"),
        "{}",
        String::from_utf8_lossy(&got)
    );
}
