//! The sans-I/O protocol core: pure functions over bytes.
//!
//! Nothing here touches a socket, a clock or a runtime, which is what
//! makes it table-testable and fuzzable: [`parse_head`] reads a request head,
//! [`ChunkedDecoder`] frames a chunked body, [`encode_head`] and [`encode_chunk`]
//! write responses.

/// A table of the bytes for which `test` holds, built at compile time: the byte classes the
/// parsers look up on every request.
macro_rules! byte_table {
    (|$b:ident| $test:expr) => {{
        let mut table = [false; 256];
        let mut i = 0;
        while i < 256 {
            let $b = i as u8;
            table[i] = $test;
            i += 1;
        }
        table
    }};
}

mod chunked;
mod content_type;
mod encode;
mod error;
mod head;
mod head_scan;

pub use chunked::{
    encode_chunk, encode_last_chunk_with_trailers, may_trail, ChunkedDecoder, Decoded, LAST_CHUNK,
};
pub use content_type::ContentType;
pub use encode::{
    encode_head, status_allows_body, Connection, Framing, HeadFields, CONTINUE, DATE_LEN,
};
pub use error::ProtoError;
/// httparse's path alone, for the fuzz target that checks [`parse_head`] answers as it does.
#[cfg(fuzzing)]
pub use head::parse_general;
pub use head::{parse_head, BodyKind, RequestHead};
