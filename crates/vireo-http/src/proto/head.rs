//! Parsing and validating a request head (RFC 9112 §2–§7, RFC 9110 §7.2, §10.1.1).
//!
//! [`parse_head`] is a pure function: bytes in, a filled [`RequestHead`] or a [`ProtoError`] out.
//! The head is copied into the `RequestHead`, which owns its bytes so that a handler can keep it
//! while the connection reads the body; the copy reuses the head's buffers, so a pooled
//! `RequestHead` parses without allocating.
//!
//! Heads in the form nearly every client sends are read by a scanner of their own
//! (`head_scan`); every other head, and every error, goes through httparse.

use super::head_scan::{scan_common_head, CommonHead};
use super::ProtoError;
use crate::Limits;
use http::{Method, Version};
use std::ops::Range;

/// How the body of a request is framed (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// No body: neither `Content-Length` nor `Transfer-Encoding`.
    Empty,
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`; or, over HTTP/2, a body without `Content-Length`: in both
    /// the length is known only at the end.
    Chunked,
}

pub(super) type Span = Range<u32>;

/// A parsed request head: method, target, version and header fields.
///
/// Header names and values are kept as received; look them up with [`RequestHead::header`],
/// which ignores ASCII case as RFC 9110 §5.1 requires.
#[derive(Debug, Clone)]
pub struct RequestHead {
    raw: Vec<u8>,
    /// The request target within `raw`; every byte of it was checked to be visible ASCII, so
    /// reading it as text never fails.
    target: Span,
    method: Method,
    version: Version,
    /// The path and query within `raw`.
    path: Span,
    /// Where the path ends within `raw`: at the `?` before the query, or with `path`.
    path_end: u32,
    headers: Vec<(Span, Span)>,
    body: BodyKind,
    keep_alive: bool,
    expect_continue: bool,
}

impl Default for RequestHead {
    fn default() -> Self {
        RequestHead {
            raw: Vec::new(),
            target: 0..0,
            method: Method::GET,
            version: Version::HTTP_11,
            path: 0..0,
            path_end: 0,
            headers: Vec::new(),
            body: BodyKind::Empty,
            keep_alive: true,
            expect_continue: false,
        }
    }
}

impl RequestHead {
    /// The request method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// `HTTP/1.0` or `HTTP/1.1`.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The request target exactly as received: `/a?b`, `http://host/a?b` or `*`.
    pub fn target(&self) -> &str {
        self.text(self.target.start, self.target.end)
    }

    /// The path and query of the target (for absolute-form, the part after the authority,
    /// `/` when that is empty).
    pub fn path_and_query(&self) -> &str {
        match self.text(self.path.start, self.path.end) {
            "" => "/",
            path => path,
        }
    }

    /// The path of the target, without the query.
    pub fn path(&self) -> &str {
        match self.text(self.path.start, self.path_end) {
            "" => "/",
            path => path,
        }
    }

    /// The path as [`RequestHead::path`] gives it, as bytes: for matching it against routes
    /// without checking it as text first. Every byte is visible ASCII.
    pub fn path_bytes(&self) -> &[u8] {
        match &self.raw[self.path.start as usize..self.path_end as usize] {
            b"" => b"/",
            path => path,
        }
    }

    /// Take `prefix` off the front of the path, for an app mounted under it that routes the
    /// rest: `/v1/items` under `/v1` becomes `/items`. The target stays as received. Returns
    /// whether the path was under the prefix (it, then `/` or the end); if not, nothing changes.
    pub fn strip_path_prefix(&mut self, prefix: &str) -> bool {
        let path = &self.raw[self.path.start as usize..self.path_end as usize];
        let under = path
            .strip_prefix(prefix.as_bytes())
            .is_some_and(|rest| rest.first().is_none_or(|&b| b == b'/'));
        if under {
            // The prefix is at most the path's length, which fits the span's `u32`.
            self.path.start += prefix.len() as u32;
        }
        under
    }

    /// The query string after `?`, if there is one.
    pub fn query(&self) -> Option<&str> {
        (self.path_end < self.path.end).then(|| self.text(self.path_end + 1, self.path.end))
    }

    /// Part of the request target as text.
    fn text(&self, start: u32, end: u32) -> &str {
        let bytes = &self.raw[start as usize..end as usize];
        // Parsing checked the target to be visible ASCII, so this never falls back.
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    /// The first value of the named header field, compared without ASCII case.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        let name = name.as_bytes();
        self.headers
            .iter()
            .find(|(n, _)| self.raw[n.start as usize..n.end as usize].eq_ignore_ascii_case(name))
            .map(|(_, v)| &self.raw[v.start as usize..v.end as usize])
    }

    /// Every header field, in the order received.
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&str, &[u8])> + '_ {
        self.headers
            .iter()
            .map(|(n, v)| (self.str_at(n), &self.raw[v.start as usize..v.end as usize]))
    }

    /// How the body is framed.
    pub fn body_kind(&self) -> BodyKind {
        self.body
    }

    /// Mark a head rebuilt from an HTTP/2 stream as HTTP/2.
    #[cfg(feature = "http2")]
    pub(crate) fn set_http2(&mut self) {
        self.version = http::Version::HTTP_2;
    }

    /// Mark the body as of unknown length: an HTTP/2 stream with DATA and no `Content-Length`.
    #[cfg(feature = "http2")]
    pub(crate) fn set_unsized_body(&mut self) {
        self.body = BodyKind::Chunked;
    }

    /// Whether the client asked to keep the connection open after this request.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Whether the client sent `Expect: 100-continue` on an HTTP/1.1 request.
    pub fn expects_continue(&self) -> bool {
        self.expect_continue
    }

    fn str_at(&self, span: &Span) -> &str {
        // Every span stored here is a header name, which httparse has checked to be a token
        // (visible ASCII), so this conversion cannot fail.
        std::str::from_utf8(&self.raw[span.start as usize..span.end as usize]).unwrap_or("")
    }
}

