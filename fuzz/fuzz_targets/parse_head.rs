//! The head parser never panics, and what it accepts is self-consistent: the head fits the
//! input, the path is a prefix of the target's path part, framing is one of the three kinds,
//! and a used head answers as a fresh one. Its
//! common-form scanner changes nothing but speed: httparse's path alone gives the same answer
//! and the same head.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vireo_http::proto::{parse_general, parse_head, BodyKind, RequestHead};
use vireo_http::Limits;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_head_size: 4096,
        max_target_len: 1024,
        ..Limits::default()
    };
    let mut head = RequestHead::default();
    let first = parse_head(data, &limits, &mut head);
    let mut general = RequestHead::default();
    assert_eq!(parse_general(data, &limits, &mut general), first);
    if let Ok(Some(_)) = first {
        assert_eq!(format!("{head:?}"), format!("{general:?}"));
    }
    // The same bytes again into the same head give the same answer.
    assert_eq!(parse_head(data, &limits, &mut head), first);
    if let Ok(Some(len)) = first {
        assert!(len <= data.len());
        assert!(head.target().len() <= limits.max_target_len);
        assert!(head.path_and_query().starts_with(head.path()));
        // The body limit is applied when the body is read, not here.
        if let BodyKind::Length(n) = head.body_kind() {
            assert!(n > 0);
        }
        // Parsing the same bytes again, into a used head, gives the same answer.
        let mut again = RequestHead::default();
        parse_head(b"GET /x HTTP/1.1\r\nHost: a\r\nX: y\r\n\r\n", &limits, &mut again).unwrap();
        assert_eq!(parse_head(data, &limits, &mut again), Ok(Some(len)));
        assert_eq!(again.target(), head.target());
        assert_eq!(again.headers().count(), head.headers().count());
    }
});
