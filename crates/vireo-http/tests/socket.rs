//! Raw-socket tests against a real listening server: exact bytes in, exact status and
//! connection state out.

mod common;

use common::{connect, exchange, serve, serve_with, Reader};
use std::sync::Arc;
use std::time::Duration;
use vireo_http::{Limits, RunningServer, Server};

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    for i in 0..50 {
        reader.send(format!("GET /n/{i} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        let reply = reader.response(false).unwrap();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.text(), format!("GET /n/{i}"));
        assert_eq!(reply.header("connection"), None);
        assert!(reply.header("date").is_some_and(|d| d.ends_with(" GMT")));
    }
}

#[test]
fn limits_that_would_stop_all_service_are_refused_before_serving() {
    let limits = Limits {
        max_connections_per_worker: 0,
        ..Limits::default()
    };
    let error = Server::bind("127.0.0.1:0")
        .unwrap()
        .limits(limits)
        .spawn(common::TestService)
        .expect_err("a worker that accepts nothing is refused");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        error.to_string().contains("max_connections_per_worker"),
        "{error}"
    );
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    let mut batch = Vec::new();
    for i in 0..40 {
        batch.extend_from_slice(format!("GET /p/{i} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    }
    // A body-carrying request and a slow one in the middle must not reorder anything.
    batch.extend_from_slice(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc");
    batch.extend_from_slice(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
    batch.extend_from_slice(b"GET /last HTTP/1.1\r\nHost: t\r\n\r\n");
    reader.send(&batch);
    for i in 0..40 {
        assert_eq!(
            reader.response(false).unwrap().text(),
            format!("GET /p/{i}")
        );
    }
    assert_eq!(reader.response(false).unwrap().text(), "abc");
    assert_eq!(reader.response(false).unwrap().text(), "slow done");
    assert_eq!(reader.response(false).unwrap().text(), "GET /last");
}

#[test]
fn without_half_close_a_client_that_leaves_cancels_the_work_on_its_request() {
    let server = serve_with(Server::bind("127.0.0.1:0").unwrap().half_close(false));
    let mut reader = Reader::new(connect(&server));
    // A pipelined request waiting behind it is not a close.
    reader.send(b"GET /slow?100 HTTP/1.1\r\nHost: t\r\n\r\nGET /next HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(reader.response(false).unwrap().text(), "slow done");
    assert_eq!(reader.response(false).unwrap().text(), "GET /next");
    reader.send(b"GET /until-dropped HTTP/1.1\r\nHost: t\r\n\r\n");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(common::DROPPED.load(std::sync::atomic::Ordering::SeqCst), 0);
    drop(reader);
    common::wait_for_text(&server, "/dropped", "1");
    // With a body the service has read, the end of the stream is seen the same way.
    let mut reader = Reader::new(connect(&server));
    reader.send(b"POST /until-dropped HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(common::DROPPED.load(std::sync::atomic::Ordering::SeqCst), 1);
    drop(reader);
    common::wait_for_text(&server, "/dropped", "2");
}

#[test]
fn without_half_close_a_client_that_leaves_ends_a_streamed_body_waiting_on_its_producer() {
    let server = serve_with(Server::bind("127.0.0.1:0").unwrap().half_close(false));
    let mut reader = Reader::new(connect(&server));
    reader.send(b"GET /stream-until-dropped HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut seen = Vec::new();
    while !seen.windows(5).any(|w| w == b"first") {
        let mut chunk = [0u8; 1024];
        let n = std::io::Read::read(&mut reader.stream, &mut chunk).unwrap();
        assert!(n > 0, "the connection closed before the first chunk");
        seen.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(
        common::STREAMS_DROPPED.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    drop(reader);
    common::wait_for_text(&server, "/streams-dropped", "1");
}

#[test]
fn requests_split_across_writes_are_reassembled() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    let request = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello";
    for byte in request {
        reader.send(&[*byte]);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(reader.response(false).unwrap().text(), "hello");
}

#[test]
fn http10_closes_unless_asked_to_keep_alive() {
    let server = serve(Limits::default());
    let (reply, mut reader) = exchange(&server, b"GET / HTTP/1.0\r\n\r\n");
    let reply = reply.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(reader.is_closed());

    let (reply, mut reader) =
        exchange(&server, b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(reply.unwrap().header("connection"), Some("keep-alive"));
    reader.send(b"GET /again HTTP/1.0\r\n\r\n");
    assert_eq!(reader.response(false).unwrap().text(), "GET /again");
}

#[test]
fn connection_close_is_honoured() {
    let server = serve(Limits::default());
    let (reply, mut reader) = exchange(
        &server,
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(reply.unwrap().header("connection"), Some("close"));
    assert!(reader.is_closed());
}

#[test]
fn a_response_asking_to_close_closes_the_connection() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    reader.send(b"GET /bye HTTP/1.1\r\nHost: t\r\n\r\nGET /never HTTP/1.1\r\nHost: t\r\n\r\n");
    let reply = reader.response(false).unwrap();
    assert_eq!(
        (reply.text(), reply.header("connection")),
        ("bye", Some("close"))
    );
    assert!(
        reader.is_closed(),
        "the pipelined request after it is not answered"
    );
}

#[test]
fn head_gets_the_length_but_no_body() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    reader.send(b"HEAD /x HTTP/1.1\r\nHost: t\r\n\r\nGET /y HTTP/1.1\r\nHost: t\r\n\r\n");
    let head = reader.response(true).unwrap();
    assert_eq!(head.header("content-length"), Some("7"));
    assert!(head.body.is_empty());
    // The next response starts right after the head: no stray body bytes between.
    assert_eq!(reader.response(false).unwrap().text(), "GET /y");
}

#[test]
fn content_length_and_chunked_bodies_are_echoed_exactly() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    let binary: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let mut request = format!(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        binary.len()
    )
    .into_bytes();
    request.extend_from_slice(&binary);
    reader.send(&request);
    assert_eq!(reader.response(false).unwrap().body, binary);

    reader.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n\x00\r\n\xff\r\n3\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n");
    assert_eq!(reader.response(false).unwrap().body, b"\x00\r\n\xffabc");

    reader.send(b"POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
    assert_eq!(reader.response(false).unwrap().text(), "11");
}

#[test]
fn unread_bodies_are_skipped_to_keep_the_connection() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    reader.send(b"POST /ignored HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhelloGET /next HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(reader.response(false).unwrap().text(), "POST /ignored");
    assert_eq!(reader.response(false).unwrap().text(), "GET /next");
}

#[test]
fn streamed_responses_are_chunked_or_close_delimited() {
    let server = serve(Limits::default());
    let (reply, _) = exchange(&server, b"GET /stream?4 HTTP/1.1\r\nHost: t\r\n\r\n");
    let reply = reply.unwrap();
    assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
    assert_eq!(reply.text(), "chunk 0\nchunk 1\nchunk 2\nchunk 3\n");

    let (reply, _) = exchange(&server, b"GET /stream?2 HTTP/1.0\r\n\r\n");
    let reply = reply.unwrap();
    assert_eq!(reply.header("transfer-encoding"), None);
    assert_eq!(reply.header("connection"), Some("close"));
    assert_eq!(reply.text(), "chunk 0\nchunk 1\n");
}

#[test]
fn continue_is_sent_only_when_the_body_is_read() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    reader.send(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n",
    );
    let interim = reader.response(false).unwrap();
    assert_eq!(interim.status, 100);
    reader.send(b"body");
    assert_eq!(reader.response(false).unwrap().text(), "body");

    // A handler that never reads the body: no 100, a final answer, and the connection closes
    // because the client still holds a body it may send.
    let mut reader = Reader::new(connect(&server));
    reader.send(
        b"POST /no-read HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n",
    );
    let reply = reader.response(false).unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(reader.is_closed());
}

#[test]
fn other_expectations_get_417_and_close() {
    let server = serve(Limits::default());
    let (reply, mut reader) =
        exchange(&server, b"GET / HTTP/1.1\r\nHost: t\r\nExpect: tea\r\n\r\n");
    assert_eq!(reply.unwrap().status, 417);
    assert!(reader.is_closed());
}

#[test]
fn framing_errors_close_without_answering_what_follows() {
    let server = serve(Limits::default());
    let smuggle = b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 30\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n";
    let (reply, mut reader) = exchange(&server, smuggle);
    let reply = reply.unwrap();
    assert_eq!(reply.status, 400);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(reader.is_closed());

    let (reply, mut reader) = exchange(
        &server,
        b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    );
    assert_eq!(reply.unwrap().status, 501);
    assert!(reader.is_closed());

    let (reply, mut reader) = exchange(&server, b"GET / HTTP/2.0\r\nHost: t\r\n\r\n");
    assert_eq!(reply.unwrap().status, 505);
    assert!(reader.is_closed());

    let bad_chunk = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n";
    let (reply, mut reader) = exchange(&server, bad_chunk);
    let reply = reply.unwrap();
    assert_eq!(reply.status, 400);
    assert!(
        reader.response(false).is_none(),
        "nothing after a bad chunk is answered"
    );
}

#[test]
fn each_size_limit_has_its_status() {
    let server = serve(Limits::default());
    let mut too_many = b"GET / HTTP/1.1\r\nHost: t\r\n".to_vec();
    for i in 0..101 {
        too_many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    too_many.extend_from_slice(b"\r\n");
    let (reply, mut reader) = exchange(&server, &too_many);
    assert_eq!(reply.unwrap().status, 431);
    assert!(reader.is_closed());

    let mut big_head = b"GET / HTTP/1.1\r\nHost: t\r\nX-Big: ".to_vec();
    big_head.resize(70 * 1024, b'a');
    big_head.extend_from_slice(b"\r\n\r\n");
    let (reply, _) = exchange(&server, &big_head);
    assert_eq!(reply.unwrap().status, 431);

    let mut long_target = b"GET /".to_vec();
    long_target.resize(9 * 1024, b'a');
    long_target.extend_from_slice(b" HTTP/1.1\r\nHost: t\r\n\r\n");
    let (reply, _) = exchange(&server, &long_target);
    assert_eq!(reply.unwrap().status, 414);

    // Only the head is sent: the 413 comes without the server waiting for the body.
    let (reply, mut reader) = exchange(
        &server,
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3000000\r\n\r\n",
    );
    assert_eq!(reply.unwrap().status, 413);
    assert!(reader.is_closed());
}

#[test]
fn chunked_body_over_the_limit_is_413() {
    let server = serve(Limits {
        max_body_size: 10,
        ..Limits::default()
    });
    let (reply, mut reader) = exchange(
        &server,
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n",
    );
    let reply = reply.unwrap();
    assert_eq!(reply.status, 413);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(reader.is_closed());
}

#[test]
fn a_slow_head_is_cut_off_by_the_head_timeout() {
    let server = serve(Limits {
        head_timeout: Duration::from_millis(200),
        ..Limits::default()
    });
    let mut reader = Reader::new(connect(&server));
    reader.send(b"GET / HTTP/1.1\r\n");
    std::thread::sleep(Duration::from_millis(100));
    reader.send(b"Host: t\r\n");
    assert!(reader.is_closed(), "closed without a response");
}

#[test]
fn an_idle_connection_is_closed_after_the_keep_alive_timeout() {
    let server = serve(Limits {
        keep_alive_timeout: Duration::from_millis(200),
        ..Limits::default()
    });
    let mut reader = Reader::new(connect(&server));
    reader.send(GET);
    assert_eq!(reader.response(false).unwrap().status, 200);
    assert!(reader.is_closed());
}

#[test]
fn the_keep_alive_timeout_counts_from_the_last_response_not_the_request() {
    let server = serve(Limits {
        keep_alive_timeout: Duration::from_millis(200),
        ..Limits::default()
    });
    let mut reader = Reader::new(connect(&server));
    // The handler takes longer than the timeout plus the idle clock's one-second resolution;
    // the connection was busy, not idle, so it must still be open just after the response.
    reader.send(b"GET /slow?1500 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(reader.response(false).unwrap().text(), "slow done");
    std::thread::sleep(Duration::from_millis(100));
    reader.send(GET);
    assert_eq!(reader.response(false).unwrap().status, 200);
}

#[test]
fn a_panic_costs_one_500_and_the_server_goes_on() {
    let server = serve(Limits::default());
    let mut reader = Reader::new(connect(&server));
    reader.send(b"GET /panic HTTP/1.1\r\nHost: t\r\n\r\n");
    let reply = reader.response(false).unwrap();
    assert_eq!(reply.status, 500);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(reader.is_closed());
    let (reply, _) = exchange(&server, GET);
    assert_eq!(reply.unwrap().status, 200);
}

#[test]
fn blocking_work_does_not_stall_other_connections() {
    let server = serve(Limits::default());
    let mut blocked = Reader::new(connect(&server));
    blocked.send(b"GET /blocking HTTP/1.1\r\nHost: t\r\n\r\n");
    std::thread::sleep(Duration::from_millis(50));
    let (reply, _) = exchange(&server, GET);
    assert_eq!(reply.unwrap().status, 200);
    // The plain request was answered while the blocking one was still running.
    blocked.stream.set_nonblocking(true).unwrap();
    let pending = blocked.stream.peek(&mut [0u8; 1]);
    assert!(matches!(pending, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock));
    blocked.stream.set_nonblocking(false).unwrap();
    assert_eq!(blocked.response(false).unwrap().text(), "blocking done");
}

#[test]
fn connections_over_the_cap_wait_for_a_free_slot() {
    let server = serve(Limits {
        max_connections_per_worker: 1,
        ..Limits::default()
    });
    let mut first = Reader::new(connect(&server));
    first.send(GET);
    assert_eq!(first.response(false).unwrap().status, 200);
    let mut second = Reader::new(connect(&server));
    second.send(GET);
    second
        .stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    assert!(
        second.response(false).is_none(),
        "not served while the first is open"
    );
    drop(first);
    second
        .stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(second.response(false).unwrap().status, 200);
}

#[test]
fn shutdown_finishes_requests_in_flight_and_closes_idle_ones() {
    let server = serve(Limits::default());
    let mut idle = Reader::new(connect(&server));
    idle.send(GET);
    assert_eq!(idle.response(false).unwrap().status, 200);
    let mut busy = Reader::new(connect(&server));
    busy.send(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
    std::thread::sleep(Duration::from_millis(50));
    let addr = server.addr();
    let handle = server.shutdown_handle();
    let stopping = std::thread::spawn(move || server.shutdown());
    handle.shutdown();
    let reply = busy.response(false).unwrap();
    assert_eq!(reply.text(), "slow done");
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(busy.is_closed());
    assert!(idle.is_closed());
    stopping.join().unwrap().unwrap();
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "no longer accepting"
    );
}

/// Connections opened in a burst are spread evenly over the workers, whichever worker's
/// accept wins the race for each (each answer names the worker thread that served it).
#[test]
fn a_burst_of_connections_is_spread_evenly_over_the_workers() {
    let server = vireo_http::Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(2)
        .spawn(vireo_http::service_fn(|_req| {
            let name = std::thread::current().name().unwrap_or("?").to_owned();
            vireo_http::Response::text(name)
        }))
        .unwrap();
    // Connections stay open across rounds: the balance is of open connections, and a closed
    // one leaves its worker's count only once the server has read the close.
    let mut open = Vec::new();
    for round in 0..3 {
        let mut readers: Vec<Reader> = (0..60).map(|_| Reader::new(connect(&server))).collect();
        for reader in &mut readers {
            reader.send(GET);
        }
        let mut per_worker = std::collections::BTreeMap::<String, usize>::new();
        for reader in &mut readers {
            let reply = reader.response(false).expect("an answer");
            *per_worker.entry(reply.text().to_owned()).or_default() += 1;
        }
        let counts: Vec<usize> = per_worker.values().copied().collect();
        assert_eq!(
            counts.len(),
            2,
            "round {round}: both workers serve: {per_worker:?}"
        );
        assert!(
            counts.iter().all(|&n| n.abs_diff(30) <= 1),
            "round {round}: {per_worker:?}"
        );
        open.extend(readers);
    }
}

/// Answers at once and leaves work running for a second after the response; `drained`
/// resolves when that work has ended, or never when `forever`.
struct Lingering {
    done: Arc<std::sync::atomic::AtomicBool>,
    forever: bool,
}

impl vireo_http::Service for Lingering {
    async fn call(&self, _req: vireo_http::Request<'_>) -> vireo_http::Response {
        let done = self.done.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        vireo_http::Response::text("answered")
    }

    async fn drained(&self) {
        while self.forever || !self.done.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn lingering(
    forever: bool,
    shutdown_timeout: Duration,
) -> (RunningServer, Arc<std::sync::atomic::AtomicBool>) {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = vireo_http::Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .shutdown_timeout(shutdown_timeout)
        .spawn(Lingering {
            done: done.clone(),
            forever,
        })
        .unwrap();
    (server, done)
}

#[test]
fn shutdown_waits_for_work_a_response_left_running() {
    let (server, done) = lingering(false, Duration::MAX);
    let mut client = Reader::new(connect(&server));
    client.send(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert_eq!(client.response(false).unwrap().text(), "answered");
    drop(client);
    server.shutdown().unwrap();
    assert!(
        done.load(std::sync::atomic::Ordering::SeqCst),
        "the server stopped before the service's work ended"
    );
}

#[test]
fn shutdown_stops_waiting_for_the_service_at_the_timeout() {
    let (server, _) = lingering(true, Duration::from_millis(300));
    let mut client = Reader::new(connect(&server));
    client.send(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert_eq!(client.response(false).unwrap().text(), "answered");
    drop(client);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(server.shutdown().is_ok()));
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(20)),
        Ok(true),
        "shutdown returned once the timeout passed"
    );
}
