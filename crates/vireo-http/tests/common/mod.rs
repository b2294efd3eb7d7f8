//! A test service and a raw-socket client for the engine's integration tests.
#![allow(dead_code)] // each test binary uses a different part of this module

use bytes::Bytes;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use vireo_http::{Limits, Request, Response, RunningServer, Server, Service};

pub mod tls;

/// Run a test's client side on a runtime of its own, bounded so that a hang fails the test.
pub fn run<F: std::future::Future<Output = ()>>(test: F) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), test)
            .await
            .expect("the test finished");
    });
}

/// Routes: `/echo` echoes the body, `/reflect` answers what it parsed (see [`reflect`]),
/// `/stream?n` streams n chunks, `/panic` panics, `/slow?ms` waits ms milliseconds (300 by
/// default), `/blocking` sleeps 300 ms on the blocking pool, `/count` reads the body chunk by
/// chunk and answers its length, `/bye` asks to close the connection, `/until-dropped` reads its
/// body and never answers and `/dropped` says how many of those were dropped, `/stream-until-dropped` streams
/// one chunk and then waits and `/streams-dropped` says how many of those bodies were dropped;
/// `/early-hints` wrongly answers with the interim 103, `/wrong-length` says 10 bytes and sends
/// 3; anything else answers its method and
/// path.
pub struct TestService;

