//! WebSocket routes over a real socket, with tokio-tungstenite as the client.

use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::WebSocketStream;
use vireo::ws::{CloseCode, Message, WebSocket, WsConfig};
use vireo::{serve_ephemeral, App, Request, RunningServer};

type Client = WebSocketStream<TcpStream>;

async fn connect(addr: SocketAddr, path: &str) -> Client {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (ws, response) = tokio_tungstenite::client_async(format!("ws://{addr}{path}"), tcp)
        .await
        .unwrap();
    assert_eq!(response.status(), 101);
    ws
}

/// Echo text and binary; everything else is handled by `recv` itself.
async fn echo(mut ws: WebSocket, _req: Request) {
    while let Some(Ok(message)) = ws.recv().await {
        if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
            return;
        }
    }
}

fn echo_server(config: WsConfig) -> RunningServer {
    let mut app = App::new();
    app.ws_with("/echo", config, echo);
    app.ws(
        "/hello/:name",
        |mut ws: WebSocket, req: Request| async move {
            let name = req.param("name").unwrap().into_owned();
            let _ = ws.send(Message::text(format!("hello {name}"))).await;
            let _ = ws.close(CloseCode::Normal, "done").await;
        },
    );
    serve_ephemeral(app).unwrap()
}

/// The next message that is not a ping or pong.
async fn next_data(client: &mut Client) -> Message {
    loop {
        match client.next().await.expect("a message").expect("no error") {
            Message::Ping(_) | Message::Pong(_) => continue,
            message => return message,
        }
    }
}

#[tokio::test]
async fn text_and_binary_messages_are_echoed() {
    let server = echo_server(WsConfig::default());
    let mut client = connect(server.addr(), "/echo").await;
    client.send(Message::text("hello")).await.unwrap();
    assert_eq!(next_data(&mut client).await, Message::text("hello"));
    client
        .send(Message::binary(vec![0u8, 1, 2, 255]))
        .await
        .unwrap();
    assert_eq!(
        next_data(&mut client).await,
        Message::binary(vec![0u8, 1, 2, 255])
    );
}

#[tokio::test]
async fn route_parameters_reach_the_handler_and_it_can_close() {
    let server = echo_server(WsConfig::default());
    let mut client = connect(server.addr(), "/hello/ada").await;
    assert_eq!(next_data(&mut client).await, Message::text("hello ada"));
    match next_data(&mut client).await {
        Message::Close(Some(frame)) => {
            assert_eq!(frame.code, CloseCode::Normal);
            assert_eq!(frame.reason.as_str(), "done");
        }
        other => panic!("expected a close, got {other:?}"),
    }
}

#[tokio::test]
async fn a_ping_is_answered_with_a_pong() {
    let server = echo_server(WsConfig::default());
    let mut client = connect(server.addr(), "/echo").await;
    client
        .send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    match client.next().await.unwrap().unwrap() {
        Message::Pong(payload) => assert_eq!(&payload[..], b"are you there"),
        other => panic!("expected a pong, got {other:?}"),
    }
}

#[tokio::test]
async fn the_close_handshake_completes() {
    let server = echo_server(WsConfig::default());
    let mut client = connect(server.addr(), "/echo").await;
    client.close(None).await.unwrap();
    // The server answers the close, then the stream ends.
    let mut saw_close = false;
    while let Some(item) = client.next().await {
        if let Ok(Message::Close(_)) = item {
            saw_close = true;
        }
    }
    assert!(saw_close, "the server answered the close");
}

#[tokio::test]
async fn a_message_over_the_limit_closes_with_1009() {
    let server = echo_server(
        WsConfig::default()
            .max_message_size(1024)
            .max_frame_size(1024),
    );
    let mut client = connect(server.addr(), "/echo").await;
    client.send(Message::text("small")).await.unwrap();
    assert_eq!(next_data(&mut client).await, Message::text("small"));
    client.send(Message::binary(vec![7u8; 4096])).await.unwrap();
    match next_data(&mut client).await {
        Message::Close(Some(frame)) => assert_eq!(frame.code, CloseCode::Size),
        other => panic!("expected a close with 1009, got {other:?}"),
    }
}