/// Headers httparse can hold on the stack: the default limit. Configured limits above it parse
/// into a heap array. (At 32 bytes a field, 128 would make the frame larger than a page, and
/// every call would probe the stack page by page.)
const STACK_HEADERS: usize = crate::limits::DEFAULT_MAX_HEADERS;

/// Parse one request head from the start of `buf` into `head`.
///
/// Returns `Ok(Some(n))` with the length of the head when it is complete, `Ok(None)` when more
/// bytes are needed, and an error when the bytes can never become a valid request (including when
/// they already exceed a limit).
///
/// ```
/// use vireo_http::proto::{parse_head, RequestHead, BodyKind};
/// let mut head = RequestHead::default();
/// let bytes = b"POST /users?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
/// let n = parse_head(bytes, &vireo_http::Limits::default(), &mut head).unwrap().unwrap();
/// assert_eq!(&bytes[n..], b"hello");
/// assert_eq!(head.path(), "/users");
/// assert_eq!(head.query(), Some("x=1"));
/// assert_eq!(head.body_kind(), BodyKind::Length(5));
/// ```
pub fn parse_head(
    buf: &[u8],
    limits: &Limits,
    head: &mut RequestHead,
) -> Result<Option<usize>, ProtoError> {
    match scan_common_head(buf, limits.max_headers, &mut head.headers) {
        Some(common) => store_common(head, buf, common, limits),
        None => parse_general(buf, limits, head),
    }
}

/// Store a head in the common form, which `scan_common_head` has read and its fields' spans
/// already stored: the same checks, in the same order, as the general path makes after
/// httparse.
fn store_common(
    head: &mut RequestHead,
    buf: &[u8],
    common: CommonHead,
    limits: &Limits,
) -> Result<Option<usize>, ProtoError> {
    let CommonHead {
        len,
        method,
        target,
        path_end,
        version,
    } = common;
    if len > limits.max_head_size {
        return Err(oversized_head(buf, limits));
    }
    check_method_len(method.len())?;
    if target.len() > limits.max_target_len {
        return Err(ProtoError::UriTooLong);
    }
    head.method = parse_method(&buf[method.start as usize..method.end as usize])?;
    head.version = version;
    head.target = target.clone();
    head.path = target;
    head.path_end = path_end;
    store_fields(head, buf, len)
}

