//! Streamed request bodies and multipart uploads over a real socket.
#![cfg(feature = "multipart")]

use sha2::Digest;
use std::io::{Read, Write};
use std::net::TcpStream;
use vireo::middleware::body_limit;
use vireo::{streaming_body, App, Multipart, MultipartLimits, Request};

fn app() -> App {
    let mut app = App::new();
    app.post(
        "/parts",
        streaming_body(|mut req: Request| async move {
            let mut form = Multipart::with_limits(
                &mut req,
                MultipartLimits {
                    max_part_size: Some(8 << 20),
                    ..MultipartLimits::default()
                },
            )?;
            let mut out = Vec::new();
            while let Some(mut part) = form.next_part().await? {
                let mut hasher = sha2::Sha256::new();
                let mut size = 0;
                while let Some(chunk) = part.chunk().await? {
                    size += chunk.len();
                    hasher.update(&chunk);
                }
                out.push(format!(
                    "{}:{}:{size}:{:x}",
                    part.name().unwrap_or(""),
                    part.file_name().unwrap_or(""),
                    hasher.finalize()
                ));
            }
            Ok::<_, vireo::Error>(out.join("\n"))
        }),
    )
    .with(body_limit(64 << 20));
    app.post(
        "/names",
        streaming_body(|mut req: Request| async move {
            // Reads no part's content: each is skipped when the next is asked for.
            let mut form = Multipart::from_request(&mut req)?;
            let mut names = Vec::new();
            while let Some(part) = form.next_part().await? {
                names.push(part.name().unwrap_or("").to_owned());
            }
            Ok::<_, vireo::Error>(names.join(","))
        }),
    )
    .with(body_limit(64 << 20));
    app.post(
        "/chunks",
        streaming_body(|mut req: Request| async move {
            let mut body = req.body_stream();
            let (mut chunks, mut size) = (0, 0);
            while let Some(chunk) = body.next_chunk().await {
                chunks += 1;
                size += chunk?.len();
            }
            Ok::<_, vireo::Error>(format!("{chunks} {size}"))
        }),
    )
    .with(body_limit(1 << 20));
    // Answers at once with a body that streams the request's: the request body is no longer
    // served once the response has begun.
    app.post(
        "/echo-stream",
        streaming_body(|mut req: Request| async move {
            let body = Echo(req.body_stream());
            vireo::Response::new(vireo::http::StatusCode::OK, vireo::Body::stream(body))
        }),
    );
    app
}

/// A request body as a response body.
struct Echo(vireo::BodyStream);

impl futures_core::Stream for Echo {
    type Item = Result<bytes::Bytes, std::io::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::pin::Pin::new(&mut self.0)
            .poll_next(cx)
            .map(|chunk| chunk.map(|chunk| chunk.map_err(|e| std::io::Error::other(e.to_string()))))
    }
}

/// Send `head` and `body` on a fresh connection (the body from another thread, so a server
/// that answers early cannot deadlock the test); every byte of the answer, until the close.
fn exchange(addr: std::net::SocketAddr, head: String, body: Vec<u8>) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sending = std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
        let _ = writer.write_all(&body);
    });
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let _ = sending.join();
    answer
}

/// [`exchange`]'s answer as its status and body.
fn send(addr: std::net::SocketAddr, head: String, body: Vec<u8>) -> (u16, String) {
    let answer = String::from_utf8_lossy(&exchange(addr, head, body)).into_owned();
    let status = answer[9..12].parse().unwrap();
    (status, answer.split_once("\r\n\r\n").unwrap().1.to_owned())
}

fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, file, content) in parts {
        body.extend_from_slice(b"--XyZ\r\n");
        match file {
            Some(file) => write!(
                body,
                "content-disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\ncontent-type: application/octet-stream\r\n\r\n"
            ),
            None => write!(body, "content-disposition: form-data; name=\"{name}\"\r\n\r\n"),
        }
        .unwrap();
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--XyZ--\r\n");
    body
}

fn head(path: &str, content_type: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: {content_type}\r\ncontent-length: {len}\r\n\r\n"
    )
}

#[test]
fn a_multipart_upload_is_read_part_by_part() {
    let server = vireo::serve_ephemeral(app()).unwrap();
    let file: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
    let body = multipart(&[("title", None, b"holiday"), ("photo", Some("a.bin"), &file)]);
    let (status, answer) = send(
        server.addr(),
        head("/parts", "multipart/form-data; boundary=XyZ", body.len()),
        body,
    );
    assert_eq!(status, 200, "{answer}");
    let title = format!("title::7:{:x}", sha2::Sha256::digest(b"holiday"));
    let photo = format!("photo:a.bin:5000000:{:x}", sha2::Sha256::digest(&file));
    assert_eq!(answer, format!("{title}\n{photo}"));
}

