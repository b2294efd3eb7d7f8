//! The reference app (`examples/reference.rs`) against its contract, over real sockets: every
//! route, HEAD, 404/405, blocking work that does not stall others, panics, and a graceful
//! SIGTERM with a request in flight.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Reference {
    child: Child,
    addr: String,
}

impl Reference {
    fn start() -> Reference {
        // `cargo test` builds the examples next to the test binaries' directory.
        let exe = std::env::current_exe().unwrap();
        let binary = exe
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("examples/reference");
        let mut child = Command::new(&binary)
            .args(["--addr", "127.0.0.1:0", "--workers", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Reference { child, addr }
    }

    fn connect(&self) -> Conn {
        let stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    fn get(&self, target: &str) -> Reply {
        let mut conn = self.connect();
        conn.send(format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        conn.reply(false).unwrap()
    }

    fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    fn reply(&mut self, head_request: bool) -> Option<Reply> {
        let (status, headers, len) = loop {
            let mut fields = [httparse::EMPTY_HEADER; 32];
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
        self.buf.drain(..len);
        let mut reply = Reply {
            status,
            headers,
            body: Vec::new(),
        };
        if head_request || status == 204 {
            return Some(reply);
        }
        if let Some(n) = reply.header("content-length") {
            let n: usize = n.parse().unwrap();
            while self.buf.len() < n {
                if !self.fill() {
                    return None;
                }
            }
            reply.body = self.buf.drain(..n).collect();
            return Some(reply);
        }
        assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
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
        Some(reply)
    }
}

#[test]
fn every_route_answers_as_the_contract_says() {
    let app = Reference::start();
    let root = app.get("/");
    assert_eq!((root.status, root.text()), (200, "Hello, World!"));
    assert!(root
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let json = app.get("/json");
    assert_eq!(json.text(), r#"{"message":"Hello, World!"}"#);
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert_eq!(app.get("/users/42").text(), "User: 42");
    let favicon = app.get("/favicon.ico");
    assert_eq!((favicon.status, favicon.body.len()), (204, 0));
    assert_eq!(app.get("/compute").text(), "332833500");
    assert_eq!(app.get("/sleep?ms=5").text(), "slept 5");
    assert_eq!(app.get("/async?ms=5").text(), "waited 5");
    assert_eq!(app.get("/async?ms=0").text(), "waited 0");
    let stream = app.get("/stream?chunks=3");
    assert_eq!(stream.header("transfer-encoding"), Some("chunked"));
    assert_eq!(stream.text(), "chunk 0\nchunk 1\nchunk 2\n");
    assert_eq!(app.get("/nope").status, 404);
    let wrong = {
        let mut conn = app.connect();
        conn.send(b"DELETE /users/1 HTTP/1.1\r\nHost: t\r\n\r\n");
        conn.reply(false).unwrap()
    };
    assert_eq!(
        (wrong.status, wrong.header("allow")),
        (405, Some("GET, HEAD, OPTIONS"))
    );
    let options = {
        let mut conn = app.connect();
        conn.send(b"OPTIONS /users/1 HTTP/1.1\r\nHost: t\r\n\r\n");
        conn.reply(true).unwrap()
    };
    assert_eq!(
        (options.status, options.header("allow")),
        (204, Some("GET, HEAD, OPTIONS"))
    );
    let server_wide = {
        let mut conn = app.connect();
        conn.send(b"OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n");
        conn.reply(true).unwrap()
    };
    assert_eq!(server_wide.status, 204);
    assert!(server_wide
        .header("allow")
        .is_some_and(|allow| allow.contains("GET") && allow.contains("OPTIONS")));
    let mut conn = app.connect();
    conn.send(b"HEAD /json HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n");
    let head = conn.reply(true).unwrap();
    assert_eq!(
        (head.status, head.header("content-length")),
        (200, Some("27"))
    );
    assert_eq!(conn.reply(false).unwrap().text(), "Hello, World!");
    let healthz = app.get("/healthz");
    assert_eq!(healthz.status, 200);
    assert_eq!(app.get("/readyz").status, 200);

    // Everything above was counted: by method, route template and status.
    let metrics = app.get("/metrics");
    assert_eq!(metrics.status, 200);
    let text = metrics.text();
    for series in [
        r#"http_requests_total{method="GET",route="/users/:id",status="200"} 1"#,
        r#"http_requests_total{method="GET",route="/json",status="200"} 1"#,
        r#"http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
        r#"http_requests_total{method="DELETE",route="unmatched",status="405"} 1"#,
        r#"http_request_duration_seconds_count{method="GET",route="/compute"} 1"#,
        "http_requests_in_flight 1",
        r#"vireo_connections_open{worker="0"}"#,
    ] {
        assert!(text.contains(series), "no `{series}` in:\n{text}");
    }
}

#[test]
fn echo_returns_any_bytes_with_their_content_type() {
    let app = Reference::start();
    let mut conn = app.connect();
    let body: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let mut request = format!(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: image/x-test\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    conn.send(&request);
    let reply = conn.reply(false).unwrap();
    assert_eq!(reply.body, body);
    assert_eq!(reply.header("content-type"), Some("image/x-test"));
    conn.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n\x00\x01\x02\r\n0\r\n\r\n");
    let reply = conn.reply(false).unwrap();
    assert_eq!(reply.body, b"\x00\x01\x02");
    assert_eq!(
        reply.header("content-type"),
        Some("application/octet-stream")
    );
}

#[test]
fn blocking_sleep_does_not_stall_other_connections_and_panics_cost_one_500() {
    let app = Reference::start();
    let mut sleeper = app.connect();
    sleeper.send(b"GET /sleep?ms=700 HTTP/1.1\r\nHost: t\r\n\r\n");
    std::thread::sleep(Duration::from_millis(50));
    for _ in 0..20 {
        assert_eq!(app.get("/").status, 200);
    }
    sleeper.stream.set_nonblocking(true).unwrap();
    let still_sleeping = sleeper.stream.peek(&mut [0u8; 1]);
    assert!(matches!(still_sleeping, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock));
    sleeper.stream.set_nonblocking(false).unwrap();
    assert_eq!(sleeper.reply(false).unwrap().text(), "slept 700");

    let mut conn = app.connect();
    conn.send(b"GET /panic HTTP/1.1\r\nHost: t\r\n\r\n");
    let reply = conn.reply(false).unwrap();
    assert_eq!(
        (reply.status, reply.header("connection")),
        (500, Some("close"))
    );
    assert_eq!(app.get("/").text(), "Hello, World!");
}

#[test]
fn sigterm_finishes_requests_in_flight_then_exits_zero() {
    let mut app = Reference::start();
    let mut idle = app.connect();
    idle.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    idle.reply(false).unwrap();
    let mut busy = app.connect();
    // Long enough that the signal lands while the handler sleeps, even on a loaded machine
    // where starting `kill` and delivering the signal can take a few hundred milliseconds.
    busy.send(b"GET /sleep?ms=1500 HTTP/1.1\r\nHost: t\r\n\r\n");
    std::thread::sleep(Duration::from_millis(100));
    app.terminate();
    let reply = busy.reply(false).unwrap();
    assert_eq!(
        (reply.text(), reply.header("connection")),
        ("slept 1500", Some("close"))
    );
    assert!(idle.reply(false).is_none(), "the idle connection is closed");
    let status = app.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        TcpStream::connect(&app.addr).is_err(),
        "no longer accepting"
    );
}
