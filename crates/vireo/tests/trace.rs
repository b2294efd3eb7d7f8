//! The `trace` middleware: a span per request that handlers log into.

use std::io::Write;
use std::sync::{Arc, Mutex};
use vireo::middleware::{request_id, trace};
use vireo::{App, TestClient};

/// Everything a `fmt` subscriber writes, kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn app() -> App {
    let mut app = App::new();
    app.r#use(request_id());
    app.r#use(trace());
    app.get("/users/:id", |_req| {
        tracing::info!("looking the user up");
        "a user"
    });
    app.get("/later", |_req| async {
        tokio::task::yield_now().await;
        tracing::info!("after a yield");
        "later"
    });
    app
}

#[test]
fn each_request_runs_in_a_span_with_its_route_status_and_id() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let client = TestClient::new(app());
        client
            .get("/users/7")
            .header("x-request-id", "req-1")
            .send();
        client.get("/later").header("x-request-id", "req-2").send();
    });
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let line = |needle: &str| {
        log.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in:\n{log}"))
            .to_owned()
    };
    let handler = line("looking the user up");
    assert!(
        handler.contains(r#"request{method=GET path="/users/7""#),
        "{handler}"
    );
    assert!(handler.contains("request_id=\"req-1\""), "{handler}");
    let response = line("status=200 latency_us=");
    assert!(response.contains("route=\"/users/:id\""), "{response}");
    let later = line("after a yield");
    assert!(
        later.contains("request_id=\"req-2\""),
        "an async handler logs in its span: {later}"
    );
    assert!(log.contains("route=\"/later\""), "{log}");
}
