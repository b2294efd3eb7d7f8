//! Response trailers: in the last chunk of HTTP/1.1's chunked encoding, as HTTP/2 trailers,
//! left out for HTTP/1.0, and without the fields a trailer may not carry.

mod common;

use bytes::Bytes;
use common::{run, Iter};
use http::{HeaderMap, HeaderValue};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use vireo_http::{service_fn, Body, Response, RunningServer, Server};

/// Answers with two chunks, then trailers made once they are sent: a checksum, and fields no
/// trailer may carry.
fn serve() -> RunningServer {
    Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .spawn(service_fn(|_req| {
            let chunks = ["hello, ", "trailers"].map(|c| Ok::<_, std::io::Error>(Bytes::from(c)));
            let trailers = async {
                let mut fields = HeaderMap::new();
                fields.insert("x-checksum", HeaderValue::from_static("1234"));
                fields.insert("content-length", HeaderValue::from_static("99"));
                fields.insert("connection", HeaderValue::from_static("close"));
                fields
            };
            Response::text(Body::stream_with_trailers(
                Iter(chunks.into_iter()),
                trailers,
            ))
        }))
        .unwrap()
}

/// Send `request` and read until the server closes.
fn exchange(server: &RunningServer, request: &[u8]) -> String {
    let mut tcp = TcpStream::connect(server.addr()).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    tcp.write_all(request).unwrap();
    let mut reply = Vec::new();
    tcp.read_to_end(&mut reply).unwrap();
    String::from_utf8(reply).unwrap()
}

#[test]
fn http_1_1_gets_the_trailers_in_the_last_chunk() {
    let server = serve();
    let reply = exchange(
        &server,
        b"GET / HTTP/1.1\r\nHost: t\r\nTE: trailers\r\nConnection: close\r\n\r\n",
    );
    assert!(reply.contains("transfer-encoding: chunked\r\n"), "{reply}");
    assert!(
        reply.ends_with("7\r\nhello, \r\n8\r\ntrailers\r\n0\r\nx-checksum: 1234\r\n\r\n"),
        "{reply}"
    );
}

#[test]
fn http_1_0_gets_the_body_without_trailers() {
    let server = serve();
    let reply = exchange(&server, b"GET / HTTP/1.0\r\n\r\n");
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    assert!(reply.ends_with("\r\n\r\nhello, trailers"), "{reply}");
}

#[test]
fn http_2_gets_the_trailers_after_the_data() {
    let server = serve();
    run(async {
        let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
        let (client, conn) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut client = client.ready().await.unwrap();
        let request = http::Request::get("http://localhost/").body(()).unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        let mut body = response.await.unwrap().into_body();
        let mut data = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            let _ = body.flow_control().release_capacity(chunk.len());
            data.extend_from_slice(&chunk);
        }
        assert_eq!(data, b"hello, trailers");
        let trailers = body.trailers().await.unwrap().expect("trailers");
        assert_eq!(trailers.get("x-checksum").unwrap(), "1234");
        assert!(trailers.get("content-length").is_none());
        assert!(trailers.get("connection").is_none());
    });
}
