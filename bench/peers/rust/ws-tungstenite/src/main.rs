//! WebSocket peer: tokio-tungstenite on a current_thread tokio runtime, echoing every text
//! and binary message on any path (tungstenite answers pings and closes itself).
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;

async fn echo(tcp: TcpStream) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
        return;
    };
    while let Some(Ok(message)) = ws.next().await {
        if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
            break;
        }
    }
}

fn port() -> u16 {
    std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port())).await.expect("bind");
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        // As the other Rust peers: no Nagle delay.
        let _ = tcp.set_nodelay(true);
        tokio::spawn(echo(tcp));
    }
}
