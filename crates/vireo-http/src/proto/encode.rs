//! Encoding a response head (RFC 9112 §4, §6): status line, fields, framing and `Date`.

use super::ContentType;
use http::{header, HeaderMap, StatusCode};

/// Length of an IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`, the form of `Date`.
pub const DATE_LEN: usize = 29;

/// How the body after a head is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body may follow: 1xx, 204 and 304 (RFC 9110 §6.4.1).
    NoBody,
    /// `Content-Length: n`. For a HEAD request the length is sent and the body is not.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// The body runs until the connection closes: streaming to an HTTP/1.0 client.
    UntilClose,
}

/// What the `Connection` field of a response says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// Nothing: HTTP/1.1's default, keep-alive.
    Default,
    /// `Connection: keep-alive`, for an HTTP/1.0 client that asked for it.
    KeepAlive,
    /// `Connection: close`: this is the last response on the connection.
    Close,
    /// `Connection: upgrade`: a `101 Switching Protocols` hands the connection to another
    /// protocol.
    Upgrade,
}

/// A response's own header fields, as the encoder takes them.
#[derive(Debug, Clone, Copy)]
pub enum HeadFields<'a> {
    /// Just one pre-rendered `Content-Type`: written as a constant, without walking a map.
    ContentType(ContentType),
    /// Any fields.
    Map(&'a HeaderMap),
}

/// Append a response head to `out`.
///
/// Framing fields set by the caller (`Content-Length`, `Transfer-Encoding`, `Connection`) are
/// not copied: framing is decided here from `framing` and `connection`, so a handler cannot
/// desync the connection. A `Connection: close` among the caller's fields turns `connection`
/// into [`Connection::Close`]; the connection actually sent is returned.
///
/// ```
/// use vireo_http::proto::{encode_head, Connection, Framing, HeadFields};
/// use vireo_http::ContentType;
/// let date = b"Sun, 06 Nov 1994 08:49:37 GMT";
/// let mut out = Vec::new();
/// let sent = encode_head(&mut out, http::StatusCode::OK, HeadFields::Map(&http::HeaderMap::new()), Framing::Length(2), Connection::Close, date);
/// assert_eq!(sent, Connection::Close);
/// assert_eq!(out, b"HTTP/1.1 200 OK\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\ncontent-length: 2\r\nconnection: close\r\n\r\n");
///
/// // A pre-rendered Content-Type is written as the same field from a map would be.
/// let mut map = http::HeaderMap::new();
/// map.insert(http::header::CONTENT_TYPE, ContentType::Json.value());
/// let (mut typed, mut walked) = (Vec::new(), Vec::new());
/// encode_head(&mut typed, http::StatusCode::OK, HeadFields::ContentType(ContentType::Json), Framing::Length(2), Connection::Default, date);
/// encode_head(&mut walked, http::StatusCode::OK, HeadFields::Map(&map), Framing::Length(2), Connection::Default, date);
/// assert_eq!(typed, walked);
/// ```
#[inline]
pub fn encode_head(
    out: &mut Vec<u8>,
    status: StatusCode,
    fields: HeadFields<'_>,
    framing: Framing,
    connection: Connection,
    date: &[u8],
) -> Connection {
    status_line(out, status);
    framing_fields(out, framing, date);
    let connection = match fields {
        HeadFields::ContentType(content_type) => {
            content_type.put_field_line(out);
            connection
        }
        HeadFields::Map(headers) => put_fields(out, headers, connection),
    };
    end_head(out, connection);
    connection
}