/// Parse a head of any form with httparse: what [`parse_head`] does with every head the
/// common-form scanner does not take.
#[allow(unreachable_pub)] // exported only to the fuzz targets, under `cfg(fuzzing)`
pub fn parse_general(
    buf: &[u8],
    limits: &Limits,
    head: &mut RequestHead,
) -> Result<Option<usize>, ProtoError> {
    // Uninitialised slots: zeroing 128 headers would cost more than parsing a small head.
    let mut stack =
        [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; STACK_HEADERS];
    let mut heap;
    let fields: &mut [std::mem::MaybeUninit<httparse::Header<'_>>] =
        if limits.max_headers <= STACK_HEADERS {
            &mut stack[..limits.max_headers]
        } else {
            heap = Vec::with_capacity(limits.max_headers);
            heap.resize_with(limits.max_headers, std::mem::MaybeUninit::uninit);
            &mut heap
        };
    let mut req = httparse::Request::new(&mut []);
    let len = match req.parse_with_uninit_headers(buf, fields) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return check_partial(buf, limits).map(|()| None),
        Err(httparse::Error::Version) => {
            return match classify_version(buf) {
                // RFC 9110 §6.2: a later minor version is served as the highest we know,
                // 1.1. httparse refuses it, so parse a copy that says 1.1 (a rare path).
                VersionToken::LaterMinor(at) => {
                    let mut patched = buf.to_vec();
                    patched[at] = b'1';
                    parse_general(&patched, limits, head)
                }
                VersionToken::OtherMajor => Err(ProtoError::VersionNotSupported),
                VersionToken::OtherProtocol => Err(ProtoError::NotHttp),
                VersionToken::Malformed => Err(ProtoError::BadRequest("malformed request line")),
            };
        }
        Err(e) => return Err(map_httparse_error(e)),
    };
    if len > limits.max_head_size {
        return Err(oversized_head(buf, limits));
    }
    check_method_len(req.method.map_or(0, str::len))?;
    if req.path.map_or(0, str::len) > limits.max_target_len {
        return Err(ProtoError::UriTooLong);
    }
    fill(head, buf, &req)?;
    store_fields(head, buf, len)
}

/// Keep the head's bytes, then check its fields; the request line and the fields' spans are
/// stored already.
fn store_fields(
    head: &mut RequestHead,
    buf: &[u8],
    len: usize,
) -> Result<Option<usize>, ProtoError> {
    head.raw.clear();
    head.raw.extend_from_slice(&buf[..len]);
    validate_fields(head)?;
    Ok(Some(len))
}

/// Store what httparse read: the request line, checked, and the fields' spans.
fn fill(
    head: &mut RequestHead,
    buf: &[u8],
    req: &httparse::Request<'_, '_>,
) -> Result<(), ProtoError> {
    let base = buf.as_ptr() as usize;
    let span = |s: &[u8]| -> Span {
        let start = (s.as_ptr() as usize - base) as u32;
        start..start + s.len() as u32
    };
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    head.method = parse_method(method.as_bytes())?;
    head.version = if req.version == Some(0) {
        Version::HTTP_10
    } else {
        Version::HTTP_11
    };
    let (path, query_at) = target_path(&head.method, target)?;
    head.target = span(target.as_bytes());
    head.path = span(path.as_bytes());
    head.path_end = head.path.start + query_at.unwrap_or(path.len()) as u32;
    head.headers.clear();
    head.headers.extend(
        req.headers
            .iter()
            .map(|h| (span(h.name.as_bytes()), span(h.value))),
    );
    Ok(())
}

/// The longest method accepted. Registered methods are far shorter; a longer one is a mistake or
/// an attack, and the bound lets an unfinished request line be judged: see `check_partial`.
const MAX_METHOD_LEN: usize = 32;

