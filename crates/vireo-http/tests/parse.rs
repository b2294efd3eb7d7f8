//! Table-driven tests of the request-head parser: exact bytes in, exact result out.

use http::{Method, StatusCode, Version};
use vireo_http::proto::{parse_head, BodyKind, RequestHead};
use vireo_http::Limits;

#[derive(Debug)]
enum Expect {
    /// Parses completely, with this method, path, body framing and keep-alive.
    Ok(Method, &'static str, BodyKind, bool),
    /// Needs more bytes.
    Partial,
    /// Refused with this status.
    Refused(u16),
}

fn run(name: &str, bytes: &[u8], expect: Expect, limits: &Limits) {
    let mut head = RequestHead::default();
    let result = parse_head(bytes, limits, &mut head);
    match (&expect, result) {
        (Expect::Ok(method, path, body, keep_alive), Ok(Some(_))) => {
            assert_eq!(head.method(), method, "{name}: method");
            assert_eq!(head.path(), *path, "{name}: path");
            assert_eq!(head.body_kind(), *body, "{name}: body");
            assert_eq!(head.keep_alive(), *keep_alive, "{name}: keep-alive");
        }
        (Expect::Partial, Ok(None)) => {}
        (Expect::Refused(status), Err(e)) => {
            assert_eq!(
                e.status(),
                StatusCode::from_u16(*status).unwrap(),
                "{name}: {e}"
            )
        }
        (expect, got) => panic!("{name}: expected {expect:?}, got {got:?}"),
    }
}

macro_rules! table {
    ($($name:ident: $bytes:expr => $expect:expr;)*) => {
        $(
            #[test]
            fn $name() {
                run(stringify!($name), $bytes, $expect, &Limits::default());
            }
        )*
    };
}

use BodyKind::{Chunked, Empty, Length};
use Expect::{Ok as Parsed, Partial, Refused};

table! {
    simple_get: b"GET / HTTP/1.1\r\nHost: a\r\n\r\n" => Parsed(Method::GET, "/", Empty, true);
    leading_empty_lines: b"\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n" => Parsed(Method::GET, "/x", Empty, true);
    bare_lf_line_ends: b"GET / HTTP/1.1\nHost: a\n\n" => Parsed(Method::GET, "/", Empty, true);
    query_split_from_path: b"GET /a/b?c=d HTTP/1.1\r\nHost: a\r\n\r\n" => Parsed(Method::GET, "/a/b", Empty, true);
    absolute_form: b"GET http://example.com/p?q HTTP/1.1\r\nHost: example.com\r\n\r\n" => Parsed(Method::GET, "/p", Empty, true);
    absolute_form_without_path: b"GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n" => Parsed(Method::GET, "/", Empty, true);
    absolute_form_userinfo: b"GET http://u@a.example/p HTTP/1.1\r\nHost: a.example\r\n\r\n" => Refused(400);
    absolute_form_bad_authority: b"GET http://[::1/p HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    asterisk_form_options: b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n" => Parsed(Method::OPTIONS, "*", Empty, true);
    asterisk_form_with_get: b"GET * HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    relative_target: b"GET foo HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    connect_not_implemented: b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n" => Refused(501);
    content_length: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n" => Parsed(Method::POST, "/", Length(12), true);
    content_length_zero_is_empty: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n" => Parsed(Method::POST, "/", Empty, true);
    chunked: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" => Parsed(Method::POST, "/", Chunked, true);
    chunked_any_case: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ChUnKeD\r\n\r\n" => Parsed(Method::POST, "/", Chunked, true);
    http10_defaults_to_close: b"GET / HTTP/1.0\r\n\r\n" => Parsed(Method::GET, "/", Empty, false);
    http10_keep_alive: b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" => Parsed(Method::GET, "/", Empty, true);
    http11_connection_close: b"GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, close\r\n\r\n" => Parsed(Method::GET, "/", Empty, false);
    partial_request_line: b"GET / HT" => Partial;
    partial_headers: b"GET / HTTP/1.1\r\nHost: a\r\n" => Partial;
    missing_host: b"GET / HTTP/1.1\r\n\r\n" => Refused(400);
    repeated_host: b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" => Refused(400);
    repeated_host_http10: b"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n" => Refused(400);
    invalid_host: b"GET / HTTP/1.1\r\nHost: a b/c\r\n\r\n" => Refused(400);
    cl_and_te: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n" => Refused(400);
    te_and_cl: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n" => Refused(400);
    differing_cl: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n" => Refused(400);
    repeated_identical_cl: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n" => Refused(400);
    cl_list: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\n" => Refused(400);
    cl_signed: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\n" => Refused(400);
    cl_hex: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\n" => Refused(400);
    cl_empty: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n" => Refused(400);
    cl_overflow: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n" => Refused(400);
    // The body limit is applied when the body is read, where a service may have changed it.
    cl_over_body_limit: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2097153\r\n\r\n" => Parsed(Method::POST, "/", Length(2_097_153), true);
    // Without a final chunked the length is unknown: 400, not 501 (RFC 9112 §6.3).
    te_unknown_coding_alone: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n" => Refused(400);
    te_identity_alone: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n" => Refused(400);
    te_unknown_then_chunked_headers: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" => Refused(501);
    te_gzip_then_chunked: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" => Refused(501);
    te_chunked_not_last: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n" => Refused(400);
    te_chunked_twice: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" => Refused(400);
    te_chunked_with_parameter: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;q=1\r\n\r\n" => Refused(400);
    te_near_chunked: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n" => Refused(400);
    te_empty: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n" => Refused(400);
    te_only_empty_elements: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , ,\r\n\r\n" => Refused(400);
    te_empty_element_first: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n" => Parsed(Method::POST, "/", Chunked, true);
    te_empty_element_last: b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n\r\n" => Parsed(Method::POST, "/", Chunked, true);
    te_in_http10: b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" => Refused(400);
    obs_fold: b"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n" => Refused(400);
    space_before_colon: b"GET / HTTP/1.1\r\nHost : a\r\n\r\n" => Refused(400);
    tab_before_colon: b"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n" => Refused(400);
    bare_cr_in_value: b"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n" => Refused(400);
    bare_cr_line_end: b"GET / HTTP/1.1\rHost: a\r\n\r\n" => Refused(400);
    control_char_in_value: b"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x01c\r\n\r\n" => Refused(400);
    nul_in_value: b"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n" => Refused(400);
    control_char_in_target: b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    empty_header_name: b"GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n" => Refused(400);
    bad_method_token: b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    http2_version: b"GET / HTTP/2.0\r\nHost: a\r\n\r\n" => Refused(505);
    http3_version: b"GET / HTTP/3.0\r\nHost: a\r\n\r\n" => Refused(505);
    garbage_version: b"GET / HTXP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    other_protocol: b"DESCRIBE rtsp://a/x RTSP/1.0\r\nCSeq: 1\r\n\r\n" => Refused(400);
    later_minor_version_served_as_11: b"GET /v HTTP/1.2\r\nHost: a\r\n\r\n" => Parsed(Method::GET, "/v", Empty, true);
    space_in_target: b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    missing_version: b"GET /\r\nHost: a\r\n\r\n" => Refused(400);
    fragment_in_target: b"GET /#frag HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    raw_utf8_in_target: b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n" => Refused(400);
    host_with_port: b"GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n" => Parsed(Method::GET, "/", Empty, true);
    host_ipv6_literal: b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n" => Parsed(Method::GET, "/", Empty, true);
    // RFC 9112 §3.2, §3.3: an origin- or asterisk-form target takes its authority from Host, so
    // an empty Host leaves the request without one; absolute-form carries its own.
    host_empty_value: b"GET / HTTP/1.1\r\nHost: \r\n\r\n" => Refused(400);
    host_empty_value_without_space: b"GET /a?b HTTP/1.1\r\nHost:\r\n\r\n" => Refused(400);
    host_whitespace_only_value: b"GET / HTTP/1.1\r\nHost: \t \r\n\r\n" => Refused(400);
    host_empty_value_general_path: b"GET / HTTP/1.1\nHost:\n\n" => Refused(400);
    host_empty_value_lowercase_name: b"PUT /x HTTP/1.1\r\nhost:\r\nContent-Length: 1\r\n\r\n" => Refused(400);
    host_empty_value_asterisk_form: b"OPTIONS * HTTP/1.1\r\nHost: \r\n\r\n" => Refused(400);
    host_empty_value_absolute_form: b"GET http://example.com/p HTTP/1.1\r\nHost: \r\n\r\n" => Parsed(Method::GET, "/p", Empty, true);
    host_empty_value_http10: b"GET / HTTP/1.0\r\nHost: \r\n\r\n" => Parsed(Method::GET, "/", Empty, false);
    host_bad_port: b"GET / HTTP/1.1\r\nHost: a:xyz\r\n\r\n" => Refused(400);
    host_two_colons: b"GET / HTTP/1.1\r\nHost: a:1:2\r\n\r\n" => Refused(400);
    host_ipv4_ending_in_digits: b"GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n" => Parsed(Method::GET, "/", Empty, true);
    host_empty_port: b"GET / HTTP/1.1\r\nHost: a:\r\n\r\n" => Parsed(Method::GET, "/", Empty, true);
    host_port_then_letters: b"GET / HTTP/1.1\r\nHost: a:80b\r\n\r\n" => Refused(400);
    host_colon_inside_name_with_port: b"GET / HTTP/1.1\r\nHost: a:b:80\r\n\r\n" => Refused(400);
    host_unclosed_literal: b"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n" => Refused(400);
    host_bracket_inside_literal: b"GET / HTTP/1.1\r\nHost: [:[:1]\r\n\r\n" => Refused(400);
    host_bracket_inside_name: b"GET / HTTP/1.1\r\nHost: a[b]\r\n\r\n" => Refused(400);
    host_slash_in_name: b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n" => Refused(400);
    expect_continue: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n" => Parsed(Method::POST, "/", Length(1), true);
    expect_other: b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n" => Refused(417);
}

#[test]
fn expect_continue_flag_only_for_http11_with_a_body() {
    let limits = Limits::default();
    let mut head = RequestHead::default();
    let with_body =
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n";
    parse_head(with_body, &limits, &mut head).unwrap().unwrap();
    assert!(head.expects_continue());
    let without_body = b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n";
    parse_head(without_body, &limits, &mut head)
        .unwrap()
        .unwrap();
    assert!(!head.expects_continue());
    let http10 = b"POST / HTTP/1.0\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n";
    parse_head(http10, &limits, &mut head).unwrap().unwrap();
    assert!(!head.expects_continue());
}

#[test]
fn head_length_and_fields_are_exact() {
    let bytes = b"PUT /x HTTP/1.1\r\nHost: h\r\nX-Multi: 1\r\nx-multi: 2\r\n\r\nBODY";
    let mut head = RequestHead::default();
    let len = parse_head(bytes, &Limits::default(), &mut head)
        .unwrap()
        .unwrap();
    assert_eq!(&bytes[len..], b"BODY");
    assert_eq!(head.version(), Version::HTTP_11);
    assert_eq!(head.header("X-MULTI"), Some(&b"1"[..]));
    let all: Vec<_> = head.headers().collect();
    assert_eq!(
        all,
        vec![
            ("Host", &b"h"[..]),
            ("X-Multi", &b"1"[..]),
            ("x-multi", &b"2"[..])
        ]
    );
}

#[test]
fn reused_head_forgets_the_previous_request() {
    let limits = Limits::default();
    let mut head = RequestHead::default();
    parse_head(
        b"POST /a HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nContent-Length: 3\r\n\r\n",
        &limits,
        &mut head,
    )
    .unwrap();
    parse_head(b"GET /b HTTP/1.1\r\nHost: h\r\n\r\n", &limits, &mut head).unwrap();
    assert_eq!(head.path(), "/b");
    assert_eq!(head.header("x-a"), None);
    assert_eq!(head.body_kind(), BodyKind::Empty);
}

#[test]
fn an_absolute_form_targets_authority_is_the_host() {
    // RFC 9112 §3.2.2: the Host field is ignored for the target's authority, so whatever reads
    // Host sees what a proxy routing on the target saw.
    for (target, host) in [
        ("http://a.example/p", "b.example"),
        ("http://a.example:8080/q", "a.example"),
        ("http://a.example/p", ""),
    ] {
        let bytes = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nX: y\r\n\r\n");
        let mut head = RequestHead::default();
        parse_head(bytes.as_bytes(), &Limits::default(), &mut head)
            .unwrap_or_else(|e| panic!("{target}: {e}"))
            .unwrap_or_else(|| panic!("{target}: incomplete"));
        let authority = target
            .trim_start_matches("http://")
            .split(['/', '?'])
            .next()
            .unwrap();
        assert_eq!(head.header("host"), Some(authority.as_bytes()), "{target}");
        assert_eq!(head.header("x"), Some(&b"y"[..]));
    }
}

#[test]
fn target_path_and_query_in_every_form() {
    // (target, path, path and query, query)
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        ("/", "/", "/", None),
        ("/a/b?c=d", "/a/b", "/a/b?c=d", Some("c=d")),
        ("/a?", "/a", "/a?", Some("")),
        ("/a?b?c", "/a", "/a?b?c", Some("b?c")),
        ("/?x", "/", "/?x", Some("x")),
        ("http://h.example/p?q=1", "/p", "/p?q=1", Some("q=1")),
        ("HTTPS://h.example:8443", "/", "/", None),
        ("http://h.example/", "/", "/", None),
    ];
    let mut head = RequestHead::default();
    for &(target, path, path_and_query, query) in cases {
        // Host names the target's authority, as a client must send it (RFC 9112 §3.2).
        let host = if target.contains(":8443") {
            "h.example:8443"
        } else {
            "h.example"
        };
        let bytes = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        parse_head(bytes.as_bytes(), &Limits::default(), &mut head)
            .unwrap_or_else(|e| panic!("{target}: {e}"))
            .unwrap_or_else(|| panic!("{target}: incomplete"));
        assert_eq!(head.target(), target);
        assert_eq!(head.path(), path, "{target}: path");
        assert_eq!(head.path_bytes(), path.as_bytes(), "{target}: path bytes");
        assert_eq!(
            head.path_and_query(),
            path_and_query,
            "{target}: path and query"
        );
        assert_eq!(head.query(), query, "{target}: query");
    }
}

