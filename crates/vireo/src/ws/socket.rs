//! A WebSocket connection: [`WebSocket`], and the [`WsSender`] and [`WsReceiver`] halves it
//! splits into.

use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};
use vireo_http::upgrade::Upgraded;

use super::buffers;
use super::frame::{self, BINARY, CLOSE, PING, PONG, TEXT};
use super::reader::{Decoded, Reader};
use super::turn::Turn;
use super::{close_code_for, CloseCode, CloseFrame, Error, Message, ProtocolError, WsConfig};

/// The deadlines of [`WsConfig`], and the read buffer's size: all a connection keeps of it.
struct Timeouts {
    idle: Duration,
    pong: Duration,
    close: Duration,
    read_buffer: usize,
}

/// What the two halves share: the connection, and the sending side's state.
struct Shared {
    io: RefCell<Upgraded>,
    timeouts: Timeouts,
    /// When a close was sent: the client's answer is awaited until this plus the close timeout.
    closing_since: Cell<Option<Instant>>,
    /// One frame is written at a time.
    writing: Turn,
    /// The frame being written, from `unsent_from` on; a send cancelled part-way leaves the
    /// rest here for the next one to finish first.
    unsent: RefCell<Vec<u8>>,
    unsent_from: Cell<usize>,
    #[cfg(feature = "ws-compression")]
    compression: Cell<Option<super::Compression>>,
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
    shared: Rc<Shared>,
    reader: Reader,
    /// Bytes read and not decoded yet are `buf[start..end]`. Between frames the buffer goes
    /// back to the thread's spares, so an idle connection holds none.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Fires at the idle, pong or close deadline; re-armed lazily, not at every frame.
    timer: Pin<Box<Sleep>>,
    last_seen: Instant,
    awaiting_pong: bool,
    shutdown: Option<Pin<Box<dyn Future<Output = ()>>>>,
    /// The close handshake is over, or the connection failed: nothing more comes.
    finished: bool,
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
    /// answered (see [`check_handshake`](super::check_handshake)), with `protocol` the
    /// subprotocol the `101` named. [`Router::ws`](crate::Router::ws) does all this itself.
    pub async fn from_upgraded(io: Upgraded, config: WsConfig, protocol: Option<String>) -> Self {
        Self::new(io, &config, protocol)
    }

    pub(crate) fn new(io: Upgraded, config: &WsConfig, protocol: Option<String>) -> Self {
        let shutdown: Pin<Box<dyn Future<Output = ()>>> = Box::pin(io.shutdown_requested());
        let now = Instant::now();
        let reader = Reader::new(config.max_frame_size, config.max_message_size);
        let timer = Box::pin(tokio::time::sleep_until(now + config.idle_timeout));
        let shared = Rc::new(Shared {
            io: RefCell::new(io),
            timeouts: Timeouts {
                idle: config.idle_timeout,
                pong: config.pong_timeout,
                close: config.close_timeout,
                read_buffer: config.read_buffer_size,
            },
            closing_since: Cell::new(None),
            writing: Turn::default(),
            unsent: RefCell::new(Vec::new()),
            unsent_from: Cell::new(0),
            #[cfg(feature = "ws-compression")]
            compression: Cell::new(None),
        });
        WebSocket {
            sender: WsSender {
                shared: shared.clone(),
            },
            receiver: WsReceiver {
                shared,
                reader,
                buf: Vec::new(),
                start: 0,
                end: 0,
                timer,
                last_seen: now,
                awaiting_pong: false,
                shutdown: Some(shutdown),
                finished: false,
                protocol,
            },
        }
    }

    /// Use the permessage-deflate parameters the `101` agreed to (the header
    /// [`Compression::header_value`](super::Compression::header_value) gives), before the
    /// first message. [`Router::ws`](crate::Router::ws) does this itself.
    #[cfg(feature = "ws-compression")]
    pub fn with_compression(mut self, agreed: super::Compression) -> Self {
        self.receiver.reader.set_compression(agreed);
        self.receiver.shared.compression.set(Some(agreed));
        self
    }

    /// The next message: text, binary, ping or pong, or the client's close (after which the
    /// close is answered and `None` follows). `None` when the connection is over; an error
    /// when it broke (a message over the limit, a protocol violation, invalid UTF-8 in text),
    /// after the matching close was sent.
    pub fn recv(&mut self) -> impl Future<Output = Option<Result<Message, Error>>> + '_ {
        self.receiver.recv()
    }

    /// Send a message.
    pub fn send(&mut self, message: Message) -> impl Future<Output = Result<(), Error>> + '_ {
        self.sender.send(message)
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
    /// Send a message. After a close was sent, only another close is accepted (and ignored).
    pub fn send(&self, message: Message) -> impl Future<Output = Result<(), Error>> + '_ {
        self.shared.send(message)
    }

    /// Send a close with `code` and `reason`; the receiving half ends when the client answers
    /// or the close timeout passes.
    pub async fn close(&self, code: CloseCode, reason: &str) -> Result<(), Error> {
        self.send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await
    }
}

