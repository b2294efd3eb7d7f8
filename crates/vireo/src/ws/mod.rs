//! WebSockets (RFC 6455): [`Router::ws`](crate::Router::ws) routes, and the [`WebSocket`] a
//! handler talks through.
//!
//! Framing is `tungstenite`'s. A WebSocket stays on the worker thread that accepted its
//! connection, so it and its halves are not `Send`: spawn work for it with
//! `tokio::task::spawn_local`, and broadcast through a channel (such as
//! `tokio::sync::broadcast`) that each connection's handler listens to.
//!
//! Pings are answered, the idle ping sent and the close handshake finished while
//! [`WebSocket::recv`] (or [`WsReceiver::recv`]) is awaited: keep a receive loop running, even
//! on a connection that only sends. A handler that returns drops the connection; call
//! [`WebSocket::close`] first for a clean close.
//!
//! Limits (see [`WsConfig`]): message and frame size (a larger one closes with `1009`), an idle
//! timeout after which the server pings and closes if no pong comes back, and a deadline for
//! the client to answer a close. Compression (permessage-deflate) is not offered: `tungstenite`
//! does not implement it.

mod handshake;

pub(crate) use handshake::accept;
pub use handshake::{check_handshake, lists_token};

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;
use vireo_http::upgrade::Upgraded;

pub use tokio_tungstenite::tungstenite::error::ProtocolError;
pub use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
pub use tokio_tungstenite::tungstenite::protocol::CloseFrame;
pub use tokio_tungstenite::tungstenite::{Error, Message};

/// The limits and options of a WebSocket route.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WsConfig {
    /// The largest message, in bytes, after reassembling its fragments. Default 1 MiB.
    pub max_message_size: usize,
    /// The largest single frame, in bytes. Default 1 MiB.
    pub max_frame_size: usize,
    /// With nothing received for this long, the server sends a ping. Default 60 s.
    pub idle_timeout: Duration,
    /// How long to wait for anything (such as the pong) after that ping before closing with
    /// `1001`. Default 20 s.
    pub pong_timeout: Duration,
    /// How long to wait for the client's answer to a close before dropping the connection.
    /// Default 5 s.
    pub close_timeout: Duration,
    /// Subprotocols the server speaks, in order of preference; the first one the client
    /// offers is selected and reported by [`WebSocket::protocol`]. Default none.
    pub protocols: Vec<String>,
    /// The most bytes read from the connection at once, and the read buffer each connection
    /// starts with: small, so that many idle connections stay cheap; larger messages are read
    /// in several steps. Default 4 KiB.
    pub read_buffer_size: usize,
}

impl Default for WsConfig {
    fn default() -> Self {
        WsConfig {
            max_message_size: 1 << 20,
            max_frame_size: 1 << 20,
            idle_timeout: Duration::from_secs(60),
            pong_timeout: Duration::from_secs(20),
            close_timeout: Duration::from_secs(5),
            protocols: Vec::new(),
            read_buffer_size: 4 << 10,
        }
    }
}

impl WsConfig {
    /// Set [`WsConfig::read_buffer_size`].
    pub fn read_buffer_size(mut self, bytes: usize) -> Self {
        self.read_buffer_size = bytes;
        self
    }
    /// Set [`WsConfig::max_message_size`].
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }
    /// Set [`WsConfig::max_frame_size`].
    pub fn max_frame_size(mut self, bytes: usize) -> Self {
        self.max_frame_size = bytes;
        self
    }
    /// Set [`WsConfig::idle_timeout`].
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }
    /// Set [`WsConfig::pong_timeout`].
    pub fn pong_timeout(mut self, timeout: Duration) -> Self {
        self.pong_timeout = timeout;
        self
    }
    /// Set [`WsConfig::close_timeout`].
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }
    /// Add a subprotocol the server speaks (after those added before, in preference).
    pub fn protocol(mut self, name: impl Into<String>) -> Self {
        self.protocols.push(name.into());
        self
    }
}

type Stream = WebSocketStream<Upgraded>;

/// What the two halves share.
struct Shared {
    sink: tokio::sync::Mutex<SplitSink<Stream, Message>>,
    /// When a close was sent: the client's answer is awaited until this plus the close timeout.
    closing_since: Cell<Option<Instant>>,
    config: WsConfig,
}

/// A WebSocket connection. [`WebSocket::recv`] answers pings by itself and ends after the
/// close handshake; [`WebSocket::split`] gives a sender and a receiver to use apart.
pub struct WebSocket {
    sender: WsSender,
    receiver: WsReceiver,
}

/// The sending half of a [`WebSocket`]. Clones send on the same connection.
#[derive(Clone)]
pub struct WsSender {
    shared: Rc<Shared>,
}

/// The receiving half of a [`WebSocket`].
pub struct WsReceiver {
    stream: SplitStream<Stream>,
    shared: Rc<Shared>,
    shutdown: Option<Pin<Box<dyn Future<Output = ()>>>>,
    awaiting_pong: bool,
    protocol: Option<String>,
}

impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket")
            .field("protocol", &self.receiver.protocol)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for WsSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSender").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for WsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsReceiver").finish_non_exhaustive()
    }
}

