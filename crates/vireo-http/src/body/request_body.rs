//! The body of a request, read from the connection on demand.

use super::buffer::BodyBuffer;
use super::read_state::{BodyProgress, Continue, ReadState};
use crate::proto::{ProtoError, CONTINUE};
use crate::server::io;
use crate::transport::Transport;
use bytes::Bytes;
use http::StatusCode;
use std::fmt;

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
                #[cfg(feature = "http2")]
                Ok(Some(0)) if matches!(self.read.body, BodyProgress::UntilEnd) => {
                    self.read.body = BodyProgress::Done;
                    return Ok(false);
                }
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
