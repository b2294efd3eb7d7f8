//! The frames a client sends, turned into messages: fragments reassembled, compressed
//! messages inflated, text checked to be UTF-8, control frames and size limits checked
//! (RFC 6455 §5). It does no I/O: the socket hands it the bytes it has read.

use bytes::Bytes;
use tokio_tungstenite::tungstenite::error::{CapacityError, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data};
use tokio_tungstenite::tungstenite::protocol::frame::Utf8Bytes;

use super::frame::{self, Header, BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT};
use super::{CloseFrame, Error, Message};

/// What [`Reader::decode`] made of the start of a buffer.
#[derive(Debug)]
pub(super) enum Decoded {
    /// A message, and how many bytes of the buffer its last frame took.
    Message(Message, usize),
    /// A fragment of a message that is not complete yet, and its length.
    Fragment(usize),
    /// The buffer holds part of a frame: this many bytes from its start complete it (or, for
    /// a header cut short, at least this many).
    NeedMore(usize),
}

/// A message whose later fragments are still to come.
struct Partial {
    opcode: u8,
    compressed: bool,
    data: Vec<u8>,
    /// How much of `data` is known to be valid UTF-8 (uncompressed text only).
    checked: usize,
}

pub(super) struct Reader {
    max_frame: usize,
    max_message: usize,
    #[cfg(feature = "ws-compression")]
    compression: Option<super::deflate::Codec>,
    partial: Option<Partial>,
}

fn protocol(error: ProtocolError) -> Error {
    Error::Protocol(error)
}

fn too_long(size: u64, max_size: usize) -> Error {
    Error::Capacity(CapacityError::MessageTooLong {
        size: usize::try_from(size).unwrap_or(usize::MAX),
        max_size,
    })
}

impl Reader {
    pub(super) fn new(max_frame: usize, max_message: usize) -> Self {
        // No buffer can be larger, and below it a frame's length plus its header, or a
        // message's so far plus its next frame, cannot overflow.
        let largest = isize::MAX as usize;
        Reader {
            max_frame: max_frame.min(largest),
            max_message: max_message.min(largest),
            #[cfg(feature = "ws-compression")]
            compression: None,
            partial: None,
        }
    }

    #[cfg(feature = "ws-compression")]
    pub(super) fn set_compression(&mut self, agreed: super::Compression) {
        self.compression = Some(super::deflate::Codec::new(agreed));
    }

    fn compressing(&self) -> bool {
        #[cfg(feature = "ws-compression")]
        return self.compression.is_some();
        #[cfg(not(feature = "ws-compression"))]
        false
    }

    /// Decode the frame at the start of `buf`, unmasking it in place. An error means the
    /// connection must be failed (RFC 6455 §7.1.7).
    pub(super) fn decode(&mut self, buf: &mut [u8]) -> Result<Decoded, Error> {
        let Some(header) = frame::parse_header(buf) else {
            return Ok(Decoded::NeedMore(buf.len() + 1));
        };
        self.check(&header)?;
        let total = header.len as u64 + header.payload_len;
        if (buf.len() as u64) < total {
            return Ok(Decoded::NeedMore(total as usize));
        }
        let total = total as usize;
        let payload = &mut buf[header.len..total];
        if let Some(mask) = header.mask {
            frame::unmask(payload, mask);
        }
        let payload = &*payload;
        let message = match header.opcode {
            PING => Message::Ping(Bytes::copy_from_slice(payload)),
            PONG => Message::Pong(Bytes::copy_from_slice(payload)),
            CLOSE => Message::Close(close_frame(payload)?),
            CONTINUATION => {
                let partial = self.partial.as_mut().expect("checked");
                partial.data.extend_from_slice(payload);
                if partial.opcode == TEXT && !partial.compressed {
                    check_utf8_so_far(partial)?;
                }
                if !header.fin {
                    return Ok(Decoded::Fragment(total));
                }
                let partial = self.partial.take().expect("checked");
                self.complete(partial.opcode, partial.compressed, partial.data)?
            }
            opcode if !header.fin => {
                let mut partial = Partial {
                    opcode,
                    compressed: header.rsv1,
                    data: payload.to_vec(),
                    checked: 0,
                };
                if opcode == TEXT && !header.rsv1 {
                    check_utf8_so_far(&mut partial)?;
                }
                self.partial = Some(partial);
                return Ok(Decoded::Fragment(total));
            }
            opcode => self.complete(opcode, header.rsv1, payload.to_vec())?,
        };
        Ok(Decoded::Message(message, total))
    }