fn limits_test(bytes: &[u8], limits: &Limits) -> Result<Option<usize>, u16> {
    let mut head = RequestHead::default();
    parse_head(bytes, limits, &mut head).map_err(|e| e.status().as_u16())
}

#[test]
fn too_many_headers_is_431() {
    let mut bytes = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    for i in 0..100 {
        bytes.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    assert_eq!(limits_test(&bytes, &Limits::default()), Err(431));
    let roomy = Limits {
        max_headers: 200,
        ..Limits::default()
    };
    assert!(limits_test(&bytes, &roomy).unwrap().is_some());
}

#[test]
fn long_target_is_414_even_before_the_line_ends() {
    let limits = Limits::default();
    let mut bytes = b"GET /".to_vec();
    bytes.resize(limits.max_target_len + 100, b'a');
    assert_eq!(limits_test(&bytes, &limits), Err(414));
    bytes.extend_from_slice(b" HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(limits_test(&bytes, &limits), Err(414));
}

#[test]
fn target_at_the_limit_is_accepted() {
    let limits = Limits::default();
    let mut bytes = b"GET /".to_vec();
    bytes.resize(4 + limits.max_target_len, b'a');
    bytes.extend_from_slice(b" HTTP/1.1\r\nHost: a\r\n\r\n");
    assert!(limits_test(&bytes, &limits).unwrap().is_some());
}

#[test]
fn oversized_head_is_431_complete_or_not() {
    let limits = Limits::default();
    let mut bytes = b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: ".to_vec();
    bytes.resize(limits.max_head_size, b'a');
    assert_eq!(limits_test(&bytes, &limits), Err(431));
    bytes.extend_from_slice(b"\r\n\r\n");
    assert_eq!(limits_test(&bytes, &limits), Err(431));
}

/// A reused head refuses an empty `Host` after a valid one, as a fresh head does.
#[test]
fn empty_host_is_refused_after_a_valid_one() {
    let limits = Limits::default();
    let mut head = RequestHead::default();
    let ok = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    assert!(parse_head(ok, &limits, &mut head).unwrap().is_some());
    let empty = b"GET / HTTP/1.1\r\nHost: \r\n\r\n";
    let refused = parse_head(empty, &limits, &mut head).unwrap_err();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
}

/// A method longer than any the engine accepts is a malformed request line (400), not a long
/// target (414), complete or not, and however large.
#[test]
fn long_method_is_400_not_414() {
    let limits = Limits::default();
    let method = "A".repeat(100_000);
    let whole = format!("{method} / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(limits_test(whole.as_bytes(), &limits), Err(400));
    assert_eq!(limits_test(method.as_bytes(), &limits), Err(400));
    let unfinished = format!("{method} /");
    assert_eq!(limits_test(unfinished.as_bytes(), &limits), Err(400));
    // Within the head size limit too, and before a long target.
    let long = "A".repeat(33);
    let within = format!("{long} / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(limits_test(within.as_bytes(), &limits), Err(400));
    let target = "a".repeat(limits.max_target_len + 1);
    let both = format!("{long} /{target} HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(limits_test(both.as_bytes(), &limits), Err(400));
    // The longest method accepted is an extension method like any other.
    let longest = "A".repeat(32);
    let ok = format!("{longest} / HTTP/1.1\r\nHost: a\r\n\r\n");
    let mut head = RequestHead::default();
    assert!(parse_head(ok.as_bytes(), &limits, &mut head)
        .unwrap()
        .is_some());
    assert_eq!(head.method().as_str(), longest);
}

/// Empty lines before the request line (which are skipped) do not hide a long target.
#[test]
fn long_target_after_empty_lines_is_414() {
    let limits = Limits::default();
    let mut bytes = b"\r\n\r\nGET /".to_vec();
    bytes.resize(limits.max_target_len + 100, b'a');
    assert_eq!(limits_test(&bytes, &limits), Err(414));
    bytes.resize(limits.max_head_size + 10, b'a');
    assert_eq!(limits_test(&bytes, &limits), Err(414));
}

/// A head over the size limit whose target is within its limit is 431, whatever the length of
/// its request line.
#[test]
fn oversized_head_with_a_short_target_is_431() {
    let limits = Limits {
        max_target_len: 16,
        max_head_size: 256,
        ..Limits::default()
    };
    let mut bytes = b"GET /0123456789abcde HTTP/1.1\r\nHost: a\r\nX-Big: ".to_vec();
    bytes.resize(300, b'a');
    bytes.extend_from_slice(b"\r\n\r\n");
    assert_eq!(limits_test(&bytes, &limits), Err(431));
}

/// A line naming another protocol (h2spec's invalid HTTP/2 preface, RTSP) is not HTTP, which
/// the connection closes on without an answer; a line missing its version, or with the name
/// in lower case, is a bad request.
#[test]
fn a_line_naming_another_protocol_is_not_http() {
    let parse = |bytes: &[u8]| parse_head(bytes, &Limits::default(), &mut RequestHead::default());
    for line in [
        &b"INVALID CONNECTION PREFACE\r\n\r\n"[..],
        b"DESCRIBE rtsp://a/x RTSP/1.0\r\nCSeq: 1\r\n\r\n",
    ] {
        assert_eq!(parse(line).unwrap_err(), vireo_http::ProtoError::NotHttp);
    }
    for line in [
        &b"GET /\r\nHost: a\r\n\r\n"[..],
        b"GET / http/1.1\r\nHost: a\r\n\r\n",
    ] {
        assert!(matches!(
            parse(line).unwrap_err(),
            vireo_http::ProtoError::BadRequest(_)
        ));
    }
}
