//! RFC 6455 edge cases against the echo endpoint, with hand-made frames: what a conformance
//! suite checks first (fragmentation, control frames between fragments, invalid UTF-8,
//! reserved bits, unmasked client frames).

mod raw_ws;

use std::net::SocketAddr;
use vireo::ws::{WebSocket, WsConfig};
use vireo::{serve_ephemeral, App, Request, RunningServer};

fn echo_server() -> RunningServer {
    let mut app = App::new();
    app.ws_with(
        "/echo",
        WsConfig::default(),
        |mut ws: WebSocket, _req: Request| async move {
            while let Some(Ok(message)) = ws.recv().await {
                if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
                    return;
                }
            }
        },
    );
    serve_ephemeral(app).unwrap()
}

/// A client frame: FIN flag, RSV bits, opcode, payload; masked unless `masked` is false.
fn frame(fin: bool, rsv: u8, opcode: u8, payload: &[u8], masked: bool) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut out = vec![(u8::from(fin) << 7) | (rsv << 4) | opcode];
    let key = [0x12u8, 0x34, 0x56, 0x78];
    if masked {
        out.push(0x80 | payload.len() as u8);
        out.extend_from_slice(&key);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    } else {
        out.push(payload.len() as u8);
        out.extend_from_slice(payload);
    }
    out
}

/// Send `frames` after the handshake; the frames the server sent, as (opcode, payload).
async fn exchange(addr: SocketAddr, frames: &[Vec<u8>]) -> Vec<(u8, Vec<u8>)> {
    let (_, sent) = raw_ws::exchange(addr, None, frames).await;
    sent.into_iter()
        .map(|(first, payload)| (first & 0x0F, payload))
        .collect()
}

fn close_code(frame: &(u8, Vec<u8>)) -> u16 {
    assert_eq!(frame.0, 0x8, "a close frame");
    u16::from_be_bytes([frame.1[0], frame.1[1]])
}

const CLOSE_NORMAL: [u8; 2] = 1000u16.to_be_bytes();

#[tokio::test]
async fn fragments_are_reassembled_and_a_ping_between_them_answered() {
    let server = echo_server();
    let frames = exchange(
        server.addr(),
        &[
            frame(false, 0, 0x1, b"frag", true),
            frame(true, 0, 0x9, b"p", true),
            frame(false, 0, 0x0, b"men", true),
            frame(true, 0, 0x0, b"ted", true),
            frame(true, 0, 0x8, &CLOSE_NORMAL, true),
        ],
    )
    .await;
    assert_eq!(frames[0], (0xA, b"p".to_vec()), "the pong comes at once");
    assert_eq!(frames[1], (0x1, b"fragmented".to_vec()));
    assert_eq!(close_code(&frames[2]), 1000);
    assert_eq!(frames.len(), 3);
}

#[tokio::test]
async fn invalid_utf8_in_text_closes_with_1007() {
    let server = echo_server();
    let frames = exchange(
        server.addr(),
        &[frame(true, 0, 0x1, &[0xce, 0xba, 0xff], true)],
    )
    .await;
    assert_eq!(close_code(frames.last().unwrap()), 1007);
}

#[tokio::test]
async fn reserved_bits_close_with_1002() {
    let server = echo_server();
    let frames = exchange(server.addr(), &[frame(true, 0b100, 0x1, b"x", true)]).await;
    assert_eq!(close_code(frames.last().unwrap()), 1002);
}

#[tokio::test]
async fn an_unmasked_client_frame_closes_with_1002() {
    let server = echo_server();
    let frames = exchange(server.addr(), &[frame(true, 0, 0x1, b"x", false)]).await;
    assert_eq!(close_code(frames.last().unwrap()), 1002);
}

#[tokio::test]
async fn a_reserved_opcode_closes_with_1002() {
    let server = echo_server();
    let frames = exchange(server.addr(), &[frame(true, 0, 0x3, b"x", true)]).await;
    assert_eq!(close_code(frames.last().unwrap()), 1002);
}

#[tokio::test]
async fn a_continuation_without_a_start_closes_with_1002() {
    let server = echo_server();
    let frames = exchange(server.addr(), &[frame(true, 0, 0x0, b"x", true)]).await;
    assert_eq!(close_code(frames.last().unwrap()), 1002);
}