    /// Whether a frame may come now, before its payload is read.
    fn check(&self, header: &Header) -> Result<(), Error> {
        if header.mask.is_none() {
            return Err(protocol(ProtocolError::UnmaskedFrameFromClient));
        }
        if header.rsv23 {
            return Err(protocol(ProtocolError::NonZeroReservedBits));
        }
        if header.is_control() {
            if !matches!(header.opcode, CLOSE | PING | PONG) {
                return Err(protocol(ProtocolError::UnknownControlFrameType(
                    header.opcode,
                )));
            }
            if !header.fin {
                return Err(protocol(ProtocolError::FragmentedControlFrame));
            }
            if header.payload_len > 125 {
                return Err(protocol(ProtocolError::ControlFrameTooBig));
            }
            if header.rsv1 {
                return Err(protocol(ProtocolError::NonZeroReservedBits));
            }
            return Ok(());
        }
        match (header.opcode, &self.partial) {
            (CONTINUATION, None) => return Err(protocol(ProtocolError::UnexpectedContinueFrame)),
            (TEXT, Some(_)) => return Err(protocol(ProtocolError::ExpectedFragment(Data::Text))),
            (BINARY, Some(_)) => {
                return Err(protocol(ProtocolError::ExpectedFragment(Data::Binary)))
            }
            (CONTINUATION | TEXT | BINARY, _) => {}
            (other, _) => return Err(protocol(ProtocolError::UnknownDataFrameType(other))),
        }
        // Only a message's first frame says it is compressed (RFC 7692 §6.1).
        if header.rsv1 && (header.opcode == CONTINUATION || !self.compressing()) {
            return Err(protocol(ProtocolError::NonZeroReservedBits));
        }
        if header.payload_len > self.max_frame as u64 {
            return Err(too_long(header.payload_len, self.max_frame));
        }
        let so_far = self.partial.as_ref().map_or(0, |p| p.data.len() as u64);
        if so_far + header.payload_len > self.max_message as u64 {
            return Err(too_long(so_far + header.payload_len, self.max_message));
        }
        Ok(())
    }

    /// A whole message from its (reassembled) payload.
    fn complete(&mut self, opcode: u8, compressed: bool, data: Vec<u8>) -> Result<Message, Error> {
        let data = if compressed {
            self.inflate(&data)?
        } else {
            data
        };
        Ok(if opcode == TEXT {
            Message::Text(Utf8Bytes::from(String::from_utf8(data)?))
        } else {
            Message::Binary(Bytes::from(data))
        })
    }

    #[cfg(feature = "ws-compression")]
    fn inflate(&mut self, data: &[u8]) -> Result<Vec<u8>, Error> {
        let codec = self
            .compression
            .as_mut()
            .expect("checked: compressed only when agreed");
        codec.inflate(data, self.max_message)
    }

    #[cfg(not(feature = "ws-compression"))]
    fn inflate(&mut self, _: &[u8]) -> Result<Vec<u8>, Error> {
        unreachable!("checked: compressed only when agreed")
    }
}

/// Fail as soon as text stops being UTF-8, not only when its message is complete; a
/// character cut between fragments is waited for.
fn check_utf8_so_far(partial: &mut Partial) -> Result<(), Error> {
    match std::str::from_utf8(&partial.data[partial.checked..]) {
        Ok(_) => partial.checked = partial.data.len(),
        Err(e) if e.error_len().is_some() => return Err(e.into()),
        Err(e) => partial.checked += e.valid_up_to(),
    }
    Ok(())
}