/// Append every field of `headers` but the framing ones; the connection to send, given that a
/// `Connection: close` among them asks to close.
fn put_fields(out: &mut Vec<u8>, headers: &HeaderMap, mut connection: Connection) -> Connection {
    for (name, value) in headers {
        if is_framing_field(name) {
            if name == header::CONNECTION && asks_close(value) {
                connection = Connection::Close;
            }
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    connection
}

/// `Date` and the framing field. Always inlined, as is `status_line`, so that every piece is a
/// constant-length copy and no call.
#[inline(always)]
fn framing_fields(out: &mut Vec<u8>, framing: Framing, date: &[u8]) {
    out.extend_from_slice(b"date: ");
    // The cached date is always an IMF-fixdate: copied as a constant length when it is one.
    match <&[u8; DATE_LEN]>::try_from(date) {
        Ok(date) => out.extend_from_slice(date),
        Err(_) => out.extend_from_slice(date),
    }
    out.extend_from_slice(b"\r\n");
    match framing {
        Framing::Length(n) => {
            out.extend_from_slice(b"content-length: ");
            put_decimal(out, n);
            out.extend_from_slice(b"\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        Framing::NoBody | Framing::UntilClose => {}
    }
}

/// Append `n` in decimal. Below 10,000, as most bodies sent from memory are, the digits are
/// written as a constant number of bytes per arm, with no call and no `memcpy`.
#[inline(always)]
fn put_decimal(out: &mut Vec<u8>, n: u64) {
    let digit = |k: u64| b'0' + (k % 10) as u8;
    match n {
        0..=9 => out.push(digit(n)),
        10..=99 => out.extend_from_slice(&[digit(n / 10), digit(n)]),
        100..=999 => out.extend_from_slice(&[digit(n / 100), digit(n / 10), digit(n)]),
        1_000..=9_999 => {
            out.extend_from_slice(&[digit(n / 1_000), digit(n / 100), digit(n / 10), digit(n)])
        }
        _ => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
    }
}

/// The `Connection` field, if any, and the empty line that ends the head. A constant per arm,
/// copied as a constant length: one slice picked at run time is a `memcpy` call.
#[inline(always)]
fn end_head(out: &mut Vec<u8>, connection: Connection) {
    match connection {
        Connection::Default => out.extend_from_slice(b"\r\n"),
        Connection::KeepAlive => out.extend_from_slice(b"connection: keep-alive\r\n\r\n"),
        Connection::Close => out.extend_from_slice(b"connection: close\r\n\r\n"),
        Connection::Upgrade => out.extend_from_slice(b"connection: upgrade\r\n\r\n"),
    }
}

/// Whether a `Connection` value lists `close`.
fn asks_close(value: &http::HeaderValue) -> bool {
    value
        .as_bytes()
        .split(|&b| b == b',')
        .any(|option| option.trim_ascii().eq_ignore_ascii_case(b"close"))
}

fn is_framing_field(name: &header::HeaderName) -> bool {
    name == header::CONTENT_LENGTH
        || name == header::TRANSFER_ENCODING
        || name == header::CONNECTION
}

/// Whether a response with this status may carry a body (RFC 9110 §6.4.1).
pub fn status_allows_body(status: StatusCode) -> bool {
    !(status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED)
}

/// Pre-rendered status lines for the statuses servers send most; others are built. Each arm
/// appends a constant, which compiles to a few stores where a slice of varying length would
/// call `memcpy`.
#[inline(always)]
fn status_line(out: &mut Vec<u8>, status: StatusCode) {
    match status.as_u16() {
        200 => out.extend_from_slice(b"HTTP/1.1 200 OK\r\n"),
        201 => out.extend_from_slice(b"HTTP/1.1 201 Created\r\n"),
        204 => out.extend_from_slice(b"HTTP/1.1 204 No Content\r\n"),
        301 => out.extend_from_slice(b"HTTP/1.1 301 Moved Permanently\r\n"),
        302 => out.extend_from_slice(b"HTTP/1.1 302 Found\r\n"),
        304 => out.extend_from_slice(b"HTTP/1.1 304 Not Modified\r\n"),
        400 => out.extend_from_slice(b"HTTP/1.1 400 Bad Request\r\n"),
        404 => out.extend_from_slice(b"HTTP/1.1 404 Not Found\r\n"),
        405 => out.extend_from_slice(b"HTTP/1.1 405 Method Not Allowed\r\n"),
        500 => out.extend_from_slice(b"HTTP/1.1 500 Internal Server Error\r\n"),
        _ => {
            out.extend_from_slice(b"HTTP/1.1 ");
            out.extend_from_slice(status.as_str().as_bytes());
            out.push(b' ');
            out.extend_from_slice(status.canonical_reason().unwrap_or("Unknown").as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// The interim response sent when a handler first reads a body the client is holding back.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// The digits written by hand are the standard ones, at every length of the hand-written
    /// arms, across each boundary, and for the lengths left to `itoa`.
    #[test]
    fn decimals_match_the_standard_formatting() {
        let mut out = Vec::new();
        for n in (0..=20_000).chain([99_999, 100_000, u64::MAX / 10, u64::MAX]) {
            out.clear();
            put_decimal(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }

    /// A pre-rendered content type is written byte for byte as a map holding just that field:
    /// for every status code, framing, content type and connection, with the cached date's
    /// length and with another.
    #[test]
    fn pre_rendered_content_types_match_a_map_everywhere() {
        let framings = [
            Framing::NoBody,
            Framing::Length(0),
            Framing::Length(13),
            Framing::Length(u64::MAX),
            Framing::Chunked,
            Framing::UntilClose,
        ];
        let connections = [
            Connection::Default,
            Connection::KeepAlive,
            Connection::Close,
        ];
        let dates: [&[u8]; 2] = [
            b"Sun, 06 Nov 1994 08:49:37 GMT",
            b"a date of another length",
        ];
        let (mut typed, mut walked) = (Vec::new(), Vec::new());
        for code in 100..=999 {
            let status = StatusCode::from_u16(code).unwrap();
            for content_type in ContentType::ALL {
                let mut map = HeaderMap::new();
                map.insert(header::CONTENT_TYPE, content_type.value());
                for framing in framings {
                    for connection in connections {
                        for date in dates {
                            // Each appends after what is already there.
                            typed.clear();
                            typed.extend_from_slice(b"before");
                            walked.clear();
                            walked.extend_from_slice(b"before");
                            let fields = HeadFields::ContentType(content_type);
                            encode_head(&mut typed, status, fields, framing, connection, date);
                            let fields = HeadFields::Map(&map);
                            encode_head(&mut walked, status, fields, framing, connection, date);
                            assert_eq!(typed, walked, "{code} {framing:?} {connection:?}");
                        }
                    }
                }
            }
        }
    }
}
