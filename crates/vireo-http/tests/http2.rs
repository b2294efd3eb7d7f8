//! Serving HTTP/2 (the `http2` feature), with the `h2` crate as the client: h2c with prior
//! knowledge on the HTTP/1.1 port, h2 over TLS by ALPN, request and response bodies with flow
//! control, the body limit, concurrent streams, GOAWAY on shutdown, and rapid reset.

mod common;

use bytes::Bytes;
use common::tls::{self_signed, trusting};
use common::{connect, run, serve, Reader};
use h2::client::SendRequest;
use h2::{Reason, RecvStream};
use http::{Method, Request, StatusCode};
use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use vireo_http::tls::{TlsCert, TlsConfig};
use vireo_http::{service_fn, Limits, Server};

/// An h2c connection with prior knowledge; its driver runs on the test's runtime.
async fn h2c(addr: std::net::SocketAddr) -> SendRequest<Bytes> {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

fn request(method: Method, path: &str) -> Request<()> {
    Request::builder()
        .method(method)
        .uri(format!("http://localhost{path}"))
        .body(())
        .unwrap()
}

/// Read a whole response body, releasing flow-control capacity as it goes.
async fn read_body(mut body: RecvStream) -> Result<Vec<u8>, h2::Error> {
    let mut out = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// Send a request with an optional body; the status and the body.
async fn exchange(
    client: &mut SendRequest<Bytes>,
    req: Request<()>,
    body: Option<&[u8]>,
) -> (StatusCode, Vec<u8>) {
    let mut ready = client.clone().ready().await.unwrap();
    let (response, mut send) = ready.send_request(req, body.is_none()).unwrap();
    if let Some(body) = body {
        send.send_data(Bytes::copy_from_slice(body), true).unwrap();
    }
    let response = response.await.unwrap();
    let status = response.status();
    (status, read_body(response.into_body()).await.unwrap())
}

#[test]
fn get_over_h2c_with_prior_knowledge() {
    let server = serve(Limits::default());
    run(async {
        let mut client = h2c(server.addr()).await;
        let (status, body) = exchange(&mut client, request(Method::GET, "/hi?x=1"), None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, b"GET /hi?x=1");

        let ready = client.clone().ready().await.unwrap();
        let mut ready = ready;
        let (response, _) = ready
            .send_request(request(Method::HEAD, "/hi"), true)
            .unwrap();
        let response = response.await.unwrap();
        assert_eq!(
            response.headers()["content-length"],
            "8",
            "HEAD gives its length"
        );
        assert!(response.headers().contains_key("date"));
        assert!(response.into_body().is_end_stream(), "HEAD has no body");
    });
}

#[test]
fn request_bodies_are_read_with_and_without_content_length() {
    let server = serve(Limits::default());
    run(async {
        let mut client = h2c(server.addr()).await;
        let (status, body) = exchange(
            &mut client,
            request(Method::POST, "/echo"),
            Some(b"hello h2"),
        )
        .await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"hello h2"[..]));

        let mut sized = request(Method::POST, "/echo");
        sized
            .headers_mut()
            .insert("content-length", "5".parse().unwrap());
        let (status, body) = exchange(&mut client, sized, Some(b"sized")).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"sized"[..]));

        // Larger than the initial flow-control window: only arrives if capacity is released.
        let big = vec![b'x'; 200_000];
        let (status, body) =
            exchange(&mut client, request(Method::POST, "/count"), Some(&big)).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"200000"[..]));
    });
}

/// A `POST` announcing a body of `length` bytes with `Expect: 100-continue`.
fn expecting_continue(path: &str, length: u64) -> Request<()> {
    let mut req = request(Method::POST, path);
    req.headers_mut()
        .insert("expect", "100-continue".parse().unwrap());
    req.headers_mut().insert("content-length", length.into());
    req
}

#[test]
fn expect_100_continue_gets_an_interim_100_once_the_body_is_read() {
    let server = serve(Limits::default());
    run(async {
        let client = h2c(server.addr()).await;
        let mut ready = client.clone().ready().await.unwrap();
        let (mut response, mut send) = ready
            .send_request(expecting_continue("/echo", 5), false)
            .unwrap();
        // Nothing is sent until the `100` arrives.
        let interim = tokio::time::timeout(
            Duration::from_secs(10),
            poll_fn(|cx| response.poll_informational(cx)),
        )
        .await
        .expect("a 100 within 10 s")
        .expect("an informational response")
        .unwrap();
        assert_eq!(interim.status(), StatusCode::CONTINUE);
        send.send_data(Bytes::from_static(b"hello"), true).unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(read_body(response.into_body()).await.unwrap(), b"hello");

        // A service that answers without reading sends no `100`, only its response.
        let mut ready = client.clone().ready().await.unwrap();
        let (mut response, _send) = ready
            .send_request(expecting_continue("/hi", 5), false)
            .unwrap();
        let first = poll_fn(|cx| response.poll_informational(cx)).await;
        assert!(first.is_none(), "no interim response: {first:?}");
        assert_eq!(response.await.unwrap().status(), StatusCode::OK);
    });
}

