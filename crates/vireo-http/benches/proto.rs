//! Micro-benchmarks of the protocol core: parsing a head, decoding a chunked body, encoding a
//! response head. Run with `cargo bench -p vireo-http --bench proto`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use vireo_http::proto::{
    encode_head, parse_head, ChunkedDecoder, Connection, Framing, HeadFields, RequestHead,
};
use vireo_http::{ContentType, Limits};

const WRK_REQUEST: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n";
const BROWSER_REQUEST: &[u8] = b"GET /users/42?tab=profile HTTP/1.1\r\nHost: example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\nConnection: keep-alive\r\n\
Cookie: session=abcdef0123456789; theme=dark\r\nUpgrade-Insecure-Requests: 1\r\n\r\n";

fn parse(c: &mut Criterion) {
    let limits = Limits::default();
    let mut head = RequestHead::default();
    let mut group = c.benchmark_group("parse_head");
    for (name, bytes) in [("wrk", WRK_REQUEST), ("browser", BROWSER_REQUEST)] {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| parse_head(black_box(bytes), &limits, &mut head).unwrap())
        });
    }
    // httparse alone, borrowing the input and checking nothing more: the floor under
    // `parse_head`, which also validates the framing fields and copies the head.
    group.bench_function("wrk_httparse_alone", |b| {
        b.iter(|| {
            let mut fields = [httparse::EMPTY_HEADER; 16];
            let mut request = httparse::Request::new(&mut fields);
            request.parse(black_box(WRK_REQUEST)).unwrap().unwrap()
        })
    });
    group.finish();
}

fn chunked(c: &mut Criterion) {
    let mut body = Vec::new();
    for _ in 0..64 {
        vireo_http::proto::encode_chunk(&mut body, &[b'x'; 1024]);
    }
    body.extend_from_slice(vireo_http::proto::LAST_CHUNK);
    let mut group = c.benchmark_group("chunked");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("decode_64x1KiB", |b| {
        b.iter(|| {
            let mut decoder = ChunkedDecoder::new(16 * 1024);
            let mut at = 0;
            while !decoder.is_done() {
                at += decoder.decode(black_box(&body[at..])).unwrap().consumed;
            }
        })
    });
    group.finish();
}

fn encode(c: &mut Criterion) {
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    let date = *b"Sun, 06 Nov 1994 08:49:37 GMT";
    let mut out = Vec::with_capacity(256);
    c.bench_function("encode_head/plaintext", |b| {
        b.iter(|| {
            out.clear();
            encode_head(
                &mut out,
                http::StatusCode::OK,
                HeadFields::Map(black_box(&headers)),
                Framing::Length(13),
                Connection::Default,
                &date,
            );
        })
    });
    c.bench_function("encode_head/plaintext_typed", |b| {
        b.iter(|| {
            out.clear();
            encode_head(
                &mut out,
                http::StatusCode::OK,
                HeadFields::ContentType(black_box(ContentType::Text)),
                Framing::Length(13),
                Connection::Default,
                &date,
            );
        })
    });
}

criterion_group!(benches, parse, chunked, encode);
criterion_main!(benches);
