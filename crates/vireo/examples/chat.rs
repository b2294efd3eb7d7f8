//! A chat room over WebSockets: every message a client sends goes to every connected client.
//!
//! ```text
//! cargo run --release -p vireo --example chat
//! open http://127.0.0.1:8080/ in two browser windows
//! ```
//!
//! Each connection's handler runs on the worker that accepted it; the room is a broadcast
//! channel in the app's state, which every handler subscribes to.

use tokio::sync::broadcast;
use vireo::ws::{Message, WebSocket};
use vireo::{App, Html, Request};

const PAGE: &str = r#"<!doctype html>
<meta charset="utf-8">
<title>Vireo chat</title>
<style>
  body { font: 16px system-ui, sans-serif; max-width: 40em; margin: 2em auto; }
  #log { border: 1px solid #ccc; height: 20em; overflow-y: auto; padding: .5em; }
  form { display: flex; gap: .5em; margin-top: .5em; } input { flex: 1; }
</style>
<h1>Vireo chat</h1>
<div id="log"></div>
<form id="form"><input id="text" autocomplete="off" placeholder="Say something"><button>Send</button></form>
<script>
  const log = document.getElementById("log");
  const show = (line) => {
    const p = document.createElement("div");
    p.textContent = line;
    log.appendChild(p);
    log.scrollTop = log.scrollHeight;
  };
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws`);
  socket.onopen = () => show("(connected)");
  socket.onclose = (e) => show(`(disconnected: ${e.code})`);
  socket.onmessage = (e) => show(e.data);
  document.getElementById("form").onsubmit = (e) => {
    e.preventDefault();
    const input = document.getElementById("text");
    if (input.value) socket.send(input.value);
    input.value = "";
  };
</script>
"#;

/// What goes around the room: who said it and what.
type Room = broadcast::Sender<String>;

async fn chat(ws: WebSocket, req: Request) {
    let room = match req.state::<Room>() {
        Ok(room) => room.clone(),
        Err(_) => return,
    };
    let who = req
        .remote_addr()
        .map(|addr| addr.to_string())
        .unwrap_or_else(|| "someone".to_owned());
    let mut heard = room.subscribe();
    let (sender, mut receiver) = ws.split();
    // Forward the room to this client while the handler reads what the client says.
    let forward = tokio::task::spawn_local(async move {
        loop {
            match heard.recv().await {
                Ok(line) => {
                    if sender.send(Message::text(line)).await.is_err() {
                        return;
                    }
                }
                // A client too slow to keep up misses lines rather than holding up the room.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let _ = room.send(format!("{who} joined"));
    while let Some(Ok(message)) = receiver.recv().await {
        if let Message::Text(text) = message {
            let _ = room.send(format!("{who}: {}", text.as_str()));
        }
    }
    let _ = room.send(format!("{who} left"));
    forward.abort();
}

fn main() -> std::io::Result<()> {
    let (room, _) = broadcast::channel::<String>(256);
    let mut app = App::new();
    app.state(room);
    app.get("/", |_req| Html(PAGE));
    app.ws("/ws", chat);
    let server = vireo::Server::bind("127.0.0.1:8080")?;
    let server = server.on_ready(|addr| println!("chat on http://{addr}"));
    app.serve(server)
}
