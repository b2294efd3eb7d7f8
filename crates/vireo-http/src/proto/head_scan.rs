//! The request heads nearly every client sends, read in one pass.
//!
//! Written by hand because httparse, general as it must be, costs more on these heads than all
//! the rest of a small request. This scanner accepts only a strict subset of what httparse
//! accepts: an uppercase method, an origin-form target of visible ASCII without `#`, `HTTP/1.1`
//! or `HTTP/1.0`, CRLF line ends, and fields with a token name right before the colon.
//! Anything else, an incomplete head included, it leaves to httparse, which then judges it as
//! before: every error and every unusual form still takes the general path. A differential test
//! and the `parse_head` fuzz target check that the two read every head this one takes alike.

use super::head::Span;
use http::Version;

/// What the scanner found: positions in the buffer it read.
pub(super) struct CommonHead {
    /// The length of the head, its final CRLF included.
    pub(super) len: usize,
    /// The method: the bytes before the first space, all uppercase letters.
    pub(super) method: Span,
    /// The target, which is also its path and query (origin-form).
    pub(super) target: Span,
    /// Where the path ends: at the first `?`, or with the target.
    pub(super) path_end: u32,
    pub(super) version: Version,
}

/// Read a head in the common form from the start of `buf`, putting the spans of its fields in
/// `fields`; `None` when the head is in any other form, holds more than `max_fields` fields or
/// is not complete yet.
pub(super) fn scan_common_head(
    buf: &[u8],
    max_fields: usize,
    fields: &mut Vec<(Span, Span)>,
) -> Option<CommonHead> {
    let method_len = if buf.starts_with(b"GET ") {
        3
    } else {
        let len = buf.iter().position(|b| !b.is_ascii_uppercase())?;
        if len == 0 || buf[len] != b' ' {
            return None;
        }
        len
    };
    let target_start = method_len + 1;
    if buf.get(target_start) != Some(&b'/') {
        return None;
    }
    let (target_end, query_at) = scan_target(buf, target_start)?;
    // The version compared as one 8-byte word, then the line end.
    let version = buf.get(target_end + 1..target_end + 11)?;
    if version[8..] != *b"\r\n" {
        return None;
    }
    let version = match u64::from_le_bytes(version[..8].try_into().expect("eight bytes")) {
        HTTP_11 => Version::HTTP_11,
        HTTP_10 => Version::HTTP_10,
        _ => return None,
    };
    let len = scan_fields(buf, target_end + 11, max_fields, fields)?;
    Some(CommonHead {
        len,
        method: span(0, method_len),
        target: span(target_start, target_end),
        path_end: query_at.unwrap_or(target_end) as u32,
        version,
    })
}

const HTTP_11: u64 = u64::from_le_bytes(*b"HTTP/1.1");
const HTTP_10: u64 = u64::from_le_bytes(*b"HTTP/1.0");

/// The end of the target starting at `start` (the space after it) and where its first `?` is;
/// `None` at a byte outside visible ASCII or a `#` (which the general path refuses), or when
/// the buffer ends first.
fn scan_target(buf: &[u8], start: usize) -> Option<(usize, Option<usize>)> {
    let mut at = start;
    // Two loops: the second, after a `?`, no longer looks for one.
    let query_at = loop {
        let b = *buf.get(at)?;
        if !TARGET_BYTES[b as usize] {
            return (b == b' ').then_some((at, None));
        }
        if b == b'?' {
            break at;
        }
        at += 1;
    };
    loop {
        at += 1;
        let b = *buf.get(at)?;
        if !TARGET_BYTES[b as usize] {
            return (b == b' ').then_some((at, Some(query_at)));
        }
    }
}

