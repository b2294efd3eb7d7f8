//! Serving a directory: content types, ETag/Last-Modified with 304, Range with 206,
//! index.html, and no path traversal.
//!
//! ```text
//! cargo run -p vireo --example static_files -- ./some/dir
//! curl -i localhost:8080/files/index.html
//! ```

fn main() -> std::io::Result<()> {
    let root = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let mut app = vireo::App::new();
    app.get("/files/*path", vireo::serve_dir(&root));
    app.get("/", |_req| vireo::Redirect::to("/files/"));
    let server = vireo::Server::bind("127.0.0.1:8080")?
        .on_ready(move |addr| println!("listening on http://{addr}, serving {root}"));
    app.serve(server)
}
