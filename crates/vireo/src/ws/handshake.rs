//! The server side of the WebSocket opening handshake (RFC 6455 §4.2).

use super::{WebSocket, WsConfig};
use crate::Request;
use http::{header, HeaderValue, Method, StatusCode};
use std::future::Future;
use std::sync::Arc;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use vireo_http::Response;

/// Whether a comma-separated field lists `token` (case-insensitive).
fn lists(req: &Request, name: &str, token: &str) -> bool {
    req.headers().get_all(name).iter().any(|value| {
        value
            .as_bytes()
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

/// Check the handshake and answer `101` with the upgrade to `handler`, or refuse: `400` for a
/// request that is not a WebSocket handshake, `426` for a version other than 13.
pub(crate) fn accept<F, Fut>(req: Request, config: &WsConfig, handler: Arc<F>) -> Response
where
    F: Fn(WebSocket, Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    if req.method() != Method::GET {
        return refuse(StatusCode::BAD_REQUEST, "WebSocket handshakes use GET");
    }
    if !lists(&req, "upgrade", "websocket") || !lists(&req, "connection", "upgrade") {
        return refuse(
            StatusCode::UPGRADE_REQUIRED,
            "expected Upgrade: websocket and Connection: upgrade",
        );
    }
    if req.header("sec-websocket-version").map(str::trim) != Some("13") {
        return refuse(
            StatusCode::UPGRADE_REQUIRED,
            "unsupported Sec-WebSocket-Version",
        );
    }
    // The key is 16 random bytes in base64: 24 characters.
    let key = match req.header("sec-websocket-key").map(str::trim) {
        Some(key) if key.len() == 24 => key.to_owned(),
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "missing or malformed Sec-WebSocket-Key",
            )
        }
    };
    let protocol = select_protocol(&req, &config.protocols);
    let chosen = protocol
        .as_deref()
        .and_then(|p| HeaderValue::from_str(p).ok());
    let ws_config = config.clone();
    let mut res = Response::upgrade(move |io| async move {
        let ws = WebSocket::new(io, ws_config, protocol).await;
        handler(ws, req).await;
    });
    let headers = res.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    if let Some(protocol) = chosen {
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
    }
    res
}

/// The first of the server's subprotocols, in its order of preference, the client offers.
fn select_protocol(req: &Request, supported: &[String]) -> Option<String> {
    supported
        .iter()
        .find(|p| lists(req, "sec-websocket-protocol", p))
        .cloned()
}