const METHOD_TOO_LONG: ProtoError = ProtoError::BadRequest("method too long");

fn check_method_len(len: usize) -> Result<(), ProtoError> {
    if len > MAX_METHOD_LEN {
        return Err(METHOD_TOO_LONG);
    }
    Ok(())
}

fn parse_method(method: &[u8]) -> Result<Method, ProtoError> {
    // The two methods nearly every request carries, matched before `Method::from_bytes` and
    // its error conversion.
    match method {
        b"GET" => return Ok(Method::GET),
        b"POST" => return Ok(Method::POST),
        _ => {}
    }
    let method =
        Method::from_bytes(method).map_err(|_| ProtoError::BadRequest("invalid method"))?;
    if method == Method::CONNECT {
        return Err(ProtoError::UnsupportedMethod);
    }
    Ok(method)
}

/// The path-and-query part of a target in origin-, absolute- or asterisk-form (RFC 9112 §3.2),
/// and where its query's `?` is; empty for an absolute-form target with no path, which means
/// `/`. A fragment or a byte outside visible ASCII (which httparse lets through) is refused:
/// neither can appear in a request target (RFC 9112 §3.2, RFC 3986 §3).
fn target_path<'a>(
    method: &Method,
    target: &'a str,
) -> Result<(&'a str, Option<usize>), ProtoError> {
    // One pass checks every byte and finds the first `?`.
    let mut query_at = None;
    for (at, b) in target.bytes().enumerate() {
        if !b.is_ascii_graphic() || b == b'#' {
            return Err(ProtoError::BadRequest(
                "invalid character in request target",
            ));
        }
        if b == b'?' && query_at.is_none() {
            query_at = Some(at);
        }
    }
    if target.starts_with('/') {
        return Ok((target, query_at));
    }
    if target == "*" {
        return if *method == Method::OPTIONS {
            Ok((target, None))
        } else {
            Err(ProtoError::BadRequest("asterisk-form is only for OPTIONS"))
        };
    }
    let rest = strip_prefix_ignore_case(target, "http://")
        .or_else(|| strip_prefix_ignore_case(target, "https://"))
        .ok_or(ProtoError::BadRequest("invalid request target"))?;
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    if authority_end == 0 {
        return Err(ProtoError::BadRequest(
            "absolute-form target without a host",
        ));
    }
    match &rest[authority_end..] {
        path if path.is_empty() || path.starts_with('/') => {
            Ok((path, memchr::memchr(b'?', path.as_bytes())))
        }
        _ => Err(ProtoError::BadRequest(
            "absolute-form target without a path",
        )),
    }
}

