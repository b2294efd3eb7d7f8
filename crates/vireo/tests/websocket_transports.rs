//! WebSockets over TLS and over a Unix domain socket: the upgraded connection carries the
//! transport it came on.

use futures_util::{SinkExt, StreamExt};
#[path = "../../vireo-http/tests/common/tls.rs"]
mod tls_support;

use tls_support::{self_signed, trusting};
use vireo::tls::TlsConfig;
use vireo::ws::{Message, WebSocket};
use vireo::{App, Request, Server};

/// An app that echoes text with whether the request was secure.
fn app() -> App {
    let mut app = App::new();
    app.ws("/echo", |mut ws: WebSocket, req: Request| async move {
        let secure = req.is_secure();
        while let Some(Ok(message)) = ws.recv().await {
            if let Message::Text(text) = message {
                let reply = format!("{text} secure={secure}");
                if ws.send(Message::text(reply)).await.is_err() {
                    return;
                }
            }
        }
    });
    app
}

/// Send "hi" over an open client and return the text answer.
async fn round_trip<S>(client: &mut tokio_tungstenite::WebSocketStream<S>) -> String
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    client.send(Message::text("hi")).await.unwrap();
    match client.next().await.unwrap().unwrap() {
        Message::Text(text) => text.as_str().to_owned(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[test]
fn websockets_work_over_tls() {
    let made = self_signed(&["localhost"]);
    let tls = TlsConfig::from_pem(made.chain_pem.as_bytes(), made.key_pem.as_bytes()).unwrap();
    let service = app().into_service();
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .tls(tls)
        .spawn(service)
        .unwrap();
    let connector = trusting(&made, &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let reply = runtime.block_on(async {
        let stream = tls_support::connect(&connector, server.addr(), "localhost")
            .await
            .unwrap();
        let (mut client, _) = tokio_tungstenite::client_async("wss://localhost/echo", stream)
            .await
            .unwrap();
        round_trip(&mut client).await
    });
    assert_eq!(reply, "hi secure=true");
}

#[test]
fn websockets_work_over_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws.sock");
    let service = app().into_service();
    let _server = Server::bind_unix(&path)
        .unwrap()
        .workers(1)
        .spawn(service)
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let reply = runtime.block_on(async {
        let stream = tokio::net::UnixStream::connect(&path).await.unwrap();
        let (mut client, _) = tokio_tungstenite::client_async("ws://localhost/echo", stream)
            .await
            .unwrap();
        round_trip(&mut client).await
    });
    assert_eq!(reply, "hi secure=false");
}
