//! The ASGI `websocket` scope: a WebSocket handshake goes to the app as `websocket.connect`;
//! its `websocket.accept` becomes the `101` and a session relaying messages both ways, its
//! `websocket.close` a `403`, and a denial response (`websocket.http.response.*`) is sent as
//! the app gives it. Framing, limits, pings and the close handshake are the framework's
//! [`vireo::ws`].

use crate::asgi_config::AppConfig;
use crate::asgi_scope::{origin, websocket_scope};
use crate::asgi_service::{loop_for_thread, server_error, start_app};
use crate::asgi_ws_channel::{
    ClientDisconnected, Handshake, Outgoing, WsExchange, WsReceive, WsSend,
};
use crate::coroutine;
use crate::running::Running;
use pyo3::prelude::*;
use std::sync::Arc;
use vireo::ws::{
    check_handshake, close_code_for, lists_token, CloseCode, Compression, Message, WsConfig,
    WsSender,
};
use vireo_http::http::{header, HeaderMap, HeaderValue, StatusCode};
use vireo_http::upgrade::Upgraded;
use vireo_http::{Body, Head, Response};

/// Whether a request asks for a WebSocket (`Upgrade: websocket`), as uvicorn decides it.
pub(crate) fn is_websocket(head: &Head) -> bool {
    lists_token(fields(head, "upgrade"), "websocket")
}

/// The values of the header field `name`.
fn fields<'a>(head: &'a Head, name: &'static str) -> impl Iterator<Item = &'a [u8]> + 'a {
    head.headers()
        .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
}

/// Tells the app the connection is over if it ends (or never starts) without a session.
struct Guard(Arc<WsExchange>);

impl Drop for Guard {
    fn drop(&mut self) {
        Python::attach(|py| self.0.connection_over(py));
    }
}

/// Answer a WebSocket handshake with the ASGI app.
pub(crate) async fn serve(
    config: &Arc<AppConfig>,
    req: vireo_http::Request<'_>,
    running: &Arc<Running>,
) -> Response {
    let peer = req.remote_addr().copied();
    let tls = req.tls();
    let (head, _body) = req.into_parts();
    let accept_key = match check_handshake(head.method(), |name| fields(&head, name)) {
        Ok(key) => key,
        Err(refusal) => return refusal,
    };
    // permessage-deflate, when `--ws-per-message-deflate` allows it and the client offers it.
    let compression = config
        .ws
        .as_ref()
        .filter(|ws| ws.compression)
        .and_then(|_| Compression::negotiate(fields(&head, "sec-websocket-extensions")));
    let state = match loop_for_thread(config) {
        Ok(state) => state,
        Err(res) => return res,
    };
    let started = Python::attach(|py| {
        let ex = WsExchange::new(py)?;
        let origin = origin(&head, peer, tls, config);
        let scope = websocket_scope(py, &head, &origin, config)?;
        let receive = Py::new(py, WsReceive(ex.clone()))?.into_any();
        let send = Py::new(py, WsSend(ex.clone()))?.into_any();
        let rx = start_app(py, config, &state, scope, receive, send, running.clone())?;
        PyResult::Ok((ex, rx))
    });
    let (ex, rx) = match started {
        Ok(started) => started,
        Err(e) => {
            Python::attach(|py| config.log(py, "Exception in ASGI application", Some(e)));
            return server_error();
        }
    };
    drop(head);
    let guard = Guard(ex.clone());
    // The app's outcome, whenever it comes: logged, and told to the service or session.
    {
        let (config, ex) = (config.clone(), ex.clone());
        tokio::task::spawn_local(async move {
            let outcome = coroutine::finish(rx).await;
            Python::attach(|py| app_ended(py, &config, &ex, outcome.map(drop)));
            ex.wake.notify_one();
        });
    }
    loop {
        if let Some(res) = answer(&ex, &accept_key) {
            return match res {
                Answer::Upgrade(mut fields, protocol) => {
                    if let Some(agreed) = compression {
                        fields.insert(header::SEC_WEBSOCKET_EXTENSIONS, agreed.header_value());
                    }
                    let ws = config.ws.clone().unwrap_or_default();
                    // The session counts as running until the socket closes, as the app's task
                    // does until it ends.
                    let running = running.clone();
                    let mut res = Response::upgrade(move |io| async move {
                        session(io, guard, ws, protocol, compression).await;
                        drop(running);
                    });
                    *res.headers_mut() = fields;
                    res
                }
                Answer::Now(res) => res,
            };
        }
        ex.wake.notified().await;
    }
}

/// Log how the app ended, and note it for the session.
fn app_ended(py: Python<'_>, config: &AppConfig, ex: &WsExchange, outcome: PyResult<()>) {
    let pending = matches!(ex.lock().handshake, Handshake::Pending);
    let ok = match outcome {
        Ok(()) => {
            if pending {
                config.log(
                    py,
                    "ASGI callable returned without completing handshake.",
                    None,
                );
            }
            true
        }
        // Sending on a closed connection is how an app learns the client left.
        Err(e) if e.is_instance_of::<ClientDisconnected>(py) => true,
        Err(e) => {
            config.log(py, "Exception in ASGI application", Some(e));
            false
        }
    };
    ex.lock().app_done = Some(ok);
    ex.stop_pausing();
}

