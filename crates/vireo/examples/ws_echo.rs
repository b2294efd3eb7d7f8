//! A WebSocket echo server, the endpoint a conformance suite (Autobahn|Testsuite) is run
//! against: text and binary messages come back as they went.
//!
//! ```text
//! cargo run --release -p vireo --example ws_echo   # ws://127.0.0.1:9001/
//! ```
//!
//! The limits are raised to the sizes the suite's performance cases send (16 MiB messages),
//! and permessage-deflate is on, for the suite's compression cases.

use vireo::ws::{WebSocket, WsConfig};
use vireo::{App, Request};

async fn echo(mut ws: WebSocket, _req: Request) {
    while let Some(Ok(message)) = ws.recv().await {
        if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
            return;
        }
    }
}

fn main() -> std::io::Result<()> {
    let addr = std::env::var("VIREO_WS_ECHO_ADDR").unwrap_or_else(|_| "127.0.0.1:9001".into());
    let config = WsConfig::default()
        .max_message_size(64 << 20)
        .max_frame_size(16 << 20)
        .compression(true);
    let mut app = App::new();
    app.ws_with("/", config, echo);
    let server = vireo::Server::bind(addr)?;
    let server = server.on_ready(|addr| println!("echo on ws://{addr}/"));
    app.serve(server)
}
