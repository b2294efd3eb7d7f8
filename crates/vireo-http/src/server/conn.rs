//! The connection state machine: read a batch, parse every complete request in it, call the
//! service for each in order, encode the responses into one buffer, write once.

use super::date;
use super::io::{flush, linger_close, write_all, write_now};
use super::worker::{OpenConnection, Worker};
use super::write_buffers::{give_write_buffer, take_write_buffer};
use crate::body::{
    give_read_state, take_read_state, BodyProgress, Continue, ReadState, RequestBody,
};
use crate::head::Head;
use crate::proto::{
    encode_chunk, encode_head, encode_last_chunk_with_trailers, parse_head, status_allows_body,
    Connection, Framing, HeadFields, ProtoError, LAST_CHUNK,
};
use crate::request::{Peer, Request};
use crate::response::{Body, BodyStream, BoxError, Response, TrailedStream};
use crate::service::Service;
use crate::transport::Transport;
use crate::upgrade::{OnUpgrade, Upgraded};
use bytes::Bytes;
use http::{Method, StatusCode, Version};
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
use tokio::time::Instant;

/// Bodies a handler left unread are read and discarded up to this size so the connection can
/// be kept alive; a larger remainder is cheaper to drop with the connection.
pub(super) const MAX_DRAIN: u64 = 64 * 1024;

/// Response bodies up to this size are copied into the batch's output buffer; larger ones are
/// written from their own memory after the buffer is flushed.
const COPY_BODY_MAX: usize = 16 * 1024;

/// How a busy spell of a connection ends.
enum End {
    /// Every request so far is answered and written, and no bytes are left: wait for more.
    Idle,
    /// Close now: the peer is gone, or timed out while idle.
    Quietly,
    /// Close after a final response, lingering so the client reads it.
    Linger,
    /// A `101 Switching Protocols` is written: hand the connection to the new protocol.
    Upgrade(Box<Handoff>),
}

/// What an upgraded connection is handed: the function that takes it over and the bytes read
/// past the request head.
struct Handoff {
    on_upgrade: crate::upgrade::UpgradeFn,
    unread: Vec<u8>,
}

/// What waiting for the next request head gave.
enum NextHead {
    /// A complete head, and its length in the read buffer.
    Parsed(Head, usize),
    /// Nothing left to read for now.
    Idle,
    /// The connection is over.
    Closed,
}

/// Serve one connection until it closes.
///
/// This future is what an idle connection costs, so it holds only the socket and its slot in
/// the idle registry. Serving requests (buffers, the request, the service's future, the
/// response) happens in a larger future placed in a block from the worker's pool when bytes
/// arrive, and given back as soon as the connection is idle again.
// An async block, not an async fn: an async fn would keep a second copy of its arguments.
#[allow(clippy::manual_async_fn)]
pub(crate) fn serve_connection<T: Transport, S: Service>(
    stream: T,
    remote: Peer,
    worker: OpenConnection<S>,
) -> impl Future<Output = ()> {
    async move {
        let idle_slot = worker.idle.register(worker.coarse_now());
        let end = loop {
            if !worker.wait_readable(&stream, idle_slot).await {
                break End::Quietly;
            }
            let busy = || serve_until_idle(&stream, &worker, &remote);
            match worker.busy_futures.place(busy).await {
                // Only a waiting connection can time out, so its idle time is counted from the
                // end of the busy spell, not from each request in it.
                End::Idle => worker.idle.touch(idle_slot, worker.coarse_now()),
                end => break end,
            }
        };
        worker.idle.unregister(idle_slot);
        match end {
            End::Linger => Box::pin(linger_close(&stream)).await,
            End::Upgrade(handoff) => {
                // The worker's guard (`worker`) lives until the new protocol is done, so the
                // connection still counts as open for graceful shutdown.
                let io = Upgraded::new(Box::new(stream), handoff.unread, worker.draining.clone());
                let upgraded = CatchUnwind {
                    inner: (handoff.on_upgrade)(io),
                };
                if let Err(panic) = upgraded.await {
                    // As for a service: the panic ends this connection, not the worker.
                    let message = panic_message(&panic);
                    tracing::error!(panic = message, "an upgraded connection panicked; closing");
                }
            }
            End::Idle | End::Quietly => {}
        }
    }
}

