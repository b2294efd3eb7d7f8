//! The server side of the WebSocket opening handshake (RFC 6455 §4.2).

use super::{WebSocket, WsConfig};
use crate::Request;
use http::{header, HeaderValue, Method, StatusCode};
use std::future::Future;
use std::sync::Arc;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use vireo_http::Response;

/// Whether the values of a comma-separated field list `token` (case-insensitive).
pub fn lists_token<'a>(mut values: impl Iterator<Item = &'a [u8]>, token: &str) -> bool {
    values.any(|value| {
        value
            .split(|&b| b == b',')
            .any(|item| item.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    })
}

fn refuse(status: StatusCode, reason: &'static str) -> Response {
    let mut res = Response::new(status, reason);
    if status == StatusCode::UPGRADE_REQUIRED {
        res.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        res.headers_mut()
            .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    }
    res
}

/// Check a client's opening handshake (RFC 6455 §4.2.1), given its method and a function
/// that yields the values of a header field by (lower-case) name. `Ok` holds the
/// `Sec-WebSocket-Accept` value to answer with; `Err` the refusal to send instead: `400` for
/// a request that is not a WebSocket handshake, `426` for a missing upgrade or a version
/// other than 13.
///
/// [`Router::ws`](crate::Router::ws) calls this itself; it is public for servers that run
/// their own WebSocket sessions on [`vireo_http`] (see [`WebSocket::from_upgraded`]).
pub fn check_handshake<'a, I>(
    method: &Method,
    fields: impl Fn(&'static str) -> I,
) -> Result<HeaderValue, Response>
where
    I: Iterator<Item = &'a [u8]>,
{
    if method != Method::GET {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "WebSocket handshakes use GET",
        ));
    }
    if !lists_token(fields("upgrade"), "websocket") || !lists_token(fields("connection"), "upgrade")
    {
        return Err(refuse(
            StatusCode::UPGRADE_REQUIRED,
            "expected Upgrade: websocket and Connection: upgrade",
        ));
    }
    let mut versions = fields("sec-websocket-version");
    if versions.next().map(<[u8]>::trim_ascii) != Some(b"13") || versions.next().is_some() {
        return Err(refuse(
            StatusCode::UPGRADE_REQUIRED,
            "unsupported Sec-WebSocket-Version",
        ));
    }
    // The key is 16 random bytes in base64: 24 characters.
    let mut keys = fields("sec-websocket-key");
    match (keys.next().map(<[u8]>::trim_ascii), keys.next()) {
        (Some(key), None) if key.len() == 24 => HeaderValue::from_str(&derive_accept_key(key))
            .map_err(|_| {
                refuse(
                    StatusCode::BAD_REQUEST,
                    "missing or malformed Sec-WebSocket-Key",
                )
            }),
        _ => Err(refuse(
            StatusCode::BAD_REQUEST,
            "missing or malformed Sec-WebSocket-Key",
        )),
    }
}

/// Check the handshake and answer `101` with the upgrade to `handler`, or refuse.
pub(crate) fn accept<F, Fut>(req: Request, config: &WsConfig, handler: Arc<F>) -> Response
where
    F: Fn(WebSocket, Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    // The raw fields: an `http::HeaderMap` would be built and then kept, with the request,
    // for the life of the connection.
    let fields = |name| req.header_values(name);
    let accept = match check_handshake(req.method(), fields) {
        Ok(accept) => accept,
        Err(refusal) => return refusal,
    };
    let protocol = select_protocol(&req, &config.protocols);
    let chosen = protocol
        .as_deref()
        .and_then(|p| HeaderValue::from_str(p).ok());
    #[cfg(feature = "ws-compression")]
    let compression = config
        .compression
        .then(|| super::Compression::negotiate(fields("sec-websocket-extensions")))
        .flatten();
    let ws_config = config.clone();
    // The handler's own future is what the connection keeps while it lasts: nothing is
    // wrapped around it.
    let mut res = Response::upgrade(move |io| {
        let ws = WebSocket::new(io, &ws_config, protocol);
        #[cfg(feature = "ws-compression")]
        let ws = match compression {
            Some(agreed) => ws.with_compression(agreed),
            None => ws,
        };
        handler(ws, req)
    });
    let headers = res.headers_mut();
    #[cfg(feature = "ws-compression")]
    if let Some(agreed) = compression {
        headers.insert(header::SEC_WEBSOCKET_EXTENSIONS, agreed.header_value());
    }
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    if let Some(protocol) = chosen {
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
    }
    res
}

/// The first of the server's subprotocols, in its order of preference, the client offers.
fn select_protocol(req: &Request, supported: &[String]) -> Option<String> {
    let offered = || req.header_values("sec-websocket-protocol");
    supported
        .iter()
        .find(|p| lists_token(offered(), p))
        .cloned()
}
