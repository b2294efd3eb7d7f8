//! The chunked transfer coding (RFC 9112 §7.1): a decoder for request bodies and an encoder for
//! response bodies.
//!
//! The decoder is a byte-at-a-time state machine over whatever slice the caller has, so a body
//! split at any point decodes the same. It takes exactly the grammar of RFC 9112 §7.1, because
//! leniency in framing enables request smuggling: every line ends in CRLF, sizes are hex digits
//! only and may not overflow, each chunk extension is a token name with an optional token or
//! quoted-string value, each trailer is a field line, and extensions and trailers together are
//! capped.
//!
//! ```text
//! chunked-body    = *chunk last-chunk trailer-section CRLF
//! chunk           = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//! chunk-size      = 1*HEXDIG
//! last-chunk      = 1*("0") [ chunk-ext ] CRLF
//! chunk-ext       = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//! chunk-ext-name  = token
//! chunk-ext-val   = token / quoted-string
//! trailer-section = *( field-line CRLF )
//! field-line      = field-name ":" OWS field-value OWS
//! ```

use super::ProtoError;
use std::ops::Range;

/// Hex digits in a chunk size beyond which each further digit (a leading zero, as any other
/// would overflow) counts against the extensions-and-trailers cap, so zeros cannot go on forever.
const FREE_SIZE_DIGITS: u8 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the start of a chunk-size line.
    SizeStart,
    /// In the hex digits of the size.
    Size,
    /// Whitespace after the size: only `;` or more whitespace may follow (BWS).
    SizeWhitespace,
    /// After a `;`, before the extension's name (BWS allowed).
    ExtNameStart,
    /// In an extension's name.
    ExtName,
    /// Whitespace after an extension's name: `=`, `;` or more whitespace may follow.
    ExtNameWhitespace,
    /// After `=`, before the extension's value (BWS allowed).
    ExtValueStart,
    /// In a token value.
    ExtToken,
    /// Inside a quoted-string value.
    ExtQuoted,
    /// After a backslash inside a quoted-string.
    ExtQuotedPair,
    /// Right after the closing quote of a quoted-string.
    ExtQuoteEnd,
    /// Whitespace after a value: only `;` or more whitespace may follow.
    ExtValueWhitespace,
    /// After the CR of the size line.
    SizeLf,
    /// In chunk data, with this many bytes left.
    Data(u64),
    /// After chunk data, expecting CR.
    DataCr,
    /// After chunk data and CR, expecting LF.
    DataLf,
    /// At the start of a trailer line, or of the final empty line.
    TrailerStart,
    /// In the name of a trailer field, before its colon.
    TrailerName,
    /// In the value of a trailer field.
    Trailer,
    /// After the CR of a trailer line.
    TrailerLf,
    /// After the CR of the final empty line.
    EndLf,
    /// The whole body has been read.
    Done,
}

/// What one call to [`ChunkedDecoder::decode`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes of the input consumed, data and framing alike.
    pub consumed: usize,
    /// Where in the input the body data found lies, if any was found.
    pub data: Option<Range<usize>>,
}

/// An incremental decoder for a chunked request body.
///
/// ```
/// use vireo_http::proto::ChunkedDecoder;
/// let mut decoder = ChunkedDecoder::new(1024);
/// let input = b"5\r\nhello\r\n0\r\n\r\n";
/// let step = decoder.decode(input).unwrap();
/// assert_eq!(&input[step.data.unwrap()], b"hello");
/// let rest = decoder.decode(&input[step.consumed..]).unwrap();
/// assert!(decoder.is_done() && rest.data.is_none());
/// ```
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    size: u64,
    size_digits: u8,
    metadata: usize,
    max_metadata: usize,
}

impl ChunkedDecoder {
    /// A decoder that allows `max_metadata` bytes of chunk extensions and trailers together.
    pub fn new(max_metadata: usize) -> Self {
        ChunkedDecoder {
            state: State::SizeStart,
            size: 0,
            size_digits: 0,
            metadata: 0,
            max_metadata,
        }
    }

