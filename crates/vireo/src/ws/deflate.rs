//! permessage-deflate (RFC 7692): agreeing on it in the handshake, inflating what a client
//! compressed, deflating what the server sends.

use flate2::{Compress, Decompress, FlushCompress, FlushDecompress, Status};
use http::HeaderValue;
use std::cell::RefCell;
use std::io;

use super::Error;

/// Messages shorter than this go out uncompressed: deflate would not make them smaller.
const MIN_COMPRESSED: usize = 64;
/// What a sync flush ends a block with; stripped from each sent message, and put back before
/// a received one is inflated (RFC 7692 §7.2.1, §7.2.2).
const SYNC_TAIL: [u8; 4] = [0x00, 0x00, 0xFF, 0xFF];

/// The permessage-deflate parameters agreed with one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// The client starts each message with a fresh deflate context.
    client_no_context_takeover: bool,
    /// The window the server deflates with, and whether the client asked for it.
    server_window_bits: u8,
    server_window_requested: bool,
}

impl Compression {
    /// The first of a client's `Sec-WebSocket-Extensions` offers this server can accept, if
    /// any. Offers of other extensions, with unknown or repeated parameters, or asking the
    /// server for an 8-bit window are passed over.
    pub fn negotiate<'a>(offers: impl Iterator<Item = &'a [u8]>) -> Option<Compression> {
        offers
            .flat_map(|value| value.split(|&b| b == b','))
            .find_map(accept_offer)
    }

    /// `payload` deflated on its own, or `None` when it is better sent as it is.
    pub(super) fn deflate(&self, payload: &[u8]) -> Option<Vec<u8>> {
        if payload.len() < MIN_COMPRESSED {
            return None;
        }
        let bits = self.server_window_bits;
        SHARED_DEFLATERS
            .with_borrow_mut(|deflaters| {
                let deflater = deflaters[usize::from(bits - 9)].get_or_insert_with(|| {
                    Compress::new_with_window_bits(flate2::Compression::fast(), false, bits)
                });
                deflater.reset();
                deflate_into(deflater, payload)
            })
            .filter(|deflated| deflated.len() < payload.len())
    }

    /// The `Sec-WebSocket-Extensions` value that accepts the offer.
    pub fn header_value(&self) -> HeaderValue {
        let mut value = String::from("permessage-deflate; server_no_context_takeover");
        if self.client_no_context_takeover {
            value.push_str("; client_no_context_takeover");
        }
        if self.server_window_requested {
            value.push_str(&format!(
                "; server_max_window_bits={}",
                self.server_window_bits
            ));
        }
        HeaderValue::from_str(&value).expect("ASCII")
    }
}

/// One offer (`permessage-deflate; param; param=value`), accepted or not.
fn accept_offer(offer: &[u8]) -> Option<Compression> {
    let mut parts = offer.split(|&b| b == b';').map(<[u8]>::trim_ascii);
    if !parts.next()?.eq_ignore_ascii_case(b"permessage-deflate") {
        return None;
    }
    let mut accepted = Compression {
        client_no_context_takeover: false,
        server_window_bits: 15,
        server_window_requested: false,
    };
    let (mut server_nct, mut client_window) = (false, false);
    for param in parts {
        let (name, value) = match param.iter().position(|&b| b == b'=') {
            Some(eq) => (
                param[..eq].trim_ascii(),
                Some(unquote(param[eq + 1..].trim_ascii())),
            ),
            None => (param, None),
        };
        let seen = match (&name.to_ascii_lowercase()[..], value) {
            (b"server_no_context_takeover", None) => std::mem::replace(&mut server_nct, true),
            (b"client_no_context_takeover", None) => {
                std::mem::replace(&mut accepted.client_no_context_takeover, true)
            }
            (b"server_max_window_bits", Some(bits)) => {
                // 8 is valid in an offer, but deflate's raw format cannot keep to it.
                accepted.server_window_bits = window_bits(bits).filter(|&b| b >= 9)?;
                std::mem::replace(&mut accepted.server_window_requested, true)
            }
            (b"client_max_window_bits", bits) => {
                // The client's window is its own choice; any inflates with a 15-bit one.
                if let Some(bits) = bits {
                    window_bits(bits)?;
                }
                std::mem::replace(&mut client_window, true)
            }
            _ => return None,
        };
        if seen {
            return None;
        }
    }
    Some(accepted)
}

fn unquote(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] => inner,
        _ => value,
    }
}

fn window_bits(value: &[u8]) -> Option<u8> {
    let bits: u8 = std::str::from_utf8(value).ok()?.parse().ok()?;
    (8..=15).contains(&bits).then_some(bits)
}

