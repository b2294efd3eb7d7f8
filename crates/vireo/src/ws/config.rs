//! The limits and options of a WebSocket route.

use std::time::Duration;

/// The limits and options of a WebSocket route.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WsConfig {
    /// The largest message, in bytes, after reassembling its fragments. Default 1 MiB.
    pub max_message_size: usize,
    /// The largest single frame, in bytes. Default 1 MiB.
    pub max_frame_size: usize,
    /// With nothing received for this long, the server sends a ping. Checked once per
    /// timeout rather than at every frame, so the ping goes out between one and two timeouts
    /// after the last frame. Default 60 s.
    pub idle_timeout: Duration,
    /// How long to wait for anything (such as the pong) after that ping before closing with
    /// `1001`. Default 20 s.
    pub pong_timeout: Duration,
    /// How long to wait for the client's answer to a close before dropping the connection.
    /// Default 5 s.
    pub close_timeout: Duration,
    /// Subprotocols the server speaks, in order of preference; the first one the client
    /// offers is selected and reported by
    /// [`WebSocket::protocol`](super::WebSocket::protocol). Default none.
    pub protocols: Vec<String>,
    /// The read buffer a connection is lent while a frame arrives (an idle connection holds
    /// none). A larger frame's buffer grows as its bytes arrive, at most 32 KiB (or this size,
    /// if larger) beyond them, so a header announcing a large frame commits little. While
    /// reads fill all the room they are given (messages sent in many frames, or several at
    /// once), the room a read offers doubles, up to 64 KiB, so they are taken in one `recv`;
    /// it falls back to this size as reads get small. Default 4 KiB.
    pub read_buffer_size: usize,
    /// Offer per-message compression (permessage-deflate, RFC 7692) to clients that ask for
    /// it. Default off. Needs the `ws-compression` feature (on by default); see
    /// [`WsConfig::compression`].
    pub compression: bool,
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
            compression: false,
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
    /// Accept permessage-deflate (RFC 7692) when a client offers it.
    ///
    /// The server compresses each message on its own (it answers with
    /// `server_no_context_takeover`), with one compressor per worker thread shared by all its
    /// connections; messages under 64 bytes go uncompressed. A client that compresses with
    /// context takeover (browsers do) costs its connection an inflate window of up to 32 KiB,
    /// allocated at its first compressed message. A compressed message counts against
    /// [`WsConfig::max_message_size`] at its inflated size, so a small frame cannot inflate
    /// past the limit. Offers asking the server for an 8-bit window are declined (the deflate
    /// format needs 9 or more), and so is an offer with an unknown parameter.
    ///
    /// Compression over TLS can leak secrets that share a message with text an attacker
    /// controls (as CRIME and BREACH did for HTTP); leave it off for such messages.
    #[cfg(feature = "ws-compression")]
    pub fn compression(mut self, on: bool) -> Self {
        self.compression = on;
        self
    }
    /// Add a subprotocol the server speaks (after those added before, in preference).
    pub fn protocol(mut self, name: impl Into<String>) -> Self {
        self.protocols.push(name.into());
        self
    }
}
