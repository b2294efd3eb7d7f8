//! The hello app over HTTPS, with a self-signed certificate made at start-up unless one is given.
//!
//! ```text
//! cargo run --release -p vireo --example tls
//! curl -k https://127.0.0.1:8443/
//! cargo run --release -p vireo --example tls -- --addr 0.0.0.0:443 --cert chain.pem --key key.pem
//! ```
//!
//! With `--cert` and `--key`, SIGHUP reloads both files: new connections get the new
//! certificate, open ones keep theirs. A file that fails to load is logged and the old
//! certificate stays.

use vireo::http::StatusCode;
use vireo::tls::TlsConfig;
use vireo::{App, Json, Request, Server};

fn app() -> App {
    let mut app = App::new();
    app.get("/", |_req| "Hello, World!");
    app.get("/json", |_req| {
        Json(serde_json::json!({"message": "Hello, World!"}))
    });
    app.get("/users/:id", |req: Request| {
        format!("User: {}", req.param("id").unwrap_or_default())
    });
    app.get("/favicon.ico", |_req| StatusCode::NO_CONTENT);
    app.get(
        "/scheme",
        |req: Request| {
            if req.is_secure() {
                "https"
            } else {
                "http"
            }
        },
    );
    app
}

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:8443");
    let (mut cert, mut key, mut workers) = (None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value,
            ("--cert", Some(path)) => cert = Some(path),
            ("--key", Some(path)) => key = Some(path),
            ("--workers", Some(value)) => match value.parse::<usize>() {
                Ok(n) if n > 0 => workers = Some(n),
                _ => usage("--workers takes a positive number"),
            },
            _ => usage(&format!("unknown argument `{flag}`")),
        }
    }
    let tls = match (&cert, &key) {
        (Some(cert), Some(key)) => TlsConfig::from_pem_files(cert, key)?,
        (None, None) => self_signed()?,
        _ => usage("--cert and --key go together"),
    };
    let mut server = Server::bind(&addr)?.tls(tls);
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    if let (Some(cert), Some(key)) = (cert, key) {
        server = server.reload_tls_on_sighup(move || {
            let loaded = TlsConfig::from_pem_files(&cert, &key);
            match &loaded {
                Ok(_) => eprintln!("SIGHUP: reloaded {cert} and {key}"),
                Err(error) => eprintln!("SIGHUP: kept the current certificate: {error}"),
            }
            loaded
        });
    }
    let server = server.on_ready(|addr| println!("listening on https://{addr}"));
    app().serve(server)
}

/// A certificate for `localhost` and `127.0.0.1`, made now; clients must be told to accept it
/// (`curl -k`).
fn self_signed() -> std::io::Result<TlsConfig> {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let made = rcgen::generate_simple_self_signed(names).map_err(std::io::Error::other)?;
    let config = TlsConfig::from_pem(
        made.cert.pem().as_bytes(),
        made.signing_key.serialize_pem().as_bytes(),
    )?;
    eprintln!("serving a self-signed certificate for localhost and 127.0.0.1");
    Ok(config)
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "{problem}\nusage: tls [--addr HOST:PORT] [--cert CHAIN.pem --key KEY.pem] [--workers N]"
    );
    std::process::exit(2);
}
