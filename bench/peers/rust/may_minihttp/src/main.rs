//! may_minihttp peer: stackful coroutines on one may worker thread, hand-written
//! routing (may_minihttp has no router or middleware of its own).
use std::io::{self, Write};
use std::time::Duration;

use may_minihttp::{HttpServer, HttpService, Request, Response};
use serde::Serialize;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// What the two "middlewares" store for the handler.
#[derive(Default)]
struct Ctx {
    one: bool,
    two: bool,
}

fn first(ctx: &mut Ctx) {
    ctx.one = true;
}

fn second(ctx: &mut Ctx) {
    ctx.two = true;
}

#[derive(Clone)]
struct Bench;

impl HttpService for Bench {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        // may_minihttp keeps every connection open but never says so; ab, which
        // speaks HTTP/1.0, then waits for a close after each response.
        if req.version() == 0 {
            rsp.header("Connection: keep-alive");
        }
        let path = req.path();
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        match path {
            "/" => rsp.header("Content-Type: text/plain").body("Hello, World!"),
            "/json" => {
                rsp.header("Content-Type: application/json");
                serde_json::to_writer(BytesWriter(rsp.body_mut()), &Message { message: "Hello, World!" })?;
            }
            "/favicon.ico" => {
                rsp.status_code(204, "No Content");
            }
            "/compute" => {
                // black_box keeps LLVM from folding the loop into a constant at compile time.
                let n = std::hint::black_box(1000u64);
                let sum: u64 = (0..n).map(|i| i * i).sum();
                rsp.header("Content-Type: text/plain");
                write!(BytesWriter(rsp.body_mut()), "{sum}")?;
            }
            "/async" => {
                let ms = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("ms="))
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
                // Parks this coroutine on may's timer; the worker thread serves others meanwhile.
                may::coroutine::sleep(Duration::from_millis(ms));
                rsp.header("Content-Type: text/plain");
                write!(BytesWriter(rsp.body_mut()), "waited {ms}")?;
            }
            _ => match path.strip_prefix("/users/") {
                Some(id) if !id.is_empty() && !id.contains('/') => {
                    let mut ctx = Ctx::default();
                    first(&mut ctx);
                    second(&mut ctx);
                    if ctx.one && ctx.two {
                        rsp.header("Content-Type: text/plain");
                        write!(BytesWriter(rsp.body_mut()), "User: {id}")?;
                    } else {
                        rsp.status_code(500, "Internal Server Error");
                    }
                }
                _ => {
                    rsp.status_code(404, "Not Found");
                    rsp.body("Not Found");
                }
            },
        }
        Ok(())
    }
}

/// io::Write over the response's BytesMut body, so serde_json and write! append in place.
struct BytesWriter<'a>(&'a mut bytes::BytesMut);

impl Write for BytesWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn port() -> u16 {
    std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080)
}

fn main() {
    // One scheduler thread, to match the other single-core peers.
    may::config().set_workers(1);
    let server = HttpServer(Bench).start(("127.0.0.1", port())).expect("bind");
    server.join().unwrap();
}
