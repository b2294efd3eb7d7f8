//! TCP and Unix domain sockets: readiness from the runtime, reads and writes without a wrapper.

use super::Transport;
use std::io::{self, ErrorKind};
use std::mem::MaybeUninit;
use std::task::{ready, Context, Poll};
use tokio::net::{TcpStream, UnixStream};

macro_rules! socket_transport {
    ($socket:ty) => {
        impl Transport for $socket {
            fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                <$socket>::poll_read_ready(self, cx)
            }

            fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                loop {
                    ready!(<$socket>::poll_read_ready(self, cx))?;
                    match <$socket>::try_read(self, buf) {
                        Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
                        other => return Poll::Ready(other),
                    }
                }
            }

            fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                loop {
                    ready!(<$socket>::poll_write_ready(self, cx))?;
                    match <$socket>::try_write(self, buf) {
                        Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
                        other => return Poll::Ready(other),
                    }
                }
            }

            fn poll_shutdown(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(socket2::SockRef::from(self).shutdown(std::net::Shutdown::Write))
            }

            fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
                <$socket>::try_read(self, buf)
            }

            fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                <$socket>::try_write(self, buf)
            }

            // With edge-triggered readiness any later arrival raises a new event, so clearing
            // the readiness now saves the `try_read` that would only report `WouldBlock`.
            fn mark_drained(&self) {
                let _ = self.try_io(tokio::io::Interest::READABLE, || {
                    Err::<(), _>(io::Error::from(ErrorKind::WouldBlock))
                });
            }

            fn poll_peer_closed(&self, cx: &mut Context<'_>) -> Poll<()> {
                loop {
                    match <$socket>::poll_read_ready(self, cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(_)) => return Poll::Ready(()),
                        Poll::Ready(Ok(())) => {}
                    }
                    let mut byte = [MaybeUninit::<u8>::uninit()];
                    let peeked = self.try_io(tokio::io::Interest::READABLE, || {
                        socket2::SockRef::from(self).peek(&mut byte)
                    });
                    match peeked {
                        Ok(0) => return Poll::Ready(()),
                        // Bytes to read: the connection is alive. Readiness stays set for the
                        // next read, and no wake-up is asked for, so this is not polled in a loop.
                        Ok(_) => return Poll::Pending,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
                        Err(_) => return Poll::Ready(()),
                    }
                }
            }
        }
    };
}

socket_transport!(TcpStream);
socket_transport!(UnixStream);
