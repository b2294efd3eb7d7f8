//! The buffer a whole request body is collected into.
//!
//! A body buffer is never smaller than [`MIN_CAPACITY`], above every size glibc's malloc caches
//! per thread, and grows by moving to a new allocation of twice the size rather than by
//! `realloc`: bodies of every size would otherwise fill the workers' caches with blocks spread
//! across the heap, each keeping its page resident over a long mixed load. An announced
//! `Content-Length` sizes the first allocation, but only up to [`MAX_UPFRONT`]: past that,
//! memory follows the bytes that actually arrive.

use bytes::Bytes;

/// The smallest allocation a body with any bytes gets: above the largest size glibc caches
/// per thread (1,032 bytes), so body buffers never enter those caches.
pub(crate) const MIN_CAPACITY: usize = 2048;

/// The most allocated on the strength of an announced length: a client that announces a large
/// body and sends little of it gets no more than this until its bytes arrive.
pub(crate) const MAX_UPFRONT: usize = 1024 * 1024;

/// Bytes of one body, collected in order.
#[derive(Debug)]
pub(crate) struct BodyBuffer {
    bytes: Vec<u8>,
    /// How much to allocate at the first bytes: the announced length, if any, up to
    /// [`MAX_UPFRONT`].
    expected: usize,
}

impl BodyBuffer {
    /// A buffer for a body of about `expected` bytes (0 when not known). Allocates nothing until
    /// the first bytes arrive, so an empty body costs nothing.
    pub(crate) fn new(expected: usize) -> Self {
        BodyBuffer {
            bytes: Vec::new(),
            expected: expected.min(MAX_UPFRONT),
        }
    }

    /// Append `data`.
    pub(crate) fn extend(&mut self, data: &[u8]) {
        let needed = self.bytes.len() + data.len();
        if needed > self.bytes.capacity() {
            let capacity = needed
                .max(self.bytes.capacity() * 2)
                .max(self.expected)
                .max(MIN_CAPACITY);
            let mut grown = Vec::with_capacity(capacity);
            grown.extend_from_slice(&self.bytes);
            self.bytes = grown;
        }
        self.bytes.extend_from_slice(data);
    }

    /// The body collected.
    pub(crate) fn into_bytes(self) -> Bytes {
        Bytes::from(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::{BodyBuffer, MAX_UPFRONT, MIN_CAPACITY};

    #[test]
    fn an_empty_body_allocates_nothing() {
        let buffer = BodyBuffer::new(0);
        assert_eq!(buffer.bytes.capacity(), 0);
        assert!(buffer.into_bytes().is_empty());
    }

    #[test]
    fn a_small_body_gets_the_smallest_capacity() {
        let mut buffer = BodyBuffer::new(5);
        buffer.extend(b"hello");
        assert_eq!(buffer.bytes.capacity(), MIN_CAPACITY);
        assert_eq!(buffer.into_bytes(), &b"hello"[..]);
    }

    #[test]
    fn an_announced_length_is_allocated_at_once() {
        let mut buffer = BodyBuffer::new(10_000);
        buffer.extend(&[7; 100]);
        assert_eq!(buffer.bytes.capacity(), 10_000);
        buffer.extend(&[8; 9_900]);
        assert_eq!(
            buffer.bytes.capacity(),
            10_000,
            "no growth within the announced length"
        );
    }

    #[test]
    fn a_large_announced_length_buys_only_the_upfront_bound() {
        let mut buffer = BodyBuffer::new(16 * 1024 * 1024);
        buffer.extend(b"x");
        assert_eq!(buffer.bytes.capacity(), MAX_UPFRONT);
        buffer.extend(&vec![b'y'; MAX_UPFRONT]);
        assert_eq!(buffer.bytes.capacity(), 2 * MAX_UPFRONT);
        assert_eq!(buffer.into_bytes().len(), MAX_UPFRONT + 1);
    }

    #[test]
    fn growing_keeps_every_byte_in_order_and_at_least_doubles() {
        let mut buffer = BodyBuffer::new(0);
        let mut expected = Vec::new();
        let mut last_capacity = 0;
        for round in 0..200u32 {
            let piece: Vec<u8> = (0..(round * 37 % 1500))
                .map(|i| (i ^ round) as u8)
                .collect();
            buffer.extend(&piece);
            expected.extend_from_slice(&piece);
            let capacity = buffer.bytes.capacity();
            if capacity != last_capacity {
                assert!(
                    capacity >= 2 * last_capacity,
                    "{last_capacity} grew to {capacity}"
                );
                last_capacity = capacity;
            }
        }
        assert_eq!(buffer.into_bytes(), expected);
    }
}
