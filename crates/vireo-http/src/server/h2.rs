//! HTTP/2 connections (the `http2` feature): h2 over TLS when ALPN picks `h2`, and h2c with
//! prior knowledge on a plain TCP port, told apart from HTTP/1.1 by the connection preface.
//!
//! Each stream is served by the same [`Service`] as an HTTP/1.1 request: its head is rebuilt as
//! an HTTP/1.1 head and parsed with the same limits (`h2_head`), its body is read through the same
//! [`RequestBody`] over an adapter on h2's receive stream, and the response is sent with h2's
//! flow control.

use super::conn::{interim_refused, panic_response, serve_connection, CatchUnwind, MAX_DRAIN};
use super::date;
use super::h2_head;
use super::worker::{OpenConnection, Worker};
use crate::body::{give_read_state, take_read_state, BodyProgress, Continue, RequestBody};
use crate::limits::{H2_MAX_LOCAL_ERROR_RESET_STREAMS, H2_MAX_PENDING_ACCEPT_RESET_STREAMS};
use crate::proto::{may_trail, status_allows_body};
use crate::request::{Peer, Request};
use crate::response::{Body, BodyStream, BoxError, Response, TrailedStream};
use crate::service::Service;
use crate::transport::Transport;
use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, StreamExt};
use h2::server::SendResponse;
use h2::{Reason, RecvStream, SendStream};
use http::{header, HeaderName, Method, StatusCode};
use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// The client connection preface that starts every HTTP/2 connection (RFC 9113 §3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// First pause between two peeks at a preface that has arrived only in part; it doubles up to
/// [`PEEK_RETRY_MAX`], so a client that stops half way costs few wake-ups.
const PEEK_RETRY: Duration = Duration::from_millis(1);
const PEEK_RETRY_MAX: Duration = Duration::from_millis(64);

/// Serve a plain TCP connection: HTTP/2 if it opens with the preface, HTTP/1.1 otherwise.
///
/// Once the protocol is known the connection moves to a task of its own, so an HTTP/1.1
/// connection costs what it costs without the `http2` feature: this task's detection state is
/// freed, and no extra layer of future is polled per request.
pub(crate) async fn serve_plain<S: Service>(
    stream: TcpStream,
    peer: Peer,
    worker: OpenConnection<S>,
) {
    // Wait for the first bytes as an idle HTTP/1.1 connection does: the keep-alive timeout and
    // a shutdown close a connection that sends nothing.
    let slot = worker.idle.register(worker.coarse_now());
    let readable = worker.wait_readable(&stream, slot).await;
    worker.idle.unregister(slot);
    if !readable {
        return;
    }
    let is_h2 = match peek_preface(&stream).await {
        Preface::Absent => Some(false),
        Preface::Present => Some(true),
        Preface::Closed => None,
        // Rare: only a client that sends part of the preface first gets here, so the timed
        // wait is boxed to keep this task small.
        Preface::Partial => Box::pin(wait_for_preface(&stream, worker.limits.head_timeout)).await,
    };
    match is_h2 {
        Some(true) => {
            tokio::task::spawn_local(serve_h2(stream, peer, worker));
        }
        Some(false) => {
            tokio::task::spawn_local(serve_connection(stream, peer, worker));
        }
        None => {}
    }
}

/// What a connection's first bytes say about the HTTP/2 preface.
enum Preface {
    /// They differ from the preface: HTTP/1.1.
    Absent,
    /// The whole preface has arrived.
    Present,
    /// What has arrived matches the preface so far.
    Partial,
    /// The connection closed or failed.
    Closed,
}

/// Look at the connection's first bytes without reading them. A first byte other than `P`
/// decides at once.
async fn peek_preface(stream: &TcpStream) -> Preface {
    let mut buf = [0u8; PREFACE.len()];
    let Ok(n) = stream.peek(&mut buf).await else {
        return Preface::Closed;
    };
    if n == 0 {
        Preface::Closed
    } else if buf[..n] != PREFACE[..n] {
        Preface::Absent
    } else if n == PREFACE.len() {
        Preface::Present
    } else {
        Preface::Partial
    }
}

/// Wait, peeking with growing pauses, until the preface has arrived or the bytes turn out to
/// be something else. `None` if the connection closed or the preface did not arrive within
/// `timeout`.
async fn wait_for_preface(stream: &TcpStream, timeout: Duration) -> Option<bool> {
    let wait = async {
        let mut pause = PEEK_RETRY;
        loop {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(PEEK_RETRY_MAX);
            match peek_preface(stream).await {
                Preface::Absent => return Some(false),
                Preface::Present => return Some(true),
                Preface::Closed => return None,
                Preface::Partial => {}
            }
        }
    };
    tokio::time::timeout(timeout, wait).await.ok().flatten()
}

