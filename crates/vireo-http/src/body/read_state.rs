//! The connection's reading state: bytes read and not yet consumed, and where the body of the
//! current request stands. A request's body borrows it while the service runs.

use crate::pool::{give_to, take_from};
use crate::proto::{BodyKind, ChunkedDecoder};
use std::cell::RefCell;
use std::time::Duration;

use super::BodyError;

/// Size of a fresh read buffer. Typical request heads are a few hundred bytes, and 16 pipelined
/// benchmark requests fit several times over; larger heads grow the buffer up to the head limit.
pub(crate) const READ_BUFFER_SIZE: usize = 8 * 1024;

// Read states are pooled boxed: a connection holds one pointer for its state, and only while
// it has bytes to work on.
#[allow(clippy::vec_box)]
mod pool {
    use super::*;
    thread_local! {
        pub(super) static READ_STATES: RefCell<Vec<Box<ReadState>>> = const { RefCell::new(Vec::new()) };
    }
}

/// Free every read state this thread's pool holds.
pub(crate) fn release_pooled_read_states() {
    crate::pool::empty(&pool::READ_STATES);
}

/// Bytes read from a transport and not yet consumed: `buf[start..end]`.
#[derive(Debug)]
pub(crate) struct ReadBuf {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// A connection's reading state with its buffer, from the worker's pool. Boxed, so that a
/// connection holds one pointer for it, and only while it has bytes to work on.
pub(crate) fn take_read_state() -> Box<ReadState> {
    take_from(&pool::READ_STATES, || {
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
        give_to(&pool::READ_STATES, state);
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

/// Where the body of the current request stands.
#[derive(Debug)]
pub(crate) enum BodyProgress {
    /// All of it has been read (or there was none).
    Done,
    /// This many `Content-Length` bytes are still to come.
    Length(u64),
    /// A chunked body is being decoded.
    Chunked(ChunkedDecoder),
    /// Reading failed; the connection must close.
    Failed,
    /// The body runs to the end of its transport: an HTTP/2 stream without `Content-Length`.
    #[cfg(feature = "http2")]
    UntilEnd,
}

/// Whether a `100 Continue` is owed to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Continue {
    NotExpected,
    Expected,
    Sent,
}

/// The connection's reading state, which the body of the current request borrows.
#[derive(Debug)]
pub(crate) struct ReadState {
    pub(crate) buf: ReadBuf,
    pub(crate) body: BodyProgress,
    pub(crate) expect: Continue,
    pub(crate) limit: u64,
    pub(crate) received: u64,
    pub(crate) stall_timeout: Duration,
}

impl ReadState {
    pub(crate) fn new(buf: ReadBuf) -> Self {
        ReadState {
            buf,
            body: BodyProgress::Done,
            expect: Continue::NotExpected,
            limit: 0,
            received: 0,
            stall_timeout: Duration::ZERO,
        }
    }

    /// Forget the last request, keeping the buffer (emptied).
    pub(crate) fn reset(&mut self) {
        let len = self.buf.data().len();
        self.buf.consume(len);
        self.body = BodyProgress::Done;
        self.expect = Continue::NotExpected;
    }

    pub(crate) fn start_body(
        &mut self,
        kind: BodyKind,
        expect_continue: bool,
        limits: &crate::Limits,
    ) {
        self.body = match kind {
            BodyKind::Empty => BodyProgress::Done,
            BodyKind::Length(n) => BodyProgress::Length(n),
            BodyKind::Chunked => {
                BodyProgress::Chunked(ChunkedDecoder::new(limits.max_chunk_metadata))
            }
        };
        self.expect = if expect_continue {
            Continue::Expected
        } else {
            Continue::NotExpected
        };
        self.limit = limits.max_body_size;
        self.received = 0;
        self.stall_timeout = limits.keep_alive_timeout;
    }

    /// Whether the body has been read to its end.
    pub(crate) fn body_done(&self) -> bool {
        matches!(self.body, BodyProgress::Done)
    }

    /// The next run of body data in the buffer, as (framing bytes before it, data length),
    /// or `None` when the buffer holds no data yet.
    pub(super) fn next_data(&mut self) -> Result<Option<(usize, usize)>, BodyError> {
        let available = self.buf.data();
        match &mut self.body {
            BodyProgress::Done | BodyProgress::Failed => Ok(Some((0, 0))),
            BodyProgress::Length(left) => {
                if available.is_empty() {
                    return Ok(None);
                }
                let take = (*left).min(available.len() as u64);
                *left -= take;
                if *left == 0 {
                    self.body = BodyProgress::Done;
                }
                Ok(Some((0, take as usize)))
            }
            #[cfg(feature = "http2")]
            BodyProgress::UntilEnd => match available.len() {
                0 => Ok(None),
                len => Ok(Some((0, len))),
            },
            BodyProgress::Chunked(decoder) => {
                let mut skipped = 0;
                loop {
                    let step = decoder
                        .decode(&available[skipped..])
                        .map_err(BodyError::Malformed)?;
                    if let Some(data) = step.data {
                        return Ok(Some((skipped + data.start, data.len())));
                    }
                    skipped += step.consumed;
                    if decoder.is_done() {
                        self.body = BodyProgress::Done;
                        return Ok(Some((skipped, 0)));
                    }
                    if skipped == available.len() {
                        self.buf.consume(skipped);
                        return Ok(None);
                    }
                }
            }
        }
    }
}