/// Send a raw request and read the whole response.
async fn raw_exchange(addr: SocketAddr, request: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tcp.read(&mut buf).await.unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[tokio::test]
async fn a_bad_handshake_is_refused() {
    let server = echo_server(WsConfig::default());
    let addr = server.addr();
    let missing_key = "GET /echo HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-version: 13\r\n\r\n";
    let text = raw_exchange(addr, missing_key).await;
    assert!(text.starts_with("HTTP/1.1 400 "), "{text}");
    let not_websocket = "GET /echo HTTP/1.1\r\nhost: x\r\n\r\n";
    let text = raw_exchange(addr, not_websocket).await;
    assert!(text.starts_with("HTTP/1.1 426 "), "{text}");
    let old_version = "GET /echo HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 8\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let text = raw_exchange(addr, old_version).await;
    assert!(text.starts_with("HTTP/1.1 426 "), "{text}");
    assert!(text.contains("sec-websocket-version: 13\r\n"), "{text}");
    // RFC 6455 §11.3.1: the key field appears once.
    let two_keys = "GET /echo HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let text = raw_exchange(addr, two_keys).await;
    assert!(text.starts_with("HTTP/1.1 400 "), "{text}");
    // The accept key of RFC 6455's own example.
    let good = "GET /echo HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: keep-alive, Upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let text = raw_exchange(addr, good).await;
    assert!(text.starts_with("HTTP/1.1 101 "), "{text}");
    assert!(
        text.contains("sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"),
        "{text}"
    );
}

#[tokio::test]
async fn a_subprotocol_the_client_offers_is_selected() {
    let mut app = App::new();
    let config = WsConfig::default().protocol("chat.v2").protocol("chat.v1");
    app.ws_with(
        "/p",
        config,
        |mut ws: WebSocket, _req: Request| async move {
            let chosen = ws.protocol().unwrap_or("none").to_owned();
            let _ = ws.send(Message::text(chosen)).await;
            while let Some(Ok(_)) = ws.recv().await {}
        },
    );
    let server = serve_ephemeral(app).unwrap();
    let addr = server.addr();
    let mut request = format!("ws://{addr}/p").into_client_request().unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "chat.v1, chat.v2".parse().unwrap(),
    );
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut client, response) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "chat.v2");
    assert_eq!(next_data(&mut client).await, Message::text("chat.v2"));
}

#[tokio::test]
async fn split_halves_broadcast_to_every_client() {
    let (tx, _) = broadcast::channel::<String>(16);
    let mut app = App::new();
    app.state(tx);
    app.ws("/room", |ws: WebSocket, req: Request| async move {
        let tx = req.state::<broadcast::Sender<String>>().unwrap().clone();
        let mut rx = tx.subscribe();
        let (sender, mut receiver) = ws.split();
        let _ = sender.send(Message::text("joined")).await;
        let forward = tokio::task::spawn_local({
            let sender = sender.clone();
            async move {
                while let Ok(text) = rx.recv().await {
                    if sender.send(Message::text(text)).await.is_err() {
                        return;
                    }
                }
            }
        });
        while let Some(Ok(message)) = receiver.recv().await {
            if let Message::Text(text) = message {
                let _ = tx.send(text.as_str().to_owned());
            }
        }
        forward.abort();
    });
    let server = serve_ephemeral(app).unwrap();
    let mut a = connect(server.addr(), "/room").await;
    let mut b = connect(server.addr(), "/room").await;
    // Both are subscribed once they are told they joined.
    assert_eq!(next_data(&mut a).await, Message::text("joined"));
    assert_eq!(next_data(&mut b).await, Message::text("joined"));
    a.send(Message::text("hi all")).await.unwrap();
    assert_eq!(next_data(&mut a).await, Message::text("hi all"));
    assert_eq!(next_data(&mut b).await, Message::text("hi all"));
}

/// The frames a server sent (unmasked), as (opcode, payload), until the stream ends.
fn parse_frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while bytes.len() >= 2 {
        let opcode = bytes[0] & 0x0f;
        let len = (bytes[1] & 0x7f) as usize;
        assert!(len < 126, "only short frames expected here");
        frames.push((opcode, bytes[2..2 + len].to_vec()));
        bytes = &bytes[2 + len..];
    }
    frames
}

#[tokio::test]
async fn a_silent_client_is_pinged_then_closed() {
    let config = WsConfig::default()
        .idle_timeout(Duration::from_millis(100))
        .pong_timeout(Duration::from_millis(100))
        .close_timeout(Duration::from_millis(100));
    let server = echo_server(config);
    // A raw client that completes the handshake and then never answers anything.
    let mut tcp = TcpStream::connect(server.addr()).await.unwrap();
    tcp.write_all(b"GET /echo HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").await.unwrap();
    let mut bytes = Vec::new();
    tcp.read_to_end(&mut bytes).await.unwrap();
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(bytes.starts_with(b"HTTP/1.1 101 "));
    let frames = parse_frames(&bytes[head_end..]);
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(frames[0].0, 0x9, "a ping first");
    assert_eq!(frames[1].0, 0x8, "then a close");
    assert_eq!(&frames[1].1[..2], &1001u16.to_be_bytes(), "going away");
}

