//! A WebSocket client made of raw bytes, for tests that send frames no library would.

use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A frame the server sent: its first byte (FIN, RSV bits, opcode) and its payload.
pub type ServerFrame = (u8, Vec<u8>);

/// Handshake on `/echo` (offering `extensions`, if any), send `frames`, and read until the
/// server closes the connection: the response head and the frames it sent.
pub async fn exchange(
    addr: SocketAddr,
    extensions: Option<&str>,
    frames: &[Vec<u8>],
) -> (String, Vec<ServerFrame>) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let mut request = String::from(
        "GET /echo HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
         sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
    );
    if let Some(extensions) = extensions {
        request.push_str(&format!("sec-websocket-extensions: {extensions}\r\n"));
    }
    request.push_str("\r\n");
    let mut request = request.into_bytes();
    for f in frames {
        request.extend_from_slice(f);
    }
    tcp.write_all(&request).await.unwrap();
    let mut bytes = Vec::new();
    tcp.read_to_end(&mut bytes).await.unwrap();
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8(bytes[..head_end].to_vec()).unwrap();
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    let mut rest = &bytes[head_end..];
    let mut out = Vec::new();
    while rest.len() >= 2 {
        assert_eq!(rest[1] & 0x80, 0, "server frames are not masked");
        let (len, at) = match rest[1] & 0x7F {
            126 => (u16::from_be_bytes([rest[2], rest[3]]) as usize, 4),
            127 => panic!("no 64-bit lengths expected here"),
            n => (n as usize, 2),
        };
        out.push((rest[0], rest[at..at + len].to_vec()));
        rest = &rest[at + len..];
    }
    (head, out)
}
