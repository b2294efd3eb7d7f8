//! Serving on a Unix domain socket: requests answered as over TCP, the socket file's
//! permissions, and its removal when the server ends.

mod common;

use common::get_and_close;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use vireo_http::{service_fn, ListenAddr, Request, Response, Server};

fn hello(req: Request<'_>) -> Response {
    let peer = match req.remote_addr() {
        Some(addr) => addr.to_string(),
        None => "no address".to_owned(),
    };
    Response::text(format!("hello, {peer}"))
}

fn get(path: &std::path::Path) -> String {
    get_and_close(UnixStream::connect(path).unwrap())
}

#[test]
fn answers_over_a_unix_socket_and_removes_the_file_when_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.sock");
    let server = Server::bind_unix(&path)
        .unwrap()
        .workers(2)
        .unix_permissions(0o660)
        .spawn(service_fn(hello))
        .unwrap();
    assert_eq!(server.listen_addr(), &ListenAddr::Unix(path.clone()));
    assert_eq!(
        server.listen_addr().to_string(),
        format!("unix:{}", path.display())
    );
    for _ in 0..4 {
        let reply = get(&path);
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
        assert!(reply.ends_with("hello, no address"), "{reply}");
    }
    let meta = std::fs::metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
    server.shutdown().unwrap();
    assert!(!path.exists(), "the socket file is removed on shutdown");
}

#[test]
fn a_stale_socket_file_is_replaced_and_a_live_one_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.sock");
    // A socket file nothing listens on any more, as a crashed server leaves behind.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let server = Server::bind_unix(&path)
        .unwrap()
        .workers(1)
        .spawn(service_fn(hello))
        .unwrap();
    assert!(get(&path).ends_with("hello, no address"));

    let error = Server::bind_unix(&path).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse, "{error}");
    assert!(
        get(&path).ends_with("hello, no address"),
        "the live server is untouched"
    );
    server.shutdown().unwrap();
}

#[test]
fn a_path_that_is_not_a_socket_is_never_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.txt");
    std::fs::write(&path, "keep me").unwrap();
    assert!(Server::bind_unix(&path).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me");
}

#[test]
fn tcp_requests_still_see_the_peer_address() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .spawn(service_fn(hello))
        .unwrap();
    let client = std::net::TcpStream::connect(server.addr()).unwrap();
    let local = client.local_addr().unwrap();
    let reply = get_and_close(client);
    assert!(reply.ends_with(&format!("hello, {local}")), "{reply}");
}