/// Serve the requests that arrive on a readable connection until it is idle again or ends.
async fn serve_until_idle<S: Service>(
    stream: &dyn Transport,
    worker: &Worker<S>,
    remote: &Peer,
) -> End {
    let mut conn = Conn {
        stream,
        worker,
        remote,
        read: take_read_state(),
        out: take_write_buffer(),
        readable: true,
    };
    let end = conn.run().await;
    conn.release_buffers();
    end
}

/// The future's output, or `None` if the peer closes the connection first (the future is
/// then dropped unfinished).
async fn unless_peer_closes<F: Future>(
    stream: &dyn Transport,
    future: Pin<&mut F>,
) -> Option<F::Output> {
    let mut future = future;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        stream.poll_peer_closed(cx).map(|()| None)
    })
    .await
}

/// What a response must match in the request it answers.
#[derive(Clone, Copy)]
struct ReplyTo {
    version: Version,
    is_head: bool,
    keep_alive: bool,
}

/// One connection's state.
struct Conn<'c, S> {
    /// Behind `dyn`, so the request loop is compiled once per service rather than once per
    /// transport as well; its transport calls are a few per batch.
    stream: &'c dyn Transport,
    worker: &'c Worker<S>,
    remote: &'c Peer,
    /// Taken from the pool for this busy spell; back in the pool while idle.
    read: Box<ReadState>,
    /// Encoded responses not yet written.
    out: Vec<u8>,
    /// The socket was reported readable and has not been read since: read before going idle.
    readable: bool,
}

