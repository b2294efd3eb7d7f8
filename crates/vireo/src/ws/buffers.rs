//! Buffers lent to a WebSocket only while it reads or writes, so an idle connection holds
//! none; each worker thread keeps a few spare ones to lend again.

use std::cell::RefCell;

/// Spares kept per thread, of each kind.
const SPARES: usize = 8;
/// A buffer larger than this is freed rather than kept.
const MAX_SPARE: usize = 64 << 10;

thread_local! {
    static READ: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    static WRITE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A buffer of at least `len` bytes to read into, all of it initialised (a spare one, perhaps
/// larger, if there is).
pub(super) fn take_read(len: usize) -> Vec<u8> {
    let mut buf = READ.with_borrow_mut(Vec::pop).unwrap_or_default();
    if buf.len() < len {
        buf.resize(len, 0);
    }
    buf
}

/// Give back a read buffer.
pub(super) fn give_read(buf: Vec<u8>) {
    if buf.len() <= MAX_SPARE {
        READ.with_borrow_mut(|spares| {
            if spares.len() < SPARES {
                spares.push(buf);
            }
        });
    }
}

/// An empty buffer to write a frame into.
pub(super) fn take_write() -> Vec<u8> {
    WRITE.with_borrow_mut(Vec::pop).unwrap_or_default()
}

/// Give back a write buffer.
pub(super) fn give_write(mut buf: Vec<u8>) {
    if buf.capacity() <= MAX_SPARE {
        buf.clear();
        WRITE.with_borrow_mut(|spares| {
            if spares.len() < SPARES {
                spares.push(buf);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_buffers_are_reused_and_only_small_ones_kept() {
        let buf = take_read(16);
        assert_eq!(buf, vec![0; 16]);
        let at = buf.as_ptr();
        give_read(buf);
        let again = take_read(8);
        assert_eq!(
            (again.as_ptr(), again.len()),
            (at, 16),
            "a spare may be larger"
        );
        let grown = take_read(32);
        assert_eq!(grown.len(), 32);
        give_read(vec![0; MAX_SPARE + 1]);
        assert_eq!(READ.with_borrow(Vec::len), 0, "a large buffer is not kept");
    }

    #[test]
    fn write_buffers_come_back_empty_and_large_ones_are_freed() {
        let mut buf = take_write();
        buf.extend_from_slice(b"frame");
        give_write(buf);
        assert!(take_write().is_empty());
        give_write(Vec::with_capacity(MAX_SPARE + 1));
        assert_eq!(WRITE.with_borrow(Vec::len), 0);
    }
}
