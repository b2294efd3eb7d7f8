//! Properties of the protocol layer over generated requests:
//! - any valid header set round-trips: a request's fields parse back exactly as sent, and a
//!   response's fields encode into a head that parses back to the same fields;
//! - a stream of pipelined requests split into writes at any points parses the same as when it
//!   arrives whole, both in the sans-I/O parser and through a real server.

mod common;

use common::{connect, serve, Reader};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use proptest::prelude::*;
use std::io::Write;
use std::time::Duration;
use vireo_http::proto::{
    encode_chunk, encode_head, parse_head, BodyKind, ChunkedDecoder, Connection, Framing,
    HeadFields, RequestHead, LAST_CHUNK,
};
use vireo_http::Limits;

/// Names the engine gives a meaning of its own (framing, connection management, expectations);
/// the generated header sets leave them out so the request's meaning stays the one generated.
const MANAGED: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "expect",
    "te",
    "upgrade",
    "keep-alive",
    "trailer",
    "proxy-connection",
];

/// A field name: an RFC 9110 §5.6.2 token, in any case.
fn field_name() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,20}".prop_filter("managed by the engine", |n| {
        !MANAGED.contains(&n.to_ascii_lowercase().as_str())
    })
}

/// A field value (RFC 9110 §5.5): visible ASCII and obs-text, with spaces and tabs inside but
/// not at either end; possibly empty.
fn field_value() -> impl Strategy<Value = Vec<u8>> {
    let visible = prop_oneof![0x21u8..=0x7e, 0x80u8..=0xff];
    let inner = prop_oneof![4 => visible.clone(), 1 => Just(b' '), 1 => Just(b'\t')];
    prop_oneof![
        1 => Just(Vec::new()),
        8 => (visible.clone(), prop::collection::vec(inner, 0..40), visible).prop_map(
            |(first, mut middle, last)| {
                middle.insert(0, first);
                middle.push(last);
                middle
            }
        ),
    ]
}

fn header_set() -> impl Strategy<Value = Vec<(String, Vec<u8>)>> {
    prop::collection::vec((field_name(), field_value()), 0..24)
}

#[derive(Debug, Clone)]
enum GenBody {
    None,
    Length(Vec<u8>),
    /// The body, and the sizes of the chunks it is sent in.
    Chunked(Vec<u8>, Vec<usize>),
}

impl GenBody {
    fn bytes(&self) -> &[u8] {
        match self {
            GenBody::None => b"",
            GenBody::Length(body) | GenBody::Chunked(body, _) => body,
        }
    }
}

fn body() -> impl Strategy<Value = GenBody> {
    let bytes = || prop::collection::vec(any::<u8>(), 0..3000);
    prop_oneof![
        Just(GenBody::None),
        bytes().prop_map(GenBody::Length),
        (bytes(), prop::collection::vec(1usize..700, 1..8))
            .prop_map(|(body, sizes)| GenBody::Chunked(body, sizes)),
    ]
}

#[derive(Debug, Clone)]
struct GenRequest {
    method: Method,
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    body: GenBody,
}

fn request(path: &'static str) -> impl Strategy<Value = GenRequest> {
    let method = prop::sample::select(vec![
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
    ]);
    let query = prop::option::of("[a-z0-9=&%]{0,20}");
    (method, query, header_set(), body()).prop_map(move |(method, query, headers, body)| {
        let target = match query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_owned(),
        };
        GenRequest {
            method,
            target,
            headers,
            body,
        }
    })
}

