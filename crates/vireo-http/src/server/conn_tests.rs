//! The connection state machine on in-memory I/O: exact bytes in, exact bytes and connection
//! state out, with no socket. The runtime's clock is paused, so it jumps ahead whenever every
//! task waits, and timeouts pass at once and deterministically.

use super::serve_connection;
use crate::server::balance::Balancer;
use crate::server::worker::Worker;
use crate::transport::IoTransport;
use crate::{Body, Limits, Request, Response, Service};
use bytes::Bytes;
use http::StatusCode;
use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;

/// `/echo` answers the body, `/count` reads it chunk by chunk and answers its length,
/// `/slow` waits a second, `/big?n` answers n bytes, `/stream?n` streams n chunks, `/late`
/// streams one chunk and a second one a second later, `/broken` streams a chunk and then
/// fails, `/overlong` announces 4 bytes and streams 6, `/panic` panics, `/status?n` answers
/// status n with the body `content` (and no upgrade), `/declared` has no body but says it has
/// 1234 bytes; anything else answers `hello`.
struct TestService;

impl Service for TestService {
    async fn call(&self, mut req: Request<'_>) -> Response {
        let query: usize = req.head().query().and_then(|q| q.parse().ok()).unwrap_or(3);
        match req.head().path() {
            "/echo" => match req.body().to_bytes().await {
                Ok(body) => Response::new(StatusCode::OK, body),
                Err(error) => Response::new(error.status(), error.to_string()),
            },
            "/count" => {
                let mut total = 0;
                loop {
                    match req.body().chunk().await {
                        Ok(Some(chunk)) => total += chunk.len(),
                        Ok(None) => break Response::text(total.to_string()),
                        Err(error) => break Response::new(error.status(), error.to_string()),
                    }
                }
            }
            "/slow" => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Response::text("slow done")
            }
            "/big" => Response::new(StatusCode::OK, vec![b'x'; query]),
            "/stream" => {
                let chunks = (0..query).map(|k| Ok::<_, std::io::Error>(format!("chunk {k}\n")));
                Response::new(StatusCode::OK, Body::stream(IterStream(chunks)))
            }
            "/late" => Response::new(StatusCode::OK, Body::stream(Late(0, None))),
            "/broken" => {
                let chunks = [Ok("part\n"), Err(std::io::Error::other("broken"))];
                Response::new(StatusCode::OK, Body::stream(IterStream(chunks.into_iter())))
            }
            "/overlong" => {
                let chunks = ["abcd", "ef"].map(|c| Ok::<_, crate::BoxError>(Bytes::from(c)));
                let stream: crate::BodyStream = Box::pin(IterStream(chunks.into_iter()));
                Response::new(StatusCode::OK, Body::SizedStream(4, stream))
            }
            "/panic" => panic!("the test service panics"),
            "/status" => Response::new(
                StatusCode::from_u16(query as u16).expect("a status"),
                "content",
            ),
            "/declared" => {
                let mut res = Response::new(StatusCode::OK, Body::Empty);
                let length = http::HeaderValue::from_static("1234");
                res.headers_mut()
                    .insert(http::header::CONTENT_LENGTH, length);
                res
            }
            _ => Response::text("hello"),
        }
    }
}

struct IterStream<I>(I);

impl<I: Iterator + Unpin> futures_core::Stream for IterStream<I> {
    type Item = I::Item;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<I::Item>> {
        std::task::Poll::Ready(self.0.next())
    }
}

/// `first\n` at once, then `second\n` a second later.
struct Late(u8, Option<std::pin::Pin<Box<tokio::time::Sleep>>>);

impl futures_core::Stream for Late {
    type Item = Result<&'static str, std::io::Error>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        match self.0 {
            0 => {
                self.0 = 1;
                self.1 = Some(Box::pin(tokio::time::sleep(Duration::from_secs(1))));
                Poll::Ready(Some(Ok("first\n")))
            }
            1 => match self.1.as_mut().map(|sleep| sleep.as_mut().poll(cx)) {
                Some(Poll::Pending) => Poll::Pending,
                _ => {
                    self.0 = 2;
                    Poll::Ready(Some(Ok("second\n")))
                }
            },
            _ => Poll::Ready(None),
        }
    }
}