/// A close frame's payload: nothing, or a code and a UTF-8 reason (RFC 6455 §5.5.1).
fn close_frame(payload: &[u8]) -> Result<Option<CloseFrame>, Error> {
    match payload {
        [] => Ok(None),
        [_] => Err(protocol(ProtocolError::InvalidCloseSequence)),
        [high, low, reason @ ..] => Ok(Some(CloseFrame {
            code: CloseCode::from(u16::from_be_bytes([*high, *low])),
            reason: Utf8Bytes::from(std::str::from_utf8(reason)?),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASK: [u8; 4] = [0xA1, 0x02, 0x7C, 0x55];

    /// A masked client frame.
    fn client_frame(first: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        frame::write_header(&mut out, first & 0x0F, first & 0x40 != 0, payload.len());
        out[0] = first;
        out[1] |= 0x80;
        out.extend_from_slice(&MASK);
        let mut body = payload.to_vec();
        frame::unmask(&mut body, MASK);
        out.extend_from_slice(&body);
        out
    }

    fn decode_all(reader: &mut Reader, mut bytes: Vec<u8>) -> Result<Vec<Message>, Error> {
        let mut messages = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            match reader.decode(&mut bytes[at..])? {
                Decoded::Message(message, used) => {
                    messages.push(message);
                    at += used;
                }
                Decoded::Fragment(used) => at += used,
                Decoded::NeedMore(_) => panic!("a frame cut short"),
            }
        }
        Ok(messages)
    }

    fn reader() -> Reader {
        Reader::new(1 << 16, 1 << 16)
    }

    #[test]
    fn fragments_and_interleaved_control_frames_come_out_in_order() {
        let mut bytes = client_frame(TEXT, "héllo, ".as_bytes());
        bytes.extend(client_frame(0x80 | PING, b"p"));
        bytes.extend(client_frame(0x80 | CONTINUATION, b"world"));
        bytes.extend(client_frame(0x80 | BINARY, &[0, 1, 2]));
        bytes.extend(client_frame(0x80 | CLOSE, &[0x03, 0xE8, b'o', b'k']));
        let messages = decode_all(&mut reader(), bytes).unwrap();
        assert_eq!(
            messages,
            vec![
                Message::Ping(Bytes::from_static(b"p")),
                Message::text("héllo, world"),
                Message::binary(vec![0, 1, 2]),
                Message::Close(Some(CloseFrame {
                    code: CloseCode::Normal,
                    reason: "ok".into()
                })),
            ]
        );
    }

    #[test]
    fn a_frame_cut_short_asks_for_the_rest() {
        let mut bytes = client_frame(0x80 | TEXT, b"hello");
        let mut reader = reader();
        match reader.decode(&mut bytes[..8]).unwrap() {
            Decoded::NeedMore(n) => assert_eq!(n, bytes.len()),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            reader.decode(&mut bytes[..1]).unwrap(),
            Decoded::NeedMore(2)
        ));
        assert!(matches!(
            reader.decode(&mut bytes).unwrap(),
            Decoded::Message(_, 11)
        ));
    }

    fn protocol_error(bytes: Vec<u8>) -> ProtocolError {
        match decode_all(&mut reader(), bytes) {
            Err(Error::Protocol(e)) => e,
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[test]
    fn protocol_violations_fail_the_connection() {
        let mut unmasked = client_frame(0x80 | TEXT, b"hi");
        unmasked[1] &= 0x7F;
        unmasked.truncate(2);
        unmasked.extend(b"hi");
        assert_eq!(
            protocol_error(unmasked),
            ProtocolError::UnmaskedFrameFromClient
        );
        assert_eq!(
            protocol_error(client_frame(0xC0 | TEXT, b"hi")),
            ProtocolError::NonZeroReservedBits,
            "RSV1 without compression agreed"
        );
        assert_eq!(
            protocol_error(client_frame(0x90 | TEXT, b"hi")),
            ProtocolError::NonZeroReservedBits
        );
        assert_eq!(
            protocol_error(client_frame(PING, b"")),
            ProtocolError::FragmentedControlFrame
        );
        assert_eq!(
            protocol_error(client_frame(0x80 | PING, &[0; 126])),
            ProtocolError::ControlFrameTooBig
        );
        assert_eq!(
            protocol_error(client_frame(0x80 | CONTINUATION, b"x")),
            ProtocolError::UnexpectedContinueFrame
        );
        let mut two_starts = client_frame(TEXT, b"a");
        two_starts.extend(client_frame(0x80 | BINARY, b"b"));
        assert_eq!(
            protocol_error(two_starts),
            ProtocolError::ExpectedFragment(Data::Binary)
        );
        assert_eq!(
            protocol_error(client_frame(0x83, b"")),
            ProtocolError::UnknownDataFrameType(3)
        );
        assert_eq!(
            protocol_error(client_frame(0x8B, b"")),
            ProtocolError::UnknownControlFrameType(11)
        );
        assert_eq!(
            protocol_error(client_frame(0x80 | CLOSE, &[3])),
            ProtocolError::InvalidCloseSequence
        );
    }

    #[test]
    fn invalid_utf8_fails_at_the_first_bad_fragment() {
        let mut reader = reader();
        let mut first = client_frame(TEXT, &[b'a', 0xE2, 0x82]);
        assert!(matches!(
            reader.decode(&mut first).unwrap(),
            Decoded::Fragment(_)
        ));
        let mut bad = client_frame(CONTINUATION, &[0xFF]);
        assert!(matches!(reader.decode(&mut bad), Err(Error::Utf8(_))));

        let mut reader = self::reader();
        let mut bytes = client_frame(TEXT, &[b'a', 0xE2, 0x82]);
        bytes.extend(client_frame(0x80 | CONTINUATION, &[0xAC]));
        assert_eq!(
            decode_all(&mut reader, bytes).unwrap(),
            vec![Message::text("a€")]
        );
        let cut = client_frame(0x80 | TEXT, &[b'a', 0xE2, 0x82]);
        assert!(matches!(decode_all(&mut reader, cut), Err(Error::Utf8(_))));
        let bad_reason = client_frame(0x80 | CLOSE, &[0x03, 0xE8, 0xFF]);
        assert!(matches!(
            decode_all(&mut reader, bad_reason),
            Err(Error::Utf8(_))
        ));
    }

    #[test]
    fn frames_and_messages_over_the_limits_are_refused_before_their_payload() {
        let mut reader = Reader::new(8, 12);
        let mut big_frame = client_frame(0x80 | BINARY, &[0; 9]);
        assert!(matches!(
            reader.decode(&mut big_frame[..6]),
            Err(Error::Capacity(_))
        ));
        let mut bytes = client_frame(BINARY, &[0; 8]);
        bytes.extend(client_frame(0x80 | CONTINUATION, &[0; 5]));
        assert!(matches!(
            decode_all(&mut reader, bytes),
            Err(Error::Capacity(_))
        ));
    }

    #[test]
    fn the_largest_announced_length_is_refused_under_limits_set_to_the_maximum() {
        let mut reader = Reader::new(usize::MAX, usize::MAX);
        // A 64-bit length of all ones: no buffer could hold it, and added to the header's 14
        // bytes it would wrap.
        let mut header = vec![0x82, 0xFF];
        header.extend_from_slice(&u64::MAX.to_be_bytes());
        header.extend_from_slice(&MASK);
        assert!(matches!(
            reader.decode(&mut header),
            Err(Error::Capacity(_))
        ));
    }

    #[cfg(feature = "ws-compression")]
    #[test]
    fn compressed_fragments_are_inflated_as_one_message() {
        use flate2::{Compress, FlushCompress};
        let offer = [&b"permessage-deflate"[..]];
        let mut reader = reader();
        reader.set_compression(super::super::Compression::negotiate(offer.into_iter()).unwrap());
        let text = "compress me, compress me, compress me, compress me";
        let mut wire = Vec::with_capacity(256);
        Compress::new(flate2::Compression::default(), false)
            .compress_vec(text.as_bytes(), &mut wire, FlushCompress::Sync)
            .unwrap();
        wire.truncate(wire.len() - 4);
        let (a, b) = wire.split_at(wire.len() / 2);
        let mut bytes = client_frame(0x40 | TEXT, a);
        bytes.extend(client_frame(0x80 | CONTINUATION, b));
        assert_eq!(
            decode_all(&mut reader, bytes).unwrap(),
            vec![Message::text(text)]
        );
        let mut rsv1_twice = client_frame(0x40 | TEXT, a);
        rsv1_twice.extend(client_frame(0xC0 | CONTINUATION, b));
        assert_eq!(
            protocol_error_with(&mut reader, rsv1_twice),
            ProtocolError::NonZeroReservedBits
        );
    }

    #[cfg(feature = "ws-compression")]
    fn protocol_error_with(reader: &mut Reader, bytes: Vec<u8>) -> ProtocolError {
        match decode_all(reader, bytes) {
            Err(Error::Protocol(e)) => e,
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }
}
