//! What a server listens on: a TCP port or a Unix domain socket.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The address a server listens on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// A TCP address.
    Tcp(SocketAddr),
    /// The path of a Unix domain socket.
    Unix(PathBuf),
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Tcp(addr) => addr.fmt(f),
            ListenAddr::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// A bound listening socket, before a worker's runtime takes it.
#[derive(Debug)]
pub(crate) enum StdListener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

impl StdListener {
    pub(crate) fn local_addr(&self) -> io::Result<ListenAddr> {
        match self {
            StdListener::Tcp(listener) => listener.local_addr().map(ListenAddr::Tcp),
            StdListener::Unix(listener) => {
                let addr = listener.local_addr()?;
                let path = addr.as_pathname().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "an unnamed Unix socket")
                })?;
                Ok(ListenAddr::Unix(path.to_path_buf()))
            }
        }
    }

    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            StdListener::Tcp(listener) => listener.set_nonblocking(true),
            StdListener::Unix(listener) => listener.set_nonblocking(true),
        }
    }

    pub(crate) fn try_clone(&self) -> io::Result<StdListener> {
        Ok(match self {
            StdListener::Tcp(listener) => StdListener::Tcp(listener.try_clone()?),
            StdListener::Unix(listener) => StdListener::Unix(listener.try_clone()?),
        })
    }

    /// Register with the current runtime.
    pub(crate) fn into_tokio(self) -> io::Result<Listener> {
        Ok(match self {
            StdListener::Tcp(listener) => {
                Listener::Tcp(tokio::net::TcpListener::from_std(listener)?)
            }
            StdListener::Unix(listener) => {
                Listener::Unix(tokio::net::UnixListener::from_std(listener)?)
            }
        })
    }
}

/// A listening socket registered with a worker's runtime.
#[derive(Debug)]
pub(crate) enum Listener {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

/// A connection just accepted.
#[derive(Debug)]
pub(crate) enum Accepted {
    Tcp(tokio::net::TcpStream, SocketAddr),
    Unix(tokio::net::UnixStream),
}

/// A connection handed from the worker that accepted it to the one that will serve it.
#[derive(Debug)]
pub(crate) enum Handoff {
    Tcp(std::net::TcpStream, SocketAddr),
    Unix(std::os::unix::net::UnixStream),
}

impl Listener {
    pub(crate) async fn accept(&self) -> io::Result<Accepted> {
        match self {
            Listener::Tcp(listener) => {
                let (stream, remote) = listener.accept().await?;
                // Responses are written whole, once per batch: Nagle's delay would only hold
                // back the last segment of each.
                let _ = stream.set_nodelay(true);
                Ok(Accepted::Tcp(stream, remote))
            }
            Listener::Unix(listener) => Ok(Accepted::Unix(listener.accept().await?.0)),
        }
    }
}

impl Accepted {
    /// Detach from this worker's runtime, to hand over to another.
    pub(crate) fn into_handoff(self) -> io::Result<Handoff> {
        Ok(match self {
            Accepted::Tcp(stream, remote) => Handoff::Tcp(stream.into_std()?, remote),
            Accepted::Unix(stream) => Handoff::Unix(stream.into_std()?),
        })
    }
}

impl Handoff {
    /// Register with the current worker's runtime.
    pub(crate) fn into_accepted(self) -> io::Result<Accepted> {
        Ok(match self {
            Handoff::Tcp(stream, remote) => {
                Accepted::Tcp(tokio::net::TcpStream::from_std(stream)?, remote)
            }
            Handoff::Unix(stream) => Accepted::Unix(tokio::net::UnixStream::from_std(stream)?),
        })
    }
}

/// A Unix domain socket file this server created, removed when the server ends unless
/// something else has replaced it by then.
#[derive(Debug)]
pub(crate) struct SocketFile {
    path: PathBuf,
    identity: (u64, u64),
}

impl SocketFile {
    /// Bind a listener at `path`. A socket file left behind by a server that is no longer
    /// running is replaced; one that still accepts connections is an error.
    pub(crate) fn bind(path: &Path) -> io::Result<(std::os::unix::net::UnixListener, SocketFile)> {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            let stale = meta.file_type().is_socket()
                && matches!(
                    std::os::unix::net::UnixStream::connect(path),
                    Err(e) if e.kind() == io::ErrorKind::ConnectionRefused
                );
            if stale {
                std::fs::remove_file(path)?;
            }
        }
        let listener = std::os::unix::net::UnixListener::bind(path)?;
        let meta = std::fs::metadata(path)?;
        let file = SocketFile {
            path: path.to_path_buf(),
            identity: (meta.dev(), meta.ino()),
        };
        Ok((listener, file))
    }

    /// Set the socket file's permission bits (who may connect).
    pub(crate) fn set_mode(&self, mode: u32) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(mode))
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == self.identity);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
