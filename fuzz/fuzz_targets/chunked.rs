//! The chunked decoder never panics, and decodes the same whatever the split points: the first
//! byte of the input chooses a piece size, the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vireo_http::proto::ChunkedDecoder;

fn decode(input: &[u8], piece: usize) -> Result<(Vec<u8>, bool, usize), ()> {
    let mut decoder = ChunkedDecoder::new(256);
    let mut body = Vec::new();
    let mut pending = Vec::new();
    let mut fed = 0;
    loop {
        if decoder.is_done() {
            return Ok((body, true, fed - pending.len()));
        }
        if pending.is_empty() {
            if fed == input.len() {
                return Ok((body, false, fed));
            }
            let end = (fed + piece).min(input.len());
            pending.extend_from_slice(&input[fed..end]);
            fed = end;
        }
        let step = decoder.decode(&pending).map_err(drop)?;
        if let Some(data) = step.data {
            assert!(!data.is_empty());
            body.extend_from_slice(&pending[data]);
        }
        assert!(step.consumed <= pending.len());
        pending.drain(..step.consumed);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, input)) = data.split_first() else { return };
    let piece = usize::from(first % 16) + 1;
    let whole = decode(input, input.len().max(1));
    let split = decode(input, piece);
    assert_eq!(whole.is_ok(), split.is_ok());
    if let (Ok(whole), Ok(split)) = (whole, split) {
        assert_eq!(whole.0, split.0, "same body");
        assert_eq!(whole.1, split.1, "same end");
        if whole.1 {
            assert_eq!(whole.2, split.2, "the end is found at the same byte");
        }
    }
});