impl GenRequest {
    /// The request on the wire. Host comes first; the framing field last.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out =
            format!("{} {} HTTP/1.1\r\nHost: test\r\n", self.method, self.target).into_bytes();
        for (name, value) in &self.headers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        match &self.body {
            GenBody::None => out.extend_from_slice(b"\r\n"),
            GenBody::Length(body) => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(body);
            }
            GenBody::Chunked(body, sizes) => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                let mut rest = &body[..];
                for size in sizes.iter().cycle() {
                    if rest.is_empty() {
                        break;
                    }
                    let (chunk, tail) = rest.split_at((*size).min(rest.len()));
                    encode_chunk(&mut out, chunk);
                    rest = tail;
                }
                out.extend_from_slice(LAST_CHUNK);
            }
        }
        out
    }

    /// The fields a server sees: the generated ones, plus Host and the framing field.
    fn expected_fields(&self) -> Vec<(String, Vec<u8>)> {
        let mut fields = vec![("Host".to_owned(), b"test".to_vec())];
        fields.extend(self.headers.iter().cloned());
        match &self.body {
            GenBody::None => {}
            GenBody::Length(body) => fields.push((
                "Content-Length".to_owned(),
                body.len().to_string().into_bytes(),
            )),
            GenBody::Chunked(..) => {
                fields.push(("Transfer-Encoding".to_owned(), b"chunked".to_vec()))
            }
        }
        fields
    }

    /// What `/reflect` answers for this request.
    fn reflected(&self) -> Vec<u8> {
        let mut out = format!("{} {}\n", self.method, self.target).into_bytes();
        for (name, value) in self.expected_fields() {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(&value);
            out.push(b'\n');
        }
        out.push(b'\n');
        out.extend_from_slice(self.body.bytes());
        out
    }

    fn expected_body_kind(&self) -> BodyKind {
        match &self.body {
            // `Content-Length: 0` frames no body, like no field at all.
            GenBody::None => BodyKind::Empty,
            GenBody::Length(body) if body.is_empty() => BodyKind::Empty,
            GenBody::Length(body) => BodyKind::Length(body.len() as u64),
            GenBody::Chunked(..) => BodyKind::Chunked,
        }
    }
}

/// What a parser made of one request: its head's fields and its whole body.
#[derive(Debug, PartialEq)]
struct Parsed {
    method: Method,
    target: String,
    fields: Vec<(String, Vec<u8>)>,
    body_kind: BodyKind,
    body: Vec<u8>,
}

fn summarize(head: &RequestHead, body: Vec<u8>) -> Parsed {
    Parsed {
        method: head.method().clone(),
        target: head.target().to_owned(),
        fields: head
            .headers()
            .map(|(n, v)| (n.to_owned(), v.to_vec()))
            .collect(),
        body_kind: head.body_kind(),
        body,
    }
}

/// Parse every request in `input`, which arrives in the pieces `cuts` ends (sorted offsets),
/// the way a connection does: parse the head from what has arrived, wait for more when it is
/// incomplete, then read the body as it arrives.
fn parse_stream(input: &[u8], cuts: &[usize]) -> Vec<Parsed> {
    let limits = Limits::default();
    let mut arrived = 0;
    let mut cuts = cuts.iter().copied().chain(std::iter::once(input.len()));
    let mut more = |arrived: &mut usize| match cuts.next() {
        Some(cut) => {
            *arrived = cut.max(*arrived);
            true
        }
        None => false,
    };
    let mut at = 0;
    let mut parsed = Vec::new();
    while at < input.len() {
        let mut head = RequestHead::default();
        let head_len = loop {
            match parse_head(&input[at..arrived], &limits, &mut head) {
                Ok(Some(n)) => break n,
                Ok(None) => assert!(more(&mut arrived), "the stream ended inside a head"),
                Err(e) => panic!("a valid head was refused: {e}"),
            }
        };
        at += head_len;
        let mut body = Vec::new();
        match head.body_kind() {
            BodyKind::Empty => {}
            BodyKind::Length(n) => {
                let end = at + n as usize;
                while arrived < end {
                    assert!(more(&mut arrived), "the stream ended inside a body");
                }
                body.extend_from_slice(&input[at..end]);
                at = end;
            }
            BodyKind::Chunked => {
                let mut decoder = ChunkedDecoder::new(16 * 1024);
                while !decoder.is_done() {
                    if at == arrived {
                        assert!(more(&mut arrived), "the stream ended inside a chunked body");
                    }
                    let step = decoder
                        .decode(&input[at..arrived])
                        .expect("valid chunked body");
                    if let Some(data) = step.data {
                        body.extend_from_slice(&input[at..arrived][data]);
                    }
                    at += step.consumed;
                }
            }
        }
        parsed.push(summarize(&head, body));
    }
    parsed
}