#[test]
fn streamed_and_large_responses_arrive_whole() {
    let server = serve(Limits::default());
    run(async {
        let mut client = h2c(server.addr()).await;
        let (status, body) = exchange(&mut client, request(Method::GET, "/stream?4"), None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, b"chunk 0\nchunk 1\nchunk 2\nchunk 3\n");

        let big = vec![b'y'; 300_000];
        let (status, body) =
            exchange(&mut client, request(Method::POST, "/echo"), Some(&big)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body.len(), big.len(), "beyond the client's initial window");
    });
}

#[test]
fn a_panicking_service_costs_one_500_and_the_connection_goes_on() {
    let server = serve(Limits::default());
    run(async {
        let mut client = h2c(server.addr()).await;
        let (status, _) = exchange(&mut client, request(Method::GET, "/panic"), None).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let (status, body) = exchange(&mut client, request(Method::GET, "/after"), None).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"GET /after"[..]));
    });
}

#[test]
fn an_interim_status_given_as_the_answer_is_a_500_and_the_stream_ends() {
    let server = serve(Limits::default());
    run(async {
        let mut client = h2c(server.addr()).await;
        let (status, _) = exchange(&mut client, request(Method::GET, "/early-hints"), None).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let (status, body) = exchange(&mut client, request(Method::GET, "/after"), None).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"GET /after"[..]));
    });
}

#[test]
fn a_content_length_the_body_does_not_match_is_replaced_by_the_bodys() {
    let server = serve(Limits::default());
    run(async {
        let mut client = h2c(server.addr()).await;
        let response = client.send_request(request(Method::GET, "/wrong-length"), true);
        let (response, _) = response.unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.headers()["content-length"], "3");
        let body = read_body(response.into_body()).await.unwrap();
        assert_eq!(body, b"abc");
    });
}

#[test]
fn concurrent_streams_share_one_connection() {
    let server = serve(Limits::default());
    run(async {
        let client = h2c(server.addr()).await;
        let mut pending = Vec::new();
        for k in 0..20 {
            let mut client = client.clone();
            pending.push(tokio::spawn(async move {
                let path = format!("/slow?{}", 20 + k);
                exchange(&mut client, request(Method::GET, &path), None).await
            }));
        }
        for task in pending {
            let (status, body) = task.await.unwrap();
            assert_eq!((status, &body[..]), (StatusCode::OK, &b"slow done"[..]));
        }
    });
}

#[test]
fn a_body_over_the_limit_is_refused() {
    let server = serve(Limits {
        max_body_size: 1024,
        ..Limits::default()
    });
    run(async {
        let mut client = h2c(server.addr()).await;
        let ready = client.clone().ready().await.unwrap();
        let mut ready = ready;
        let (response, mut send) = ready
            .send_request(request(Method::POST, "/echo"), false)
            .unwrap();
        send.send_data(Bytes::from(vec![b'z'; 4096]), true).unwrap();
        // The 413 arrives before the stream is reset to stop the rest of the body.
        let response = response.await.unwrap();
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
        // The connection goes on serving.
        let (status, _) = exchange(&mut client, request(Method::GET, "/after"), None).await;
        assert_eq!(status, StatusCode::OK);
    });
}

#[test]
fn http_1_1_is_still_served_on_the_same_port() {
    let server = serve(Limits::default());
    let mut client = Reader::new(connect(&server));
    client.send(b"GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
    let reply = client.response(false).unwrap();
    assert_eq!((reply.status, reply.text()), (200, "GET /plain"));
    // A method that starts like the preface is HTTP/1.1 too.
    client.send(b"PROPFIND /dav HTTP/1.1\r\nHost: x\r\n\r\n");
    let reply = client.response(false).unwrap();
    assert_eq!((reply.status, reply.text()), (200, "PROPFIND /dav"));
}

#[test]
fn h2_over_tls_is_picked_by_alpn() {
    let made = self_signed(&["localhost"]);
    let cert = TlsCert::from_pem(made.chain_pem.as_bytes(), made.key_pem.as_bytes()).unwrap();
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .tls(TlsConfig::from_cert(cert))
        .spawn(service_fn(|req| {
            let scheme = if req.is_secure() { "https" } else { "http" };
            vireo_http::Response::text(format!("{scheme} {}", req.head().path()))
        }))
        .unwrap();
    run(async {
        let connector = trusting(&made, &[b"h2", b"http/1.1"]);
        let tls = common::tls::connect(&connector, server.addr(), "localhost")
            .await
            .unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (mut client, conn) = h2::client::handshake(tls).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let (status, body) = exchange(&mut client, request(Method::GET, "/tls"), None).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"https /tls"[..]));
    });
}