impl Service for TestService {
    async fn call(&self, mut req: Request<'_>) -> Response {
        let path = req.head().path().to_owned();
        match path.as_str() {
            "/echo" => match req.body().to_bytes().await {
                Ok(body) => Response::new(http::StatusCode::OK, body),
                Err(error) => Response::new(error.status(), error.to_string()),
            },
            "/reflect" => match req.body().to_bytes().await {
                Ok(body) => Response::new(http::StatusCode::OK, reflect(req.head(), &body)),
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
            "/stream" => {
                let n: usize = req.head().query().and_then(|q| q.parse().ok()).unwrap_or(3);
                let chunks = (0..n).map(|k| Ok::<_, std::io::Error>(format!("chunk {k}\n")));
                Response::new(http::StatusCode::OK, vireo_http::Body::stream(Iter(chunks)))
            }
            "/panic" => panic!("the test handler panics"),
            "/early-hints" => Response::new(http::StatusCode::EARLY_HINTS, vireo_http::Body::Empty),
            "/wrong-length" => {
                let mut res = Response::text("abc");
                let ten = http::HeaderValue::from_static("10");
                res.headers_mut().insert(http::header::CONTENT_LENGTH, ten);
                res
            }
            "/bye" => {
                let mut res = Response::text("bye");
                let close = http::HeaderValue::from_static("close");
                res.headers_mut().insert(http::header::CONNECTION, close);
                res
            }
            "/slow" => {
                let ms = req
                    .head()
                    .query()
                    .and_then(|q| q.parse().ok())
                    .unwrap_or(300);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Response::text("slow done")
            }
            "/until-dropped" => {
                // Reads its body, then never answers; counts itself in `DROPPED` when the
                // engine drops it.
                let _guard = CountDrop;
                let _ = req.body().to_bytes().await;
                std::future::pending::<()>().await;
                Response::text("unreachable")
            }
            "/dropped" => Response::text(DROPPED.load(Ordering::SeqCst).to_string()),
            "/stream-until-dropped" => {
                let body = FirstThenWait(Some(Bytes::from_static(b"first")), CountStreamDrop);
                Response::new(http::StatusCode::OK, vireo_http::Body::stream(body))
            }
            "/streams-dropped" => {
                Response::text(STREAMS_DROPPED.load(Ordering::SeqCst).to_string())
            }
            "/blocking" => {
                vireo_http::spawn_blocking(|| std::thread::sleep(Duration::from_millis(300))).await;
                Response::text("blocking done")
            }
            _ => Response::text(format!(
                "{} {}",
                req.head().method(),
                req.head().path_and_query()
            )),
        }
    }
}

/// Ask `server` for `path` until it answers `want`, failing after five seconds.
pub fn wait_for_text(server: &RunningServer, path: &str, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let request = format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    loop {
        let (reply, _) = exchange(server, request.as_bytes());
        if reply.unwrap().text() == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{path} never answered {want:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How many `/until-dropped` requests the engine has dropped unanswered.
pub static DROPPED: AtomicUsize = AtomicUsize::new(0);

struct CountDrop;

impl Drop for CountDrop {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// How many `/stream-until-dropped` bodies the engine has dropped unfinished.
pub static STREAMS_DROPPED: AtomicUsize = AtomicUsize::new(0);

struct CountStreamDrop;

impl Drop for CountStreamDrop {
    fn drop(&mut self) {
        STREAMS_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// A body that yields its one chunk and then waits for ever, as an idle event stream does.
struct FirstThenWait(Option<Bytes>, CountStreamDrop);

impl futures_core::Stream for FirstThenWait {
    type Item = Result<Bytes, std::io::Error>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        match self.0.take() {
            Some(chunk) => std::task::Poll::Ready(Some(Ok(chunk))),
            None => std::task::Poll::Pending,
        }
    }
}

/// What the server parsed, as `/reflect` answers it: `METHOD target`, one `name: value` line per
/// header field in the order received (names and values exactly as sent), an empty line, and
/// the body.
fn reflect(head: &vireo_http::proto::RequestHead, body: &[u8]) -> Vec<u8> {
    let mut out = format!("{} {}\n", head.method(), head.target()).into_bytes();
    for (name, value) in head.headers() {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.push(b'\n');
    }
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

/// A `Stream` over an iterator, for the streaming route.
pub struct Iter<I>(pub I);

impl<I: Iterator + Unpin> futures_core::Stream for Iter<I> {
    type Item = I::Item;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<I::Item>> {
        std::task::Poll::Ready(self.0.next())
    }
}

pub fn serve(limits: Limits) -> RunningServer {
    serve_with(Server::bind("127.0.0.1:0").unwrap().limits(limits))
}

/// `server`, set up as [`serve`] sets it up, serving the test service.
pub fn serve_with(server: Server) -> RunningServer {
    server
        .workers(1)
        .shutdown_timeout(Duration::from_secs(5))
        .spawn(TestService)
        .unwrap()
}

pub fn connect(server: &RunningServer) -> TcpStream {
    let stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
}

/// A response as read off the wire.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

/// Reads responses from a stream, keeping bytes that belong to the next one.
pub struct Reader {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Reader {
    pub fn new(stream: TcpStream) -> Self {
        Reader {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// The next response, or `None` if the connection closed first. `head_request` says the
    /// response has no body whatever its framing fields say.
    pub fn response(&mut self, head_request: bool) -> Option<Reply> {
        let (status, headers, head_len) = loop {
            let mut fields = [httparse::EMPTY_HEADER; 64];
            let mut parsed = httparse::Response::new(&mut fields);
            if let Ok(httparse::Status::Complete(len)) = parsed.parse(&self.buf) {
                let headers = parsed
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_owned(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect::<Vec<_>>();
                break (parsed.code.unwrap(), headers, len);
            }
            if !self.fill() {
                return None;
            }
        };
        self.buf.drain(..head_len);
        let mut reply = Reply {
            status,
            headers,
            body: Vec::new(),
        };
        if head_request || status == 204 || status == 304 || status < 200 {
            return Some(reply);
        }
        if let Some(len) = reply.header("content-length") {
            let len: usize = len.parse().unwrap();
            while self.buf.len() < len {
                if !self.fill() {
                    return None;
                }
            }
            reply.body = self.buf.drain(..len).collect();
        } else if reply.header("transfer-encoding") == Some("chunked") {
            let mut decoder = vireo_http::proto::ChunkedDecoder::new(1 << 20);
            while !decoder.is_done() {
                if self.buf.is_empty() && !self.fill() {
                    return None;
                }
                let step = decoder.decode(&self.buf).unwrap();
                if let Some(data) = step.data {
                    reply.body.extend_from_slice(&self.buf[data]);
                }
                self.buf.drain(..step.consumed);
            }
        } else {
            while self.fill() {}
            reply.body = std::mem::take(&mut self.buf);
        }
        Some(reply)
    }

    /// Whether the server has closed the connection (reading gives EOF or a reset), with
    /// nothing more sent before.
    pub fn is_closed(&mut self) -> bool {
        !self.fill() && self.buf.is_empty()
    }
}

/// Send one request on a fresh connection and read one response.
pub fn exchange(server: &RunningServer, request: &[u8]) -> (Option<Reply>, Reader) {
    let mut reader = Reader::new(connect(server));
    reader.send(request);
    let reply = reader.response(request.starts_with(b"HEAD"));
    (reply, reader)
}

/// Send `GET /` asking to close on `stream` (TCP or Unix), and read everything until the close.
pub fn get_and_close(mut stream: impl Read + Write) -> String {
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}
