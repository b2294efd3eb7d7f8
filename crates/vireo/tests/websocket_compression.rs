#![cfg(feature = "ws-compression")]
//! permessage-deflate (RFC 7692) over a real socket, with hand-made frames compressed by
//! flate2 as a client would.

mod raw_ws;

use flate2::{Compress, Decompress, FlushCompress, FlushDecompress};
use std::net::SocketAddr;
use vireo::ws::{WebSocket, WsConfig};
use vireo::{serve_ephemeral, App, Request, RunningServer};

fn echo_server(config: WsConfig) -> RunningServer {
    let mut app = App::new();
    app.ws_with(
        "/echo",
        config,
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

fn compressing() -> WsConfig {
    WsConfig::default()
        .compression(true)
        .max_message_size(64 << 10)
}

/// A masked client frame with FIN set.
fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![first];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    let key = [0x12u8, 0x34, 0x56, 0x78];
    out.extend_from_slice(&key);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    out
}

/// Deflated as RFC 7692 says: a sync flush, its empty final block taken off.
fn deflate(client: &mut Compress, message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 64);
    client
        .compress_vec(message, &mut out, FlushCompress::Sync)
        .unwrap();
    assert!(out.ends_with(&[0, 0, 0xFF, 0xFF]));
    out.truncate(out.len() - 4);
    out
}

fn inflate(server: &[u8]) -> Vec<u8> {
    let mut input = server.to_vec();
    input.extend_from_slice(&[0, 0, 0xFF, 0xFF]);
    let mut out = Vec::with_capacity(1 << 16);
    Decompress::new(false)
        .decompress_vec(&input, &mut out, FlushDecompress::Sync)
        .unwrap();
    out
}

/// Handshake offering `extensions`, send `frames`: the response head and the server's frames.
async fn exchange(
    addr: SocketAddr,
    extensions: &str,
    frames: &[Vec<u8>],
) -> (String, Vec<raw_ws::ServerFrame>) {
    raw_ws::exchange(addr, Some(extensions), frames).await
}

fn extension_header(head: &str) -> Option<&str> {
    head.lines()
        .find_map(|line| line.strip_prefix("sec-websocket-extensions: "))
}

const CLOSE_NORMAL: [u8; 2] = [0x03, 0xE8];

#[tokio::test(flavor = "current_thread")]
async fn compressed_messages_are_echoed_compressed_and_short_ones_plain() {
    let server = echo_server(compressing());
    let mut client = Compress::new(flate2::Compression::default(), false);
    let long = "a message long enough to be worth compressing, ".repeat(8);
    let frames = [
        frame(0xC1, &deflate(&mut client, long.as_bytes())),
        // The client's context carries over: the second copy deflates to a few bytes.
        frame(0xC1, &deflate(&mut client, long.as_bytes())),
        frame(0xC2, &deflate(&mut client, b"tiny")),
        frame(0x81, b"uncompressed text"),
        frame(0x88, &CLOSE_NORMAL),
    ];
    let (head, got) = exchange(
        server.addr(),
        "permessage-deflate; client_max_window_bits",
        &frames,
    )
    .await;
    assert_eq!(
        extension_header(&head),
        Some("permessage-deflate; server_no_context_takeover")
    );
    assert_eq!(got.len(), 5, "{got:?}");
    for (first, payload) in &got[..2] {
        assert_eq!(*first, 0xC1, "a long text comes back compressed");
        assert!(payload.len() < long.len() / 4);
        // Each sent message inflates on its own: the server keeps no context.
        assert_eq!(inflate(payload), long.as_bytes());
    }
    assert_eq!(got[2], (0x82, b"tiny".to_vec()));
    assert_eq!(got[3], (0x81, b"uncompressed text".to_vec()));
    assert_eq!(got[4], (0x88, CLOSE_NORMAL.to_vec()));
}

#[tokio::test(flavor = "current_thread")]
async fn without_the_option_the_offer_is_declined_and_rsv1_is_a_protocol_error() {
    let server = echo_server(WsConfig::default());
    let mut client = Compress::new(flate2::Compression::default(), false);
    let frames = [frame(0xC1, &deflate(&mut client, b"hello"))];
    let (head, got) = exchange(server.addr(), "permessage-deflate", &frames).await;
    assert_eq!(extension_header(&head), None);
    assert_eq!(got, vec![(0x88, 1002u16.to_be_bytes().to_vec())]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_message_that_inflates_past_the_limit_closes_with_1009() {
    let server = echo_server(compressing());
    let mut client = Compress::new(flate2::Compression::best(), false);
    let bomb = deflate(&mut client, &vec![b'a'; 1 << 20]);
    assert!(bomb.len() < 4096);
    let (_, got) = exchange(server.addr(), "permessage-deflate", &[frame(0xC1, &bomb)]).await;
    assert_eq!(got, vec![(0x88, 1009u16.to_be_bytes().to_vec())]);
}

#[tokio::test(flavor = "current_thread")]
async fn data_that_does_not_inflate_closes_with_1007() {
    let server = echo_server(compressing());
    let garbage = frame(0xC2, &[0xFF, 0xFF, 0xFF, 0xFF, 0x00]);
    let (_, got) = exchange(server.addr(), "permessage-deflate", &[garbage]).await;
    assert_eq!(got, vec![(0x88, 1007u16.to_be_bytes().to_vec())]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_requested_server_window_is_kept_to_and_echoed() {
    let server = echo_server(compressing());
    let long = "window bits keep the compressor's memory small; ".repeat(20);
    let mut client = Compress::new(flate2::Compression::default(), false);
    let frames = [
        frame(0xC1, &deflate(&mut client, long.as_bytes())),
        frame(0x88, &CLOSE_NORMAL),
    ];
    let offer = "permessage-deflate; server_max_window_bits=8, \
                 permessage-deflate; server_max_window_bits=9; client_no_context_takeover";
    let (head, got) = exchange(server.addr(), offer, &frames).await;
    assert_eq!(
        extension_header(&head),
        Some(
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; \
             server_max_window_bits=9"
        )
    );
    let mut inflater = Decompress::new_with_window_bits(false, 9);
    let mut input = got[0].1.clone();
    input.extend_from_slice(&[0, 0, 0xFF, 0xFF]);
    let mut out = Vec::with_capacity(1 << 16);
    inflater
        .decompress_vec(&input, &mut out, FlushDecompress::Sync)
        .unwrap();
    assert_eq!(got[0].0, 0xC1);
    assert_eq!(out, long.as_bytes());
}
