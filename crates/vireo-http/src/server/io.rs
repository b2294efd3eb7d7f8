//! The only code that waits on a socket: reads and writes with stall timeouts, and closing.

use std::io::{self, ErrorKind};
use std::time::Duration;
use tokio::net::TcpStream;

/// How long a closing connection keeps reading (and discarding) what the client still sends,
/// so that the client reads our last response instead of losing it to a reset.
const LINGER_TIMEOUT: Duration = Duration::from_secs(1);

/// The most bytes discarded while lingering before closing anyway.
const LINGER_MAX_BYTES: usize = 64 * 1024;

/// Read what is available into `buf`, waiting at most `timeout` for something to arrive.
/// `Ok(None)` means the wait timed out; `Ok(Some(0))` means the peer closed.
pub(crate) async fn read_with_timeout(
    stream: &TcpStream,
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

async fn read_waiting(
    stream: &TcpStream,
    buf: &mut [u8],
    timeout: Duration,
) -> io::Result<Option<usize>> {
    loop {
        match tokio::time::timeout(timeout, stream.readable()).await {
            Ok(ready) => ready?,
            Err(_) => return Ok(None),
        }
        match stream.try_read(buf) {
            Ok(n) => return Ok(Some(n)),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}

/// Write all of `data`, failing if the peer takes nothing for `stall_timeout`.
pub(crate) async fn write_all(
    stream: &TcpStream,
    data: &[u8],
    stall_timeout: Duration,
) -> io::Result<()> {
    let mut written = 0;
    while written < data.len() {
        match stream.try_write(&data[written..]) {
            Ok(n) => written += n,
            // As for reads, the waiting path is boxed to keep callers' futures small.
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                return Box::pin(write_waiting(stream, &data[written..], stall_timeout)).await;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn write_waiting(
    stream: &TcpStream,
    mut data: &[u8],
    stall_timeout: Duration,
) -> io::Result<()> {
    while !data.is_empty() {
        match tokio::time::timeout(stall_timeout, stream.writable()).await {
            Ok(ready) => ready?,
            Err(_) => return Err(ErrorKind::TimedOut.into()),
        }
        match stream.try_write(data) {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Write as much of `buf` as the socket takes now, removing what was written. `Ok(true)` when
/// all of it was written.
pub(crate) fn write_now(stream: &TcpStream, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut written = 0;
    let result = loop {
        if written == buf.len() {
            break Ok(true);
        }
        match stream.try_write(&buf[written..]) {
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

/// Write and empty `buf`.
pub(crate) async fn flush(
    stream: &TcpStream,
    buf: &mut Vec<u8>,
    stall_timeout: Duration,
) -> io::Result<()> {
    let result = write_all(stream, buf, stall_timeout).await;
    buf.clear();
    result
}

/// Mark the socket as drained without a syscall. Called after a read returned less than the
/// room it had: the kernel's receive queue was empty at that moment, and with edge-triggered
/// readiness any later arrival raises a new event, so the `try_read` that would only return
/// `WouldBlock` can be skipped.
pub(crate) fn clear_read_readiness(stream: &TcpStream) {
    let _ = stream.try_io(tokio::io::Interest::READABLE, || {
        Err::<(), _>(io::Error::from(ErrorKind::WouldBlock))
    });
}

/// Close after a final response: send FIN, then read and discard what the client still sends
/// for a moment, so the response is not destroyed by a reset (RFC 9112 §9.6).
pub(crate) async fn linger_close(stream: TcpStream) {
    if socket2::SockRef::from(&stream)
        .shutdown(std::net::Shutdown::Write)
        .is_err()
    {
        return;
    }
    let mut scratch = [0u8; 4096];
    let mut discarded = 0;
    let deadline = tokio::time::Instant::now() + LINGER_TIMEOUT;
    while discarded < LINGER_MAX_BYTES {
        let read = tokio::time::timeout_at(deadline, async {
            loop {
                match stream.try_read(&mut scratch) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        stream.readable().await?;
                    }
                    other => return other,
                }
            }
        });
        match read.await {
            Ok(Ok(n)) if n > 0 => discarded += n,
            _ => return,
        }
    }
}
