//! The Rust Book chapter-20 web server: one connection per request
//! (Connection: close, no keep-alive), handled on a 4-thread pool.
use std::io::{prelude::*, BufReader};
use std::net::{TcpListener, TcpStream};

use peer_rust_book::ThreadPool;

fn main() {
    let port = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .unwrap_or_else(|| "8080".to_string());
    let listener = TcpListener::bind(format!("127.0.0.1:{port}")).unwrap();
    let pool = ThreadPool::new(4);

    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        pool.execute(|| handle_connection(stream));
    }
}

fn handle_connection(mut stream: TcpStream) {
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // Read the rest of the head so closing the socket does not reset it with unread data.
    let mut line = String::new();
    while matches!(reader.read_line(&mut line), Ok(n) if n > 2) {
        line.clear();
    }

    // The book matches "GET / HTTP/1.1" only; HTTP/1.0 is accepted too because ab sends it.
    let (status_line, contents) = match request_line.trim_end() {
        "GET / HTTP/1.1" | "GET / HTTP/1.0" => ("HTTP/1.1 200 OK", "Hello, World!"),
        _ => ("HTTP/1.1 404 NOT FOUND", "Not Found"),
    };
    let length = contents.len();
    let response = format!(
        "{status_line}\r\nContent-Type: text/plain\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n{contents}"
    );
    let _ = stream.write_all(response.as_bytes());
}
