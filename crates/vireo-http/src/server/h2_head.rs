//! An HTTP/2 request's head in HTTP/1.1 form, parsed by the engine's own parser, so a stream
//! meets the same limits and checks as an HTTP/1.1 request.

use crate::head::Head;
use crate::limits::Limits;
use crate::proto::ProtoError;
use http::header;
use std::cell::RefCell;

/// Capacity of the text buffer kept between requests; one grown past it by a large head is
/// let go.
const KEPT_CAPACITY: usize = 4 * 1024;

thread_local! {
    /// The head text of the stream being parsed, reused from one stream to the next.
    static HEAD_TEXT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The stream's head, parsed with `limits`, and whether it carries `Expect: 100-continue`
/// (any other expectation is refused with `417` by the parser).
pub(super) fn parse(
    parts: &http::request::Parts,
    limits: &Limits,
) -> (Result<Head, ProtoError>, bool) {
    HEAD_TEXT.with(|text| {
        let mut text = text.borrow_mut();
        text.clear();
        let expect_continue = encode(parts, &mut text);
        let head = Head::parse(&text, limits).map(|(head, _)| head);
        if text.capacity() > KEPT_CAPACITY {
            *text = Vec::new();
        }
        (head, expect_continue)
    })
}

/// Write the head in HTTP/1.1 form into `out`, in one pass over its fields: `:authority`
/// becomes `Host` (unless a `Host` field came too), and `Cookie` fields, which HTTP/2 may
/// split, are joined into one where the first was. Returns whether `Expect` asks for
/// `100-continue`.
fn encode(parts: &http::request::Parts, out: &mut Vec<u8>) -> bool {
    out.extend_from_slice(parts.method.as_str().as_bytes());
    out.push(b' ');
    let target = match parts.uri.path_and_query() {
        Some(path) => path.as_str(),
        None => parts.uri.authority().map_or("/", |a| a.as_str()),
    };
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    // Written first, as clients send it; taken out again if the request has a Host field.
    let authority = parts.uri.authority().map(|authority| {
        let start = out.len();
        push_field(out, b"host", authority.as_str().as_bytes());
        start..out.len()
    });
    let (mut host_field, mut cookies_written, mut expect_continue) = (false, false, false);
    for (name, value) in &parts.headers {
        if name == header::COOKIE {
            if !cookies_written {
                push_cookies(out, &parts.headers);
                cookies_written = true;
            }
            continue;
        }
        if name == header::HOST {
            host_field = true;
        } else if name == header::EXPECT {
            expect_continue |= value.as_bytes().eq_ignore_ascii_case(b"100-continue");
        }
        push_field(out, name.as_str().as_bytes(), value.as_bytes());
    }
    if let (true, Some(line)) = (host_field, authority) {
        out.drain(line);
    }
    out.extend_from_slice(b"\r\n");
    expect_continue
}

/// Every `Cookie` field as one line.
fn push_cookies(out: &mut Vec<u8>, headers: &http::HeaderMap) {
    out.extend_from_slice(b"cookie: ");
    for (i, value) in headers.get_all(header::COOKIE).iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"; ");
        }
        out.extend_from_slice(value.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

fn push_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str, fields: &[(&str, &str)]) -> http::request::Parts {
        let mut request = http::Request::builder().uri(uri);
        for (name, value) in fields {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn text(parts: &http::request::Parts) -> (String, bool) {
        let mut out = Vec::new();
        let expect_continue = encode(parts, &mut out);
        (String::from_utf8(out).unwrap(), expect_continue)
    }

    #[test]
    fn the_authority_leads_and_split_cookies_are_joined_where_the_first_was() {
        let parts = parts(
            "https://example.com/a?b=1",
            &[
                ("accept", "*/*"),
                ("cookie", "a=1"),
                ("x-one", "1"),
                ("cookie", "b=2"),
            ],
        );
        let want = "GET /a?b=1 HTTP/1.1\r\nhost: example.com\r\naccept: */*\r\n\
                    cookie: a=1; b=2\r\nx-one: 1\r\n\r\n";
        assert_eq!(text(&parts), (want.to_owned(), false));
    }

    #[test]
    fn a_host_field_stands_in_for_the_authority_and_expect_is_read() {
        let parts = parts(
            "https://example.com/",
            &[("host", "example.com"), ("expect", "100-Continue")],
        );
        let want = "GET / HTTP/1.1\r\nhost: example.com\r\nexpect: 100-Continue\r\n\r\n";
        assert_eq!(text(&parts), (want.to_owned(), true));
        let (head, expect_continue) = parse(&parts, &Limits::default());
        assert!(expect_continue);
        assert_eq!(head.unwrap().header("host"), Some(&b"example.com"[..]));
    }

    #[test]
    fn a_head_over_the_limits_is_refused_and_the_kept_buffer_stays_small() {
        let long = "v".repeat(KEPT_CAPACITY * 2);
        let parts = parts("https://example.com/", &[("x-long", &long)]);
        let limits = Limits {
            max_head_size: KEPT_CAPACITY,
            ..Limits::default()
        };
        assert!(parse(&parts, &limits).0.is_err());
        HEAD_TEXT.with(|text| assert!(text.borrow().capacity() <= KEPT_CAPACITY));
    }
}