/// Read the fields from `at` to the empty line; the length of the head, or `None`. Inlined into
/// its one caller, which saves a frame on every request.
#[inline(always)]
fn scan_fields(
    buf: &[u8],
    mut at: usize,
    max_fields: usize,
    fields: &mut Vec<(Span, Span)>,
) -> Option<usize> {
    fields.clear();
    loop {
        let line = buf.get(at..)?;
        if line.starts_with(b"\r\n") {
            return Some(at + 2);
        }
        let name_len = line.iter().position(|&b| !TOKEN_BYTES[b as usize])?;
        if name_len == 0 || line[name_len] != b':' {
            return None;
        }
        let mut value_start = name_len + 1;
        while matches!(line.get(value_start), Some(b' ' | b'\t')) {
            value_start += 1;
        }
        let value_len = value_len(line.get(value_start..)?)?;
        let line_end = value_start + value_len;
        if line.get(line_end..line_end + 2)? != b"\r\n" {
            return None;
        }
        let mut value_end = line_end;
        while value_end > value_start && matches!(line[value_end - 1], b' ' | b'\t') {
            value_end -= 1;
        }
        // More fields than allowed: the general path's to answer.
        if fields.len() == max_fields {
            return None;
        }
        fields.push((
            span(at, at + name_len),
            span(at + value_start, at + value_end),
        ));
        at += line_end + 2;
    }
}

/// The length of the field value at the start of `bytes`: up to the first byte that cannot be
/// in one, which must be there.
fn value_len(bytes: &[u8]) -> Option<usize> {
    // Eight bytes at a time: values are the longest part of most heads.
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let stops = control_bytes(word);
        if stops == 0 {
            at += 8;
            continue;
        }
        let first = at + (stops.trailing_zeros() / 8) as usize;
        // A tab is the one control byte a value may hold.
        if bytes[first] != b'\t' {
            return Some(first);
        }
        at = first + 1;
    }
    let rest = &bytes[at..];
    rest.iter()
        .position(|&b| !VALUE_BYTES[b as usize])
        .map(|len| at + len)
}

/// The high bit of each byte of `word` (read little-endian) that is below a space or is DEL,
/// the bytes a value cannot hold but for tab. Exact for the first such byte; bytes after it
/// may be marked wrongly, by the borrow of the subtraction.
fn control_bytes(word: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH_BITS: u64 = ONES * 0x80;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH_BITS;
    let not_del = word ^ (ONES * 0x7f);
    let del = not_del.wrapping_sub(ONES) & !not_del & HIGH_BITS;
    below_space | del
}

fn span(start: usize, end: usize) -> Span {
    start as u32..end as u32
}

/// Bytes of an origin-form target this scanner takes: visible ASCII but `#`.
const TARGET_BYTES: [bool; 256] = byte_table!(|b| b.is_ascii_graphic() && b != b'#');

/// Bytes of a token (RFC 9110 §5.6.2), as httparse reads a field name.
const TOKEN_BYTES: [bool; 256] = byte_table!(|b| {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
});