impl WebSocket {
    /// A WebSocket over a connection the engine upgraded after a handshake that was already
    /// answered (see [`check_handshake`]), with `protocol` the subprotocol the `101` named.
    /// [`Router::ws`](crate::Router::ws) does all this itself.
    pub async fn from_upgraded(io: Upgraded, config: WsConfig, protocol: Option<String>) -> Self {
        let shutdown: Pin<Box<dyn Future<Output = ()>>> = Box::pin(io.shutdown_requested());
        let framing = WebSocketConfig::default()
            .max_message_size(Some(config.max_message_size))
            .max_frame_size(Some(config.max_frame_size))
            .read_buffer_size(config.read_buffer_size);
        let stream = WebSocketStream::from_raw_socket(io, Role::Server, Some(framing)).await;
        let (sink, stream) = stream.split();
        let shared = Rc::new(Shared {
            sink: tokio::sync::Mutex::new(sink),
            closing_since: Cell::new(None),
            config,
        });
        WebSocket {
            sender: WsSender {
                shared: shared.clone(),
            },
            receiver: WsReceiver {
                stream,
                shared,
                shutdown: Some(shutdown),
                awaiting_pong: false,
                protocol,
            },
        }
    }

    /// The next message: text, binary, ping or pong, or the client's close (after which the
    /// close is answered and `None` follows). `None` when the connection is over; an error
    /// when it broke (a message over the limit, a protocol violation, invalid UTF-8 in text),
    /// after the matching close was sent.
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        self.receiver.recv().await
    }

    /// Send a message.
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        self.sender.send(message).await
    }

    /// Start the close handshake with `code` and `reason`, then wait (up to the close timeout)
    /// for the client's answer.
    pub async fn close(mut self, code: CloseCode, reason: &str) -> Result<(), Error> {
        self.sender.close(code, reason).await?;
        while let Some(Ok(_)) = self.receiver.recv().await {}
        Ok(())
    }

    /// The subprotocol selected in the handshake, if any.
    pub fn protocol(&self) -> Option<&str> {
        self.receiver.protocol.as_deref()
    }

    /// The two halves, to send and receive from different places (say, a task forwarding
    /// broadcast messages while the handler reads).
    pub fn split(self) -> (WsSender, WsReceiver) {
        (self.sender, self.receiver)
    }
}

impl WsSender {
    /// Send a message.
    pub async fn send(&self, message: Message) -> Result<(), Error> {
        if matches!(message, Message::Close(_)) {
            self.shared.closing_since.set(Some(Instant::now()));
        }
        self.shared.sink.lock().await.send(message).await
    }

    /// Send a close with `code` and `reason`; the receiving half ends when the client answers
    /// or the close timeout passes.
    pub async fn close(&self, code: CloseCode, reason: &str) -> Result<(), Error> {
        if self.shared.closing_since.get().is_some() {
            return Ok(());
        }
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        self.send(Message::Close(Some(frame))).await
    }
}

/// The close code a read error from [`WebSocket::recv`] calls for: the one the server
/// closed with, or `None` when no close could be sent (the peer dropped the connection).
pub fn close_code_for(error: &Error) -> Option<CloseCode> {
    match error {
        Error::Capacity(_) => Some(CloseCode::Size),
        Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => None,
        Error::Protocol(_) => Some(CloseCode::Protocol),
        Error::Utf8(_) => Some(CloseCode::Invalid),
        _ => None,
    }
}

impl WsReceiver {
    /// The next message; see [`WebSocket::recv`].
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        let sender = WsSender {
            shared: self.shared.clone(),
        };
        loop {
            let config = &self.shared.config;
            let deadline = match self.shared.closing_since.get() {
                Some(since) => since + config.close_timeout,
                None if self.awaiting_pong => Instant::now() + config.pong_timeout,
                None => Instant::now() + config.idle_timeout,
            };
            let shutdown = async {
                match self.shutdown.as_mut() {
                    Some(shutdown) => shutdown.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                item = self.stream.next() => match item {
                    None => return None,
                    Some(Ok(message)) => {
                        self.awaiting_pong = false;
                        if let Message::Close(_) = message {
                            // tungstenite queued the answering close; push it out.
                            let _ = sender.shared.sink.lock().await.flush().await;
                            sender.shared.closing_since.set(Some(Instant::now()));
                        }
                        return Some(Ok(message));
                    }
                    Some(Err(error)) => {
                        if let Some(code) = close_code_for(&error) {
                            let _ = sender.close(code, "").await;
                        }
                        return Some(Err(error));
                    }
                },
                _ = shutdown => {
                    self.shutdown = None;
                    let _ = sender.close(CloseCode::Away, "server shutting down").await;
                }
                _ = tokio::time::sleep_until(deadline) => {
                    if self.shared.closing_since.get().is_some() {
                        return None;
                    }
                    if self.awaiting_pong {
                        let _ = sender.close(CloseCode::Away, "idle timeout").await;
                    } else {
                        self.awaiting_pong = true;
                        let _ = sender.send(Message::Ping(Default::default())).await;
                    }
                }
            }
        }
    }

    /// The subprotocol selected in the handshake, if any.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }
}
