//! # vireo-http
//!
//! Vireo's HTTP server engine: bytes in, bytes out, transports and threads. It knows HTTP/1.1
//! (RFC 9112, RFC 9110) and, with the `http2` feature, HTTP/2, and nothing about routes; the
//! `vireo` framework builds on it.
//!
//! - **Sans-I/O protocol core**: request heads are parsed and validated strictly; bodies are
//!   framed by `Content-Length` or a strict chunked decoder; responses are encoded from
//!   pre-rendered parts.
//! - **Any transport** ([`Transport`]): TCP ([`Server::bind`]), Unix domain sockets
//!   ([`Server::bind_unix`]), or any `AsyncRead + AsyncWrite` stream ([`IoTransport`]) go
//!   through one connection state machine.
//! - **Thread per core**: each worker runs a single-threaded Tokio runtime, accepts from a shared
//!   listening socket and serves its connections; a worker that accepts while another holds
//!   fewer connections hands the socket over, so workers stay within one connection of each
//!   other. Nothing else is shared between workers but the service.
//! - **Batched I/O**: a worker reads what a connection has, answers every complete request in it
//!   (pipelining), and writes all the responses at once.
//! - **Small idle connections**: an idle keep-alive connection holds no buffer and no request
//!   state, only a small task (under 1 KiB of user-space memory in all); the state of serving
//!   requests lives in pooled memory only while the connection is busy.
//! - **Safe defaults** ([`Limits`]): every limit and timeout is on; a malformed request gets a
//!   precise 4xx/5xx and the connection closes; a panicking service costs one 500.
//! - **Graceful shutdown** ([`ShutdownHandle`], SIGTERM/SIGINT): stop accepting, close idle
//!   connections, finish requests in progress, return.
//! - **HTTP/2** (the `http2` feature, with the `h2` crate): h2 over TLS when ALPN picks it, and
//!   h2c with prior knowledge on the same TCP port as HTTP/1.1, told apart once per connection
//!   by the preface. Each stream is a [`Request`] to the same [`Service`], so a service answers
//!   both versions unchanged; HTTP/2's own limits are in the table below.
//!
//! ## Example
//!
//! ```
//! use vireo_http::{service_fn, Response, Server};
//! use std::io::{Read, Write};
//!
//! let server = Server::bind("127.0.0.1:0")?
//!     .workers(1)
//!     .spawn(service_fn(|_req| Response::text("Hello, World!")))?;
//!
//! let mut client = std::net::TcpStream::connect(server.addr())?;
//! client.write_all(b"GET / HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n")?;
//! let mut reply = String::new();
//! client.read_to_string(&mut reply)?;
//! assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"));
//! assert!(reply.ends_with("\r\n\r\nHello, World!"));
//! server.shutdown()?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
#![doc = include_str!("../../../docs/LIMITS.md")]
#![deny(missing_docs)]
#![deny(unreachable_pub)]

mod body;
mod head;
pub mod limits;
mod pool;
// Public for the project's own tests, fuzz targets and benchmarks; not a supported API.
#[doc(hidden)]
pub mod proto;
mod request;
mod response;
mod server;
mod service;
#[cfg(feature = "tls")]
pub mod tls;
pub mod transport;
pub mod upgrade;

pub use body::{BodyError, RequestBody};
pub use head::Head;
pub use limits::{InvalidLimits, Limits};
pub use pool::on_worker_thread;
pub use proto::{BodyKind, ProtoError, RequestHead};
pub use request::Request;
pub use response::{
    Body, BodyStream, BoxError, ContentType, Response, TrailedStream, TrailersFuture,
};
pub use server::{
    release_when_quiet, ListenAddr, RunningServer, Server, ServerStats, ShutdownHandle,
    DEFAULT_MAX_BLOCKING_THREADS,
};
pub use service::{service_fn, spawn_blocking, Service, ServiceFn};
pub use transport::{IoTransport, Transport};

pub use bytes;
pub use http;