#[tokio::test]
async fn a_send_to_a_client_that_stopped_reading_fails_instead_of_waiting_forever() {
    let config = WsConfig::default()
        .idle_timeout(Duration::from_millis(100))
        .pong_timeout(Duration::from_millis(100));
    let (failed, mut told) = tokio::sync::mpsc::channel(1);
    let mut app = App::new();
    app.ws_with("/flood", config, move |mut ws: WebSocket, _req: Request| {
        let failed = failed.clone();
        async move {
            let message = Message::binary(vec![0u8; 1 << 20]);
            for _ in 0..1024 {
                if let Err(error) = ws.send(message.clone()).await {
                    let _ = failed.send(error.to_string()).await;
                    return;
                }
            }
        }
    });
    let server = serve_ephemeral(app).unwrap();
    // A client that completes the handshake and then reads nothing.
    let mut tcp = TcpStream::connect(server.addr()).await.unwrap();
    tcp.write_all(b"GET /flood HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").await.unwrap();
    let error = tokio::time::timeout(Duration::from_secs(10), told.recv())
        .await
        .expect("the send gave up on the stalled client")
        .unwrap();
    assert!(error.to_lowercase().contains("timed out"), "{error}");
    drop(tcp);
}

#[tokio::test]
async fn server_shutdown_closes_sockets_with_going_away() {
    let server = echo_server(WsConfig::default());
    let mut client = connect(server.addr(), "/echo").await;
    client.send(Message::text("before")).await.unwrap();
    assert_eq!(next_data(&mut client).await, Message::text("before"));
    let stopping = std::thread::spawn(move || server.shutdown());
    match next_data(&mut client).await {
        Message::Close(Some(frame)) => assert_eq!(frame.code, CloseCode::Away),
        other => panic!("expected a close, got {other:?}"),
    }
    // The client's answer completes the handshake, and the server stops without waiting out
    // its shutdown timeout for this connection.
    while client.next().await.is_some() {}
    stopping.join().unwrap().unwrap();
}

#[tokio::test]
async fn a_send_cancelled_part_way_is_finished_before_the_next_one() {
    const BIG: usize = 1 << 20;
    let mut app = App::new();
    app.ws("/flood", |mut ws: WebSocket, _req: Request| async move {
        // The client reads nothing yet: sends fill the socket until one has to wait, and
        // that one is given up part-written.
        let mut sent = 0u8;
        loop {
            let message = Message::binary(vec![sent; BIG]);
            match tokio::time::timeout(Duration::from_millis(100), ws.send(message)).await {
                Ok(Ok(())) => sent += 1,
                Ok(Err(e)) => panic!("send failed: {e}"),
                Err(_) => break,
            }
        }
        ws.send(Message::text(format!("after {sent}")))
            .await
            .unwrap();
        while ws.recv().await.is_some() {}
    });
    let server = serve_ephemeral(app).unwrap();
    let mut client = connect(server.addr(), "/flood").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut received = 0u8;
    let after = loop {
        match next_data(&mut client).await {
            Message::Binary(data) => {
                assert_eq!(data.len(), BIG);
                assert!(
                    data.iter().all(|&b| b == received),
                    "message {received} intact"
                );
                received += 1;
            }
            Message::Text(text) => break text,
            other => panic!("unexpected {other:?}"),
        }
    };
    // Every whole send arrived, and so did the cancelled one, finished before the text.
    assert_eq!(after.as_str(), format!("after {}", received - 1));
}

#[tokio::test]
async fn a_frame_larger_than_the_read_buffer_arrives_whole() {
    let server = echo_server(WsConfig::default().read_buffer_size(1024));
    let mut client = connect(server.addr(), "/echo").await;
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    client.send(Message::binary(big.clone())).await.unwrap();
    assert_eq!(next_data(&mut client).await, Message::binary(big));
}

#[tokio::test]
async fn recv_raced_against_a_timer_loses_nothing() {
    let mut app = App::new();
    app.ws("/racing", |mut ws: WebSocket, _req: Request| async move {
        // Each turn of the loop drops an unfinished `recv` when the tick comes first.
        let mut tick = tokio::time::interval(Duration::from_micros(200));
        loop {
            tokio::select! {
                message = ws.recv() => match message {
                    Some(Ok(message)) if message.is_text() => {
                        if ws.send(message).await.is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    _ => return,
                },
                _ = tick.tick() => {}
            }
        }
    });
    let server = serve_ephemeral(app).unwrap();
    let mut client = connect(server.addr(), "/racing").await;
    for i in 0..200 {
        client.send(Message::text(format!("m{i}"))).await.unwrap();
        if i % 10 == 0 {
            client
                .send(Message::Ping(vec![i as u8].into()))
                .await
                .unwrap();
        }
    }
    let (mut texts, mut pongs) = (Vec::new(), 0);
    while texts.len() < 200 {
        match client.next().await.expect("a message").expect("no error") {
            Message::Text(text) => texts.push(text.to_string()),
            Message::Pong(_) => pongs += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(texts, (0..200).map(|i| format!("m{i}")).collect::<Vec<_>>());
    client.close(None).await.unwrap();
    while let Some(Ok(message)) = client.next().await {
        if let Message::Pong(_) = message {
            pongs += 1;
        }
    }
    assert_eq!(pongs, 20, "every ping answered");
}