/// The server's end of the pipe, counting the writes made to it.
struct CountingIo {
    io: DuplexStream,
    writes: Rc<Cell<usize>>,
}

impl tokio::io::AsyncRead for CountingIo {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for CountingIo {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.writes.set(self.writes.get() + 1);
        std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The client's end of one served connection.
struct Peer {
    io: DuplexStream,
    worker: Rc<Worker<TestService>>,
    served: JoinHandle<()>,
    /// Writes the server has made to the connection.
    writes: Rc<Cell<usize>>,
}

impl Peer {
    async fn send(&mut self, bytes: &[u8]) {
        self.io.write_all(bytes).await.unwrap();
    }

    /// Half-close, then everything the server sends until it closes.
    async fn finish(mut self) -> String {
        self.io.shutdown().await.unwrap();
        self.read_to_close().await
    }

    /// Everything the server sends until it closes, with each `Date` value blanked.
    async fn read_to_close(mut self) -> String {
        let mut out = Vec::new();
        self.io.read_to_end(&mut out).await.unwrap();
        self.served.await.unwrap();
        blank_dates(&String::from_utf8(out).unwrap())
    }

    /// One whole response (length-delimited or chunked), with its `Date` blanked.
    async fn response(&mut self) -> String {
        let mut raw = Vec::new();
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut parsed = httparse::Response::new(&mut headers);
            if let Ok(httparse::Status::Complete(head_len)) = parsed.parse(&raw) {
                let length = parsed.headers.iter().find_map(|h| {
                    h.name
                        .eq_ignore_ascii_case("content-length")
                        .then(|| std::str::from_utf8(h.value).unwrap().parse().unwrap())
                });
                let complete = match length {
                    Some(length) => raw.len() >= head_len + length,
                    None if parsed.code == Some(100) => true,
                    None => raw.ends_with(b"0\r\n\r\n"),
                };
                if complete {
                    let end = head_len + length.unwrap_or(raw.len() - head_len);
                    assert_eq!(end, raw.len(), "read past one response");
                    return blank_dates(&String::from_utf8(raw).unwrap());
                }
            }
            let mut byte = [0u8; 1];
            assert_eq!(
                self.io.read(&mut byte).await.unwrap(),
                1,
                "closed mid-response"
            );
            raw.push(byte[0]);
        }
    }
}

fn blank_dates(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("date: ") {
        let (before, after) = rest.split_at(at + "date: ".len());
        out.push_str(before);
        out.push_str("DATE");
        rest = &after[crate::proto::DATE_LEN..];
    }
    out.push_str(rest);
    out
}

/// Serve one connection over an in-memory pipe of `pipe_size` bytes and run `client` on it.
fn with_connection<F, Fut>(limits: Limits, pipe_size: usize, client: F) -> Fut::Output
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let (balancer, _mailboxes) = Balancer::new(1);
        let worker = Rc::new(Worker::new(
            Arc::new(TestService),
            limits,
            balancer,
            0,
            false,
        ));
        let ticker = tokio::task::spawn_local({
            let worker = worker.clone();
            async move { worker.tick().await }
        });
        let (io, server_end) = tokio::io::duplex(pipe_size);
        let writes = Rc::new(Cell::new(0));
        let served = tokio::task::spawn_local(serve_connection(
            IoTransport::new(CountingIo {
                io: server_end,
                writes: writes.clone(),
            }),
            crate::request::Peer::plain(None),
            worker.track_connection(),
        ));
        let out = client(Peer {
            io,
            worker,
            served,
            writes,
        })
        .await;
        ticker.abort();
        out
    })
}

/// Send `input` whole, half-close, and return all the server answered.
fn exchange(limits: Limits, input: &[u8]) -> String {
    with_connection(limits, 64 * 1024, |mut peer| async move {
        peer.send(input).await;
        peer.finish().await
    })
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ndate: DATE\r\ncontent-length: {}\r\ncontent-type: text/plain; charset=utf-8\r\n\r\n{body}",
        body.len()
    )
}

