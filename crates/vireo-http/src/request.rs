//! The request a service receives: a parsed head and a body read on demand.

use crate::body_buffer::BodyBuffer;
use crate::proto::{BodyKind, ChunkedDecoder, ProtoError, CONTINUE};
pub use crate::server::buffers::Head;
use crate::server::buffers::ReadBuf;
use crate::server::io;
use crate::transport::Transport;
use bytes::Bytes;
use http::StatusCode;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// A request: its head, owned, and its body, still on the connection.
///
/// The body borrows the connection, so it can be read as a stream or whole while the service
/// runs; the head can be taken out with [`Request::into_parts`] and kept.
#[derive(Debug)]
pub struct Request<'c> {
    head: Head,
    body: RequestBody<'c>,
    /// Lent from the connection rather than copied into every request.
    remote_addr: &'c Option<SocketAddr>,
}

impl<'c> Request<'c> {
    pub(crate) fn new(
        head: Head,
        body: RequestBody<'c>,
        remote_addr: &'c Option<SocketAddr>,
    ) -> Self {
        Request {
            head,
            body,
            remote_addr,
        }
    }

    /// The parsed head: method, target, version, header fields.
    pub fn head(&self) -> &Head {
        &self.head
    }

    /// The body, to read.
    pub fn body(&mut self) -> &mut RequestBody<'c> {
        &mut self.body
    }

    /// The address of the peer (the client, or the proxy in front of this server); `None` on a
    /// transport without one, such as a Unix domain socket.
    pub fn remote_addr(&self) -> Option<&'c SocketAddr> {
        self.remote_addr.as_ref()
    }

    /// Split into the head and the body.
    pub fn into_parts(self) -> (Head, RequestBody<'c>) {
        (self.head, self.body)
    }
}

/// Why reading a request body failed. After any of these the connection is closed.
#[derive(Debug)]
pub enum BodyError {
    /// The body is larger than the limit in force.
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The chunked framing is malformed.
    Malformed(ProtoError),
    /// The client closed the connection before the whole body arrived.
    Incomplete,
    /// The client sent nothing for longer than the keep-alive timeout.
    TimedOut,
    /// The socket failed.
    Io(std::io::Error),
}

impl BodyError {
    /// The status that answers a request whose body could not be read.
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Malformed(_) | BodyError::Incomplete => StatusCode::BAD_REQUEST,
            BodyError::TimedOut => StatusCode::REQUEST_TIMEOUT,
            BodyError::Io(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::TooLarge { limit } => {
                write!(f, "request body is larger than the limit of {limit} bytes")
            }
            BodyError::Malformed(e) => write!(f, "malformed request body: {e}"),
            BodyError::Incomplete => f.write_str("the client closed before sending the whole body"),
            BodyError::TimedOut => f.write_str("timed out waiting for the request body"),
            BodyError::Io(e) => write!(f, "reading the request body failed: {e}"),
        }
    }
}

impl std::error::Error for BodyError {}

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
    fn next_data(&mut self) -> Result<Option<(usize, usize)>, BodyError> {
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

/// The body of a request, read from the connection on demand.
///
/// Nothing is read until the service asks; a client that sent `Expect: 100-continue` is told to
/// go on at that moment. Reads are capped by the body limit ([`crate::Limits::max_body_size`]),
/// which a service may change for a request with [`RequestBody::set_limit`].
pub struct RequestBody<'c> {
    stream: &'c dyn Transport,
    read: &'c mut ReadState,
}

impl fmt::Debug for RequestBody<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestBody")
            .field("progress", &self.read.body)
            .finish()
    }
}

impl<'c> RequestBody<'c> {
    pub(crate) fn new(stream: &'c dyn Transport, read: &'c mut ReadState) -> Self {
        RequestBody { stream, read }
    }

    /// The `Content-Length` still to come, if the body is length-delimited.
    pub fn remaining_length(&self) -> Option<u64> {
        match self.read.body {
            BodyProgress::Length(n) => Some(n),
            BodyProgress::Done => Some(0),
            _ => None,
        }
    }

    /// Whether the whole body has been read.
    pub fn is_done(&self) -> bool {
        matches!(self.read.body, BodyProgress::Done)
    }

    /// Change the most bytes this request's body may have.
    pub fn set_limit(&mut self, limit: u64) {
        self.read.limit = limit;
    }

    /// The next chunk of the body, or `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, BodyError> {
        let mut out = None;
        self.next(|data| out = Some(Bytes::copy_from_slice(data)))
            .await?;
        Ok(out)
    }

    /// The whole body, up to the limit.
    pub async fn to_bytes(&mut self) -> Result<Bytes, BodyError> {
        let hint = self.remaining_length().unwrap_or(0).min(self.read.limit);
        let mut all = BodyBuffer::new(usize::try_from(hint).unwrap_or(usize::MAX));
        while self.next(|data| all.extend(data)).await? {}
        Ok(all.into_bytes())
    }

    /// Hand the next run of data to `sink`; `false` at the end of the body.
    async fn next(&mut self, sink: impl FnOnce(&[u8])) -> Result<bool, BodyError> {
        let result = self.next_inner(sink).await;
        if result.is_err() {
            self.read.body = BodyProgress::Failed;
        }
        result
    }

    async fn next_inner(&mut self, sink: impl FnOnce(&[u8])) -> Result<bool, BodyError> {
        if matches!(self.read.body, BodyProgress::Done) {
            return Ok(false);
        }
        if matches!(self.read.body, BodyProgress::Failed) {
            return Err(BodyError::Incomplete);
        }
        if let BodyProgress::Length(n) = self.read.body {
            if self.read.received + n > self.read.limit {
                return Err(BodyError::TooLarge {
                    limit: self.read.limit,
                });
            }
        }
        loop {
            if let Some((skip, len)) = self.read.next_data()? {
                self.read.received += len as u64;
                if self.read.received > self.read.limit {
                    return Err(BodyError::TooLarge {
                        limit: self.read.limit,
                    });
                }
                // A run of no data is only ever reported at the end of the body.
                if len > 0 {
                    sink(&self.read.buf.data()[skip..skip + len]);
                }
                self.read.buf.consume(skip + len);
                return Ok(len > 0);
            }
            self.send_continue().await?;
            let spare = self.read.buf.spare(0);
            match io::read_with_timeout(self.stream, spare, self.read.stall_timeout).await {
                Ok(Some(0)) => return Err(BodyError::Incomplete),
                Ok(Some(n)) => self.read.buf.filled(n),
                Ok(None) => return Err(BodyError::TimedOut),
                Err(e) => return Err(BodyError::Io(e)),
            }
        }
    }

    async fn send_continue(&mut self) -> Result<(), BodyError> {
        if self.read.expect == Continue::Expected {
            self.read.expect = Continue::Sent;
            io::write_all(self.stream, CONTINUE, self.read.stall_timeout)
                .await
                .map_err(BodyError::Io)?;
        }
        Ok(())
    }
}
