//! The only code that waits on a transport: reads and writes with stall timeouts, and closing.

use crate::transport::Transport;
use std::future::poll_fn;
use std::io::{self, ErrorKind};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// How long a closing connection keeps reading (and discarding) what the client still sends,
/// so that the client reads our last response instead of losing it to a reset.
const LINGER_TIMEOUT: Duration = Duration::from_secs(1);

/// The most bytes discarded while lingering before closing anyway.
const LINGER_MAX_BYTES: usize = 64 * 1024;

/// Read what is available into `buf`, waiting at most `timeout` for something to arrive.
/// `Ok(None)` means the wait timed out; `Ok(Some(0))` means the peer closed.
pub(crate) async fn read_with_timeout<T: Transport + ?Sized>(
    stream: &T,
    buf: &mut [u8],
    timeout: Duration,
) -> io::Result<Option<usize>> {
    match stream.try_read(buf) {
        Ok(n) => Ok(Some(n)),
        // The waiting path, with its timer, is boxed: callers' futures stay small, which is
        // what an idle connection's memory is made of.
        Err(e) if e.kind() == ErrorKind::WouldBlock => {
            Box::pin(read_waiting(stream, buf, timeout)).await
        }
        Err(e) => Err(e),
    }
}

async fn read_waiting<T: Transport + ?Sized>(
    stream: &T,
    buf: &mut [u8],
    timeout: Duration,
) -> io::Result<Option<usize>> {
    match tokio::time::timeout(timeout, poll_fn(|cx| stream.poll_read(cx, buf))).await {
        Ok(read) => read.map(Some),
        Err(_) => Ok(None),
    }
}

/// Write all of `data` and flush it, failing if the peer takes nothing for `stall_timeout`.
pub(crate) async fn write_all<T: Transport + ?Sized>(
    stream: &T,
    data: &[u8],
    stall_timeout: Duration,
) -> io::Result<()> {
    let mut written = 0;
    while written < data.len() {
        match stream.try_write(&data[written..]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            // As for reads, the waiting path is boxed to keep callers' futures small.
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    if written == data.len() && flushed_now(stream)? {
        return Ok(());
    }
    Box::pin(write_waiting(stream, &data[written..], stall_timeout)).await
}

async fn write_waiting<T: Transport + ?Sized>(
    stream: &T,
    mut data: &[u8],
    stall_timeout: Duration,
) -> io::Result<()> {
    while !data.is_empty() {
        match tokio::time::timeout(stall_timeout, poll_fn(|cx| stream.poll_write(cx, data))).await {
            Ok(Ok(0)) => return Err(ErrorKind::WriteZero.into()),
            Ok(Ok(n)) => data = &data[n..],
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(ErrorKind::TimedOut.into()),
        }
    }
    match tokio::time::timeout(stall_timeout, poll_fn(|cx| stream.poll_flush(cx))).await {
        Ok(flushed) => flushed,
        Err(_) => Err(ErrorKind::TimedOut.into()),
    }
}

/// Whether the transport has nothing of its own left to send, without waiting.
fn flushed_now<T: Transport + ?Sized>(stream: &T) -> io::Result<bool> {
    match stream.poll_flush(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result.map(|()| true),
        Poll::Pending => Ok(false),
    }
}

/// Write as much of `buf` as the transport takes now, removing what was written. `Ok(true)`
/// when all of it was written and flushed.
pub(crate) fn write_now<T: Transport + ?Sized>(stream: &T, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut written = 0;
    let result = loop {
        if written == buf.len() {
            break flushed_now(stream);
        }
        match stream.try_write(&buf[written..]) {
            Ok(0) => break Err(ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break Ok(false),
            Err(e) => break Err(e),
        }
    };
    if written == buf.len() {
        buf.clear();
    } else {
        buf.drain(..written);
    }
    result
}

/// Write, flush and empty `buf`.
pub(crate) async fn flush<T: Transport + ?Sized>(
    stream: &T,
    buf: &mut Vec<u8>,
    stall_timeout: Duration,
) -> io::Result<()> {
    let result = write_all(stream, buf, stall_timeout).await;
    buf.clear();
    result
}

/// Close after a final response: end the sending half, then read and discard what the client
/// still sends for a moment, so the response is not destroyed by a reset (RFC 9112 §9.6).
pub(crate) async fn linger_close<T: Transport + ?Sized>(stream: &T) {
    let shutdown = poll_fn(|cx| stream.poll_shutdown(cx));
    if !matches!(
        tokio::time::timeout(LINGER_TIMEOUT, shutdown).await,
        Ok(Ok(()))
    ) {
        return;
    }
    let mut scratch = [0u8; 4096];
    let mut discarded = 0;
    let deadline = tokio::time::Instant::now() + LINGER_TIMEOUT;
    while discarded < LINGER_MAX_BYTES {
        let read = poll_fn(|cx| stream.poll_read(cx, &mut scratch));
        match tokio::time::timeout_at(deadline, read).await {
            Ok(Ok(n)) if n > 0 => discarded += n,
            _ => return,
        }
    }
}
