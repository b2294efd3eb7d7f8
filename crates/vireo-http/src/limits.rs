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
