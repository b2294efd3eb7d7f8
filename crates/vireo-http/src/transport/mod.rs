//! The byte streams a connection is served over.
//!
//! The connection state machine and request bodies read and write through [`Transport`], so
//! TCP, Unix domain sockets and any `AsyncRead + AsyncWrite` stream (TLS, an in-memory pipe in
//! a test) share one code path. Sockets implement it with their own readiness, which lets an
//! idle connection wait for bytes without holding a buffer; any other stream goes through
//! [`IoTransport`].

mod io_stream;
mod socket;

pub use io_stream::IoTransport;

use std::io;
use std::task::{Context, Poll, Waker};

/// A bidirectional byte stream the engine can serve HTTP over.
///
/// Every method takes `&self`: a request's body reads from the stream while the connection
/// writes earlier responses to it, both from the worker's single thread. Implementations use
/// interior mutability where they need it.
pub trait Transport: 'static {
    /// Wait until a read may make progress (bytes, end of stream, or an error), without a
    /// buffer from the caller: an idle connection waits here.
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Read into `buf`, registering `cx` to be woken if nothing is there yet. `Ok(0)` is the
    /// end of the stream.
    fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;

    /// Write from `buf`, registering `cx` to be woken if the stream cannot take any now.
    fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;

    /// Push out anything the transport buffers itself (a TLS record); sockets have nothing.
    fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let _ = cx;
        Poll::Ready(Ok(()))
    }

    /// Close the sending half, so the peer reads the end of the stream.
    fn poll_shutdown(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Read what is there now, or fail with [`io::ErrorKind::WouldBlock`].
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        pending_as_would_block(self.poll_read(&mut Context::from_waker(Waker::noop()), buf))
    }

    /// Write what the stream takes now, or fail with [`io::ErrorKind::WouldBlock`].
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        pending_as_would_block(self.poll_write(&mut Context::from_waker(Waker::noop()), buf))
    }

    /// Told that the last read returned less than the room it had, so the stream is drained
    /// for now; a socket can skip the read that would only report `WouldBlock`.
    fn mark_drained(&self) {}

    /// Ready once the peer has closed its side (or the connection broke), looking without
    /// consuming: bytes waiting to be read (a pipelined request) are not a close. Used while a
    /// service works on a request with nothing left to read. By default never ready: a
    /// stream that cannot look ahead reports a close only when it is next read.
    fn poll_peer_closed(&self, cx: &mut Context<'_>) -> Poll<()> {
        let _ = cx;
        Poll::Pending
    }
}

fn pending_as_would_block(poll: Poll<io::Result<usize>>) -> io::Result<usize> {
    match poll {
        Poll::Ready(result) => result,
        Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
    }
}