#[test]
fn shutdown_sends_goaway_and_lets_the_open_stream_finish() {
    let server = serve(Limits::default());
    let addr = server.addr();
    run(async move {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let (client, conn) = h2::client::handshake(tcp).await.unwrap();
        let driver = tokio::spawn(conn);
        let mut ready = client.clone().ready().await.unwrap();
        let (response, _) = ready
            .send_request(request(Method::GET, "/slow?400"), true)
            .unwrap();
        // Let the stream reach the server before shutting down.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let stopping = std::thread::spawn(move || server.shutdown());
        let response = response.await.expect("the open stream finishes");
        assert_eq!(response.status(), StatusCode::OK);
        let body = read_body(response.into_body()).await.unwrap();
        assert_eq!(body, b"slow done");
        // The server said GOAWAY: the connection ends cleanly, and no new stream is taken.
        driver
            .await
            .unwrap()
            .expect("closed with GOAWAY, not an error");
        let refused = client.ready().await;
        assert!(refused.is_err(), "no new streams after GOAWAY");
        stopping.join().unwrap().unwrap();
    });
}

/// Counts the calls in progress; each waits until it is dropped.
struct Hang(Arc<AtomicUsize>);

struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl vireo_http::Service for Hang {
    async fn call(&self, req: vireo_http::Request<'_>) -> vireo_http::Response {
        if req.head().path() == "/ok" {
            return vireo_http::Response::text("ok");
        }
        self.0.fetch_add(1, Ordering::SeqCst);
        let _guard = InFlight(self.0.clone());
        std::future::pending::<()>().await;
        unreachable!()
    }
}

#[test]
fn rapid_reset_leaves_the_server_responsive_and_cancels_the_reset_streams() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let server = serve_hang(&in_flight);
    run(async {
        let client = h2c(server.addr()).await;
        let mut opened = 0;
        for _ in 0..2000 {
            let Ok(mut ready) = client.clone().ready().await else {
                break;
            };
            let Ok((_, mut send)) = ready.send_request(request(Method::GET, "/hang"), false) else {
                break;
            };
            send.send_reset(Reason::CANCEL);
            opened += 1;
        }
        assert!(opened > 0);
        // Another client is served as usual.
        let mut fresh = h2c(server.addr()).await;
        let (status, body) = exchange(&mut fresh, request(Method::GET, "/ok"), None).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"ok"[..]));
        // Every reset stream's call is dropped; were it not, this would wait forever.
        while in_flight.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
}

/// A server of [`Hang`] that waits at most a second for open streams at shutdown.
fn serve_hang(in_flight: &Arc<AtomicUsize>) -> vireo_http::RunningServer {
    Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .shutdown_timeout(Duration::from_secs(1))
        .spawn(Hang(in_flight.clone()))
        .unwrap()
}

async fn wait_for_in_flight(in_flight: &AtomicUsize, count: usize) {
    while in_flight.load(Ordering::SeqCst) != count {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn a_stream_that_never_answers_does_not_hold_up_the_others_on_its_connection() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let server = serve_hang(&in_flight);
    run(async {
        let mut client = h2c(server.addr()).await;
        let mut ready = client.clone().ready().await.unwrap();
        let (hanging, _send) = ready
            .send_request(request(Method::GET, "/hang"), true)
            .unwrap();
        wait_for_in_flight(&in_flight, 1).await;
        for _ in 0..3 {
            let (status, body) = exchange(&mut client, request(Method::GET, "/ok"), None).await;
            assert_eq!((status, &body[..]), (StatusCode::OK, &b"ok"[..]));
        }
        assert_eq!(
            in_flight.load(Ordering::SeqCst),
            1,
            "the hanging stream still runs"
        );
        drop(hanging);
    });
}

#[test]
fn streams_still_running_are_dropped_when_their_connection_closes() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let server = serve_hang(&in_flight);
    run(async {
        let tcp = TcpStream::connect(server.addr()).await.unwrap();
        let (client, conn) = h2::client::handshake(tcp).await.unwrap();
        let driver = tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut pending = Vec::new();
        for _ in 0..3 {
            let mut ready = client.clone().ready().await.unwrap();
            pending.push(
                ready
                    .send_request(request(Method::GET, "/hang"), true)
                    .unwrap(),
            );
        }
        wait_for_in_flight(&in_flight, 3).await;
        // The client goes away without resetting anything: its socket just closes.
        driver.abort();
        let _ = driver.await;
        drop(pending);
        // Were the streams' calls kept after their connection, this would wait forever.
        wait_for_in_flight(&in_flight, 0).await;
    });
}

