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

// RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ),
// chunk-ext-name = token, chunk-ext-val = token / quoted-string.
table! {
    ext_bws_everywhere_the_grammar_has_it: b"5 \t; a \t= b ;c\t;d=\"q\"\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    ext_several_flags: b"5;a;b;c\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    ext_token_value_of_tchars: b"5;n=!#$%&'*+-.^_`|~09az\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    ext_quoted_with_escapes: b"5;n=\"a\\\"b\\\\c\\\td;=x\"\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    ext_quoted_empty: b"5;n=\"\"\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    ext_quoted_obs_text: b"5;n=\"caf\xc3\xa9\"\r\nhello\r\n0\r\n\r\n" => Ok(b"hello");
    ext_on_last_chunk: b"5\r\nhello\r\n000;end=\"yes\"\r\n\r\n" => Ok(b"hello");
    ext_empty_name: b"5;\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_empty_name_after_whitespace: b"5; \r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_empty_name_between_two: b"5;a;;b\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_name_not_a_token: b"5;bad[=x\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_name_with_slash: b"5;a/b\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_name_quoted: b"5;\"a\"=b\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_empty_name_with_value: b"5;=x\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_empty_value: b"5;a=\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_empty_value_then_next: b"5;a=;b\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_value_not_a_token: b"5;a=b[c\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_value_two_equals: b"5;a==b\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_value_with_space_inside: b"5;a=b c\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_name_with_space_inside: b"5;a b\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_quoted_unterminated: b"5;a=\"x\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_quoted_then_more_text: b"5;a=\"x\"y\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_quoted_control_char: b"5;a=\"x\x01\"\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_quoted_del: b"5;a=\"x\x7f\"\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_quoted_pair_of_control_char: b"5;a=\"\\\x00\"\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_quoted_pair_of_cr: b"5;a=\"\\\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_obs_text_outside_quotes: b"5;a=caf\xc3\xa9\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_whitespace_before_line_end: b"5;a \r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_whitespace_after_value_before_line_end: b"5;a=b\t\r\nhello\r\n0\r\n\r\n" => Err(400);
    ext_bare_lf: b"5;a\nhello\r\n0\r\n\r\n" => Err(400);
    ext_empty_on_last_chunk: b"5\r\nhello\r\n0;\r\n\r\n" => Err(400);
    ext_bad_name_on_last_chunk: b"5\r\nhello\r\n0;a@b\r\n\r\n" => Err(400);
}

// RFC 9112 §7.1: chunk-size = 1*HEXDIG; last-chunk = 1*("0") [ chunk-ext ] CRLF; every line
// ends in CRLF; trailer-section = *( field-line CRLF ).
table! {
    size_with_plus_sign: b"+5\r\nhello\r\n0\r\n\r\n" => Err(400);
    size_with_leading_space: b" 5\r\nhello\r\n0\r\n\r\n" => Err(400);
    size_with_leading_tab: b"\t5\r\nhello\r\n0\r\n\r\n" => Err(400);
    size_with_trailing_space: b"5 \r\nhello\r\n0\r\n\r\n" => Err(400);
    size_upper_hex_prefix: b"0X5\r\nhello\r\n0\r\n\r\n" => Err(400);
    size_with_underscore: b"1_0\r\nhello\r\n0\r\n\r\n" => Err(400);
    size_largest_u64_waits_for_data: b"ffffffffffffffff\r\nabc" => Err(0);
    size_overflow_after_leading_zeros: b"0010000000000000000\r\nx\r\n0\r\n\r\n" => Err(400);
    size_line_bare_cr: b"5\rhello\r\n0\r\n\r\n" => Err(400);
    last_chunk_of_zeros: b"5\r\nhello\r\n00000\r\n\r\n" => Ok(b"hello");
    last_chunk_bare_lf: b"5\r\nhello\r\n0\n\r\n" => Err(400);
    last_chunk_without_trailer_end: b"5\r\nhello\r\n0\r\n" => Err(0);
    data_followed_by_bare_cr: b"5\r\nhello\rX0\r\n\r\n" => Err(400);
    trailer_empty_value: b"0\r\nX-T:\r\n\r\n" => Ok(b"");
    trailer_whitespace_around_value: b"0\r\nX-T: \t a b \t\r\n\r\n" => Ok(b"");
    trailer_obs_text_value: b"0\r\nX-T: caf\xc3\xa9\r\n\r\n" => Ok(b"");
    trailer_empty_name: b"0\r\n: v\r\n\r\n" => Err(400);
    trailer_name_not_a_token: b"0\r\nX[T]: v\r\n\r\n" => Err(400);
    trailer_control_char_in_value: b"0\r\nX-T: a\x01b\r\n\r\n" => Err(400);
    trailer_del_in_value: b"0\r\nX-T: a\x7fb\r\n\r\n" => Err(400);
    trailer_bare_cr_in_value: b"0\r\nX-T: a\rb\r\n\r\n" => Err(400);
    trailer_bare_lf_line_end: b"0\r\nX-T: 1\n\r\n" => Err(400);
    trailer_obs_fold: b"0\r\nX-T: 1\r\n\t2\r\n\r\n" => Err(400);
    trailer_end_bare_cr: b"0\r\nX-T: 1\r\n\rx" => Err(400);
}

/// Whitespace after a chunk size counts against the metadata cap, as extensions do, so a size
/// line cannot go on without end.
#[test]
fn whitespace_after_the_size_is_capped() {
    let mut input = b"1".to_vec();
    input.extend(std::iter::repeat_n(b' ', 100));
    input.extend_from_slice(b";a\r\nx\r\n0\r\n\r\n");
    assert_eq!(decode(&input, 7, 200), Ok(b"x".to_vec()));
    assert_eq!(decode(&input, 7, 50), Err(400));
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