/// Where the authority of the absolute-form target at `target` lies in `raw`: between `://`
/// and the path or query.
fn absolute_authority(raw: &[u8], target: Span) -> Span {
    let bytes = &raw[target.start as usize..target.end as usize];
    let start = memchr::memmem::find(bytes, b"://").map_or(0, |at| at + 3);
    let len = bytes[start..]
        .iter()
        .position(|&b| b == b'/' || b == b'?')
        .unwrap_or(bytes.len() - start);
    let start = target.start + start as u32;
    start..start + len as u32
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// The framing and connection rules of RFC 9112 §6 and §9, and RFC 9110 §7.2 and §10.1.1.
fn validate_fields(head: &mut RequestHead) -> Result<(), ProtoError> {
    let http11 = head.version == Version::HTTP_11;
    // Origin- and asterisk-form targets take their authority from `Host`; absolute-form
    // carries its own (RFC 9112 §3.2, §3.3).
    let target_start = head.raw.get(head.target.start as usize);
    let authority_from_host = matches!(target_start, Some(b'/' | b'*'));
    // An absolute-form target's authority is the request's, whatever Host says (RFC 9112
    // §3.2.2): the Host field is read as naming it, so a proxy routing on the target and an
    // app reading Host cannot disagree.
    let target_authority = if authority_from_host {
        None
    } else {
        let authority = absolute_authority(&head.raw, head.target.clone());
        let authority_bytes = &head.raw[authority.start as usize..authority.end as usize];
        if authority_bytes.contains(&b'@') {
            return Err(ProtoError::BadRequest("userinfo in the request target"));
        }
        if !valid_host(authority_bytes) {
            return Err(ProtoError::BadRequest("invalid host in the request target"));
        }
        Some(authority)
    };
    let mut host_field = None;
    let mut hosts = 0;
    let mut content_length = None;
    let mut chunked = false;
    let mut transfer_encoding = false;
    // A coding other than chunked, which the engine does not decode.
    let mut other_coding = false;
    let mut close = false;
    let mut keep_alive = false;
    let mut expect_continue = false;
    for (index, (name, value)) in head.headers.iter().enumerate() {
        let name = &head.raw[name.start as usize..name.end as usize];
        let value = &head.raw[value.start as usize..value.end as usize];
        // Dispatch on length first: most fields are none of these, and a length compare is
        // cheaper than five case-insensitive ones.
        match name.len() {
            4 if is_field(name, b"host") => {
                hosts += 1;
                host_field = Some(index);
                // An empty Host leaves such a request without an authority: RFC 9110 §7.2
                // requires one in HTTP/1.1 (and lets HTTP/1.0 go without).
                if value.is_empty() && http11 && authority_from_host {
                    return Err(ProtoError::BadRequest("empty Host"));
                }
                if !valid_host(value) {
                    return Err(ProtoError::BadRequest("invalid Host"));
                }
            }
            14 if is_field(name, b"content-length") => {
                if content_length.is_some() {
                    return Err(ProtoError::BadRequest("repeated Content-Length"));
                }
                content_length = Some(parse_content_length(value)?);
            }
            17 if is_field(name, b"transfer-encoding") => {
                if !http11 {
                    return Err(ProtoError::BadRequest("Transfer-Encoding in HTTP/1.0"));
                }
                transfer_encoding = true;
                // Empty list elements are ignored (RFC 9110 §5.6.1).
                for coding in list_items(value).filter(|c| !c.is_empty()) {
                    if chunked {
                        // Only the last coding may be chunked, and only once (RFC 9112 §6.1).
                        return Err(ProtoError::BadRequest("chunked is not the final coding"));
                    }
                    if coding.eq_ignore_ascii_case(b"chunked") {
                        chunked = true;
                    } else {
                        other_coding = true;
                    }
                }
            }
            10 if is_field(name, b"connection") => {
                for option in list_items(value) {
                    close |= option.eq_ignore_ascii_case(b"close");
                    keep_alive |= option.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            6 if is_field(name, b"expect") => {
                if value.eq_ignore_ascii_case(b"100-continue") {
                    // An HTTP/1.0 client cannot understand 100 Continue (RFC 9110 §10.1.1).
                    expect_continue = http11;
                } else {
                    return Err(ProtoError::ExpectationFailed);
                }
            }
            _ => {}
        }
    }
    if http11 && hosts != 1 {
        return Err(ProtoError::BadRequest(if hosts == 0 {
            "missing Host"
        } else {
            "repeated Host"
        }));
    }
    if hosts > 1 {
        return Err(ProtoError::BadRequest("repeated Host"));
    }
    if let (Some(index), Some(authority)) = (host_field, target_authority) {
        head.headers[index].1 = authority;
    }
    head.body = match (transfer_encoding, content_length) {
        (true, Some(_)) => {
            return Err(ProtoError::BadRequest(
                "both Content-Length and Transfer-Encoding",
            ))
        }
        // Without a final chunked the body's length cannot be known (RFC 9112 §6.3).
        (true, None) if other_coding && !chunked => {
            return Err(ProtoError::BadRequest("chunked is not the final coding"))
        }
        (true, None) if other_coding => return Err(ProtoError::UnsupportedTransferCoding),
        (true, None) if chunked => BodyKind::Chunked,
        (true, None) => return Err(ProtoError::BadRequest("empty Transfer-Encoding")),
        (false, Some(0)) | (false, None) => BodyKind::Empty,
        (false, Some(n)) => BodyKind::Length(n),
    };
    head.keep_alive = !close && (http11 || keep_alive);
    head.expect_continue = expect_continue && head.body != BodyKind::Empty;
    Ok(())
}

/// Whether the field name `name` is `lower` (lowercase letters and `-`), ignoring ASCII case.
///
/// Written out because it runs for every request's `Host`, where `eq_ignore_ascii_case` lowers
/// both sides byte by byte. Field names are tokens
/// (both parse paths check them), and the only tokens that OR-ing with 0x20 turns into a lowercase
/// letter are that letter in either case, and into `-` only `-` itself; so one OR per byte,
/// compared without a branch until the end, answers the same.
fn is_field<const N: usize>(name: &[u8], lower: &[u8; N]) -> bool {
    let Ok(name) = <&[u8; N]>::try_from(name) else {
        return false;
    };
    name.iter()
        .zip(lower)
        .fold(0, |diff, (&got, &want)| diff | ((got | 0x20) ^ want))
        == 0
}

/// The elements of a comma-separated list (RFC 9110 §5.6.1), with optional whitespace trimmed.
fn list_items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(|item| item.trim_ascii())
}

/// `Content-Length = 1*DIGIT` (RFC 9110 §8.6): no sign, no list, no whitespace inside.
fn parse_content_length(value: &[u8]) -> Result<u64, ProtoError> {
    const MALFORMED: ProtoError = ProtoError::BadRequest("malformed Content-Length");
    if value.is_empty() || value.len() > 19 {
        return Err(MALFORMED);
    }
    value.iter().try_fold(0u64, |n, &b| {
        if b.is_ascii_digit() {
            Ok(n * 10 + u64::from(b - b'0'))
        } else {
            Err(MALFORMED)
        }
    })
}

/// `Host = uri-host [ ":" port ]` (RFC 9110 §7.2): a reg-name or IPv4 address, or a bracketed
/// IP literal, then optionally `:` and digits.
fn valid_host(value: &[u8]) -> bool {
    if value.first() == Some(&b'[') {
        let Some(end) = memchr::memchr(b']', value) else {
            return false;
        };
        let literal_ok = value[1..end].iter().all(|&b| IP_LITERAL_CHARS[b as usize]);
        return literal_ok && valid_port(&value[end + 1..]);
    }
    // A reg-name has no `:`, so a port, if any, is the digits after the last one: found from
    // the end, with a plain loop since this runs on every request.
    let mut port_start = value.len();
    while port_start > 0 && value[port_start - 1].is_ascii_digit() {
        port_start -= 1;
    }
    let name = match port_start.checked_sub(1) {
        Some(colon) if value[colon] == b':' => &value[..colon],
        _ => value,
    };
    valid_reg_name(name)
}

/// Whether every byte of `name` may appear in a reg-name: one table lookup per byte, four at a
/// time, and no branch until the end.
fn valid_reg_name(name: &[u8]) -> bool {
    let allowed = |b: u8| REG_NAME_CHARS[b as usize];
    let mut quads = name.chunks_exact(4);
    let mut ok = true;
    for quad in &mut quads {
        ok &= allowed(quad[0]) & allowed(quad[1]) & allowed(quad[2]) & allowed(quad[3]);
    }
    quads.remainder().iter().fold(ok, |ok, &b| ok & allowed(b))
}

/// Nothing, or `:` and digits.
fn valid_port(port: &[u8]) -> bool {
    match port {
        [] => true,
        [b':', digits @ ..] => digits.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// The bytes of a reg-name or an IPv4 address (RFC 3986 §3.2.2): unreserved, sub-delims and
/// `%` (of percent-encodings). Tables, because this runs on every request and a lookup beats a
/// chain of comparisons.
const REG_NAME_CHARS: [bool; 256] = byte_table!(|b| is_reg_name_char(b));

/// The bytes inside the brackets of an IP literal: those of a reg-name, and `:`.
const IP_LITERAL_CHARS: [bool; 256] = byte_table!(|b| is_reg_name_char(b) || b == b':');

const fn is_reg_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'%'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
        )
}

fn map_httparse_error(err: httparse::Error) -> ProtoError {
    match err {
        httparse::Error::TooManyHeaders => ProtoError::HeadTooLarge,
        httparse::Error::Version => ProtoError::BadRequest("invalid HTTP version"),
        httparse::Error::HeaderName => ProtoError::BadRequest("invalid header name"),
        httparse::Error::HeaderValue => ProtoError::BadRequest("invalid header value"),
        httparse::Error::NewLine => ProtoError::BadRequest("invalid line ending"),
        httparse::Error::Token => ProtoError::BadRequest("invalid token in request line"),
        _ => ProtoError::BadRequest("malformed request"),
    }
}

/// What the version token of a request line httparse refused is.
enum VersionToken {
    /// `HTTP/1.x` with x above 1: the index of the minor digit in the buffer.
    LaterMinor(usize),
    /// `HTTP/x.y` with x other than 1.
    OtherMajor,
    /// A three-part line whose last part is not `HTTP/` anything, in any case: another
    /// protocol.
    OtherProtocol,
    /// Not a well-formed three-part request line ending in `HTTP/d.d`.
    Malformed,
}

fn classify_version(buf: &[u8]) -> VersionToken {
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(0);
    let rest = &buf[start..];
    let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let parts: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let [method, target, version] = parts[..] else {
        return VersionToken::Malformed;
    };
    if method.is_empty() || target.is_empty() {
        return VersionToken::Malformed;
    }
    match version {
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor] if minor.is_ascii_digit() => {
            VersionToken::LaterMinor(start + line.len() - 1)
        }
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            VersionToken::OtherMajor
        }
        // `http/1.1` is HTTP written wrong (the name is case-sensitive): a bad request.
        _ if !version
            .get(..5)
            .is_some_and(|name| name.eq_ignore_ascii_case(b"HTTP/")) =>
        {
            VersionToken::OtherProtocol
        }
        _ => VersionToken::Malformed,
    }
}