#[test]
fn a_reset_stream_ends_a_streamed_body_waiting_on_its_producer() {
    let server = serve(Limits::default());
    run(async {
        let client = h2c(server.addr()).await;
        let mut ready = client.clone().ready().await.unwrap();
        let (response, mut send) = ready
            .send_request(request(Method::GET, "/stream-until-dropped"), true)
            .unwrap();
        let mut body = response.await.unwrap().into_body();
        let first = body.data().await.unwrap().unwrap();
        assert_eq!(&first[..], b"first");
        assert_eq!(common::STREAMS_DROPPED.load(Ordering::SeqCst), 0);
        send.send_reset(Reason::CANCEL);
        while common::STREAMS_DROPPED.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
}

#[test]
fn a_connection_without_streams_is_closed_with_goaway_after_the_keep_alive_timeout() {
    let server = serve(Limits {
        keep_alive_timeout: Duration::from_secs(1),
        ..Limits::default()
    });
    run(async {
        let tcp = TcpStream::connect(server.addr()).await.unwrap();
        let (client, conn) = h2::client::handshake(tcp).await.unwrap();
        let driver = tokio::spawn(conn);
        let (status, _) = exchange(&mut client.clone(), request(Method::GET, "/one"), None).await;
        assert_eq!(status, StatusCode::OK);
        // Idle from here: the server ends the connection cleanly, with GOAWAY.
        driver
            .await
            .unwrap()
            .expect("closed with GOAWAY, not an error");
        assert!(client.ready().await.is_err(), "no new streams after GOAWAY");
    });
}

#[test]
fn a_client_that_takes_no_response_bytes_has_its_stream_reset_after_the_keep_alive_timeout() {
    let server = serve(Limits {
        keep_alive_timeout: Duration::from_secs(1),
        ..Limits::default()
    });
    run(async {
        let client = h2c(server.addr()).await;
        let mut ready = client.ready().await.unwrap();
        // A response larger than the client's window, which the client never reads.
        let (response, mut send) = ready
            .send_request(request(Method::POST, "/echo"), false)
            .unwrap();
        send.send_data(Bytes::from(vec![b'w'; 300_000]), true)
            .unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let reason = std::future::poll_fn(|cx| send.poll_reset(cx))
            .await
            .unwrap();
        assert_eq!(reason, Reason::INTERNAL_ERROR);
        drop(response);
    });
}

#[test]
fn a_preface_that_arrives_in_pieces_is_still_http2() {
    use std::io::{Read, Write};
    let server = serve(Limits::default());
    let mut tcp = connect(&server);
    tcp.write_all(b"PRI * HTTP/2.0\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    tcp.write_all(b"\r\nSM\r\n\r\n").unwrap();
    // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    tcp.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
    let mut frame_head = [0u8; 9];
    tcp.read_exact(&mut frame_head).unwrap();
    assert_eq!(
        frame_head[3], 4,
        "the server's SETTINGS, not an HTTP/1.1 answer: {frame_head:?}"
    );
    assert_eq!(&frame_head[5..], &[0, 0, 0, 0], "on stream 0");
}

/// A POST to a route that answers without reading the body; the client sends `body_len` bytes
/// of body only after the whole response has arrived. Whether the server reset the stream
/// (and why) once the client was done sending.
fn early_response_then_body(body_len: usize) -> Option<Reason> {
    let server = serve(Limits::default());
    let mut outcome = None;
    run(async {
        let client = h2c(server.addr()).await;
        let mut ready = client.ready().await.unwrap();
        let (response, mut send) = ready
            .send_request(request(Method::POST, "/early"), false)
            .unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            read_body(response.into_body()).await.unwrap(),
            b"POST /early"
        );
        let mut left = body_len;
        while left > 0 {
            send.reserve_capacity(left);
            let room = match poll_fn(|cx| send.poll_capacity(cx)).await {
                Some(Ok(room)) => room,
                _ => break,
            };
            let n = room.min(left);
            left -= n;
            if send
                .send_data(Bytes::from(vec![b'b'; n]), left == 0)
                .is_err()
            {
                break;
            }
        }
        let reset = poll_fn(|cx| send.poll_reset(cx));
        if let Ok(reason) = tokio::time::timeout(Duration::from_millis(300), reset).await {
            outcome = Some(reason.unwrap());
        }
    });
    outcome
}

#[test]
fn a_request_body_that_outlasts_its_response_is_still_read_up_to_a_bound() {
    // The rest of a small body is read, as on HTTP/1.1: the stream ends normally, so h2 would
    // still have refused a malformed end to it (h2spec's 8.1 and 8.1.2.6 cases).
    assert_eq!(early_response_then_body(16 * 1024), None);
    // Past the bound, the stream is reset with NO_ERROR so the client stops sending.
    assert_eq!(early_response_then_body(300_000), Some(Reason::NO_ERROR));
}