#[test]
fn multipart_failures_get_precise_answers() {
    let server = vireo::serve_ephemeral(app()).unwrap();
    let addr = server.addr();
    let big = vec![7u8; 9 << 20];
    let over_part = multipart(&[("f", Some("big"), &big)]);
    let (status, _) = send(
        addr,
        head(
            "/parts",
            "multipart/form-data; boundary=XyZ",
            over_part.len(),
        ),
        over_part,
    );
    assert_eq!(status, 413, "a part over its limit");

    let (status, _) = send(addr, head("/parts", "text/plain", 5), b"hello".to_vec());
    assert_eq!(status, 415, "not multipart");

    let (status, _) = send(
        addr,
        head("/parts", "multipart/form-data", 5),
        b"hello".to_vec(),
    );
    assert_eq!(status, 400, "no boundary");

    let garbage = b"--XyZ\r\nno headers end".to_vec();
    let (status, _) = send(
        addr,
        head("/parts", "multipart/form-data; boundary=XyZ", garbage.len()),
        garbage,
    );
    assert_eq!(status, 400, "malformed");
}

#[test]
fn skipped_parts_of_any_size_do_not_count_as_part_heads() {
    let server = vireo::serve_ephemeral(app()).unwrap();
    let file = vec![3u8; 5_000_000];
    let body = multipart(&[("photo", Some("a.bin"), &file), ("title", None, b"x")]);
    let (status, answer) = send(
        server.addr(),
        head("/names", "multipart/form-data; boundary=XyZ", body.len()),
        body,
    );
    assert_eq!((status, answer.as_str()), (200, "photo,title"));
}

#[test]
fn a_preamble_or_part_head_over_its_limit_is_refused_not_buffered() {
    let server = vireo::serve_ephemeral(app()).unwrap();
    let addr = server.addr();
    // A preamble that never reaches a boundary, within a body limit that allows it.
    let mut preamble = vec![b'p'; 4 << 20];
    preamble.extend_from_slice(&multipart(&[("title", None, b"x")]));
    // A part whose header lines never end.
    let mut endless = b"--XyZ\r\ncontent-disposition: form-data; name=\"a\"\r\n".to_vec();
    endless.extend(std::iter::repeat_n(b"x-filler: yes\r\n", 100_000).flatten());
    for (what, body) in [("preamble", preamble), ("part head", endless)] {
        let (status, answer) = send(
            addr,
            head("/parts", "multipart/form-data; boundary=XyZ", body.len()),
            body,
        );
        assert_eq!(status, 413, "{what}: {answer}");
        assert!(answer.contains("65536 bytes"), "{what}: {answer}");
    }
    // A preamble within the limit is skipped, as RFC 2046 says.
    let mut short = b"a preamble\r\n".to_vec();
    short.extend_from_slice(&multipart(&[("title", None, b"x")]));
    let (status, answer) = send(
        addr,
        head("/names", "multipart/form-data; boundary=XyZ", short.len()),
        short,
    );
    assert_eq!((status, answer.as_str()), (200, "title"));
}

#[test]
fn a_streamed_body_arrives_in_chunks_within_the_limit() {
    let server = vireo::serve_ephemeral(app()).unwrap();
    let addr = server.addr();
    let body = vec![1u8; 900_000];
    let (status, answer) = send(
        addr,
        head("/chunks", "application/octet-stream", body.len()),
        body,
    );
    assert_eq!(status, 200);
    let (chunks, size) = answer.split_once(' ').unwrap();
    assert_eq!(size, "900000");
    assert!(
        chunks.parse::<u32>().unwrap() > 1,
        "read in several chunks: {answer}"
    );

    // Chunked, going over the limit part-way: refused once the limit is crossed.
    let mut chunked = Vec::new();
    for _ in 0..40 {
        write!(chunked, "{:x}\r\n", 64 * 1024).unwrap();
        chunked.extend(std::iter::repeat_n(2u8, 64 * 1024));
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = "POST /chunks HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n";
    let (status, _) = send(addr, head.to_owned(), chunked);
    assert_eq!(status, 413);
}

/// The body of a complete chunked message, or `None` if it never reached its last chunk.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).ok()?, 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return rest.starts_with(b"\r\n").then_some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[test]
fn a_request_body_cut_short_by_the_response_is_never_sent_as_a_complete_echo() {
    let server = vireo::serve_ephemeral(app()).unwrap();
    let sent = 1 << 20;
    let head = head("/echo-stream", "application/octet-stream", sent);
    let answer = exchange(server.addr(), head, vec![b'e'; sent]);
    let text = String::from_utf8_lossy(&answer);
    let Some(split) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return; // no answer at all: the client sees a failure, not a short body
    };
    if text.starts_with("HTTP/1.1 200") {
        if let Some(echoed) = dechunk(&answer[split + 4..]) {
            assert_eq!(
                echoed.len(),
                sent,
                "a complete 200 must carry the whole body"
            );
        }
    }
}