/// Bytes of a field value as httparse reads one: tab, space, visible ASCII and obs-text.
const VALUE_BYTES: [bool; 256] = byte_table!(|b| b == b'\t' || (b >= b' ' && b != 0x7f));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::head::{parse_general, parse_head, RequestHead};
    use crate::Limits;
    use proptest::prelude::*;

    fn scan(head: &[u8]) -> Option<(CommonHead, Vec<(Span, Span)>)> {
        let mut fields = Vec::new();
        scan_common_head(head, 16, &mut fields).map(|common| (common, fields))
    }

    fn text(head: &[u8], span: &Span) -> String {
        String::from_utf8_lossy(&head[span.start as usize..span.end as usize]).into_owned()
    }

    /// The forms nearly every client sends are taken, and read to the right parts.
    #[test]
    fn reads_common_heads() {
        let head = b"GET /users/7?tab=a?b HTTP/1.1\r\nHost: example.com:8080\r\n\
            Accept:  text/html,\t*/* \t\r\nX-Obs: caf\xc3\xa9\r\n\r\nbody";
        let (common, fields) = scan(head).expect("a common head");
        assert_eq!(common.len, head.len() - 4);
        assert_eq!(text(head, &common.method), "GET");
        assert_eq!(text(head, &common.target), "/users/7?tab=a?b");
        assert_eq!(
            text(head, &(common.target.start..common.path_end)),
            "/users/7"
        );
        assert_eq!(common.version, Version::HTTP_11);
        let fields: Vec<(String, String)> = fields
            .iter()
            .map(|(name, value)| (text(head, name), text(head, value)))
            .collect();
        assert_eq!(
            fields,
            [
                ("Host".into(), "example.com:8080".into()),
                ("Accept".into(), "text/html,\t*/*".into()),
                ("X-Obs".into(), "café".into()),
            ]
        );

        // Empty values are taken too: httparse reads them as empty where they end.
        let head = b"PATCH / HTTP/1.1\r\nX-Empty:\r\nX-Blank: \t \r\n\r\n";
        let (_, fields) = scan(head).expect("a common head");
        let values: Vec<(String, &Span)> = fields.iter().map(|(n, v)| (text(head, n), v)).collect();
        assert_eq!(
            values,
            [("X-Empty".into(), &(26..26)), ("X-Blank".into(), &(39..39))]
        );

        let (common, fields) = scan(b"DELETE / HTTP/1.0\r\n\r\n").expect("a common head");
        assert_eq!(text(b"DELETE", &common.method), "DELETE");
        assert_eq!(common.version, Version::HTTP_10);
        assert_eq!(common.path_end, common.target.end);
        assert!(fields.is_empty());
    }

    /// Every other form, and every head cut short, is left to the general path.
    #[test]
    fn leaves_other_forms_to_httparse() {
        let others: [&[u8]; 15] = [
            b"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
            b"get / HTTP/1.1\r\nHost: a\r\n\r\n",
            b"M-SEARCH * HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET /\t HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET / HTTP/1.2\r\nHost: a\r\n\r\n",
            b"GET / HTTP/1.1\nHost: a\r\n\r\n",
            b"GET / HTTP/1.1x\nHost: a\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\n\n",
            b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\x7fb\r\n\r\n",
        ];
        for head in others {
            assert!(scan(head).is_none(), "{:?}", String::from_utf8_lossy(head));
        }
        let whole = b"GET /a?b HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";
        assert!(scan(whole).is_some());
        for cut in 0..whole.len() {
            assert!(scan(&whole[..cut]).is_none(), "cut at {cut}");
        }
        let mut fields = Vec::new();
        assert!(scan_common_head(whole, 1, &mut fields).is_none());
        assert!(scan_common_head(whole, 2, &mut fields).is_some());
    }

    /// The first control byte of a word is found wherever it falls, after bytes of any kind;
    /// obs-text, which a value may hold, is never taken for one.
    #[test]
    fn control_bytes_finds_the_first() {
        let fillers = [b'a', b' ', 0x80, 0xff, b'~'];
        let controls = [0u8, b'\t', b'\n', b'\r', 0x1f, 0x7f];
        for at in 0..8 {
            for filler in fillers {
                for control in controls {
                    for after in [filler, 0, 0x7f, 0xff] {
                        let mut word = [filler; 8];
                        word[at] = control;
                        word[at + 1..].fill(after);
                        let mask = control_bytes(u64::from_le_bytes(word));
                        assert_eq!(mask.trailing_zeros() / 8, at as u32, "{word:?}");
                    }
                }
            }
            assert_eq!(control_bytes(u64::from_le_bytes([fillers[at % 5]; 8])), 0);
        }
    }

    type Choices = &'static [&'static [u8]];

    /// One of `good` mostly, and one of `bad` (a near miss) now and then: a head built of
    /// these is often valid and in the common form, and otherwise wrong in a few places.
    fn either(good: Choices, bad: Choices) -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            9 => prop::sample::select(good),
            1 => prop::sample::select(bad),
        ]
        .prop_map(<[u8]>::to_vec)
    }

    fn request_line() -> impl Strategy<Value = Vec<u8>> {
        (
            either(&[b""], &[b"\r\n"]),
            either(
                &[b"GET", b"POST", b"DELETE", b"OPTIONS"],
                &[
                    b"get",
                    b"M-SEARCH",
                    b"",
                    b"CONNECT",
                    // The longest method taken, and one byte longer.
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF",
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG",
                ],
            ),
            either(&[b" "], &[b"  ", b"\t"]),
            either(&[b"/"], &[b"", b"*", b"http://h", b"HTTP://h:1"]),
            prop::collection::vec(
                either(
                    &[b"a", b"/", b"?", b"%2F", b"*", b":", b"~", b"="],
                    &[b"#", b"\xc3\xa9", b"\x7f", b" "],
                ),
                0..6,
            ),
            either(&[b" "], &[b"  ", b"\t"]),
            either(
                &[b"HTTP/1.1", b"HTTP/1.0"],
                &[b"HTTP/1.2", b"HTTP/2.0", b"http/1.1"],
            ),
            either(&[b"\r\n"], &[b"\n", b"\r", b"x\n", b" \r\n"]),
        )
            .prop_map(|(lead, method, sp1, start, target, sp2, version, eol)| {
                [lead, method, sp1, start, target.concat(), sp2, version, eol].concat()
            })
    }

    fn field_line() -> impl Strategy<Value = Vec<u8>> {
        let free_form = (
            either(
                &[b"X-A", b"Accept", b"x-b"],
                &[b"", b"Bad Name", b"X\x7f", b"A\xc3"],
            ),
            either(&[b":", b": ", b":\t "], &[b" :"]),
            prop::collection::vec(
                either(
                    &[b"a", b"1", b" ", b"\t", b",", b"\x80", b"close"],
                    &[b"\x7f", b"\r", b"\0", b"\n"],
                ),
                0..4,
            ),
            either(&[b"\r\n"], &[b"\n", b"\r"]),
        )
            .prop_map(|(name, colon, value, end)| [name, colon, value.concat(), end].concat());
        let framing = either(
            &[
                b"Content-Length: 5\r\n",
                b"Transfer-Encoding: chunked\r\n",
                b"Connection: keep-alive, close\r\n",
                b"connection: keep-alive\r\n",
                b"Expect: 100-continue\r\n",
            ],
            &[
                b"Content-Length: 5a\r\n",
                b"Transfer-Encoding: gzip\r\n",
                b"Expect: 200-ok\r\n",
                b"Host: b\r\n",
            ],
        );
        prop_oneof![3 => free_form, 1 => framing]
    }

    /// A head of any kind, whole or cut short, with what follows it.
    fn head_bytes() -> impl Strategy<Value = Vec<u8>> {
        (
            request_line(),
            either(
                &[
                    b"Host: example.com:8080\r\n",
                    b"host:a\r\n",
                    b"HOST: \t127.0.0.1 \r\n",
                ],
                &[
                    b"Host: a b\r\n",
                    b"Host:\r\n",
                    b"Host: \t \r\n",
                    b"Host : a\r\n",
                    b"Host: a\n",
                    b"",
                ],
            ),
            prop::collection::vec(field_line(), 0..5),
            either(&[b"\r\n"], &[b"\n", b""]),
            either(&[b"", b"GET / HTTP/1.1\r\n", b"hello"], &[b"\r\n"]),
            prop::option::weighted(0.2, any::<prop::sample::Index>()),
        )
            .prop_map(|(line, host, fields, end, rest, cut)| {
                let head = [line, host, fields.concat(), end, rest].concat();
                let len = cut.map_or(head.len(), |cut| cut.index(head.len() + 1));
                head[..len].to_vec()
            })
    }

    fn limits() -> impl Strategy<Value = Limits> {
        prop_oneof![
            Just(Limits::default()),
            Just(Limits {
                max_headers: 2,
                max_target_len: 4,
                max_head_size: 48,
                max_body_size: 3,
                ..Limits::default()
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// The scanner changes nothing but speed: `parse_head` gives the same answer as
        /// httparse's path alone on every input, and when it accepts, the same head (every
        /// byte, span and flag), both into fresh heads and into a used one.
        #[test]
        fn parse_head_answers_as_the_general_path(bytes in head_bytes(), limits in limits()) {
            let mut general = RequestHead::default();
            let expected = parse_general(&bytes, &limits, &mut general);
            let mut fresh = RequestHead::default();
            prop_assert_eq!(parse_head(&bytes, &limits, &mut fresh), expected);
            let mut used = RequestHead::default();
            let other = b"POST /x?y HTTP/1.1\r\nHost: b\r\nContent-Length: 2\r\nA: b\r\nC: d\r\n\r\n";
            let _ = parse_head(other, &Limits::default(), &mut used);
            prop_assert_eq!(parse_head(&bytes, &limits, &mut used), expected);
            if let Ok(Some(_)) = expected {
                prop_assert_eq!(format!("{fresh:?}"), format!("{general:?}"));
                prop_assert_eq!(used.target(), general.target());
                prop_assert_eq!(
                    used.headers().collect::<Vec<_>>(),
                    general.headers().collect::<Vec<_>>()
                );
            }
        }
    }
}