fn octets(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ndate: DATE\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn refused(status: StatusCode) -> String {
    let reason = status.canonical_reason().unwrap();
    format!(
        "HTTP/1.1 {} {reason}\r\ndate: DATE\r\ncontent-length: {}\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n\r\n{reason}",
        status.as_u16(),
        reason.len()
    )
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn keep_alive_answers_request_after_request_on_one_connection() {
    let answers = with_connection(Limits::default(), 4096, |mut peer| async move {
        let mut answers = Vec::new();
        for _ in 0..3 {
            peer.send(GET).await;
            answers.push(peer.response().await);
        }
        assert!(!peer.served.is_finished(), "the connection stays open");
        answers.push(peer.finish().await);
        answers
    });
    assert_eq!(
        answers,
        [ok("hello"), ok("hello"), ok("hello"), String::new()]
    );
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let input = [
        GET,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\none",
        b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n",
        GET,
    ]
    .concat();
    let expected = [ok("hello"), octets("one"), octets("two"), ok("hello")].concat();
    assert_eq!(exchange(Limits::default(), &input), expected);
}

#[test]
fn a_request_split_at_any_byte_is_answered_as_if_whole() {
    let input = [
        &b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
        b"5;name=value\r\nhello\r\n1\r\n!\r\n0\r\nTrailer: x\r\n\r\n",
        b"POST /count HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody",
        GET,
    ]
    .concat();
    let whole = exchange(Limits::default(), &input);
    assert_eq!(whole, [octets("hello!"), ok("4"), ok("hello")].concat());
    for split in 1..input.len() {
        let (first, second) = input.split_at(split);
        let answered = with_connection(Limits::default(), 64 * 1024, |mut peer| async move {
            peer.send(first).await;
            // Let the server read and act on the first part before the rest arrives.
            tokio::time::sleep(Duration::from_millis(1)).await;
            peer.send(second).await;
            peer.finish().await
        });
        assert_eq!(answered, whole, "split after byte {split}");
    }
}

#[test]
fn a_head_sent_a_byte_at_a_time_is_not_parsed_again_for_every_byte() {
    // A long field value arriving a byte per read: parsing the whole head again after each
    // would cost work growing with the square of its length.
    let value = "v".repeat(8 * 1024);
    let head = format!("GET / HTTP/1.1\r\nHost: a\r\nX-Long: {value}\r\n\r\n");
    let (before, _) = super::INCOMPLETE_PARSES.with(|count| count.get());
    let answered = with_connection(Limits::default(), 64 * 1024, |mut peer| async move {
        for byte in head.as_bytes().chunks(1) {
            peer.send(byte).await;
            // Let the server read each byte on its own.
            tokio::task::yield_now().await;
        }
        peer.response().await
    });
    assert_eq!(answered, ok("hello"));
    let parses = super::INCOMPLETE_PARSES.with(|count| count.get()).0 - before;
    // A parse per line ended and per doubling of the buffer: a few dozen, not thousands.
    assert!(parses < 64, "{parses} parses of an incomplete head");
}

#[test]
fn empty_lines_before_a_request_are_not_scanned_again_by_every_parse() {
    // Each line end is a parse; without dropping the lines already seen, each parse would go
    // through all of them, and the bytes scanned would grow with the square of their number.
    let lines = 2_000;
    let (_, before) = super::INCOMPLETE_PARSES.with(|count| count.get());
    let answered = with_connection(Limits::default(), 64 * 1024, |mut peer| async move {
        for _ in 0..lines {
            peer.send(b"\r\n").await;
            tokio::task::yield_now().await;
        }
        peer.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").await;
        peer.response().await
    });
    assert_eq!(answered, ok("hello"));
    let scanned = super::INCOMPLETE_PARSES.with(|count| count.get()).1 - before;
    assert!(
        scanned < 8 * lines,
        "{scanned} bytes scanned for {lines} empty lines"
    );
}

#[test]
fn continue_is_sent_only_when_the_body_is_read() {
    with_connection(Limits::default(), 4096, |mut peer| async move {
        peer.send(
            b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
        )
        .await;
        assert_eq!(peer.response().await, "HTTP/1.1 100 Continue\r\n\r\n");
        peer.send(b"hi").await;
        assert_eq!(peer.response().await, octets("hi"));
        assert_eq!(peer.finish().await, "");
    });
    // A service that answers without reading: no 100, and the connection closes, since the
    // client may still send the body or not.
    let answered = exchange(
        Limits::default(),
        b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
    );
    assert_eq!(
        answered,
        ok("hello").replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n")
    );
}

#[test]
fn each_limit_is_answered_with_its_status_and_a_close() {
    let tight = Limits {
        max_head_size: 256,
        max_headers: 4,
        max_target_len: 32,
        max_body_size: 8,
        max_chunk_metadata: 16,
        ..Limits::default()
    };
    let cases: [(&str, &[u8], StatusCode); 6] = [
        (
            "head too large",
            &[b"GET / HTTP/1.1\r\nHost: a\r\nX: ", &[b'v'; 300][..], b"\r\n\r\n"].concat(),
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        ),
        (
            "too many fields",
            b"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n",
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        ),
        (
            "target too long",
            &[b"GET /", &[b'a'; 40][..], b" HTTP/1.1\r\nHost: a\r\n\r\n"].concat(),
            StatusCode::URI_TOO_LONG,
        ),
        (
            "announced body too large",
            b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\n123456789",
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            "chunked body too large",
            b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n5\r\n12345\r\n0\r\n\r\n",
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            "chunk metadata too large",
            b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\nx\r\n0\r\n\r\n",
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (name, input, status) in cases {
        let answered = exchange(tight.clone(), &[input, GET].concat());
        assert!(
            answered.starts_with(&format!("HTTP/1.1 {}", status.as_u16())),
            "{name}: {answered}"
        );
        assert!(answered.contains("connection: close"), "{name}: {answered}");
        assert!(
            !answered.contains("hello"),
            "{name}: nothing after the refusal is answered"
        );
    }
}

#[test]
fn each_protocol_error_gets_its_answer_and_a_close() {
    let cases: [(&[u8], StatusCode); 6] = [
        (
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            StatusCode::BAD_REQUEST,
        ),
        (
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            StatusCode::NOT_IMPLEMENTED,
        ),
        (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", StatusCode::HTTP_VERSION_NOT_SUPPORTED),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nExpect: something\r\n\r\n",
            StatusCode::EXPECTATION_FAILED,
        ),
        (b"GET / HTTP/1.1\r\n\r\n", StatusCode::BAD_REQUEST),
        (b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", StatusCode::BAD_REQUEST),
    ];
    for (input, status) in cases {
        let answered = exchange(Limits::default(), &[input, GET].concat());
        assert_eq!(
            answered,
            refused(status),
            "{}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn a_client_not_speaking_http_gets_no_answer_only_a_close() {
    // h2spec's invalid HTTP/2 preface, and another protocol's request line: the responses
    // already due go out, then the connection closes with nothing more.
    for line in [
        &b"INVALID CONNECTION PREFACE\r\n\r\n"[..],
        b"DESCRIBE rtsp://a/x RTSP/1.0\r\nCSeq: 1\r\n\r\n",
    ] {
        assert_eq!(exchange(Limits::default(), line), "");
        let answered = exchange(Limits::default(), &[GET, line, GET].concat());
        assert_eq!(answered, ok("hello"), "{}", String::from_utf8_lossy(line));
    }
    // A request line without a version is still HTTP gone wrong: 400.
    let answered = exchange(Limits::default(), b"GET /\r\nHost: a\r\n\r\n");
    assert_eq!(answered, refused(StatusCode::BAD_REQUEST));
}

#[test]
fn a_panic_costs_one_500_and_the_connection() {
    let answered = exchange(
        Limits::default(),
        &[&b"GET /panic HTTP/1.1\r\nHost: a\r\n\r\n"[..], GET].concat(),
    );
    assert!(
        answered.starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
        "{answered}"
    );
    assert!(answered.contains("connection: close"));
    assert!(!answered.contains("hello"));
}

#[test]
fn an_interim_status_given_as_the_answer_is_a_500_and_the_connection() {
    // Sent as it is, a 1xx would be taken as interim and the next response as this request's.
    for status in [100, 101, 102, 103] {
        let answered = exchange(
            Limits::default(),
            &[
                format!("GET /status?{status} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
                GET,
            ]
            .concat(),
        );
        assert!(
            answered.starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
            "{status}: {answered}"
        );
        assert!(
            answered.contains("connection: close"),
            "{status}: {answered}"
        );
        assert_eq!(
            answered.matches("HTTP/1.1 ").count(),
            1,
            "{status}: {answered}"
        );
    }
}

#[test]
fn a_205_goes_without_its_content_and_the_connection_goes_on() {
    let answered = exchange(
        Limits::default(),
        &[&b"GET /status?205 HTTP/1.1\r\nHost: a\r\n\r\n"[..], GET].concat(),
    );
    assert_eq!(
        answered,
        [
            "HTTP/1.1 205 Reset Content\r\ndate: DATE\r\ncontent-length: 0\r\n\r\n",
            &ok("hello")
        ]
        .concat()
    );
}

#[test]
fn a_head_answer_keeps_the_length_its_service_declared() {
    let answered = exchange(
        Limits::default(),
        &[&b"HEAD /declared HTTP/1.1\r\nHost: a\r\n\r\n"[..], GET].concat(),
    );
    assert_eq!(
        answered,
        [
            "HTTP/1.1 200 OK\r\ndate: DATE\r\ncontent-length: 1234\r\n\r\n",
            &ok("hello")
        ]
        .concat()
    );
}

#[test]
fn a_half_closed_client_gets_every_answer_it_asked_for() {
    let answered = with_connection(Limits::default(), 4096, |mut peer| async move {
        peer.send(&[GET, b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n"].concat())
            .await;
        peer.io.shutdown().await.unwrap();
        peer.read_to_close().await
    });
    assert_eq!(answered, [ok("hello"), ok("slow done")].concat());
}

#[test]
fn streamed_bodies_are_chunked_and_end_with_the_last_chunk() {
    let answered = exchange(
        Limits::default(),
        b"GET /stream?2 HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(
        answered,
        "HTTP/1.1 200 OK\r\ndate: DATE\r\ntransfer-encoding: chunked\r\n\r\n8\r\nchunk 0\n\r\n8\r\nchunk 1\n\r\n0\r\n\r\n"
    );
}

#[test]
fn a_streamed_body_ready_at_once_leaves_with_its_head_in_one_write() {
    let writes = with_connection(Limits::default(), 64 * 1024, |mut peer| async move {
        peer.send(b"GET /stream?3 HTTP/1.1\r\nHost: a\r\n\r\n")
            .await;
        let answer = peer.response().await;
        assert!(answer.ends_with("8\r\nchunk 2\n\r\n0\r\n\r\n"), "{answer}");
        peer.writes.get()
    });
    assert_eq!(writes, 1);
}

#[test]
fn what_a_stream_has_sent_goes_out_while_it_waits_for_more() {
    let answer = with_connection(Limits::default(), 64 * 1024, |mut peer| async move {
        peer.send(b"GET /late HTTP/1.1\r\nHost: a\r\n\r\n").await;
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        // The second chunk comes a second later: the first must arrive well before that.
        while !seen.ends_with(b"first\n\r\n") {
            let n = tokio::time::timeout(Duration::from_millis(500), peer.io.read(&mut buf))
                .await
                .expect("the first chunk waited for the second")
                .unwrap();
            seen.extend_from_slice(&buf[..n]);
        }
        while !seen.ends_with(b"0\r\n\r\n") {
            let n = peer.io.read(&mut buf).await.unwrap();
            assert_ne!(n, 0, "closed mid-response");
            seen.extend_from_slice(&buf[..n]);
        }
        blank_dates(&String::from_utf8(seen).unwrap())
    });
    assert_eq!(
        answer,
        "HTTP/1.1 200 OK\r\ndate: DATE\r\ntransfer-encoding: chunked\r\n\r\n6\r\nfirst\n\r\n7\r\nsecond\n\r\n0\r\n\r\n"
    );
}

#[test]
fn a_stream_that_fails_or_breaks_its_length_sends_what_came_before_and_closes() {
    let broken = exchange(
        Limits::default(),
        b"GET /broken HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(
        broken,
        "HTTP/1.1 200 OK\r\ndate: DATE\r\ntransfer-encoding: chunked\r\n\r\n5\r\npart\n\r\n"
    );
    let overlong = exchange(
        Limits::default(),
        b"GET /overlong HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(overlong, octets("abcd"));
}

#[test]
fn a_slow_reader_holds_back_the_writer_without_losing_bytes() {
    let size = 1024 * 1024;
    let received = with_connection(Limits::default(), 256, |mut peer| async move {
        peer.send(format!("GET /big?{size} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes())
            .await;
        let mut received = Vec::new();
        let mut buf = [0u8; 4096];
        while received.len() < size + 60 {
            let n = peer.io.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
            tokio::time::sleep(Duration::from_millis(1)).await;
            if received.ends_with(&[b'x'; 64]) && received.len() > size {
                break;
            }
        }
        received
    });
    let head_end = received.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(
        received.len() - head_end,
        size,
        "every byte of the body arrives"
    );
}

#[test]
fn a_client_that_stops_reading_is_dropped_after_the_stall_timeout() {
    let limits = Limits {
        keep_alive_timeout: Duration::from_secs(5),
        ..Limits::default()
    };
    with_connection(limits, 256, |mut peer| async move {
        peer.send(b"GET /big?1000000 HTTP/1.1\r\nHost: a\r\n\r\n")
            .await;
        let started = tokio::time::Instant::now();
        (&mut peer.served).await.unwrap();
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(5) && waited < Duration::from_secs(7),
            "closed after {waited:?}"
        );
    });
}

#[test]
fn an_idle_connection_closes_after_the_keep_alive_timeout() {
    let limits = Limits {
        keep_alive_timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    with_connection(limits, 4096, |mut peer| async move {
        peer.send(GET).await;
        assert_eq!(peer.response().await, ok("hello"));
        let started = tokio::time::Instant::now();
        assert_eq!(peer.read_to_close().await, "");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(10) && waited <= Duration::from_secs(12),
            "closed after {waited:?}"
        );
    });
}

#[test]
fn an_incomplete_head_is_dropped_after_the_head_timeout() {
    let limits = Limits {
        head_timeout: Duration::from_secs(3),
        ..Limits::default()
    };
    with_connection(limits, 4096, |mut peer| async move {
        peer.send(b"GET / HTTP/1.1\r\nHo").await;
        let started = tokio::time::Instant::now();
        assert_eq!(peer.read_to_close().await, "", "closed without an answer");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(3) && waited < Duration::from_secs(5),
            "closed after {waited:?}"
        );
    });
}

#[test]
fn shutdown_closes_idle_connections_and_finishes_requests_in_flight() {
    with_connection(Limits::default(), 4096, |mut peer| async move {
        peer.send(GET).await;
        assert_eq!(peer.response().await, ok("hello"));
        let worker = peer.worker.clone();
        worker.drain(Duration::from_secs(30)).await;
        assert_eq!(
            peer.read_to_close().await,
            "",
            "the idle connection is closed"
        );
    });
    with_connection(Limits::default(), 4096, |mut peer| async move {
        peer.send(b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n").await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        let worker = peer.worker.clone();
        let drained =
            tokio::task::spawn_local(async move { worker.drain(Duration::from_secs(30)).await });
        let answered = peer.read_to_close().await;
        assert_eq!(
            answered,
            ok("slow done").replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n"),
            "the request in flight is answered, with notice of the close"
        );
        drained.await.unwrap();
    });
}