impl<S: Service> Conn<'_, S> {
    async fn run(&mut self) -> End {
        let limits = &self.worker.limits;
        let stall = limits.keep_alive_timeout;
        let mut batch = 0;
        loop {
            let (head, head_len) = match self.next_head().await {
                Ok(NextHead::Parsed(head, len)) => (head, len),
                Ok(NextHead::Idle) => return End::Idle,
                Ok(NextHead::Closed) => return End::Quietly,
                Err(error) => {
                    tracing::debug!(remote = ?self.remote.addr, %error, "refused a request");
                    return Box::pin(refuse(self.stream, &mut self.out, error, stall)).await;
                }
            };
            batch += 1;
            self.worker.writes.request_started();
            let state = &mut self.read;
            state.buf.consume(head_len);
            state.start_body(head.body_kind(), head.expects_continue(), limits);
            let reply = ReplyTo {
                version: head.version(),
                is_head: head.method() == Method::HEAD,
                keep_alive: head.keep_alive(),
            };
            if head.expects_continue() && !self.out.is_empty() {
                // The interim 100 must follow every earlier response on the wire.
                if !write_out(self.stream, &mut self.out, stall).await {
                    return End::Quietly;
                }
            }
            let request = Request::new(head, RequestBody::new(self.stream, state), self.remote);
            // The service's future is held here, in this function's own state, and not in a
            // nested future: it is polled once, and only if it is not ready at once are the
            // responses encoded so far written while it works.
            let (mut response, panicked) = match catch_unwind(AssertUnwindSafe(|| {
                self.worker.service.call(request)
            })) {
                Err(panic) => (panic_response(panic), true),
                Ok(future) => {
                    let mut future = pin!(CatchUnwind { inner: future });
                    let first =
                        std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
                    let result = match first {
                        Poll::Ready(result) => result,
                        Poll::Pending => {
                            if !self.out.is_empty() {
                                // A failed write shows up again, and ends the connection, when
                                // this response is written.
                                let _ = Box::pin(flush(self.stream, &mut self.out, stall)).await;
                            }
                            // Without half-closes, the engine watches the connection while
                            // the service works: a client that leaves cancels the work. Body
                            // bytes still unread are not a close, so the watch sees the end
                            // once the service has read the body (or at once without one).
                            if !self.worker.half_close {
                                let watched = unless_peer_closes(self.stream, future.as_mut());
                                match Box::pin(watched).await {
                                    Some(result) => result,
                                    None => return End::Quietly,
                                }
                            } else {
                                future.await
                            }
                        }
                    };
                    match result {
                        Ok(response) => (response, false),
                        Err(panic) => (panic_response(panic), true),
                    }
                }
            };
            let mut close = panicked || !reply.keep_alive || self.worker.is_shutting_down();
            if !close && !state.body_done() && !Box::pin(drain_body(self.stream, state)).await {
                close = true;
            }
            // The one check an ordinary response pays for upgrades and interim statuses.
            if response.status().is_informational() {
                if response.status() == StatusCode::SWITCHING_PROTOCOLS {
                    if let Some(on_upgrade) = response.extensions().get::<OnUpgrade>() {
                        let on_upgrade = on_upgrade.take();
                        return Box::pin(switch_protocols(
                            self, response, on_upgrade, reply, close,
                        ))
                        .await;
                    }
                }
                response = interim_refused(response.status());
                close = true;
            }
            let (close, rest) = encode_response(&mut self.out, response, reply, close);
            // Large and streamed bodies are written from a boxed future: they are rare, and the
            // future for them would otherwise make every connection's state larger.
            if let Some(rest) = rest {
                // Without half-closes, a client that leaves also ends a stream waiting on its
                // producer (an event stream, a long poll), which then learns it is gone.
                let watch = !self.worker.half_close;
                if Box::pin(write_rest(self.stream, &mut self.out, rest, stall, watch))
                    .await
                    .is_err()
                {
                    return End::Quietly;
                }
            }
            if close {
                return match write_out(self.stream, &mut self.out, stall).await {
                    true => End::Linger,
                    false => End::Quietly,
                };
            }
            if batch >= limits.max_pipeline_batch || self.out.len() >= limits.max_buffered_output {
                batch = 0;
                if !write_out(self.stream, &mut self.out, stall).await {
                    return End::Quietly;
                }
            }
        }
    }

    /// Wait for and parse the next request head. Pending output is written before waiting
    /// for input; with no bytes left to work on, the connection is idle.
    async fn next_head(&mut self) -> Result<NextHead, ProtoError> {
        let limits = &self.worker.limits;
        let mut head_deadline = None;
        // Taken from the pool only once there are bytes to parse: idle connections hold no head.
        let mut head: Option<Head> = None;
        let mut held_back = false;
        // How much of the buffer the last parse found to be an incomplete head.
        let mut incomplete = 0;
        loop {
            let data = self.read.buf.data();
            if !data.is_empty() && worth_parsing(data, incomplete, limits.max_head_size) {
                let parsed = head.get_or_insert_with(Head::take);
                if let Some(len) = parse_head(data, limits, parsed)? {
                    return Ok(NextHead::Parsed(
                        head.take().expect("just parsed into"),
                        len,
                    ));
                }
                incomplete = data.len();
                count_incomplete_parse(incomplete);
                head_deadline.get_or_insert_with(|| Instant::now() + limits.head_timeout);
                // Empty lines before the request line are skipped once, not scanned again by
                // every later parse.
                let blank = empty_lines_to_drop(self.read.buf.data());
                self.read.buf.consume(blank);
                incomplete -= blank;
            }
            if !self.out.is_empty() {
                // About to go idle: the responses wait for the worker's other ready
                // connections, so they leave with theirs (see `coalesce`).
                if self.read.buf.is_empty() && !self.readable && !held_back {
                    held_back = true;
                    self.worker.writes.hold_back().await;
                    continue;
                }
                if !write_out(self.stream, &mut self.out, limits.keep_alive_timeout).await {
                    return Ok(NextHead::Closed);
                }
            }
            let state = &mut self.read;
            if state.buf.is_empty() && !std::mem::take(&mut self.readable) {
                // Between requests, with everything read that was ready: go idle.
                return Ok(NextHead::Idle);
            }
            let spare = state.buf.spare(limits.max_head_size);
            let room = spare.len();
            let received = match head_deadline {
                None => self.stream.try_read(spare),
                Some(deadline) => {
                    let read = tokio::time::timeout_at(
                        deadline,
                        std::future::poll_fn(|cx| self.stream.poll_read(cx, spare)),
                    );
                    match Box::pin(read).await {
                        Ok(result) => result,
                        Err(_) => return Ok(NextHead::Closed),
                    }
                }
            };
            match received {
                Ok(0) => return Ok(NextHead::Closed),
                Ok(n) => {
                    state.buf.filled(n);
                    if n < room {
                        self.stream.mark_drained();
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return Ok(NextHead::Closed),
            }
        }
    }

    /// Give the read state and the write buffer back to the worker's pools.
    fn release_buffers(self) {
        give_read_state(self.read);
        give_write_buffer(self.out);
    }
}

/// Whether to parse the buffer again, after a parse found its first `incomplete` bytes to be an
/// incomplete head: only once a line has ended since, or the buffer has doubled or is full, so a
/// head sent a byte at a time costs linear work, not quadratic.
fn worth_parsing(data: &[u8], incomplete: usize, max_head_size: usize) -> bool {
    incomplete == 0
        || data.len() >= incomplete * 2
        || data.len() >= max_head_size
        || memchr::memchr(b'\n', &data[incomplete..]).is_some()
}

/// The empty lines at the start of `data` (RFC 9112 §2.2 lets a server ignore them before a
/// request line) that can go: all but the last, so a client that sends only line ends is
/// still held to the head timeout.
fn empty_lines_to_drop(data: &[u8]) -> usize {
    let (mut at, mut last) = (0, 0);
    loop {
        let len = match &data[at..] {
            [b'\n', ..] => 1,
            [b'\r', b'\n', ..] => 2,
            _ => return last,
        };
        last = at;
        at += len;
    }
}

#[cfg(test)]
thread_local! {
    /// Parses of this thread's connections that found an incomplete head, and the bytes they
    /// went through.
    pub(super) static INCOMPLETE_PARSES: std::cell::Cell<(usize, usize)> =
        const { std::cell::Cell::new((0, 0)) };
}

fn count_incomplete_parse(_bytes: usize) {
    #[cfg(test)]
    INCOMPLETE_PARSES.with(|count| {
        let (parses, bytes) = count.get();
        count.set((parses + 1, bytes + _bytes));
    });
}

/// Write and empty `out`; `false` if the connection failed. The common case, where the socket
/// takes everything at once, needs no await; waiting for a slow reader is boxed.
async fn write_out(stream: &dyn Transport, out: &mut Vec<u8>, stall: std::time::Duration) -> bool {
    match write_now(stream, out) {
        Ok(true) => true,
        Ok(false) => Box::pin(flush(stream, out, stall)).await.is_ok(),
        Err(_) => {
            out.clear();
            false
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a non-string payload")
}

/// What is sent instead of a 1xx a service gave as its answer: a 1xx is interim (RFC 9110
/// §15.2), and sent as final it would make the client take the next response for this request.
pub(super) fn interim_refused(status: StatusCode) -> Response {
    tracing::error!(%status, "a service answered with an interim status; answering 500");
    Response::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
}

pub(super) fn panic_response(panic: Box<dyn std::any::Any + Send>) -> Response {
    let message = panic_message(&panic);
    tracing::error!(panic = message, "a service panicked; answering 500");
    Response::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
}

pin_project_lite::pin_project! {
    /// A future that turns a panic while it is polled into an error.
    pub(super) struct CatchUnwind<F> {
        #[pin]
        pub(super) inner: F,
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.project().inner;
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// Read and discard what the service left of the body, so the next request can be parsed.
/// `false` when the connection must close instead.
async fn drain_body(stream: &dyn Transport, state: &mut ReadState) -> bool {
    match state.body {
        BodyProgress::Done => return true,
        BodyProgress::Failed => return false,
        _ if state.expect == Continue::Expected => {
            // The client is still waiting for leave to send: closing is the only safe answer.
            return false;
        }
        _ => {}
    }
    state.limit = state.received + MAX_DRAIN;
    let mut body = RequestBody::new(stream, state);
    loop {
        match body.chunk().await {
            Ok(Some(_)) => {}
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
}

/// What is left to send of a response after its head (and a small body) are encoded.
enum Rest {
    /// A body too large to copy into the batch buffer, or a chunked stream with trailers.
    Later(Body),
    /// A body produced over time, with the framing announced in the head.
    Stream(BodyStream, Framing),
    /// A body produced over time whose length was announced.
    Sized(u64, BodyStream),
}

/// Encode a response's head, and its body if small, into `out`. Returns whether the connection
/// must close after it (the caller's reasons, or the response's own) and what remains to send.
fn encode_response(
    out: &mut Vec<u8>,
    mut response: Response,
    reply: ReplyTo,
    close: bool,
) -> (bool, Option<Rest>) {
    let status = response.status();
    let http10 = reply.version == Version::HTTP_10;
    let framing = match response.body().len() {
        _ if !status_allows_body(status) => Framing::NoBody,
        // A 205 has no content, and says so with a zero length (RFC 9110 §15.3.6).
        _ if status == StatusCode::RESET_CONTENT => {
            response.take_body();
            Framing::Length(0)
        }
        // A HEAD answer without a body may say the length GET would send (RFC 9110 §9.3.2).
        Some(0) if reply.is_head => Framing::Length(declared_length(response.headers())),
        Some(len) => Framing::Length(len),
        None if http10 => Framing::UntilClose,
        None => Framing::Chunked,
    };
    let close = close || framing == Framing::UntilClose;
    let connection = if close {
        Connection::Close
    } else if http10 {
        Connection::KeepAlive
    } else {
        Connection::Default
    };
    let fields = match response.only_content_type() {
        Some(content_type) => HeadFields::ContentType(content_type),
        None => HeadFields::Map(response.headers()),
    };
    let sent =
        date::with_current(|date| encode_head(out, status, fields, framing, connection, date));
    let close = sent == Connection::Close;
    if reply.is_head || framing == Framing::NoBody {
        return (close, None);
    }
    // A small body is copied from where it lies; only one sent later is moved out of the
    // response.
    if let Some(bytes) = response.body().in_memory() {
        if bytes.len() <= COPY_BODY_MAX {
            out.extend_from_slice(bytes);
            return (close, None);
        }
    }
    let rest = match response.take_body() {
        Body::Empty => return (close, None),
        large @ (Body::Static(_) | Body::Bytes(_) | Body::Vec(_)) => Rest::Later(large),
        Body::Stream(stream) => Rest::Stream(stream, framing),
        Body::SizedStream(len, stream) => Rest::Sized(len, stream),
        trailed @ Body::StreamWithTrailers(_) if framing == Framing::Chunked => {
            Rest::Later(trailed)
        }
        // Without chunked encoding (HTTP/1.0) there is nowhere to put trailers.
        Body::StreamWithTrailers(trailed) => Rest::Stream(trailed.stream, framing),
    };
    (close, Some(rest))
}

/// The `Content-Length` a service set itself, if one valid value; 0 otherwise.
fn declared_length(headers: &http::HeaderMap) -> u64 {
    let mut values = headers.get_all(http::header::CONTENT_LENGTH).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// Send what `encode_response` left, after the buffered responses before it.
async fn write_rest(
    stream: &dyn Transport,
    out: &mut Vec<u8>,
    rest: Rest,
    stall: std::time::Duration,
    watch: bool,
) -> Result<(), ()> {
    match rest {
        Rest::Later(Body::StreamWithTrailers(trailed)) => {
            let TrailedStream {
                stream: body,
                trailers,
            } = *trailed;
            write_stream(stream, out, body, Framing::Chunked, stall, watch).await?;
            encode_last_chunk_with_trailers(out, &trailers.await);
            Ok(())
        }
        Rest::Later(body) => {
            flush(stream, out, stall).await.map_err(drop)?;
            let bytes = body.in_memory().unwrap_or_default();
            write_all(stream, bytes, stall).await.map_err(drop)
        }
        Rest::Stream(body, framing) => {
            write_stream(stream, out, body, framing, stall, watch).await?;
            if framing == Framing::Chunked {
                out.extend_from_slice(LAST_CHUNK);
            }
            Ok(())
        }
        Rest::Sized(len, body) => write_sized_stream(stream, out, body, len, stall, watch).await,
    }
}

/// The body's next item; with `watch`, `Err` if the peer closes the connection while the
/// body has nothing ready.
async fn next_chunk(
    stream: &dyn Transport,
    body: &mut BodyStream,
    watch: bool,
) -> Result<Option<Result<Bytes, BoxError>>, ()> {
    std::future::poll_fn(|cx| match body.as_mut().poll_next(cx) {
        Poll::Ready(item) => Poll::Ready(Ok(item)),
        Poll::Pending if watch => stream.poll_peer_closed(cx).map(|()| {
            tracing::debug!("the client left while a streamed body waited; closing");
            Err(())
        }),
        Poll::Pending => Poll::Pending,
    })
    .await
}

/// The body's next chunk. What `out` holds (the head, earlier chunks) is written first only
/// when the body has nothing ready, so a head and the chunk that follows at once leave in one
/// write, and nothing waits in `out` while the body waits. A body that fails is cut short.
async fn next_chunk_after(
    stream: &dyn Transport,
    out: &mut Vec<u8>,
    body: &mut BodyStream,
    stall: std::time::Duration,
    watch: bool,
) -> Result<Option<Bytes>, ()> {
    let mut ready = None;
    if !out.is_empty() {
        if out.len() < COPY_BODY_MAX {
            if let Poll::Ready(item) = body
                .as_mut()
                .poll_next(&mut Context::from_waker(Waker::noop()))
            {
                ready = Some(item);
            }
        }
        if ready.is_none() {
            flush(stream, out, stall).await.map_err(drop)?;
        }
    }
    let item = match ready {
        Some(item) => item,
        None => next_chunk(stream, body, watch).await?,
    };
    match item {
        Some(Err(error)) => {
            tracing::debug!(%error, "a streamed body failed; closing without the rest of it");
            cut_short(stream, out, stall).await.map(|()| None)
        }
        Some(Ok(chunk)) => Ok(Some(chunk)),
        None => Ok(None),
    }
}

/// Queue a chunk of a body after what `out` holds: copied if small, else written from where
/// it lies after `out`.
async fn put_chunk(
    stream: &dyn Transport,
    out: &mut Vec<u8>,
    chunk: &[u8],
    stall: std::time::Duration,
) -> Result<(), ()> {
    if chunk.len() <= COPY_BODY_MAX {
        out.extend_from_slice(chunk);
        return Ok(());
    }
    flush(stream, out, stall).await.map_err(drop)?;
    write_all(stream, chunk, stall).await.map_err(drop)
}

/// Send each chunk as soon as the stream has no next one ready. At most `COPY_BODY_MAX` bytes
/// wait in `out` before the next chunk is polled, so a slow reader holds back the producer
/// instead of filling memory. The last chunk is left to the caller, which may add trailers to
/// it, and what `out` holds at the end is written with the connection's next write.
async fn write_stream(
    stream: &dyn Transport,
    out: &mut Vec<u8>,
    mut body: BodyStream,
    framing: Framing,
    stall: std::time::Duration,
    watch: bool,
) -> Result<(), ()> {
    let chunked = framing == Framing::Chunked;
    while let Some(chunk) = next_chunk_after(stream, out, &mut body, stall, watch).await? {
        if chunked {
            encode_chunk(out, &chunk);
        } else {
            put_chunk(stream, out, &chunk, stall).await?;
        }
    }
    Ok(())
}

/// Send a stream whose total length was announced, checking that it keeps its word.
async fn write_sized_stream(
    stream: &dyn Transport,
    out: &mut Vec<u8>,
    mut body: BodyStream,
    len: u64,
    stall: std::time::Duration,
    watch: bool,
) -> Result<(), ()> {
    let mut sent = 0u64;
    while let Some(chunk) = next_chunk_after(stream, out, &mut body, stall, watch).await? {
        sent += chunk.len() as u64;
        if sent > len {
            tracing::error!(
                len,
                "a sized body yielded more bytes than announced; closing"
            );
            return cut_short(stream, out, stall).await;
        }
        put_chunk(stream, out, &chunk, stall).await?;
    }
    if sent < len {
        tracing::error!(len, sent, "a sized body ended early; closing");
        return cut_short(stream, out, stall).await;
    }
    Ok(())
}

/// A body that cannot be finished: what it sent before goes out, and the connection closes.
async fn cut_short(
    stream: &dyn Transport,
    out: &mut Vec<u8>,
    stall: std::time::Duration,
) -> Result<(), ()> {
    let _ = flush(stream, out, stall).await;
    Err(())
}

/// Write the `101` of an upgrade and end HTTP/1.1 on this connection. An upgrade that cannot
/// happen (an HTTP/1.0 request, `Connection: close`, a server shutting down, a function already
/// used) is answered with an error instead, and the connection closes.
async fn switch_protocols<S: Service>(
    conn: &mut Conn<'_, S>,
    response: Response,
    on_upgrade: Option<crate::upgrade::UpgradeFn>,
    reply: ReplyTo,
    close: bool,
) -> End {
    let stall = conn.worker.limits.keep_alive_timeout;
    let on_upgrade = match on_upgrade {
        Some(f) if !close && reply.version == Version::HTTP_11 => f,
        _ => {
            let status = if conn.worker.is_shutting_down() {
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::BAD_REQUEST
            };
            let refusal = Response::new(status, status.canonical_reason().unwrap_or("Error"));
            let (_, rest) = encode_response(&mut conn.out, refusal, reply, true);
            debug_assert!(rest.is_none());
            return match write_out(conn.stream, &mut conn.out, stall).await {
                true => End::Linger,
                false => End::Quietly,
            };
        }
    };
    date::with_current(|date| {
        encode_head(
            &mut conn.out,
            StatusCode::SWITCHING_PROTOCOLS,
            HeadFields::Map(response.headers()),
            Framing::NoBody,
            Connection::Upgrade,
            date,
        )
    });
    drop(response);
    if !write_out(conn.stream, &mut conn.out, stall).await {
        return End::Quietly;
    }
    End::Upgrade(Box::new(Handoff {
        on_upgrade,
        unread: conn.read.buf.data().to_vec(),
    }))
}

/// Answer a request the protocol layer refused, then close; a client that is not speaking
/// HTTP gets no answer, only the responses to its requests before.
async fn refuse(
    stream: &dyn Transport,
    out: &mut Vec<u8>,
    error: ProtoError,
    stall: std::time::Duration,
) -> End {
    if error == ProtoError::NotHttp {
        return match flush(stream, out, stall).await {
            Ok(()) => End::Linger,
            Err(_) => End::Quietly,
        };
    }
    let status = error.status();
    let reason = status.canonical_reason().unwrap_or("Error").as_bytes();
    date::with_current(|date| {
        encode_head(
            out,
            status,
            HeadFields::ContentType(crate::ContentType::Text),
            Framing::Length(reason.len() as u64),
            Connection::Close,
            date,
        )
    });
    out.extend_from_slice(reason);
    match flush(stream, out, stall).await {
        Ok(()) => End::Linger,
        Err(_) => End::Quietly,
    }
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