/// Serve an HTTP/2 connection until it closes: its streams served in this task, the connection
/// closed with GOAWAY when the server shuts down or the connection stays without streams for
/// the keep-alive timeout.
pub(crate) async fn serve_h2<T, S>(io: T, peer: Peer, worker: OpenConnection<S>)
where
    T: AsyncRead + AsyncWrite + Unpin + 'static,
    S: Service,
{
    let limits = &worker.limits;
    let mut builder = h2::server::Builder::new();
    builder
        .max_concurrent_streams(limits.h2_max_concurrent_streams)
        .max_header_list_size(u32::try_from(limits.max_head_size).unwrap_or(u32::MAX))
        .max_pending_accept_reset_streams(H2_MAX_PENDING_ACCEPT_RESET_STREAMS)
        .max_local_error_reset_streams(Some(H2_MAX_LOCAL_ERROR_RESET_STREAMS));
    let handshake = tokio::time::timeout(limits.head_timeout, builder.handshake::<_, Bytes>(io));
    let mut conn = match handshake.await {
        Ok(Ok(conn)) => conn,
        Ok(Err(error)) => {
            tracing::debug!(remote = ?peer.addr, %error, "HTTP/2 handshake failed");
            return;
        }
        Err(_) => return,
    };
    let peer = Rc::new(peer);
    let shared = worker.worker();
    // The streams run in this task, their futures in pooled blocks: a task per stream would
    // cost an over-aligned allocation sized to the stream's future, a copy of that future, and
    // a scheduler round per wake-up.
    let mut streams = FuturesUnordered::new();
    let slot = worker.idle.register(worker.coarse_now());
    let mut closing = false;
    loop {
        let event = poll_fn(|cx| {
            // Every stream that has arrived first (polling the connection also sends what the
            // streams wrote since), then the streams: what they write goes out together at
            // the next poll, as one write.
            loop {
                match conn.poll_accept(cx) {
                    Poll::Ready(Some(Ok((request, respond)))) => {
                        worker.idle.touch(slot, worker.coarse_now());
                        streams.push(shared.h2_streams.place(|| {
                            serve_stream(request, respond, shared.clone(), peer.clone())
                        }));
                    }
                    Poll::Ready(Some(Err(error))) => return Poll::Ready(Event::Failed(error)),
                    Poll::Ready(None) => return Poll::Ready(Event::Closed),
                    Poll::Pending => break,
                }
            }
            drive(&mut streams, cx);
            if !closing && worker.idle.wait(slot, cx.waker()) {
                return Poll::Ready(Event::Idle);
            }
            Poll::Pending
        })
        .await;
        match event {
            Event::Failed(error) => {
                tracing::debug!(remote = ?peer.addr, %error, "HTTP/2 connection failed");
                break;
            }
            Event::Closed => break,
            Event::Idle => {
                worker.idle.resume(slot);
                if worker.is_shutting_down() || !conn.has_streams() {
                    // GOAWAY; the open streams finish, within the server's shutdown timeout.
                    conn.graceful_shutdown();
                    closing = true;
                } else {
                    worker.idle.touch(slot, worker.coarse_now());
                }
            }
        }
    }
    worker.idle.unregister(slot);
    // The streams still open finish while the connection sends what they write.
    let _ = poll_fn(|cx| {
        drive(&mut streams, cx);
        match conn.poll_closed(cx) {
            Poll::Ready(closed) if streams.is_empty() => Poll::Ready(closed),
            Poll::Ready(_) => {
                // The connection is gone: nothing a stream still open writes can reach the
                // client, so its work stops here.
                streams.clear();
                Poll::Ready(Ok(()))
            }
            Poll::Pending => Poll::Pending,
        }
    })
    .await;
}

/// What ends a wait in [`serve_h2`]'s loop.
enum Event {
    Failed(h2::Error),
    /// The connection is done: closed by the client, or after a graceful shutdown.
    Closed,
    /// The idle registry woke the connection: idle too long, or the worker is shutting down.
    Idle,
}

/// Poll the connection's streams until none is ready to make progress.
fn drive<F: Future<Output = ()> + Unpin>(streams: &mut FuturesUnordered<F>, cx: &mut Context<'_>) {
    while let Poll::Ready(Some(())) = streams.poll_next_unpin(cx) {}
}

