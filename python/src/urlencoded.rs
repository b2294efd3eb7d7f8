//! Percent-decoding of path segments and `application/x-www-form-urlencoded` query strings.

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
}