    /// Whether the last chunk and the trailers have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decode from `input`, stopping after the first run of body data or at the end of input.
    pub fn decode(&mut self, input: &[u8]) -> Result<Decoded, ProtoError> {
        let mut pos = 0;
        while pos < input.len() && self.state != State::Done {
            if let State::Data(left) = self.state {
                let take = left.min((input.len() - pos) as u64) as usize;
                let left = left - take as u64;
                self.state = if left == 0 {
                    State::DataCr
                } else {
                    State::Data(left)
                };
                return Ok(Decoded {
                    consumed: pos + take,
                    data: Some(pos..pos + take),
                });
            }
            self.step(input[pos])?;
            pos += 1;
        }
        Ok(Decoded {
            consumed: pos,
            data: None,
        })
    }

    fn step(&mut self, byte: u8) -> Result<(), ProtoError> {
        use State::*;
        const SIZE: ProtoError = ProtoError::BadRequest("invalid chunk size");
        const EXTENSION: ProtoError = ProtoError::BadRequest("invalid chunk extension");
        const TRAILER: ProtoError = ProtoError::BadRequest("invalid trailer");
        let whitespace = byte == b' ' || byte == b'\t';
        self.state = match self.state {
            SizeStart | Size if byte.is_ascii_hexdigit() => {
                if self.size > u64::MAX >> 4 {
                    return Err(ProtoError::BadRequest("chunk size too large"));
                }
                if self.size_digits == FREE_SIZE_DIGITS {
                    self.count_metadata(Size)?;
                } else {
                    self.size_digits += 1;
                }
                self.size = (self.size << 4) | u64::from(hex_value(byte));
                Size
            }
            SizeStart => return Err(SIZE),
            Size if byte == b'\r' => SizeLf,
            Size | SizeWhitespace if whitespace => self.count_metadata(SizeWhitespace)?,
            Size | SizeWhitespace if byte == b';' => self.count_metadata(ExtNameStart)?,
            Size | SizeWhitespace => return Err(SIZE),

            // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
            ExtNameStart | ExtValueStart if whitespace => self.count_metadata(self.state)?,
            ExtNameStart | ExtName if is_tchar(byte) => self.count_metadata(ExtName)?,
            ExtName | ExtNameWhitespace if whitespace => self.count_metadata(ExtNameWhitespace)?,
            ExtName | ExtNameWhitespace if byte == b'=' => self.count_metadata(ExtValueStart)?,
            ExtValueStart | ExtToken if is_tchar(byte) => self.count_metadata(ExtToken)?,
            ExtValueStart if byte == b'"' => self.count_metadata(ExtQuoted)?,
            ExtQuoted if byte == b'"' => self.count_metadata(ExtQuoteEnd)?,
            ExtQuoted if byte == b'\\' => self.count_metadata(ExtQuotedPair)?,
            ExtQuoted | ExtQuotedPair if is_quoted_text(byte) => self.count_metadata(ExtQuoted)?,
            ExtToken | ExtQuoteEnd | ExtValueWhitespace if whitespace => {
                self.count_metadata(ExtValueWhitespace)?
            }
            ExtName | ExtNameWhitespace | ExtToken | ExtQuoteEnd | ExtValueWhitespace
                if byte == b';' =>
            {
                self.count_metadata(ExtNameStart)?
            }
            // The line may end after a name or a value, not after whitespace or a `;`.
            ExtName | ExtToken | ExtQuoteEnd if byte == b'\r' => SizeLf,
            ExtNameStart | ExtName | ExtNameWhitespace | ExtValueStart | ExtToken | ExtQuoted
            | ExtQuotedPair | ExtQuoteEnd | ExtValueWhitespace => return Err(EXTENSION),

            SizeLf if byte == b'\n' => {
                let size = std::mem::take(&mut self.size);
                self.size_digits = 0;
                if size == 0 {
                    TrailerStart
                } else {
                    Data(size)
                }
            }
            SizeLf => return Err(ProtoError::BadRequest("chunk size line not ended by CRLF")),
            DataCr if byte == b'\r' => DataLf,
            DataLf if byte == b'\n' => SizeStart,
            DataCr | DataLf => {
                return Err(ProtoError::BadRequest("chunk data not followed by CRLF"))
            }

            // A trailer is a field line: a token name, a colon, a value (RFC 9112 §7.1.2, §5).
            // Trailers are discarded, so the fields a trailer may not carry need no check.
            TrailerStart if byte == b'\r' => EndLf,
            TrailerStart | TrailerName if is_tchar(byte) => self.count_metadata(TrailerName)?,
            TrailerName if byte == b':' => self.count_metadata(Trailer)?,
            Trailer if byte == b'\r' => TrailerLf,
            Trailer if is_field_value(byte) => self.count_metadata(Trailer)?,
            TrailerLf if byte == b'\n' => TrailerStart,
            EndLf if byte == b'\n' => Done,
            TrailerStart | TrailerName | Trailer | TrailerLf | EndLf => return Err(TRAILER),

            Data(_) | Done => unreachable!("data and the end are handled by decode"),
        };
        Ok(())
    }

