//! The engine alone, answering `Hello, World!` to every request.
//!
//! ```text
//! cargo run --release -p vireo-http --example engine_hello -- --addr 127.0.0.1:8080 [--workers N]
//! ```

use vireo_http::{service_fn, Response, Server};

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:8080");
    let mut workers = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next();
        match (flag.as_str(), value) {
            ("--addr", Some(value)) => addr = value,
            ("--workers", Some(value)) => {
                workers = Some(value.parse().map_err(|_| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "--workers takes a number",
                    )
                })?)
            }
            _ => {
                eprintln!("usage: engine_hello [--addr HOST:PORT] [--workers N]");
                std::process::exit(2);
            }
        }
    }
    let mut server = Server::bind(&addr)?.handle_signals(true);
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    let server = server.on_ready(|addr| println!("listening on http://{addr}"));
    server.serve(service_fn(|_req| Response::text("Hello, World!")))
}