/// Answer one stream with the service.
async fn serve_stream<S: Service>(
    request: http::Request<RecvStream>,
    respond: SendResponse<Bytes>,
    worker: Rc<Worker<S>>,
    peer: Rc<Peer>,
) {
    let limits = &worker.limits;
    let (parts, recv) = request.into_parts();
    let is_head = parts.method == Method::HEAD;
    let (parsed, expects_continue) = h2_head::parse(&parts, limits);
    let mut head = match parsed {
        Ok(head) => head,
        Err(error) => {
            tracing::debug!(remote = ?peer.addr, %error, "refused an HTTP/2 request");
            let response = Response::new(error.status(), error.to_string());
            let mut respond = respond;
            send_response(&mut respond, response, is_head, limits.keep_alive_timeout).await;
            return;
        }
    };
    head.set_http2();
    let end_of_request = recv.is_end_stream();
    // The client waits for a `100` before sending DATA (RFC 9110 §10.1.1): it goes out when
    // the service first reads the body, as on HTTP/1.1.
    let expect_continue = !end_of_request && expects_continue;
    let respond = Rc::new(RefCell::new(respond));
    let body = H2Body {
        recv: RefCell::new(recv),
        pending: RefCell::new(Bytes::new()),
        respond: respond.clone(),
    };
    let mut state = take_read_state();
    state.start_body(head.body_kind(), expect_continue, limits);
    if matches!(state.body, BodyProgress::Done) && !end_of_request {
        // DATA follows without `Content-Length`: the body runs to the end of the stream.
        head.set_unsized_body();
        state.body = BodyProgress::UntilEnd;
    }
    let request = Request::new(head, RequestBody::new(&body, &mut state), &peer);
    let answer = async {
        match catch_unwind(AssertUnwindSafe(|| worker.service.call(request))) {
            Err(panic) => panic_response(panic),
            Ok(future) => match (CatchUnwind { inner: future }).await {
                Ok(response) => response,
                Err(panic) => panic_response(panic),
            },
        }
    };
    // A stream the client resets is not worth finishing: the service's future is dropped, so
    // opening and resetting streams in a loop costs the server no work past the reset.
    let reset = poll_fn(|cx| respond.borrow_mut().poll_reset(cx));
    // Biased: a handler that has finished keeps its answer even when the reset came with it.
    let mut response = tokio::select! {
        biased;
        response = answer => response,
        _ = reset => {
            give_read_state(state);
            return;
        }
    };
    if response.status().is_informational() {
        response = interim_refused(response.status());
    }
    // A client still waiting for its `100 Continue` sends no more: nothing to read.
    let awaits_continue = state.expect == Continue::Expected;
    give_read_state(state);
    let H2Body {
        recv,
        pending,
        respond: body_side,
    } = body;
    drop(body_side);
    // The body's handle, the only other holder, is dropped: this always unwraps.
    let Ok(respond) = Rc::try_unwrap(respond) else {
        return;
    };
    let mut respond = respond.into_inner();
    send_response(&mut respond, response, is_head, limits.keep_alive_timeout).await;
    if !awaits_continue {
        let unread = pending.into_inner().len();
        drain_request(recv.into_inner(), unread, limits.keep_alive_timeout).await;
    }
    // Dropping the stream's halves after a response that ended before the request body did
    // makes h2 send RST_STREAM(NO_ERROR) after the response, so the client stops sending.
}

/// Read and discard what the service left of the request, as HTTP/1.1 does: at most
/// `MAX_DRAIN` bytes, within `timeout`. While the stream stays open, h2 still refuses a
/// malformed end (a second HEADERS without END_STREAM, DATA that disagrees with
/// Content-Length) as a protocol error; past either bound, the caller's drop resets it.
async fn drain_request(mut recv: RecvStream, unread: usize, timeout: Duration) {
    if recv.is_end_stream() {
        return;
    }
    let _ = recv.flow_control().release_capacity(unread);
    let rest = async {
        let mut left = MAX_DRAIN;
        while let Some(Ok(data)) = recv.data().await {
            let _ = recv.flow_control().release_capacity(data.len());
            match left.checked_sub(data.len() as u64) {
                Some(rest) => left = rest,
                None => return,
            }
        }
    };
    let _ = tokio::time::timeout(timeout, rest).await;
}

