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
use super::read_room::ReadRoom;
use super::reader::{Decoded, Reader};
use super::turn::Turn;
use super::{close_code_for, CloseCode, CloseFrame, Error, Message, ProtocolError, WsConfig};

/// The deadlines of [`WsConfig`]: all a connection keeps of it beyond its reader.
struct Timeouts {
    idle: Duration,
    pong: Duration,
    close: Duration,
}

/// What the two halves share: the connection, and the sending side's state.
struct Shared {
    io: RefCell<Upgraded>,
    timeouts: Timeouts,
    /// When a close was sent: the client's answer is awaited until this plus the close timeout.
    closing_since: Cell<Option<Instant>>,
    /// One frame is written at a time.
    writing: Turn,
    /// Whole frames queued to be written, from `unsent_from` on: what a send or a reply
    /// queued and no writer has written yet.
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
    /// How much room its reads offer past the bytes it holds.
    room: ReadRoom,
    /// Fires at the idle, pong or close deadline; re-armed lazily, not at every frame.
    timer: Pin<Box<Sleep>>,
    /// A frame came since the timer was last armed for the idle deadline, so the clock is
    /// read once per timeout rather than at every frame.
    seen_since_armed: bool,
    awaiting_pong: bool,
    shutdown: Option<Pin<Box<dyn Future<Output = ()>>>>,
    /// A message (a ping, the client's close) or error decoded and held back until the
    /// reply it called for is written.
    held: Option<Box<Result<Message, Error>>>,
    /// The receiver queued a reply (pong, close, idle ping) that it must see written.
    reply_pending: bool,
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
        let timer = Box::pin(tokio::time::sleep_until(after(now, config.idle_timeout)));
        let shared = Rc::new(Shared {
            io: RefCell::new(io),
            timeouts: Timeouts {
                idle: config.idle_timeout,
                pong: config.pong_timeout,
                close: config.close_timeout,
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
                room: ReadRoom::new(config.read_buffer_size),
                timer,
                seen_since_armed: false,
                awaiting_pong: false,
                shutdown: Some(shutdown),
                held: None,
                reply_pending: false,
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
    /// after the matching close was sent. Cancel-safe, so it can be raced in `select!`: a
    /// message decoded before the future is dropped comes from the next call.
    pub fn recv(&mut self) -> impl Future<Output = Option<Result<Message, Error>>> + '_ {
        self.receiver.recv()
    }

    /// Send a message: framed when first polled, then written; the future completes once
    /// it is. A send dropped after its first poll still goes out, whole, before the next.
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
    /// Send a message, as [`WebSocket::send`]. After a close was sent, only another close is
    /// accepted (and ignored).
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
    /// Send a message: queued whole as a frame at the first poll, then written. Once queued
    /// it goes out even if the future is dropped: a later send, or the receiver, writes it.
    async fn send(&self, message: Message) -> Result<(), Error> {
        self.enqueue(message)?;
        self.flush().await
    }

    /// Queue `message` as a whole frame behind those queued already. Sending a close starts
    /// the deadline for the client's answer; after it, a close is ignored and anything else
    /// is refused.
    fn enqueue(&self, message: Message) -> Result<(), Error> {
        if self.closing_since.get().is_some() {
            return match message {
                Message::Close(_) => Ok(()),
                _ => Err(Error::Protocol(ProtocolError::SendAfterClosing)),
            };
        }
        let mut queue = self.unsent.borrow_mut();
        if queue.capacity() == 0 {
            *queue = buffers::take_write();
        }
        match message {
            Message::Text(text) => self.encode_data(&mut queue, TEXT, text.as_bytes()),
            Message::Binary(data) => self.encode_data(&mut queue, BINARY, &data),
            Message::Ping(data) => encode_control(&mut queue, PING, &data)?,
            Message::Pong(data) => encode_control(&mut queue, PONG, &data)?,
            Message::Close(close) => {
                let mut payload = Vec::new();
                if let Some(close) = close {
                    payload.extend_from_slice(&u16::from(close.code).to_be_bytes());
                    payload.extend_from_slice(close.reason.as_bytes());
                }
                encode_control(&mut queue, CLOSE, &payload)?;
                self.closing_since.set(Some(Instant::now()));
            }
            Message::Frame(frame) => frame.format(&mut *queue).expect("writing to a Vec"),
        }
        Ok(())
    }

    /// Bytes queued and not written yet.
    fn queued(&self) -> usize {
        self.unsent.borrow().len() - self.unsent_from.get()
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

    /// Write everything queued, one writer at a time. A client that takes no bytes for an idle
    /// and a pong timeout together has stopped reading: the write fails with `TimedOut`.
    async fn flush(&self) -> Result<(), Error> {
        if self.queued() == 0 {
            return Ok(());
        }
        let _turn = self.writing.take().await;
        // Most flushes finish at once: only one that has to wait arms a timer.
        if let Poll::Ready(written) = poll_fn(|cx| Poll::Ready(self.poll_write_unsent(cx))).await {
            return Ok(written?);
        }
        let stall = self.timeouts.idle.saturating_add(self.timeouts.pong);
        loop {
            let written_before = self.unsent_from.get();
            match tokio::time::timeout(stall, poll_fn(|cx| self.poll_write_unsent(cx))).await {
                Ok(written) => return Ok(written?),
                Err(_) if self.unsent_from.get() != written_before => continue,
                Err(_) => return Err(io::Error::from(io::ErrorKind::TimedOut).into()),
            }
        }
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

/// A pong is not queued behind more than this: a client that sends pings and reads
/// nothing gets only some of them answered (RFC 6455 §5.5.3 allows answering the latest).
const MAX_QUEUED_FOR_PONG: usize = 64 << 10;

fn encode_control(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) -> Result<(), Error> {
    if payload.len() > 125 {
        return Err(Error::Protocol(ProtocolError::ControlFrameTooBig));
    }
    frame::write_header(out, opcode, false, payload.len());
    out.extend_from_slice(payload);
    Ok(())
}

fn close(code: CloseCode, reason: &'static str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}

/// `wait` after `from`; a wait too long for the clock (a timeout configured as
/// `Duration::MAX`) is a year, which to a connection is never.
fn after(from: Instant, wait: Duration) -> Instant {
    const NEVER: Duration = Duration::from_secs(365 * 24 * 60 * 60);
    from.checked_add(wait.min(NEVER)).unwrap_or(from)
}

/// What woke a receiver waiting for bytes.
enum Wake {
    Read(io::Result<usize>),
    Shutdown,
    Timer,
}

impl WsReceiver {
    /// The next message; see [`WebSocket::recv`]. Cancel-safe: a message decoded, or a reply
    /// queued, before the future is dropped is returned, or written, by the next call.
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        loop {
            if self.reply_pending {
                // A pong or close the receiver queued goes out before anything more is read.
                let _ = Box::pin(self.shared.flush()).await;
                self.reply_pending = false;
            }
            if let Some(held) = self.held.take() {
                return Some(*held);
            }
            if self.finished {
                return None;
            }
            let need = match self.reader.decode(&mut self.buf[self.start..self.end]) {
                Ok(Decoded::Message(message, used)) => {
                    self.consumed(used);
                    match message {
                        Message::Ping(_) | Message::Close(_) => self.answer(message),
                        message => return Some(Ok(message)),
                    }
                    continue;
                }
                Ok(Decoded::Fragment(used)) => {
                    self.consumed(used);
                    continue;
                }
                Ok(Decoded::NeedMore(need)) => need,
                Err(error) => {
                    self.fail(error);
                    continue;
                }
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
                    self.reply(close(CloseCode::Away, "server shutting down"));
                }
                Wake::Timer => self.on_timer(),
            }
        }
    }

    /// The subprotocol selected in the handshake, if any.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    fn consumed(&mut self, used: usize) {
        self.start += used;
        self.seen_since_armed = true;
        self.awaiting_pong = false;
    }

    /// Queue a reply for `recv` to write before it goes on.
    fn reply(&mut self, message: Message) {
        if self.shared.enqueue(message).is_ok() {
            self.reply_pending = true;
        }
    }

    /// Queue the answer to a ping or to the client's close, and hold the message for
    /// `recv` to return once the answer is written.
    fn answer(&mut self, message: Message) {
        let message = match message {
            Message::Ping(payload) => {
                let closing = self.shared.closing_since.get().is_some();
                if !closing && self.shared.queued() < MAX_QUEUED_FOR_PONG {
                    self.reply(Message::Pong(payload.clone()));
                }
                Message::Ping(payload)
            }
            Message::Close(frame) => {
                self.finished = true;
                if self.shared.closing_since.get().is_some() {
                    Message::Close(frame)
                } else {
                    // A code no endpoint may send is answered as the protocol error it is.
                    let frame = match frame {
                        Some(frame) if !frame.code.is_allowed() => Some(CloseFrame {
                            code: CloseCode::Protocol,
                            reason: "Protocol violation".into(),
                        }),
                        other => other,
                    };
                    self.reply(Message::Close(frame.clone()));
                    Message::Close(frame)
                }
            }
            other => other,
        };
        self.held = Some(Box::new(Ok(message)));
    }

    /// Fail the connection: queue the close the error calls for, and hold the error for
    /// `recv` to return once the close is written; nothing more is read.
    fn fail(&mut self, error: Error) {
        self.finished = true;
        if let Some(code) = close_code_for(&error) {
            self.reply(close(code, ""));
        }
        self.held = Some(Box::new(Err(error)));
    }

    /// The timer fired: close after the close or pong deadline, ping after the idle one.
    fn on_timer(&mut self) {
        let timeouts = &self.shared.timeouts;
        let now = Instant::now();
        if let Some(since) = self.shared.closing_since.get() {
            if now >= after(since, timeouts.close) {
                self.finished = true;
            }
        } else if self.awaiting_pong {
            self.reply(close(CloseCode::Away, "idle timeout"));
        } else if std::mem::take(&mut self.seen_since_armed) {
            // Frames came: the idle spell starts again from here, so the ping goes out
            // between one and two idle timeouts after the last frame.
            self.timer.as_mut().reset(after(now, timeouts.idle));
        } else {
            self.awaiting_pong = true;
            self.timer.as_mut().reset(after(now, timeouts.pong));
            self.reply(Message::Ping(Default::default()));
        }
    }

    /// Wait for more bytes (`need` from `start`, to complete a frame), the shutdown, or the
    /// timer.
    async fn wait(&mut self, need: usize) -> Wake {
        if let Some(since) = self.shared.closing_since.get() {
            let due = after(since, self.shared.timeouts.close);
            if self.timer.deadline() != due {
                self.timer.as_mut().reset(due);
            }
        }
        let Self {
            shared,
            buf,
            start,
            end,
            room,
            timer,
            shutdown,
            ..
        } = self;
        let mut fill = Fill {
            io: &shared.io,
            buf,
            start,
            end,
            room,
            need,
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
    room: &'a mut ReadRoom,
    need: usize,
}

impl Fill<'_> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if *self.start == *self.end {
            *self.start = 0;
            *self.end = 0;
        }
        if self.buf.is_empty() {
            ready!(self.io.borrow().poll_read_ready(cx))?;
            *self.buf = buffers::take_read(self.room.base());
        }
        self.make_room();
        let mut io = self.io.borrow_mut();
        let mut read = ReadBuf::new(&mut self.buf[*self.end..]);
        match Pin::new(&mut *io).poll_read(cx, &mut read) {
            Poll::Ready(Ok(())) => {
                let n = read.filled().len();
                if n > 0 && n < read.capacity() {
                    io.mark_drained();
                }
                self.room.after_read(n, read.capacity());
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

    /// Room after `end` for what [`ReadRoom`] wants, moving the undecoded bytes to the
    /// front first when that makes enough.
    fn make_room(&mut self) {
        let pending = *self.end - *self.start;
        let want = self.room.wanted(pending, self.need);
        if *self.start > 0 && *self.start + want > self.buf.len() {
            self.buf.copy_within(*self.start..*self.end, 0);
            *self.end -= *self.start;
            *self.start = 0;
        }
        if self.buf.len() < *self.start + want {
            self.buf.resize(*self.start + want, 0);
        }
    }
}