    fn count_metadata(&mut self, next: State) -> Result<State, ProtoError> {
        self.metadata += 1;
        if self.metadata > self.max_metadata {
            return Err(ProtoError::BadRequest(
                "chunk extensions and trailers too large",
            ));
        }
        Ok(next)
    }
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

/// `tchar` from RFC 9110 §5.6.2: the characters of a token (a field or extension name).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// What a quoted-string holds (RFC 9110 §5.6.4): `qdtext` (tab, space, visible ASCII but `"`
/// and `\`, obs-text), which the caller tests first; and what may follow a backslash (all of
/// these, `"` and `\` included).
fn is_quoted_text(b: u8) -> bool {
    b == b'\t' || b == b' ' || b.is_ascii_graphic() || b >= 0x80
}

/// A byte of a field value (RFC 9110 §5.5): tab, space, visible ASCII, obs-text.
fn is_field_value(b: u8) -> bool {
    is_quoted_text(b)
}

/// Append one chunk (size line, data, CRLF) to `out`. An empty `data` appends nothing, since an
/// empty chunk would end the body.
pub fn encode_chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let mut digits = [0u8; 16];
    let mut n = data.len();
    let mut i = digits.len();
    while n > 0 || i == digits.len() {
        i -= 1;
        digits[i] = b"0123456789abcdef"[n & 0xf];
        n >>= 4;
    }
    out.extend_from_slice(&digits[i..]);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The last chunk and an empty trailer section.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// Append the last chunk and a trailer section of the `trailers` that [`may_trail`].
pub fn encode_last_chunk_with_trailers(out: &mut Vec<u8>, trailers: &http::HeaderMap) {
    out.extend_from_slice(b"0\r\n");
    for (name, value) in trailers {
        if may_trail(name) {
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// Whether a field may be sent as a trailer: not one that frames, routes or controls the
/// message or the connection, which a recipient must see before the body (RFC 9110 §6.5.1).
pub fn may_trail(name: &http::HeaderName) -> bool {
    use http::header;
    ![
        header::CONTENT_LENGTH,
        header::TRANSFER_ENCODING,
        header::CONTENT_ENCODING,
        header::CONTENT_TYPE,
        header::CONTENT_RANGE,
        header::HOST,
        header::CONNECTION,
        header::TE,
        header::TRAILER,
        header::UPGRADE,
        header::SET_COOKIE,
        header::CACHE_CONTROL,
        header::EXPIRES,
        header::DATE,
        header::LOCATION,
        header::RETRY_AFTER,
        header::VARY,
        header::WWW_AUTHENTICATE,
        header::AUTHORIZATION,
        header::PROXY_AUTHENTICATE,
    ]
    .contains(name)
        && name.as_str() != "keep-alive"
        && name.as_str() != "proxy-connection"
}
