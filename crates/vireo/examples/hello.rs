//! The smallest Vireo app.
//!
//! ```text
//! cargo run --release -p vireo --example hello
//! curl http://127.0.0.1:8080/
//! ```

fn main() -> std::io::Result<()> {
    let mut app = vireo::App::new();
    app.get("/", |_req| "Hello, World!");
    let server = vireo::Server::bind("127.0.0.1:8080")?;
    let server = server.on_ready(|addr| println!("listening on http://{addr}"));
    app.serve(server)
}
