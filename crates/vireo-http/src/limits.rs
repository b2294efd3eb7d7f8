//! Limits and timeouts, all on by default.
//!
//! Every limit is a named constant with the reason for its value. The limits of a connection
//! and its requests are the fields of [`Limits`] (see [`crate::Server::limits`]); the graceful
//! shutdown wait ([`DEFAULT_SHUTDOWN_TIMEOUT`]) and the bound on blocking threads
//! ([`crate::DEFAULT_MAX_BLOCKING_THREADS`]) are settings of the [`crate::Server`] itself. The
//! answer the server gives when a limit is exceeded is part of the contract: the
//! [crate documentation](crate#limits-and-defaults) has the table of every limit.

use std::time::Duration;

/// Largest request head (request line and header fields) accepted. 64 KiB is what nginx allows
/// by default for all of a request's large header buffers together; real heads are well under
/// 8 KiB, so a larger one is a mistake or an attack.
pub const DEFAULT_MAX_HEAD_SIZE: usize = 64 * 1024;

/// Most header fields in one request. 100 matches hyper and h2o; browsers send about 20.
pub const DEFAULT_MAX_HEADERS: usize = 100;

/// Longest request target. 8 KiB is the limit RFC 9112 §3 recommends servers support at least.
pub const DEFAULT_MAX_TARGET_LEN: usize = 8 * 1024;

/// Largest request body. 2 MiB covers JSON APIs and form posts; uploads raise it per route.
pub const DEFAULT_MAX_BODY_SIZE: u64 = 2 * 1024 * 1024;

/// Bytes of chunk extensions and trailer fields together in one chunked body. They carry
/// nothing Vireo uses; the cap stops a client from streaming them without end.
pub const DEFAULT_MAX_CHUNK_METADATA: usize = 16 * 1024;

/// Time allowed from the first byte of a request to the end of its head: the slowloris defence.
pub const DEFAULT_HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Time an idle keep-alive connection is kept open waiting for its next request.
pub const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(60);

/// Connections a worker keeps open at once. Past it the worker stops accepting, so the kernel's
/// backlog pushes back on clients instead of the process running out of descriptors or memory.
pub const DEFAULT_MAX_CONNECTIONS_PER_WORKER: usize = 32 * 1024;

/// Responses encoded but not yet written, per connection. Past it the connection stops parsing
/// pipelined requests and writes first, so a client that does not read cannot grow our memory.
pub const DEFAULT_MAX_BUFFERED_OUTPUT: usize = 64 * 1024;

/// Requests handled from one read before the responses are written. 16 is the depth the
/// TechEmpower plaintext benchmark pipelines, so one read and one write serve a whole batch.
pub const DEFAULT_MAX_PIPELINE_BATCH: usize = 16;

/// Time allowed from accepting a TLS connection to the end of its handshake. A client that
/// sends nothing, or stalls half way, is closed after it. Ignored without TLS.
pub const DEFAULT_TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// TLS handshakes a worker runs at once. Past it the worker stops accepting until one ends, so
/// slow or half-open clients hold a bounded amount of handshake state. Ignored without TLS.
pub const DEFAULT_MAX_TLS_HANDSHAKES_PER_WORKER: usize = 1024;

/// HTTP/2 streams a client may have open at once on one connection (the `http2` feature). 100
/// is the minimum RFC 9113 recommends and what common servers advertise.
pub const DEFAULT_H2_MAX_CONCURRENT_STREAMS: u32 = 100;

/// HTTP/2 streams a client may open and reset before the server has accepted them: past it
/// the connection is closed with `ENHANCE_YOUR_CALM`. The defence against rapid reset.
pub const H2_MAX_PENDING_ACCEPT_RESET_STREAMS: usize = 20;

/// HTTP/2 streams the server may reset for the client's protocol errors on one connection:
/// past it the connection is closed with `ENHANCE_YOUR_CALM`.
pub const H2_MAX_LOCAL_ERROR_RESET_STREAMS: usize = 1024;

/// How long a graceful shutdown waits for in-flight requests before dropping them. A setting of
/// the server, not a [`Limits`] field: see [`crate::Server::shutdown_timeout`].
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// The limits a server enforces. `Limits::default()` gives the documented defaults.
///
/// ```
/// use std::time::Duration;
/// let limits = vireo_http::Limits {
///     max_body_size: 16 * 1024 * 1024,
///     keep_alive_timeout: Duration::from_secs(5),
///     ..vireo_http::Limits::default()
/// };
/// assert_eq!(limits.max_headers, vireo_http::limits::DEFAULT_MAX_HEADERS);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`DEFAULT_MAX_HEAD_SIZE`].
    pub max_head_size: usize,
    /// See [`DEFAULT_MAX_HEADERS`].
    pub max_headers: usize,
    /// See [`DEFAULT_MAX_TARGET_LEN`].
    pub max_target_len: usize,
    /// See [`DEFAULT_MAX_BODY_SIZE`].
    pub max_body_size: u64,
    /// See [`DEFAULT_MAX_CHUNK_METADATA`].
    pub max_chunk_metadata: usize,
    /// See [`DEFAULT_HEAD_TIMEOUT`].
    pub head_timeout: Duration,
    /// See [`DEFAULT_KEEP_ALIVE_TIMEOUT`].
    pub keep_alive_timeout: Duration,
    /// See [`DEFAULT_MAX_CONNECTIONS_PER_WORKER`].
    pub max_connections_per_worker: usize,
    /// See [`DEFAULT_MAX_BUFFERED_OUTPUT`].
    pub max_buffered_output: usize,
    /// See [`DEFAULT_MAX_PIPELINE_BATCH`].
    pub max_pipeline_batch: usize,
    /// See [`DEFAULT_TLS_HANDSHAKE_TIMEOUT`].
    pub tls_handshake_timeout: Duration,
    /// See [`DEFAULT_MAX_TLS_HANDSHAKES_PER_WORKER`].
    pub max_tls_handshakes_per_worker: usize,
    /// See [`DEFAULT_H2_MAX_CONCURRENT_STREAMS`].
    pub h2_max_concurrent_streams: u32,
}

