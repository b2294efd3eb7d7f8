//! `Server::batch_blocking_threads`: blocking work runs on threads under `SCHED_BATCH` when it
//! is on, and under the default policy when it is off.
#![cfg(target_os = "linux")]

mod common;

use common::get_and_close;
use std::net::TcpStream;
use vireo_http::{spawn_blocking, Request, Response, Server, Service};

/// Answers with the scheduling policy of the blocking thread that ran its work.
struct PolicyOfBlockingThread;

impl Service for PolicyOfBlockingThread {
    async fn call(&self, _req: Request<'_>) -> Response {
        Response::text(spawn_blocking(this_thread_policy).await)
    }
}

/// The calling thread's policy, field 41 of its `/proc` stat line: 0 is `SCHED_OTHER`, 3 is
/// `SCHED_BATCH`.
fn this_thread_policy() -> String {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // The command name (field 2) may hold spaces; the fields after it start past its `)`.
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.split(' ').nth(41 - 3).unwrap().to_owned()
}

fn policy_served_with(batch: bool) -> String {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .batch_blocking_threads(batch)
        .spawn(PolicyOfBlockingThread)
        .unwrap();
    let reply = get_and_close(TcpStream::connect(server.addr()).unwrap());
    server.shutdown().unwrap();
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    reply.rsplit("\r\n\r\n").next().unwrap().to_owned()
}

#[test]
fn blocking_threads_run_under_sched_batch_when_asked() {
    assert_eq!(policy_served_with(true), "3");
}

#[test]
fn blocking_threads_keep_the_default_policy_by_default() {
    assert_eq!(policy_served_with(false), "0");
}
