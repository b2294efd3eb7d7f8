//! Any `AsyncRead + AsyncWrite` stream as a [`Transport`].

use super::Transport;
use std::cell::RefCell;
use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes read while waiting for readiness, handed out by the next reads.
const PEEK_BUFFER_SIZE: usize = 2 * 1024;

/// Serves HTTP over any `AsyncRead + AsyncWrite` stream: a TLS stream, an in-memory pipe
/// (`tokio::io::duplex`) in a test, a stream from another library.
///
/// A stream like this has no readiness of its own, so waiting for an idle connection's next
/// request, or watching for the peer's close, reads into a small buffer the transport keeps;
/// sockets avoid that cost by implementing [`Transport`] directly.
pub struct IoTransport<T> {
    io: RefCell<T>,
    peeked: RefCell<Peeked>,
}

#[derive(Default)]
struct Peeked {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// An error met while watching for the peer's close, for the next read to report.
    error: Option<io::Error>,
}

impl<T> IoTransport<T> {
    /// Wrap `io`.
    pub fn new(io: T) -> Self {
        IoTransport {
            io: RefCell::new(io),
            peeked: RefCell::new(Peeked::default()),
        }
    }

    /// The stream back, and any bytes already read from it but not yet consumed.
    pub fn into_inner(self) -> (T, Vec<u8>) {
        let peeked = self.peeked.into_inner();
        let unread = peeked.buf[peeked.start..peeked.end].to_vec();
        (self.io.into_inner(), unread)
    }
}

impl<T> fmt::Debug for IoTransport<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IoTransport").finish_non_exhaustive()
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin + 'static> Transport for IoTransport<T> {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut peeked = self.peeked.borrow_mut();
        if peeked.start < peeked.end || peeked.eof || peeked.error.is_some() {
            return Poll::Ready(Ok(()));
        }
        if peeked.buf.is_empty() {
            peeked.buf = vec![0; PEEK_BUFFER_SIZE];
        }
        let mut buf = ReadBuf::new(&mut peeked.buf);
        match Pin::new(&mut *self.io.borrow_mut()).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => {
                let n = buf.filled().len();
                peeked.start = 0;
                peeked.end = n;
                peeked.eof = n == 0;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        {
            let mut peeked = self.peeked.borrow_mut();
            if peeked.start < peeked.end {
                let n = buf.len().min(peeked.end - peeked.start);
                buf[..n].copy_from_slice(&peeked.buf[peeked.start..peeked.start + n]);
                peeked.start += n;
                return Poll::Ready(Ok(n));
            }
            if let Some(error) = peeked.error.take() {
                return Poll::Ready(Err(error));
            }
            if peeked.eof {
                return Poll::Ready(Ok(0));
            }
        }
        let mut buf = ReadBuf::new(buf);
        match Pin::new(&mut *self.io.borrow_mut()).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(buf.filled().len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Reads ahead into the peek buffer (for TLS, this is where a `close_notify` is seen):
    /// bytes read are kept for the next read and mean the peer is still there. An end of
    /// stream or a broken connection is the close; any other error is kept for the next read.
    fn poll_peer_closed(&self, cx: &mut Context<'_>) -> Poll<()> {
        match self.poll_read_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) if peer_gone(&e) => Poll::Ready(()),
            Poll::Ready(Err(e)) => {
                self.peeked.borrow_mut().error = Some(e);
                Poll::Pending
            }
            Poll::Ready(Ok(())) if self.peeked.borrow().eof => Poll::Ready(()),
            // Bytes (or an error) to read: no wake-up is asked for, as for a socket's peek.
            Poll::Ready(Ok(())) => Poll::Pending,
        }
    }

    fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.io.borrow_mut()).poll_write(cx, buf)
    }

    fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io.borrow_mut()).poll_flush(cx)
    }

    fn poll_shutdown(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io.borrow_mut()).poll_shutdown(cx)
    }
}

/// Whether a read error means the peer has gone (TLS reports a close without `close_notify`
/// as an unexpected end), rather than a failure the next read should report.
fn peer_gone(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::NotConnected
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn bytes_read_while_waiting_come_first_then_the_stream() {
        let (client, server) = tokio::io::duplex(64);
        let transport = IoTransport::new(server);
        let mut client = client;
        let mut cx = Context::from_waker(Waker::noop());
        assert!(transport.poll_read_ready(&mut cx).is_pending());
        client.write_all(b"hello").await.unwrap();
        assert!(matches!(
            transport.poll_read_ready(&mut cx),
            Poll::Ready(Ok(()))
        ));
        let mut buf = [0u8; 3];
        assert_eq!(transport.try_read(&mut buf).unwrap(), 3);
        assert_eq!(&buf, b"hel");
        client.write_all(b" world").await.unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(
            transport.try_read(&mut buf).unwrap(),
            2,
            "the peeked rest first"
        );
        assert_eq!(&buf[..2], b"lo");
        assert_eq!(transport.try_read(&mut buf).unwrap(), 6);
        assert_eq!(&buf[..6], b" world");
        let error = transport.try_read(&mut buf).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
        drop(client);
        assert!(matches!(
            transport.poll_read_ready(&mut cx),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(transport.try_read(&mut buf).unwrap(), 0, "end of stream");
    }

    #[tokio::test]
    async fn a_peer_close_is_seen_without_losing_the_bytes_before_it() {
        let (mut client, server) = tokio::io::duplex(64);
        let transport = IoTransport::new(server);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(
            transport.poll_peer_closed(&mut cx).is_pending(),
            "nothing yet"
        );
        client.write_all(b"next").await.unwrap();
        drop(client);
        assert!(
            transport.poll_peer_closed(&mut cx).is_pending(),
            "bytes to read come before the close"
        );
        let mut buf = [0u8; 16];
        assert_eq!(transport.try_read(&mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"next");
        assert!(
            transport.poll_peer_closed(&mut cx).is_ready(),
            "then the close"
        );
        assert_eq!(
            transport.try_read(&mut buf).unwrap(),
            0,
            "still there to read"
        );
    }

    /// Reads fail with `kind`; writes are taken.
    struct Failing(io::ErrorKind);

    impl AsyncRead for Failing {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Poll::Ready(Err(self.0.into()))
        }
    }

    impl AsyncWrite for Failing {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[test]
    fn a_broken_connection_is_a_close_and_another_error_is_left_for_the_next_read() {
        let mut cx = Context::from_waker(Waker::noop());
        for kind in [io::ErrorKind::UnexpectedEof, io::ErrorKind::ConnectionReset] {
            let transport = IoTransport::new(Failing(kind));
            assert!(transport.poll_peer_closed(&mut cx).is_ready(), "{kind:?}");
        }
        let transport = IoTransport::new(Failing(io::ErrorKind::TimedOut));
        assert!(transport.poll_peer_closed(&mut cx).is_pending());
        assert!(
            transport.poll_peer_closed(&mut cx).is_pending(),
            "still kept"
        );
        let mut buf = [0u8; 4];
        let error = transport.try_read(&mut buf).unwrap_err();
        assert_eq!(
            error.kind(),
            io::ErrorKind::TimedOut,
            "reported by the next read"
        );
    }

    #[test]
    fn unread_peeked_bytes_are_returned_with_the_stream() {
        let (client, server) = tokio::io::duplex(64);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut client = client;
            client.write_all(b"abc").await.unwrap();
            let transport = IoTransport::new(server);
            let mut cx = Context::from_waker(Waker::noop());
            assert!(transport.poll_read_ready(&mut cx).is_ready());
            let (_, unread) = transport.into_inner();
            assert_eq!(unread, b"abc");
        });
    }
}