/// The longest timeout a server accepts: a year. A longer one is a mistake, and could put a
/// deadline past what the clock can represent.
const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 60 * 60);

impl Limits {
    /// Refuse limits a server cannot run with: a timeout of zero or over a year, or zero for a
    /// count without which no connection is accepted or no request read. Zero stays allowed
    /// where it means "none": no body, no chunk metadata, no output buffered.
    /// [`crate::Server::serve`] and [`crate::Server::spawn`] check their limits with it.
    ///
    /// ```
    /// let limits = vireo_http::Limits {
    ///     keep_alive_timeout: std::time::Duration::ZERO,
    ///     ..vireo_http::Limits::default()
    /// };
    /// let error = limits.check().unwrap_err();
    /// assert!(error.to_string().starts_with("Limits::keep_alive_timeout"));
    /// ```
    pub fn check(&self) -> Result<(), InvalidLimits> {
        let timeouts = [
            ("head_timeout", self.head_timeout),
            ("keep_alive_timeout", self.keep_alive_timeout),
            ("tls_handshake_timeout", self.tls_handshake_timeout),
        ];
        for (field, timeout) in timeouts {
            if timeout.is_zero() || timeout > MAX_TIMEOUT {
                return Err(InvalidLimits(format!(
                    "Limits::{field} is {timeout:?}: it must be above zero and at most a year"
                )));
            }
        }
        let counts = [
            ("max_head_size", self.max_head_size),
            ("max_headers", self.max_headers),
            ("max_target_len", self.max_target_len),
            (
                "max_connections_per_worker",
                self.max_connections_per_worker,
            ),
            ("max_pipeline_batch", self.max_pipeline_batch),
            (
                "max_tls_handshakes_per_worker",
                self.max_tls_handshakes_per_worker,
            ),
        ];
        match counts.iter().find(|(_, count)| *count == 0) {
            Some((field, _)) => Err(InvalidLimits(format!("Limits::{field} must be at least 1"))),
            None => Ok(()),
        }
    }
}

/// Why [`Limits::check`] refused a set of limits: which field, and what it must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidLimits(String);

impl std::fmt::Display for InvalidLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidLimits {}

impl From<InvalidLimits> for std::io::Error {
    fn from(error: InvalidLimits) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, error)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head_size: DEFAULT_MAX_HEAD_SIZE,
            max_headers: DEFAULT_MAX_HEADERS,
            max_target_len: DEFAULT_MAX_TARGET_LEN,
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_chunk_metadata: DEFAULT_MAX_CHUNK_METADATA,
            head_timeout: DEFAULT_HEAD_TIMEOUT,
            keep_alive_timeout: DEFAULT_KEEP_ALIVE_TIMEOUT,
            max_connections_per_worker: DEFAULT_MAX_CONNECTIONS_PER_WORKER,
            max_buffered_output: DEFAULT_MAX_BUFFERED_OUTPUT,
            max_pipeline_batch: DEFAULT_MAX_PIPELINE_BATCH,
            tls_handshake_timeout: DEFAULT_TLS_HANDSHAKE_TIMEOUT,
            max_tls_handshakes_per_worker: DEFAULT_MAX_TLS_HANDSHAKES_PER_WORKER,
            h2_max_concurrent_streams: DEFAULT_H2_MAX_CONCURRENT_STREAMS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(limits: Limits) -> String {
        let error = std::io::Error::from(limits.check().expect_err("these limits are refused"));
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        error.to_string()
    }

    #[test]
    fn the_defaults_and_zero_meaning_none_pass() {
        Limits::default().check().unwrap();
        let none = Limits {
            max_body_size: 0,
            max_chunk_metadata: 0,
            max_buffered_output: 0,
            ..Limits::default()
        };
        none.check().unwrap();
    }

    #[test]
    fn a_timeout_of_zero_or_over_a_year_is_refused_by_name() {
        let zero = Limits {
            keep_alive_timeout: Duration::ZERO,
            ..Limits::default()
        };
        assert!(refusal(zero).contains("Limits::keep_alive_timeout"));
        let endless = Limits {
            head_timeout: Duration::MAX,
            ..Limits::default()
        };
        assert!(refusal(endless).contains("Limits::head_timeout"));
        let a_year = Limits {
            tls_handshake_timeout: MAX_TIMEOUT,
            ..Limits::default()
        };
        a_year.check().unwrap();
    }

    #[test]
    fn a_count_that_would_stop_all_service_is_refused_by_name() {
        let no_connections = Limits {
            max_connections_per_worker: 0,
            ..Limits::default()
        };
        assert_eq!(
            refusal(no_connections),
            "Limits::max_connections_per_worker must be at least 1"
        );
        let no_batch = Limits {
            max_pipeline_batch: 0,
            ..Limits::default()
        };
        assert!(refusal(no_batch).contains("max_pipeline_batch"));
    }
}