/// Header fields HTTP/2 forbids (RFC 9113 §8.2.2): dropped from responses.
fn is_connection_specific(name: &HeaderName) -> bool {
    name == header::CONNECTION
        || name == header::TRANSFER_ENCODING
        || name == header::UPGRADE
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

/// Send the response's head and body. A body that fails, or a sized stream whose length is
/// wrong, resets the stream, so the client sees the body is incomplete.
/// `stall`: how long the client may keep the flow-control window shut before the stream is
/// reset, as HTTP/1.1 disconnects a client that takes no bytes for the keep-alive timeout.
async fn send_response(
    respond: &mut SendResponse<Bytes>,
    mut response: Response,
    is_head: bool,
    stall: Duration,
) {
    let status = response.status();
    let mut body = response.take_body();
    if status == StatusCode::RESET_CONTENT {
        // A 205 has no content (RFC 9110 §15.3.6).
        body = Body::Empty;
        response.headers_mut().remove(header::CONTENT_LENGTH);
    }
    let mut head = http::Response::new(());
    *head.status_mut() = status;
    let headers = head.headers_mut();
    // One pass over the service's fields: the length is set aside, to be decided below.
    let (mut declared_length, mut has_date) = (None, false);
    for (name, value) in response.headers() {
        if name == header::CONTENT_LENGTH {
            declared_length = Some(value);
            continue;
        }
        if name == header::DATE {
            has_date = true;
        } else if is_connection_specific(name) {
            continue;
        }
        headers.append(name.clone(), value.clone());
    }
    let allows_body = status_allows_body(status);
    // The length is the body's own, as HTTP/1.1 frames it: a service's header that disagrees
    // would make the message malformed (RFC 9113 §8.1.1). A HEAD answer without a body keeps
    // the length the service declared, as does a status without content.
    let declared = is_head && body.is_empty() && declared_length.is_some();
    if allows_body && !declared {
        if let Some(len) = body.len() {
            headers.append(header::CONTENT_LENGTH, len.into());
        }
    } else if let Some(length) = declared_length {
        headers.append(header::CONTENT_LENGTH, length.clone());
    }
    if !has_date {
        headers.append(header::DATE, date::header_value());
    }
    let no_body = is_head || !allows_body || body.is_empty();
    let mut send = match respond.send_response(head, no_body) {
        Ok(send) => send,
        Err(error) => {
            tracing::debug!(%error, "could not send an HTTP/2 response");
            return;
        }
    };
    if no_body {
        return;
    }
    let sent: Result<(), crate::response::BoxError> = match body {
        Body::Empty => Ok(()),
        Body::Static(bytes) => send_all(&mut send, Bytes::from_static(bytes), true, stall).await,
        Body::Bytes(bytes) => send_all(&mut send, bytes, true, stall).await,
        Body::Vec(vec) => send_all(&mut send, Bytes::from(vec), true, stall).await,
        Body::Stream(stream) => send_stream(&mut send, stream, None, stall).await,
        Body::SizedStream(len, stream) => send_stream(&mut send, stream, Some(len), stall).await,
        Body::StreamWithTrailers(trailed) => {
            send_stream_with_trailers(&mut send, *trailed, stall).await
        }
    };
    if let Err(error) = sent {
        tracing::debug!(%error, "an HTTP/2 response body failed; resetting the stream");
        send.send_reset(Reason::INTERNAL_ERROR);
    }
}

/// Send `data` as the client's flow control allows; `end` ends the stream with it. Fails if
/// the window stays shut for `stall`.
async fn send_all(
    send: &mut SendStream<Bytes>,
    mut data: Bytes,
    end: bool,
    stall: Duration,
) -> Result<(), crate::response::BoxError> {
    if data.is_empty() {
        return match end {
            true => Ok(send.send_data(data, true)?),
            false => Ok(()),
        };
    }
    // Room for the whole body already: it goes out without waiting (the common case for a
    // small body on a stream whose window the client keeps open).
    send.reserve_capacity(data.len());
    if send.capacity() >= data.len() {
        return Ok(send.send_data(data, end)?);
    }
    while !data.is_empty() {
        send.reserve_capacity(data.len());
        let room = poll_fn(|cx| send.poll_capacity(cx));
        let room = match tokio::time::timeout(stall, room).await {
            Ok(Some(room)) => room?,
            Ok(None) => return Err(h2::Error::from(Reason::STREAM_CLOSED).into()),
            Err(_) => {
                return Err("the client took no response bytes for the keep-alive timeout".into())
            }
        };
        if room == 0 {
            continue;
        }
        let chunk = data.split_to(room.min(data.len()));
        send.send_data(chunk, end && data.is_empty())?;
    }
    Ok(())
}

/// Send a streamed body chunk by chunk, then end the stream; with `expected`, it must add up to
/// that many bytes.
async fn send_stream(
    send: &mut SendStream<Bytes>,
    stream: BodyStream,
    expected: Option<u64>,
    stall: Duration,
) -> Result<(), crate::response::BoxError> {
    send_chunks(send, stream, expected, stall).await?;
    send.send_data(Bytes::new(), true)?;
    Ok(())
}

/// Send a streamed body, then end the stream with the trailers that may be sent
/// ([`may_trail`], and none of the fields HTTP/2 forbids).
async fn send_stream_with_trailers(
    send: &mut SendStream<Bytes>,
    trailed: TrailedStream,
    stall: Duration,
) -> Result<(), crate::response::BoxError> {
    let TrailedStream { stream, trailers } = trailed;
    send_chunks(send, stream, None, stall).await?;
    let made = trailers.await;
    let mut fields = http::HeaderMap::with_capacity(made.len());
    for (name, value) in &made {
        if may_trail(name) && !is_connection_specific(name) {
            fields.append(name.clone(), value.clone());
        }
    }
    send.send_trailers(fields)?;
    Ok(())
}

/// Send a streamed body's chunks as flow control allows, without ending the stream.
async fn send_chunks(
    send: &mut SendStream<Bytes>,
    mut stream: BodyStream,
    expected: Option<u64>,
    stall: Duration,
) -> Result<(), crate::response::BoxError> {
    let mut total = 0u64;
    while let Some(chunk) = next_unless_reset(send, &mut stream).await? {
        let chunk = chunk?;
        total += chunk.len() as u64;
        if expected.is_some_and(|len| total > len) {
            return Err("a sized body stream yielded more than its length".into());
        }
        send_all(send, chunk, false, stall).await?;
    }
    if expected.is_some_and(|len| total != len) {
        return Err("a sized body stream ended before its length".into());
    }
    Ok(())
}

/// The body's next item, or an error if the client resets the stream while the body has
/// nothing ready: the producer (an event stream, a long poll) then learns the client is gone.
async fn next_unless_reset(
    send: &mut SendStream<Bytes>,
    stream: &mut BodyStream,
) -> Result<Option<Result<Bytes, BoxError>>, BoxError> {
    poll_fn(|cx| match stream.as_mut().poll_next(cx) {
        Poll::Ready(item) => Poll::Ready(Ok(item)),
        Poll::Pending => send
            .poll_reset(cx)
            .map(|_| Err("the client reset the stream".into())),
    })
    .await
}

/// A stream's request body, read through the engine's body reader as if from a transport:
/// the bytes of h2's DATA frames, with the flow-control window released as they are taken.
struct H2Body {
    recv: RefCell<RecvStream>,
    /// Received and not yet taken.
    pending: RefCell<Bytes>,
    /// The stream's response side, for the interim `100 Continue`.
    respond: Rc<RefCell<SendResponse<Bytes>>>,
}

impl H2Body {
    /// Make sure `pending` holds data, or say why not: `Ok(false)` at the end of the body.
    fn poll_fill(&self, cx: &mut Context<'_>) -> Poll<io::Result<bool>> {
        if !self.pending.borrow().is_empty() {
            return Poll::Ready(Ok(true));
        }
        let mut recv = self.recv.borrow_mut();
        loop {
            return match recv.poll_data(cx) {
                Poll::Ready(Some(Ok(data))) if data.is_empty() => continue,
                Poll::Ready(Some(Ok(data))) => {
                    *self.pending.borrow_mut() = data;
                    Poll::Ready(Ok(true))
                }
                Poll::Ready(Some(Err(error))) => Poll::Ready(Err(io::Error::other(error))),
                Poll::Ready(None) => Poll::Ready(Ok(false)),
                Poll::Pending => Poll::Pending,
            };
        }
    }
}

impl Transport for H2Body {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_fill(cx).map_ok(|_| ())
    }

    fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        match self.poll_fill(cx) {
            Poll::Ready(Ok(true)) => {}
            Poll::Ready(Ok(false)) => return Poll::Ready(Ok(0)),
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
            Poll::Pending => return Poll::Pending,
        }
        let mut pending = self.pending.borrow_mut();
        let n = pending.len().min(buf.len());
        buf[..n].copy_from_slice(&pending.split_to(n));
        // Consumed: the client may send this much more.
        let _ = self.recv.borrow_mut().flow_control().release_capacity(n);
        Poll::Ready(Ok(n))
    }

    /// Only the interim `100 Continue` is ever written to a body's transport: here it goes out
    /// as an informational HEADERS frame.
    fn poll_write(&self, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let mut interim = http::Response::new(());
        *interim.status_mut() = StatusCode::CONTINUE;
        let sent = match self.respond.try_borrow_mut() {
            Ok(mut respond) => respond
                .send_informational(interim)
                .map_err(io::Error::other),
            Err(_) => Err(io::Error::other("the stream's response side is in use")),
        };
        Poll::Ready(sent.map(|()| buf.len()))
    }

    fn poll_shutdown(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