enum Answer {
    /// The `101`'s fields, and the subprotocol they name.
    Upgrade(HeaderMap, Option<String>),
    Now(Response),
}

/// The response for what the app has answered so far, if it is enough.
fn answer(ex: &WsExchange, accept_key: &HeaderValue) -> Option<Answer> {
    let mut inner = ex.lock();
    let app_done = inner.app_done.is_some();
    match &mut inner.handshake {
        Handshake::Pending | Handshake::Denying { done: false, .. } => {
            app_done.then(|| Answer::Now(server_error()))
        }
        Handshake::Refused => {
            let mut res = Response::new(StatusCode::FORBIDDEN, Body::Empty);
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Some(Answer::Now(res))
        }
        Handshake::Denying {
            status,
            headers,
            body,
            done: true,
        } => {
            let mut res = Response::new(*status, Body::Bytes(std::mem::take(body).freeze()));
            let fields = res.headers_mut();
            *fields = std::mem::take(headers);
            if !fields.contains_key(header::CONTENT_TYPE) {
                fields.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
            }
            fields.insert(header::CONNECTION, HeaderValue::from_static("close"));
            Some(Answer::Now(res))
        }
        Handshake::Accepted {
            subprotocol,
            headers,
        } => {
            let mut fields = std::mem::take(headers);
            fields.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
            fields.insert(header::SEC_WEBSOCKET_ACCEPT, accept_key.clone());
            let protocol = subprotocol.take();
            if let Some(value) = protocol
                .as_deref()
                .and_then(|p| HeaderValue::from_str(p).ok())
            {
                fields.insert(header::SEC_WEBSOCKET_PROTOCOL, value);
            }
            Some(Answer::Upgrade(fields, protocol))
        }
    }
}

/// Relay messages between the client and the app until the connection is over.
async fn session(
    io: Upgraded,
    guard: Guard,
    config: WsConfig,
    protocol: Option<String>,
    compression: Option<Compression>,
) {
    let ex = guard.0.clone();
    let mut socket = vireo::ws::WebSocket::from_upgraded(io, config.clone(), protocol).await;
    if let Some(agreed) = compression {
        socket = socket.with_compression(agreed);
    }
    let (tx, mut rx) = socket.split();
    let reader = async {
        loop {
            while ex.reading_paused() {
                ex.room.notified().await;
            }
            match rx.recv().await {
                Some(Ok(Message::Close(frame))) => {
                    let (code, reason) = match frame {
                        Some(frame) => (u16::from(frame.code), frame.reason.to_string()),
                        None => (1005, String::new()),
                    };
                    Python::attach(|py| ex.push_disconnect(py, code, &reason));
                }
                Some(Ok(message)) => {
                    if let Err(e) = Python::attach(|py| ex.push_message(py, message)) {
                        Python::attach(|py| e.print(py));
                    }
                }
                Some(Err(error)) => {
                    // The code the server closed with; `1006` (abnormal) when none was sent.
                    let code = close_code_for(&error).map_or(1006, u16::from);
                    Python::attach(|py| ex.push_disconnect(py, code, ""));
                    return;
                }
                None => return,
            }
        }
    };
    // A send that cannot go out in this long means a peer that stopped reading.
    let stall = config.idle_timeout.saturating_add(config.pong_timeout);
    let writer = async {
        loop {
            let (batch, app_done, close_sent) = {
                let mut inner = ex.lock();
                let batch: Vec<Outgoing> = inner.outgoing.drain(..).collect();
                (batch, inner.app_done, inner.close_sent)
            };
            let mut sent_bytes = 0;
            for item in batch {
                sent_bytes += item.payload_len();
                if !send(&tx, item, stall).await {
                    return;
                }
            }
            {
                let mut inner = ex.lock();
                inner.queued = inner.queued.saturating_sub(sent_bytes);
            }
            Python::attach(|py| ex.drained(py));
            if let (Some(ok), false) = (app_done, close_sent) {
                // The app ended without closing: close for it, as an error if it raised.
                ex.lock().close_sent = true;
                let code = if ok {
                    CloseCode::Normal
                } else {
                    CloseCode::Error
                };
                if !send(&tx, Outgoing::Close(code, String::new()), stall).await {
                    return;
                }
            }
            ex.wake.notified().await;
        }
    };
    // Either side ending ends the session: the reader when the connection closes, the writer
    // when it can no longer send.
    tokio::select! {
        _ = reader => {}
        _ = writer => {}
    }
    drop(guard);
}

/// Send one item; `false` if the connection is broken or stalled.
async fn send(tx: &WsSender, item: Outgoing, stall: std::time::Duration) -> bool {
    let sent = match item {
        Outgoing::Message(message) => tokio::time::timeout(stall, tx.send(message)).await,
        Outgoing::Close(code, reason) => tokio::time::timeout(stall, tx.close(code, &reason)).await,
    };
    matches!(sent, Ok(Ok(())))
}
