//! Per-thread pools of read buffers and request heads.
//!
//! An idle keep-alive connection holds no buffer: it takes one from its worker's pool when bytes
//! arrive and gives it back when it goes idle again. A worker serving thousands of idle
//! connections therefore needs buffers only for the few that are active.

use crate::proto::{parse_head, ProtoError, RequestHead};
use crate::request::ReadState;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// Size of a fresh read buffer. Typical request heads are a few hundred bytes, and 16 pipelined
/// benchmark requests fit several times over; larger heads grow the buffer up to the head limit.
pub(crate) const READ_BUFFER_SIZE: usize = 8 * 1024;

/// Buffers kept per pool. Enough for every connection that is active at once in practice; more
/// would only hold memory after a burst.
const POOL_SIZE: usize = 1024;

// Heads are pooled boxed because a `Head` is a box: pooling the box is what saves the allocation.
#[allow(clippy::vec_box)]
mod pools {
    use super::*;
    thread_local! {
        pub(super) static READ_STATES: RefCell<Vec<Box<ReadState>>> = const { RefCell::new(Vec::new()) };
        pub(super) static WRITE_BUFFERS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
        pub(super) static HEADS: RefCell<Vec<Box<RequestHead>>> = const { RefCell::new(Vec::new()) };
    }
}
use pools::{HEADS, READ_STATES, WRITE_BUFFERS};

thread_local! {
    static ON_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Mark this thread as a worker: its pools keep what is given back.
pub(crate) fn mark_worker_thread() {
    ON_WORKER.with(|flag| flag.set(true));
}

/// Whether this thread is one of a server's workers. Per-thread pools keep objects only on
/// workers: a request or response dropped on a blocking-pool thread is freed instead, since
/// nothing on that thread would take it again.
pub fn on_worker_thread() -> bool {
    ON_WORKER.try_with(std::cell::Cell::get).unwrap_or(false)
}

fn take_from<T>(
    pool: &'static std::thread::LocalKey<RefCell<Vec<T>>>,
    make: impl FnOnce() -> T,
) -> T {
    pool.try_with(|p| p.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_else(make)
}

fn give_to<T>(pool: &'static std::thread::LocalKey<RefCell<Vec<T>>>, item: T) {
    if !on_worker_thread() {
        // Only workers take from the pools; anything kept elsewhere would never be reused.
        return;
    }
    // During thread teardown the pool may be gone; the item is then simply freed.
    let _ = pool.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < POOL_SIZE {
            p.push(item);
        }
    });
}

/// Free everything this thread's pools hold. A worker calls it when it goes quiet, so that
/// buffers made for its busiest moment do not stay allocated after the load is gone; the next
/// burst refills the pools.
pub(crate) fn release_pools() {
    let _ = READ_STATES.try_with(|p| std::mem::take(&mut *p.borrow_mut()));
    let _ = WRITE_BUFFERS.try_with(|p| std::mem::take(&mut *p.borrow_mut()));
    let _ = HEADS.try_with(|p| std::mem::take(&mut *p.borrow_mut()));
    crate::response::release_pooled_responses();
}

/// Bytes read from a socket and not yet consumed: `buf[start..end]`.
#[derive(Debug)]
pub(crate) struct ReadBuf {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// A connection's reading state with its buffer, from the worker's pool. Boxed, so that a
/// connection holds one pointer for it, and only while it has bytes to work on.
pub(crate) fn take_read_state() -> Box<ReadState> {
    take_from(&READ_STATES, || {
        Box::new(ReadState::new(ReadBuf {
            buf: vec![0; READ_BUFFER_SIZE],
            start: 0,
            end: 0,
        }))
    })
}

/// Return a reading state to the pool; one whose buffer grew for a large head is freed.
pub(crate) fn give_read_state(mut state: Box<ReadState>) {
    if state.buf.buf.len() == READ_BUFFER_SIZE {
        state.reset();
        give_to(&READ_STATES, state);
    }
}

impl ReadBuf {
    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub(crate) fn consume(&mut self, n: usize) {
        self.start += n;
        debug_assert!(self.start <= self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Room to read into, moving unconsumed bytes to the front, and growing the buffer (up to
    /// `max`) when it is full of a single unfinished head.
    pub(crate) fn spare(&mut self, max: usize) -> &mut [u8] {
        if self.end == self.buf.len() && self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() && self.buf.len() < max {
            let grown = (self.buf.len() * 2).min(max);
            self.buf.resize(grown, 0);
        }
        &mut self.buf[self.end..]
    }

    pub(crate) fn filled(&mut self, n: usize) {
        self.end += n;
    }
}

/// Encoded responses waiting to be written.
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

/// A parsed request head from the worker's pool; returned to the pool when dropped.
///
/// It owns its bytes and is `Send`, so a handler may keep it, or move it to a blocking thread.
#[derive(Debug)]
pub struct Head(Option<Box<RequestHead>>);

impl Head {
    pub(crate) fn take() -> Head {
        Head(Some(take_from(&HEADS, Box::default)))
    }

    /// Parse a complete request head from `bytes`, as the server would; for building requests
    /// outside a connection, such as in a test client. Returns the head and its length.
    pub fn parse(bytes: &[u8], limits: &crate::Limits) -> Result<(Head, usize), ProtoError> {
        let mut head = Head::take();
        match parse_head(bytes, limits, &mut head)? {
            Some(len) => Ok((head, len)),
            None => Err(ProtoError::BadRequest("incomplete request head")),
        }
    }
}

impl Deref for Head {
    type Target = RequestHead;
    fn deref(&self) -> &RequestHead {
        self.0
            .as_deref()
            .expect("a Head holds its box until dropped")
    }
}

impl DerefMut for Head {
    fn deref_mut(&mut self) -> &mut RequestHead {
        self.0
            .as_deref_mut()
            .expect("a Head holds its box until dropped")
    }
}

impl Drop for Head {
    fn drop(&mut self) {
        if let Some(head) = self.0.take() {
            give_to(&HEADS, head);
        }
    }
}