/// A partial head is refused as soon as it can no longer fit the limits.
fn check_partial(buf: &[u8], limits: &Limits) -> Result<(), ProtoError> {
    let line = request_line(buf);
    // httparse reads a line as it comes, so what has arrived of an unfinished request line is a
    // method, then a target, then part of a version: each can be judged already.
    if memchr::memchr(b'\n', line).is_none() {
        let (method, target) = method_and_target(line);
        check_method_len(method.len())?;
        if target.len() > limits.max_target_len {
            return Err(ProtoError::UriTooLong);
        }
    }
    if buf.len() >= limits.max_head_size {
        return Err(oversized_head(buf, limits));
    }
    Ok(())
}

/// What answers a head over the size limit: a method or target over its own limit is named
/// as the cause, since it is what the client has to change.
fn oversized_head(buf: &[u8], limits: &Limits) -> ProtoError {
    let line = request_line(buf);
    let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
    let (method, target) = method_and_target(line);
    if method.len() > MAX_METHOD_LEN {
        METHOD_TOO_LONG
    } else if target.len() > limits.max_target_len {
        ProtoError::UriTooLong
    } else {
        ProtoError::HeadTooLarge
    }
}

/// The buffer from its request line on: httparse skips empty lines before it.
fn request_line(buf: &[u8]) -> &[u8] {
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    &buf[start..]
}