/// Sorted cut points inside `0..len`.
fn cuts_within(len: usize, raw: &[prop::sample::Index]) -> Vec<usize> {
    let mut cuts: Vec<usize> = raw.iter().map(|i| i.index(len.max(1))).collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

proptest! {
    /// RFC 9110 §5: field names and values are passed on exactly as received, in order,
    /// duplicates kept.
    #[test]
    fn request_header_fields_round_trip(req in request("/any")) {
        let bytes = req.to_bytes();
        let mut head = RequestHead::default();
        let n = parse_head(&bytes, &Limits::default(), &mut head)
            .expect("a valid head is accepted")
            .expect("the head is complete");
        let fields: Vec<(String, Vec<u8>)> =
            head.headers().map(|(n, v)| (n.to_owned(), v.to_vec())).collect();
        prop_assert_eq!(fields, req.expected_fields());
        prop_assert_eq!(head.method(), &req.method);
        prop_assert_eq!(head.target(), req.target.as_str());
        prop_assert_eq!(head.body_kind(), req.expected_body_kind());
        for (name, _) in &req.headers {
            // Lookup ignores case and finds the first field of that name.
            let first = req.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).unwrap();
            prop_assert_eq!(head.header(&name.to_ascii_uppercase()), Some(&first.1[..]), "{}", name);
        }
        prop_assert!(n <= bytes.len());
    }

    /// A response's header map encodes into a head that a client parses back to the same
    /// fields (names lowercased by `http`, values exact, every value of a repeated name kept).
    #[test]
    fn response_header_fields_round_trip(fields in header_set(), status in 200u16..600) {
        let status = StatusCode::from_u16(status).unwrap();
        let mut map = HeaderMap::new();
        for (name, value) in &fields {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        let mut out = Vec::new();
        encode_head(&mut out, status, HeadFields::Map(&map), Framing::Length(0), Connection::KeepAlive,
            b"Sun, 06 Nov 1994 08:49:37 GMT");
        let mut parsed_fields = [httparse::EMPTY_HEADER; 64];
        let mut parsed = httparse::Response::new(&mut parsed_fields);
        prop_assert_eq!(parsed.parse(&out).unwrap(), httparse::Status::Complete(out.len()));
        prop_assert_eq!(parsed.code, Some(status.as_u16()));
        let engine_fields = ["date", "content-length", "connection"];
        let got: Vec<(String, Vec<u8>)> = parsed.headers.iter()
            .filter(|h| !engine_fields.contains(&h.name))
            .map(|h| (h.name.to_owned(), h.value.to_vec()))
            .collect();
        let expected: Vec<(String, Vec<u8>)> = map.iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
            .collect();
        prop_assert_eq!(got, expected);
    }

    /// Pipelined requests split into pieces at arbitrary points parse exactly as the whole
    /// stream does in one piece.
    #[test]
    fn split_requests_parse_the_same(
        reqs in prop::collection::vec(request("/any"), 1..4),
        raw_cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        let stream: Vec<u8> = reqs.iter().flat_map(GenRequest::to_bytes).collect();
        let whole = parse_stream(&stream, &[]);
        prop_assert_eq!(whole.len(), reqs.len());
        for (got, req) in whole.iter().zip(&reqs) {
            prop_assert_eq!(&got.fields, &req.expected_fields());
            prop_assert_eq!(&got.body[..], req.body.bytes());
        }
        let split = parse_stream(&stream, &cuts_within(stream.len(), &raw_cuts));
        prop_assert_eq!(split, whole);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The same through a real server: requests written to the socket in pieces, with a pause
    /// after each so the server reads them separately, get the answers the whole stream gets.
    #[test]
    fn split_writes_get_the_same_answers(
        reqs in prop::collection::vec(request("/reflect"), 1..4),
        raw_cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let stream: Vec<u8> = reqs.iter().flat_map(GenRequest::to_bytes).collect();
        let expected: Vec<Vec<u8>> = reqs.iter().map(GenRequest::reflected).collect();
        let server = serve(Limits::default());
        let mut socket = connect(&server);
        socket.set_nodelay(true).unwrap();
        let mut from = 0;
        for cut in cuts_within(stream.len(), &raw_cuts).into_iter().chain([stream.len()]) {
            socket.write_all(&stream[from..cut]).unwrap();
            from = cut;
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut reader = Reader::new(socket);
        for want in &expected {
            let reply = reader.response(false).expect("an answer to every request");
            prop_assert_eq!(reply.status, 200);
            prop_assert_eq!(&reply.body, want);
        }
        server.shutdown().expect("the server shuts down");
    }
}
