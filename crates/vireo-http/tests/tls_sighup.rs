//! SIGHUP reloads the TLS configuration from its files. In a test binary of its own: the signal
//! goes to the whole process.

mod common;

use common::tls::{accepting_any, served_cert};
use std::time::Duration;
use tokio_rustls::rustls;
use vireo_http::tls::TlsConfig;
use vireo_http::{service_fn, Response, Server};

fn write_cert(dir: &std::path::Path) -> Vec<u8> {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::write(dir.join("key.pem"), made.signing_key.serialize_pem()).unwrap();
    std::fs::write(dir.join("chain.pem"), made.cert.pem()).unwrap();
    made.cert.der().to_vec()
}

#[test]
fn sighup_reloads_the_certificate_files() {
    let dir = tempfile::tempdir().unwrap();
    let first = write_cert(dir.path());
    let (chain, key) = (dir.path().join("chain.pem"), dir.path().join("key.pem"));
    let load = move || TlsConfig::from_pem_files(&chain, &key);
    let (ready, ready_rx) = std::sync::mpsc::channel();
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .tls(load().unwrap())
        .reload_tls_on_sighup(load)
        .handle_signals(true)
        .on_ready(move |_| ready.send(()).unwrap())
        .spawn(service_fn(|_req| Response::text("ok")))
        .unwrap();
    ready_rx.recv().unwrap();

    let connector = accepting_any(rustls::DEFAULT_VERSIONS, &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let served = || {
        runtime.block_on(async {
            let stream = common::tls::connect(&connector, server.addr(), "localhost")
                .await
                .unwrap();
            served_cert(&stream)
        })
    };
    assert_eq!(served(), first);

    let second = write_cert(dir.path());
    let status = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // The signal is handled on the server's signal thread: wait for it, within a bound.
    let mut now_served = served();
    for _ in 0..600 {
        if now_served == second {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        now_served = served();
    }
    assert_eq!(now_served, second, "the reloaded certificate");
}