/// A connection's compression state: how it inflates what the client sends.
pub(super) struct Codec {
    agreed: Compression,
    /// The client's deflate context, kept between messages unless it agreed to start each
    /// one afresh; made at the first compressed message.
    inflater: Option<Box<Decompress>>,
}

impl Codec {
    pub(super) fn new(agreed: Compression) -> Self {
        Codec {
            agreed,
            inflater: None,
        }
    }

    /// Inflate one compressed message, failing past `limit` bytes.
    pub(super) fn inflate(&mut self, compressed: &[u8], limit: usize) -> Result<Vec<u8>, Error> {
        if self.agreed.client_no_context_takeover {
            return SHARED_INFLATER.with_borrow_mut(|shared| {
                let inflater = shared.get_or_insert_with(|| Decompress::new(false));
                inflater.reset(false);
                inflate_into(inflater, compressed, limit)
            });
        }
        let inflater = self
            .inflater
            .get_or_insert_with(|| Box::new(Decompress::new(false)));
        inflate_into(inflater, compressed, limit)
    }
}

thread_local! {
    /// Inflates for clients that start each message afresh; reset before each use.
    static SHARED_INFLATER: RefCell<Option<Decompress>> = const { RefCell::new(None) };
    /// Deflates for every connection on the thread, one per window size (9 to 15 bits);
    /// reset before each message, as the server promised in the handshake.
    static SHARED_DEFLATERS: RefCell<[Option<Compress>; 7]> = const { RefCell::new([const { None }; 7]) };
}

