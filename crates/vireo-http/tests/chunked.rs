//! The chunked decoder and encoder: a table of framings, and properties over arbitrary splits.

use proptest::prelude::*;
use vireo_http::proto::{encode_chunk, ChunkedDecoder, LAST_CHUNK};

/// Decode `input` fed in pieces of at most `piece` bytes; the body, or the error's status.
fn decode(input: &[u8], piece: usize, max_metadata: usize) -> Result<Vec<u8>, u16> {
    let mut decoder = ChunkedDecoder::new(max_metadata);
    let mut body = Vec::new();
    let mut fed = 0;
    let mut pending: Vec<u8> = Vec::new();
    while !decoder.is_done() {
        if pending.is_empty() {
            if fed == input.len() {
                return Err(0); // incomplete
            }
            let end = (fed + piece).min(input.len());
            pending.extend_from_slice(&input[fed..end]);
            fed = end;
        }
        let step = decoder.decode(&pending).map_err(|e| e.status().as_u16())?;
        if let Some(data) = step.data {
            body.extend_from_slice(&pending[data]);
        }
        pending.drain(..step.consumed);
    }
    Ok(body)
}

macro_rules! table {
    ($($name:ident: $input:expr => $expect:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let expect: Result<&[u8], u16> = $expect;
                for piece in [1, 2, 3, 7, 1 << 20] {
                    assert_eq!(
                        decode($input, piece, 16 * 1024),
                        expect.map(<[u8]>::to_vec),
                        "{} in pieces of {piece}",
                        stringify!($name)
                    );
                }
            }
        )*
    };
}

table! {
    one_chunk: b"5\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    several_chunks: b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n" => Ok(b"abcde");
    upper_and_lower_hex: b"A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n" => Ok(b"01234567890123456789");
    leading_zeros: b"0005\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    many_leading_zeros: b"0000000000000000005\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    trailer_without_colon: b"0\r\nno-colon-here\r\n\r\n" => Err(400);
    trailer_space_before_colon: b"0\r\nX-T : 1\r\n\r\n" => Err(400);
    extensions_ignored: b"5;name=value;flag\r\nhello\r\n0;last\r\n\r\n" => Ok(b"hello");
    quoted_extension: b"5;n=\"a b\"\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    whitespace_before_extension: b"5 ;n=v\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    trailers_discarded: b"5\r\nhello\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n" => Ok(b"hello");
    binary_data: b"4\r\n\r\n\x00\xff\r\n0\r\n\r\n" => Ok(b"\r\n\x00\xff");
    empty_body: b"0\r\n\r\n" => Ok(b"");
    missing_size: b"\r\nhello\r\n0\r\n\r\n" => Err(400);
    non_hex_size: b"g\r\nhello\r\n0\r\n\r\n" => Err(400);
    negative_size: b"-5\r\nhello\r\n0\r\n\r\n" => Err(400);
    hex_prefix: b"0x5\r\nhello\r\n0\r\n\r\n" => Err(400);
    size_overflow: b"10000000000000000\r\nx\r\n0\r\n\r\n" => Err(400);
    whitespace_then_digit: b"5 5\r\nhello\r\n0\r\n\r\n" => Err(400);
    bare_lf_after_size: b"5\nhello\r\n0\r\n\r\n" => Err(400);
    bare_cr_in_extension: b"5;a\rb\r\nhello\r\n0\r\n\r\n" => Err(400);
    data_longer_than_size: b"3\r\nhello\r\n0\r\n\r\n" => Err(400);
    data_shorter_than_size: b"7\r\nhello\r\n0\r\n\r\n" => Err(400);
    missing_crlf_after_data: b"5\r\nhello0\r\n\r\n" => Err(400);
    bare_lf_after_data: b"5\r\nhello\n0\r\n\r\n" => Err(400);
    control_char_in_extension: b"5;a\x01\r\nhello\r\n0\r\n\r\n" => Err(400);
    trailer_starting_with_space: b"0\r\n X: 1\r\n\r\n" => Err(400);
    bare_lf_ending: b"0\r\n\n" => Err(400);
    incomplete: b"5\r\nhel" => Err(0);
}

#[test]
fn extensions_and_trailers_are_capped_together() {
    let mut input = b"1;".to_vec();
    input.extend(std::iter::repeat_n(b'e', 60));
    input.extend_from_slice(b"\r\nx\r\n0\r\nX-T: ");
    input.extend(std::iter::repeat_n(b't', 60));
    input.extend_from_slice(b"\r\n\r\n");
    assert_eq!(decode(&input, 5, 200), Ok(b"x".to_vec()));
    assert_eq!(decode(&input, 5, 100), Err(400));
}

proptest! {
    #[test]
    fn encode_then_decode_gives_the_same_bytes(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..8),
        piece in 1usize..64,
    ) {
        let mut wire = Vec::new();
        for chunk in &chunks {
            encode_chunk(&mut wire, chunk);
        }
        wire.extend_from_slice(LAST_CHUNK);
        let body: Vec<u8> = chunks.concat();
        prop_assert_eq!(decode(&wire, piece, 16 * 1024), Ok(body));
    }

    #[test]
    fn any_split_decodes_the_same(input in proptest::collection::vec(any::<u8>(), 0..200), piece in 1usize..16) {
        prop_assert_eq!(decode(&input, piece, 64), decode(&input, usize::MAX / 2, 64));
    }
}