impl Shared {
    /// Send a message: framed at once, then written when the connection takes it. One small
    /// future for every kind of message, which an idle connection's handler holds.
    fn send(&self, message: Message) -> impl Future<Output = Result<(), Error>> + '_ {
        // Boxed: an error is large, and the future would carry its size while it writes.
        let frame = self.encode(message).map_err(Box::new);
        async move {
            match frame {
                Ok(Some(frame)) => self.write(frame).await,
                Ok(None) => Ok(()),
                Err(error) => Err(*error),
            }
        }
    }

    /// The frame for `message`, or `None` for a close after a close was sent. Sending a
    /// close starts the deadline for the client's answer.
    fn encode(&self, message: Message) -> Result<Option<Vec<u8>>, Error> {
        if self.closing_since.get().is_some() {
            return match message {
                Message::Close(_) => Ok(None),
                _ => Err(Error::Protocol(ProtocolError::SendAfterClosing)),
            };
        }
        let mut out = buffers::take_write();
        match message {
            Message::Text(text) => self.encode_data(&mut out, TEXT, text.as_bytes()),
            Message::Binary(data) => self.encode_data(&mut out, BINARY, &data),
            Message::Ping(data) => encode_control(&mut out, PING, &data)?,
            Message::Pong(data) => encode_control(&mut out, PONG, &data)?,
            Message::Close(close) => {
                let mut payload = Vec::new();
                if let Some(close) = close {
                    payload.extend_from_slice(&u16::from(close.code).to_be_bytes());
                    payload.extend_from_slice(close.reason.as_bytes());
                }
                encode_control(&mut out, CLOSE, &payload)?;
                self.closing_since.set(Some(Instant::now()));
            }
            Message::Frame(frame) => frame.format(&mut out).expect("writing to a Vec"),
        }
        Ok(Some(out))
    }

    fn encode_data(&self, out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
        #[cfg(feature = "ws-compression")]
        if let Some(deflated) = self.compression.get().and_then(|c| c.deflate(payload)) {
            frame::write_header(out, opcode, true, deflated.len());
            out.extend_from_slice(&deflated);
            return;
        }
        frame::write_header(out, opcode, false, payload.len());
        out.extend_from_slice(payload);
    }

    /// Write one frame, after any a cancelled send left part-written.
    async fn write(&self, frame: Vec<u8>) -> Result<(), Error> {
        let _turn = self.writing.take().await;
        poll_fn(|cx| self.poll_write_unsent(cx)).await?;
        *self.unsent.borrow_mut() = frame;
        poll_fn(|cx| self.poll_write_unsent(cx)).await?;
        Ok(())
    }

    fn poll_write_unsent(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let unsent = self.unsent.borrow();
        if unsent.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let mut io = self.io.borrow_mut();
        while self.unsent_from.get() < unsent.len() {
            let from = self.unsent_from.get();
            let n = ready!(Pin::new(&mut *io).poll_write(cx, &unsent[from..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.unsent_from.set(from + n);
        }
        ready!(Pin::new(&mut *io).poll_flush(cx))?;
        drop(unsent);
        buffers::give_write(std::mem::take(&mut *self.unsent.borrow_mut()));
        self.unsent_from.set(0);
        Poll::Ready(Ok(()))
    }
}

fn encode_control(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) -> Result<(), Error> {
    if payload.len() > 125 {
        return Err(Error::Protocol(ProtocolError::ControlFrameTooBig));
    }
    frame::write_header(out, opcode, false, payload.len());
    out.extend_from_slice(payload);
    Ok(())
}

/// What woke a receiver waiting for bytes.
enum Wake {
    Read(io::Result<usize>),
    Shutdown,
    Timer,
}

impl WsReceiver {
    /// The next message; see [`WebSocket::recv`].
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        loop {
            if self.finished {
                return None;
            }
            let need = match self.reader.decode(&mut self.buf[self.start..self.end]) {
                Ok(Decoded::Message(message, used)) => {
                    self.consumed(used);
                    if let Message::Ping(_) | Message::Close(_) = message {
                        // Boxed: a future held by every idle connection stays small.
                        return Some(Ok(Box::pin(self.answer(message)).await));
                    }
                    return Some(Ok(message));
                }
                Ok(Decoded::Fragment(used)) => {
                    self.consumed(used);
                    continue;
                }
                Ok(Decoded::NeedMore(need)) => need,
                Err(error) => return Some(Err(Box::pin(self.fail(error)).await)),
            };
            match self.wait(need).await {
                Wake::Read(Ok(0)) => {
                    self.finished = true;
                    if self.shared.closing_since.get().is_some() {
                        return None;
                    }
                    let reset = ProtocolError::ResetWithoutClosingHandshake;
                    return Some(Err(Error::Protocol(reset)));
                }
                Wake::Read(Ok(_)) => {}
                Wake::Read(Err(error)) => {
                    self.finished = true;
                    return Some(Err(Error::Io(error)));
                }
                Wake::Shutdown => {
                    self.shutdown = None;
                    let close = CloseFrame {
                        code: CloseCode::Away,
                        reason: "server shutting down".into(),
                    };
                    let _ = Box::pin(self.shared.send(Message::Close(Some(close)))).await;
                }
                Wake::Timer => {
                    if let Some(ended) = Box::pin(self.on_timer()).await {
                        return ended;
                    }
                }
            }
        }
    }

    /// The subprotocol selected in the handshake, if any.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    fn consumed(&mut self, used: usize) {
        self.start += used;
        self.last_seen = Instant::now();
        self.awaiting_pong = false;
    }

    /// Answer a ping or the client's close, and pass the message on.
    async fn answer(&mut self, message: Message) -> Message {
        match message {
            Message::Ping(payload) => {
                if self.shared.closing_since.get().is_none() {
                    let _ = self.shared.send(Message::Pong(payload.clone())).await;
                }
                Message::Ping(payload)
            }
            Message::Close(close) => {
                self.finished = true;
                if self.shared.closing_since.get().is_some() {
                    return Message::Close(close);
                }
                // A code no endpoint may send is answered as the protocol error it is.
                let close = match close {
                    Some(frame) if !frame.code.is_allowed() => Some(CloseFrame {
                        code: CloseCode::Protocol,
                        reason: "Protocol violation".into(),
                    }),
                    other => other,
                };
                let _ = self.shared.send(Message::Close(close.clone())).await;
                Message::Close(close)
            }
            other => other,
        }
    }

    /// Fail the connection: send the close the error calls for; nothing more is read.
    async fn fail(&mut self, error: Error) -> Error {
        self.finished = true;
        if let Some(code) = close_code_for(&error) {
            let close = CloseFrame {
                code,
                reason: "".into(),
            };
            let _ = self.shared.send(Message::Close(Some(close))).await;
        }
        error
    }

    /// The timer fired: close after the close or pong deadline, ping after the idle one.
    /// `Some` when `recv` should return.
    async fn on_timer(&mut self) -> Option<Option<Result<Message, Error>>> {
        let timeouts = &self.shared.timeouts;
        let now = Instant::now();
        if let Some(since) = self.shared.closing_since.get() {
            if now >= since + timeouts.close {
                self.finished = true;
                return Some(None);
            }
        } else if self.awaiting_pong {
            let close = CloseFrame {
                code: CloseCode::Away,
                reason: "idle timeout".into(),
            };
            let _ = self.shared.send(Message::Close(Some(close))).await;
        } else if self.last_seen + timeouts.idle > now {
            let due = self.last_seen + timeouts.idle;
            self.timer.as_mut().reset(due);
        } else {
            self.awaiting_pong = true;
            self.timer.as_mut().reset(now + timeouts.pong);
            let _ = self.shared.send(Message::Ping(Default::default())).await;
        }
        None
    }

    /// Wait for more bytes (`need` from `start`, to complete a frame), the shutdown, or the
    /// timer.
    async fn wait(&mut self, need: usize) -> Wake {
        if let Some(since) = self.shared.closing_since.get() {
            let due = since + self.shared.timeouts.close;
            if self.timer.deadline() != due {
                self.timer.as_mut().reset(due);
            }
        }
        let size = self.shared.timeouts.read_buffer;
        let Self {
            shared,
            buf,
            start,
            end,
            timer,
            shutdown,
            ..
        } = self;
        let mut fill = Fill {
            io: &shared.io,
            buf,
            start,
            end,
            need,
            size,
        };
        let read = poll_fn(|cx| fill.poll(cx));
        let shutdown = async {
            match shutdown.as_mut() {
                Some(shutdown) => shutdown.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            read = read => Wake::Read(read),
            _ = shutdown => Wake::Shutdown,
            _ = timer.as_mut() => Wake::Timer,
        }
    }
}

/// One read into a receiver's buffer, which is taken from the spares only once bytes are
/// there, and given back if the read finds none after all.
struct Fill<'a> {
    io: &'a RefCell<Upgraded>,
    buf: &'a mut Vec<u8>,
    start: &'a mut usize,
    end: &'a mut usize,
    need: usize,
    size: usize,
}

impl Fill<'_> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if *self.start == *self.end {
            *self.start = 0;
            *self.end = 0;
        }
        if self.buf.is_empty() {
            ready!(self.io.borrow().poll_read_ready(cx))?;
            *self.buf = buffers::take_read(self.size);
        }
        self.make_room();
        let mut io = self.io.borrow_mut();
        let mut read = ReadBuf::new(&mut self.buf[*self.end..]);
        match Pin::new(&mut *io).poll_read(cx, &mut read) {
            Poll::Ready(Ok(())) => {
                let n = read.filled().len();
                *self.end += n;
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                if *self.end == 0 {
                    buffers::give_read(std::mem::take(self.buf));
                }
                Poll::Pending
            }
        }
    }

    /// Room after `end` for the rest of the frame, and for at least one more byte.
    fn make_room(&mut self) {
        let need = self.need.max(*self.end - *self.start + 1);
        if *self.start > 0 && *self.start + need > self.buf.len() {
            self.buf.copy_within(*self.start..*self.end, 0);
            *self.end -= *self.start;
            *self.start = 0;
        }
        if self.buf.len() < *self.start + need {
            self.buf.resize(*self.start + need, 0);
        }
    }
}