/// Compressed data that does not inflate: the `io::Error` it is carried in says so to
/// [`close_code_for`](super::close_code_for), apart from other invalid data.
#[derive(Debug)]
pub(super) struct InflateError(&'static str);

impl std::fmt::Display for InflateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for InflateError {}

fn invalid_data(message: &'static str) -> Error {
    Error::Io(io::Error::new(
        io::ErrorKind::InvalidData,
        InflateError(message),
    ))
}

fn inflate_into(
    inflater: &mut Decompress,
    compressed: &[u8],
    limit: usize,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(compressed.len().saturating_mul(3).clamp(64, limit.max(64)));
    for mut input in [compressed, &SYNC_TAIL[..]] {
        loop {
            if out.len() == out.capacity() {
                if out.len() > limit {
                    return Err(too_long(out.len(), limit));
                }
                out.reserve(out.len().max(64).min(limit + 1 - out.len()));
            }
            let (read, written) = (inflater.total_in(), out.len());
            let status = inflater
                .decompress_vec(input, &mut out, FlushDecompress::Sync)
                .map_err(|_| invalid_data("invalid compressed data"))?;
            input = &input[(inflater.total_in() - read) as usize..];
            if out.len() > limit {
                return Err(too_long(out.len(), limit));
            }
            let stuck = inflater.total_in() == read && out.len() == written;
            match status {
                // A sender may end a message with a final block (RFC 7692 §7.2.3.3): the
                // sync tail after it is not read, and the next message starts afresh.
                Status::StreamEnd => {
                    inflater.reset(false);
                    return Ok(out);
                }
                _ if input.is_empty() && out.len() < out.capacity() => break,
                _ if stuck => return Err(invalid_data("invalid compressed data")),
                _ => {}
            }
        }
    }
    Ok(out)
}

fn too_long(size: usize, max_size: usize) -> Error {
    Error::Capacity(
        tokio_tungstenite::tungstenite::error::CapacityError::MessageTooLong { size, max_size },
    )
}

/// `input` deflated with a sync flush, its final empty block taken off.
fn deflate_into(deflater: &mut Compress, mut input: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len() / 2 + 64);
    loop {
        let before = deflater.total_in();
        deflater
            .compress_vec(input, &mut out, FlushCompress::Sync)
            .ok()?;
        input = &input[(deflater.total_in() - before) as usize..];
        if input.is_empty() && out.len() < out.capacity() {
            break;
        }
        out.reserve(out.capacity());
    }
    let body = out.len().checked_sub(SYNC_TAIL.len())?;
    (out[body..] == SYNC_TAIL).then(|| {
        out.truncate(body);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn negotiate(offers: &[&str]) -> Option<String> {
        Compression::negotiate(offers.iter().map(|o| o.as_bytes()))
            .map(|c| c.header_value().to_str().unwrap().to_owned())
    }

    #[test]
    fn the_first_acceptable_offer_is_answered() {
        let plain = "permessage-deflate; server_no_context_takeover";
        assert_eq!(negotiate(&["permessage-deflate"]).as_deref(), Some(plain));
        assert_eq!(
            negotiate(&["permessage-deflate; client_max_window_bits"]).as_deref(),
            Some(plain)
        );
        assert_eq!(
            negotiate(&["x-webkit-deflate-frame, permessage-deflate; client_no_context_takeover"])
                .as_deref(),
            Some("permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        );
        assert_eq!(
            negotiate(&[
                "permessage-deflate; server_max_window_bits=8",
                "permessage-deflate; server_max_window_bits=\"10\"; server_no_context_takeover"
            ])
            .as_deref(),
            Some("permessage-deflate; server_no_context_takeover; server_max_window_bits=10")
        );
    }

    #[test]
    fn offers_with_bad_or_unknown_parameters_are_declined() {
        for offer in [
            "permessage-deflate; server_max_window_bits",
            "permessage-deflate; server_max_window_bits=16",
            "permessage-deflate; client_max_window_bits=7",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; server_no_context_takeover=1",
            "permessage-deflate; mystery",
            "deflate-frame",
        ] {
            assert_eq!(negotiate(&[offer]), None, "{offer}");
        }
    }

    /// What a client with its own deflate context sends for each message.
    fn client_deflate(client: &mut Compress, message: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(message.len() + 64);
        client
            .compress_vec(message, &mut out, FlushCompress::Sync)
            .unwrap();
        assert!(out.ends_with(&SYNC_TAIL));
        out.truncate(out.len() - 4);
        out
    }

    fn agreed(client_no_context_takeover: bool) -> Compression {
        Compression {
            client_no_context_takeover,
            server_window_bits: 15,
            server_window_requested: false,
        }
    }

    #[test]
    fn messages_compressed_with_context_takeover_inflate_in_order() {
        let mut client = Compress::new(flate2::Compression::default(), false);
        let mut codec = Codec::new(agreed(false));
        let text = b"the same words again and again, the same words again and again";
        for _ in 0..3 {
            let wire = client_deflate(&mut client, text);
            assert_eq!(codec.inflate(&wire, 1 << 20).unwrap(), text);
        }
    }

    #[test]
    fn a_message_inflating_past_the_limit_is_refused() {
        let mut client = Compress::new(flate2::Compression::best(), false);
        let bomb = client_deflate(&mut client, &vec![0u8; 1 << 20]);
        assert!(bomb.len() < 2048);
        let mut codec = Codec::new(agreed(true));
        match codec.inflate(&bomb, 64 << 10) {
            Err(Error::Capacity(_)) => {}
            other => panic!("expected a capacity error, got {other:?}"),
        }
        assert_eq!(codec.inflate(&bomb, 1 << 20).unwrap().len(), 1 << 20);
    }

    #[test]
    fn a_message_ending_with_a_final_block_inflates_and_the_next_starts_afresh() {
        let mut codec = Codec::new(agreed(false));
        for text in [
            &b"first message, finished with a final block"[..],
            b"and a second",
        ] {
            let mut whole = Compress::new(flate2::Compression::default(), false);
            let mut wire = Vec::with_capacity(256);
            whole
                .compress_vec(text, &mut wire, FlushCompress::Finish)
                .unwrap();
            assert_eq!(codec.inflate(&wire, 1 << 20).unwrap(), text);
        }
    }

    #[test]
    fn garbage_is_invalid_data() {
        let mut codec = Codec::new(agreed(false));
        match codec.inflate(&[0xFF, 0xFF, 0xFF, 0xFF, 0x00], 1 << 20) {
            Err(Error::Io(e)) => {
                assert_eq!(e.kind(), io::ErrorKind::InvalidData);
                assert!(e.get_ref().is_some_and(|inner| inner.is::<InflateError>()));
            }
            other => panic!("expected invalid data, got {other:?}"),
        }
    }

    #[test]
    fn sent_messages_inflate_on_their_own_and_short_ones_go_plain() {
        let agreed = Compression {
            client_no_context_takeover: false,
            server_window_bits: 10,
            server_window_requested: true,
        };
        assert_eq!(agreed.deflate(b"short"), None);
        let text = "a sentence worth compressing, repeated. ".repeat(50);
        for _ in 0..2 {
            let wire = agreed.deflate(text.as_bytes()).expect("compressible");
            assert!(wire.len() < text.len() / 4);
            let mut fresh = Decompress::new(false);
            assert_eq!(
                inflate_into(&mut fresh, &wire, 1 << 20).unwrap(),
                text.as_bytes()
            );
        }
    }
}