/// The method and the target of a request line, or as much of them as `line` holds.
fn method_and_target(line: &[u8]) -> (&[u8], &[u8]) {
    let Some(method_end) = memchr::memchr(b' ', line) else {
        return (line, &[]);
    };
    let rest = &line[method_end + 1..];
    let target_end = memchr::memchr2(b' ', b'\r', rest).unwrap_or(rest.len());
    (&line[..method_end], &rest[..target_end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(head: &[u8]) -> RequestHead {
        let mut parsed = RequestHead::default();
        parse_head(head, &Limits::default(), &mut parsed)
            .unwrap()
            .unwrap();
        parsed
    }

    #[test]
    fn a_path_prefix_is_stripped_only_at_a_segment_boundary() {
        let mut head = parsed(b"GET /v1/items?q=1 HTTP/1.1\r\nhost: a\r\n\r\n");
        assert!(!head.strip_path_prefix("/v"));
        assert_eq!(head.path(), "/v1/items");
        assert!(head.strip_path_prefix("/v1"));
        assert_eq!(head.path(), "/items");
        assert_eq!(head.path_and_query(), "/items?q=1");
        assert_eq!(head.query(), Some("q=1"));
        assert_eq!(head.target(), "/v1/items?q=1");

        let mut whole = parsed(b"GET /v1 HTTP/1.1\r\nhost: a\r\n\r\n");
        assert!(whole.strip_path_prefix("/v1"));
        assert_eq!(whole.path(), "/");

        let mut absolute = parsed(b"GET http://a/v1/x HTTP/1.1\r\nhost: a\r\n\r\n");
        assert!(absolute.strip_path_prefix("/v1"));
        assert_eq!(absolute.path(), "/x");
    }

    /// The bytes of a token (RFC 9110 §5.6.2), which is all a field name can hold.
    fn tchars() -> impl Iterator<Item = u8> {
        (0u8..=127).filter(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    }

    /// `is_field` answers as `eq_ignore_ascii_case` for every name that differs from one it
    /// looks for in any one byte, and for those names in upper and mixed case.
    #[test]
    fn is_field_matches_case_insensitive_compare() {
        fn check<const N: usize>(lower: &[u8; N]) {
            let upper = lower.to_ascii_uppercase();
            let mixed: Vec<u8> = lower
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if i % 2 == 0 {
                        b.to_ascii_uppercase()
                    } else {
                        *b
                    }
                })
                .collect();
            for name in [lower.to_vec(), upper, mixed] {
                let name = String::from_utf8(name).unwrap();
                assert!(is_field(name.as_bytes(), lower), "{name}");
            }
            for at in 0..N {
                for b in tchars() {
                    let mut name = lower.to_vec();
                    name[at] = b;
                    let name = String::from_utf8(name).unwrap();
                    let expected = name.as_bytes().eq_ignore_ascii_case(lower);
                    assert_eq!(is_field(name.as_bytes(), lower), expected, "{name}");
                }
            }
            let longer = format!("{}x", String::from_utf8(lower.to_vec()).unwrap());
            assert!(!is_field(longer.as_bytes(), lower));
            assert!(!is_field(&longer.as_bytes()[..N - 1], lower));
        }
        check(b"host");
        check(b"content-length");
        check(b"transfer-encoding");
        check(b"connection");
        check(b"expect");
    }

    /// The four-at-a-time check refuses a bad byte wherever it falls: in a group of four or in
    /// the rest.
    #[test]
    fn reg_name_check_sees_every_byte() {
        for len in 0..=13 {
            let good = vec![b'a'; len];
            assert!(valid_reg_name(&good));
            for at in 0..len {
                for bad in [b'/', b':', b' ', b'@', 0x80] {
                    let mut name = good.clone();
                    name[at] = bad;
                    assert!(!valid_reg_name(&name), "{len} bytes, {bad:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn common_methods_take_the_fast_path_and_others_still_parse() {
        assert_eq!(parse_method(b"GET").unwrap(), Method::GET);
        assert_eq!(parse_method(b"POST").unwrap(), Method::POST);
        assert_eq!(parse_method(b"DELETE").unwrap(), Method::DELETE);
        // Methods are case-sensitive (RFC 9110 §9.1): `get` is an extension method.
        assert_eq!(parse_method(b"get").unwrap().as_str(), "get");
        assert!(matches!(
            parse_method(b"CONNECT"),
            Err(ProtoError::UnsupportedMethod)
        ));
    }
}
