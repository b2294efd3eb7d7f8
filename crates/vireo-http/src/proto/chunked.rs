//! The chunked transfer coding (RFC 9112 §7.1): a decoder for request bodies and an encoder for
//! response bodies.
//!
//! The decoder is a byte-at-a-time state machine over whatever slice the caller has, so a body
//! split at any point decodes the same. It is strict where leniency enables request smuggling:
//! every line ends in CRLF, sizes are hex digits only and may not overflow, and extensions and
//! trailers together are capped.

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
    /// Whitespace after the size: only `;` or more whitespace may follow (BWS, RFC 9112 §7.1.1).
    SizeWhitespace,
    /// In chunk extensions, up to the CR.
    Extension,
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
        self.state = match (self.state, byte) {
            (SizeStart | Size, b) if b.is_ascii_hexdigit() => {
                if self.size > u64::MAX >> 4 {
                    return Err(ProtoError::BadRequest("chunk size too large"));
                }
                if self.size_digits == FREE_SIZE_DIGITS {
                    self.count_metadata(Size)?;
                } else {
                    self.size_digits += 1;
                }
                self.size = (self.size << 4) | u64::from(hex_value(b));
                Size
            }
            (Size | SizeWhitespace, b' ' | b'\t') => SizeWhitespace,
            (Size | SizeWhitespace, b';') => self.count_metadata(Extension)?,
            (Size, b'\r') => SizeLf,
            (Extension, b'\r') => SizeLf,
            (Extension, b) if b == b'\t' || !b.is_ascii_control() => {
                self.count_metadata(Extension)?
            }
            (SizeLf, b'\n') => {
                let size = std::mem::take(&mut self.size);
                self.size_digits = 0;
                if size == 0 {
                    TrailerStart
                } else {
                    Data(size)
                }
            }
            (DataCr, b'\r') => DataLf,
            (DataLf, b'\n') => SizeStart,
            (TrailerStart, b'\r') => EndLf,
            // A trailer is a field line: a token name, a colon, a value (RFC 9112 §7.1.2, §5).
            (TrailerStart | TrailerName, b) if is_tchar(b) => self.count_metadata(TrailerName)?,
            (TrailerName, b':') => self.count_metadata(Trailer)?,
            (Trailer, b'\r') => TrailerLf,
            (Trailer, b) if b == b'\t' || !b.is_ascii_control() => self.count_metadata(Trailer)?,
            (TrailerLf, b'\n') => TrailerStart,
            (EndLf, b'\n') => Done,
            (SizeStart | Size | SizeWhitespace, _) => {
                return Err(ProtoError::BadRequest("invalid chunk size"))
            }
            (Extension | SizeLf, _) => {
                return Err(ProtoError::BadRequest("invalid chunk extension"))
            }
            (DataCr | DataLf, _) => {
                return Err(ProtoError::BadRequest("chunk data not followed by CRLF"))
            }
            (TrailerStart | TrailerName | Trailer | TrailerLf | EndLf, _) => {
                return Err(ProtoError::BadRequest("invalid trailer"))
            }
            (Data(_) | Done, _) => unreachable!("data and the end are handled by decode"),
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

/// `tchar` from RFC 9110 §5.6.2: the characters of a field name.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
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
