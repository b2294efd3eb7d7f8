//! Percent-decoding of path segments and `application/x-www-form-urlencoded` query strings,
//! and the encoding of query pairs as Python's `urlencode` writes them.

use std::borrow::Cow;

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decode `%XX` escapes (and `+` as a space when `plus` is set); bytes that are not UTF-8 are
/// replaced, as Python's `unquote` does. Borrows when there is nothing to decode.
pub(crate) fn decode(s: &str, plus: bool) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    if !bytes.iter().any(|&b| b == b'%' || (plus && b == b'+')) {
        return Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// The decoded `(name, value)` pairs of a query string, in order; empty pairs are skipped.
pub(crate) fn query_pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query.split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(name, true), decode(value, true))
    })
}

/// `s` as Python's `quote_plus` writes it, onto `out`: letters, digits and `_.-~` as they
/// are, a space as `+`, every other byte of its UTF-8 as `%XX`.
fn encode_plus(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in s.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
}

/// `(name, value)` pairs as a query string, as Python's `urllib.parse.urlencode` joins them.
pub(crate) fn urlencode(pairs: &[(String, String)]) -> String {
    let mut out = String::new();
    for (i, (name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode_plus(name, &mut out);
        out.push('=');
        encode_plus(value, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_plus() {
        assert_eq!(decode("a%20b+c", true), "a b c");
        assert_eq!(decode("a%20b+c", false), "a b+c");
        assert_eq!(decode("%zz%4", true), "%zz%4");
        assert_eq!(decode("caf%C3%A9", false), "café");
        assert_eq!(decode("%FF", false), "\u{FFFD}");
        assert!(matches!(decode("plain", true), Cow::Borrowed(_)));
    }

    #[test]
    fn splits_pairs() {
        let pairs: Vec<_> = query_pairs("a=1&&b=x+y&c").collect();
        assert_eq!(pairs.len(), 3);
        assert_eq!(pairs[1], ("b".into(), "x y".into()));
        assert_eq!(pairs[2], ("c".into(), "".into()));
    }

    #[test]
    fn encodes_as_quote_plus() {
        let pairs = [
            ("a b".to_owned(), "x&y=z".to_owned()),
            ("_.-~*".to_owned(), "café/".to_owned()),
            ("e".to_owned(), String::new()),
        ];
        assert_eq!(urlencode(&pairs), "a+b=x%26y%3Dz&_.-~%2A=caf%C3%A9%2F&e=");
        assert_eq!(urlencode(&[]), "");
    }
}
