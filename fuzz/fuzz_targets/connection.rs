//! The connection state machine, end to end: arbitrary bytes, split at arbitrary points, are
//! written to a real server over loopback; the server must not panic, must answer only with
//! well-formed responses, and must close once the client has finished sending.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;
use vireo_http::{Limits, Request, Response, Server, Service};

/// Echoes bodies on `/echo`, reads bodies chunk by chunk on `/count`, streams on `/stream`,
/// ignores the body elsewhere.
struct Fuzzed;

impl Service for Fuzzed {
    async fn call(&self, mut req: Request<'_>) -> Response {
        match req.head().path() {
            "/echo" => match req.body().to_bytes().await {
                Ok(body) => Response::new(vireo_http::http::StatusCode::OK, body),
                Err(e) => Response::new(e.status(), e.to_string()),
            },
            "/count" => {
                let mut n = 0;
                while let Ok(Some(chunk)) = req.body().chunk().await {
                    n += chunk.len();
                }
                Response::text(n.to_string())
            }
            _ => Response::text("ok"),
        }
    }
}

fn server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let limits = Limits {
            max_body_size: 4096,
            head_timeout: Duration::from_secs(2),
            keep_alive_timeout: Duration::from_secs(2),
            ..Limits::default()
        };
        let running = Server::bind("127.0.0.1:0").unwrap().workers(1).limits(limits).spawn(Fuzzed).unwrap();
        let addr = running.addr();
        std::mem::forget(running); // serves for the whole fuzzing run
        addr
    })
}

/// Count the responses in `bytes`, checking each is well formed; the count, or `None` if the
/// output is not a sequence of responses.
fn responses(mut bytes: &[u8]) -> Option<usize> {
    let mut count = 0;
    while !bytes.is_empty() {
        let mut fields = [httparse::EMPTY_HEADER; 32];
        let mut parsed = httparse::Response::new(&mut fields);
        let httparse::Status::Complete(len) = parsed.parse(bytes).ok()? else { return None };
        let code = parsed.code?;
        let length = parsed
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .map(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
            .flatten();
        bytes = &bytes[len..];
        if code == 100 {
            continue;
        }
        count += 1;
        match length {
            Some(n) if n <= bytes.len() => bytes = &bytes[n..],
            // HEAD answers and 204 carry a length but no body; anything else must be whole.
            Some(_) => return (code == 204 || bytes.is_empty()).then_some(count),
            None => return Some(count), // chunked or close-delimited: the rest is its body
        }
    }
    Some(count)
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, input)) = data.split_first() else { return };
    let mut stream = TcpStream::connect(server()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let piece = usize::from(split % 32) + 1;
    for chunk in input.chunks(piece) {
        if stream.write_all(chunk).is_err() {
            break; // the server closed after an error answer
        }
    }
    let _ = stream.shutdown(Shutdown::Write);
    let mut output = Vec::new();
    let _ = stream.read_to_end(&mut output);
    assert!(responses(&output).is_some(), "malformed output: {:?}", String::from_utf8_lossy(&output));
});
