//! WebSocket frame headers (RFC 6455 §5.2): parsed from the bytes a client sent, and written
//! before the payloads the server sends, which are never masked.

pub(super) const CONTINUATION: u8 = 0x0;
pub(super) const TEXT: u8 = 0x1;
pub(super) const BINARY: u8 = 0x2;
pub(super) const CLOSE: u8 = 0x8;
pub(super) const PING: u8 = 0x9;
pub(super) const PONG: u8 = 0xA;

/// The header of a frame read from a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    pub fin: bool,
    /// RSV1: a compressed message (permessage-deflate), when set on its first frame.
    pub rsv1: bool,
    /// RSV2 or RSV3, which no extension here gives a meaning.
    pub rsv23: bool,
    pub opcode: u8,
    pub mask: Option<[u8; 4]>,
    /// The header's own length in bytes.
    pub len: usize,
    pub payload_len: u64,
}

impl Header {
    pub(super) fn is_control(&self) -> bool {
        self.opcode & 0x8 != 0
    }
}

/// The header at the start of `buf`, or `None` if `buf` does not hold all of it yet.
pub(super) fn parse_header(buf: &[u8]) -> Option<Header> {
    let (&first, &second) = (buf.first()?, buf.get(1)?);
    let (payload_len, mut len) = match second & 0x7F {
        126 => (
            u64::from(u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?)),
            4,
        ),
        127 => (u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?), 10),
        n => (u64::from(n), 2),
    };
    let mask = if second & 0x80 != 0 {
        let mask: [u8; 4] = buf.get(len..len + 4)?.try_into().ok()?;
        len += 4;
        Some(mask)
    } else {
        None
    };
    Some(Header {
        fin: first & 0x80 != 0,
        rsv1: first & 0x40 != 0,
        rsv23: first & 0x30 != 0,
        opcode: first & 0x0F,
        mask,
        len,
        payload_len,
    })
}

/// Undo (or apply) a client's masking of `payload`.
pub(super) fn unmask(payload: &mut [u8], mask: [u8; 4]) {
    let wide = u64::from_ne_bytes([
        mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3],
    ]);
    let mut chunks = payload.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let word = u64::from_ne_bytes((&*chunk).try_into().expect("8-byte chunk")) ^ wide;
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    for (i, byte) in chunks.into_remainder().iter_mut().enumerate() {
        *byte ^= mask[i & 3];
    }
}

/// Append an unmasked frame header for a final frame of `payload_len` bytes to `out`.
pub(super) fn write_header(out: &mut Vec<u8>, opcode: u8, compressed: bool, payload_len: usize) {
    out.push(0x80 | if compressed { 0x40 } else { 0 } | opcode);
    match payload_len {
        0..=125 => out.push(payload_len as u8),
        126..=0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(payload_len as u16).to_be_bytes());
        }
        _ => {
            out.push(127);
            out.extend_from_slice(&(payload_len as u64).to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_each_length_form_parse() {
        let short = parse_header(&[0x81, 0x85, 1, 2, 3, 4]).unwrap();
        assert!(short.fin && !short.rsv1 && !short.rsv23);
        assert_eq!((short.opcode, short.len, short.payload_len), (TEXT, 6, 5));
        assert_eq!(short.mask, Some([1, 2, 3, 4]));

        let medium = parse_header(&[0x42, 0xFE, 0x01, 0x00, 9, 9, 9, 9]).unwrap();
        assert!(!medium.fin && medium.rsv1);
        assert_eq!(
            (medium.opcode, medium.len, medium.payload_len),
            (BINARY, 8, 256)
        );

        let long = parse_header(&[0x80, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0]).unwrap();
        assert_eq!((long.len, long.payload_len, long.mask), (10, 65536, None));
        assert!(parse_header(&[0xB0 | PING, 0]).unwrap().rsv23);
    }

    #[test]
    fn a_header_cut_short_is_not_parsed() {
        for bytes in [
            &[][..],
            &[0x81],
            &[0x81, 0xFE, 0x01],
            &[0x81, 0x85, 1, 2, 3],
        ] {
            assert_eq!(parse_header(bytes), None, "{bytes:?}");
        }
    }

    #[test]
    fn written_headers_parse_back() {
        for len in [0, 125, 126, 65535, 65536, 1 << 20] {
            let mut out = Vec::new();
            write_header(&mut out, BINARY, len == 126, len);
            let header = parse_header(&out).unwrap();
            assert_eq!(header.len, out.len());
            assert_eq!(header.payload_len, len as u64);
            assert_eq!(
                (header.fin, header.rsv1, header.mask),
                (true, len == 126, None)
            );
        }
    }

    #[test]
    fn unmasking_matches_the_byte_by_byte_definition() {
        let mask = [0x37, 0xFA, 0x21, 0x3D];
        for len in [0, 1, 7, 8, 9, 31, 100] {
            let plain: Vec<u8> = (0..len as u8).collect();
            let mut data = plain.clone();
            unmask(&mut data, mask);
            let expected: Vec<u8> = plain
                .iter()
                .enumerate()
                .map(|(i, b)| b ^ mask[i % 4])
                .collect();
            assert_eq!(data, expected);
            unmask(&mut data, mask);
            assert_eq!(data, plain);
        }
    }
}
