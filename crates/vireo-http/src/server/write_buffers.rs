//! Per-thread pool of write buffers: encoded responses waiting to be written.

use crate::body::READ_BUFFER_SIZE;
use crate::pool::{give_to, take_from};
use std::cell::RefCell;

thread_local! {
    static WRITE_BUFFERS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// An empty buffer to encode responses into.
pub(crate) fn take_write_buffer() -> Vec<u8> {
    take_from(&WRITE_BUFFERS, || Vec::with_capacity(READ_BUFFER_SIZE))
}

/// Return a write buffer, emptied, to the pool; an oversized one is freed instead.
pub(crate) fn give_write_buffer(mut buf: Vec<u8>) {
    if buf.capacity() > 0 && buf.capacity() <= 4 * READ_BUFFER_SIZE {
        buf.clear();
        give_to(&WRITE_BUFFERS, buf);
    }
}

/// Free every buffer this thread's pool holds.
pub(crate) fn release_pooled_write_buffers() {
    crate::pool::empty(&WRITE_BUFFERS);
}
