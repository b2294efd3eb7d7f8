//! WebSockets (RFC 6455): [`Router::ws`](crate::Router::ws) routes, and the [`WebSocket`] a
//! handler talks through.
//!
//! A WebSocket stays on the worker thread that accepted its connection, so it and its halves
//! are not `Send`: spawn work for it with `tokio::task::spawn_local`, and broadcast through a
//! channel (such as `tokio::sync::broadcast`) that each connection's handler listens to.
//!
//! Pings are answered, the idle ping sent and the close handshake finished while
//! [`WebSocket::recv`] (or [`WsReceiver::recv`]) is awaited: keep a receive loop running, even
//! on a connection that only sends. A handler that returns drops the connection; call
//! [`WebSocket::close`] first for a clean close.
//!
//! Limits (see [`WsConfig`]): message and frame size (a larger one closes with `1009`), an idle
//! timeout after which the server pings and closes if no pong comes back, and a deadline for
//! the client to answer a close. Per-message compression (permessage-deflate, RFC 7692) is an
//! option, [`WsConfig::compression`].
//!
//! Messages, close codes and errors are `tungstenite`'s types. The framing is Vireo's own:
//! it lends a connection its buffers only while a frame is arriving or leaving, so an idle
//! WebSocket holds none of its own (over TLS, rustls keeps its record buffers), and it
//! speaks permessage-deflate, which `tungstenite` does not.

mod buffers;
mod config;
#[cfg(feature = "ws-compression")]
mod deflate;
mod frame;
mod handshake;
mod read_room;
mod reader;
mod socket;
mod turn;

pub use config::WsConfig;
#[cfg(feature = "ws-compression")]
pub use deflate::Compression;
pub(crate) use handshake::accept;
pub use handshake::{check_handshake, lists_token};
pub use socket::{WebSocket, WsReceiver, WsSender};

pub use tokio_tungstenite::tungstenite::error::ProtocolError;
pub use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
pub use tokio_tungstenite::tungstenite::protocol::CloseFrame;
pub use tokio_tungstenite::tungstenite::{Error, Message};

/// The close code a read error from [`WebSocket::recv`] calls for: the one the server
/// closed with, or `None` when no close could be sent (the peer dropped the connection).
pub fn close_code_for(error: &Error) -> Option<CloseCode> {
    match error {
        Error::Capacity(_) => Some(CloseCode::Size),
        Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => None,
        Error::Protocol(_) => Some(CloseCode::Protocol),
        Error::Utf8(_) => Some(CloseCode::Invalid),
        #[cfg(feature = "ws-compression")]
        Error::Io(e) if e.get_ref().is_some_and(|e| e.is::<deflate::InflateError>()) => {
            Some(CloseCode::Invalid)
        }
        _ => None,
    }
}
