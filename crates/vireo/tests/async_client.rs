//! The test client inside async tests: `.await` on a request (or `send_async`) on either
//! runtime flavour, with the same request builder as the blocking `send`.

use std::time::Duration;
use vireo::http::StatusCode;
use vireo::{blocking, stream_iter, App, Bytes, Request, TestClient};

fn app() -> App {
    let mut app = App::new();
    app.get("/", |_req| "Hello, World!");
    app.get("/users/:id", |req: Request| {
        format!("User: {}", req.param("id").unwrap())
    });
    app.get("/sleep", |_req| async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        "slept"
    });
    app.get(
        "/blocking",
        blocking(|_req| {
            std::thread::sleep(Duration::from_millis(5));
            "blocked"
        }),
    );
    app.get("/stream", |_req| {
        stream_iter((0..3).map(|i| Bytes::from(format!("chunk {i}\n"))))
    });
    app.post("/echo", |req: Request| req.body().cloned());
    app
}

/// Every kind of handler, through both ways of sending, on the runtime the test runs on.
async fn exercise(client: &TestClient) {
    assert_eq!(client.get("/").await.text(), "Hello, World!");
    assert_eq!(client.get("/users/7").send_async().await.text(), "User: 7");
    assert_eq!(client.get("/sleep").await.text(), "slept");
    assert_eq!(client.get("/blocking").await.text(), "blocked");
    assert_eq!(
        client.get("/stream").await.text(),
        "chunk 0\nchunk 1\nchunk 2\n"
    );
    let res = client
        .post("/echo")
        .header("content-type", "text/plain")
        .body("ping")
        .await;
    assert_eq!((res.status(), res.text()), (StatusCode::OK, "ping"));
    let res = client
        .post("/echo")
        .json(&serde_json::json!({"a": 1}))
        .await;
    assert_eq!(res.json::<serde_json::Value>(), serde_json::json!({"a": 1}));
    assert_eq!(client.head("/").await.bytes().len(), 0);
    assert_eq!(client.get("/nope").await.status(), StatusCode::NOT_FOUND);
    // Several in flight at once on the one task.
    let (a, b) = tokio::join!(client.get("/sleep"), client.get("/users/8"));
    assert_eq!((a.text(), b.text()), ("slept", "User: 8"));
}

#[tokio::test]
async fn awaits_on_a_current_thread_runtime() {
    let client = TestClient::new(app());
    exercise(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn awaits_on_a_multi_thread_runtime() {
    let client = TestClient::new(app());
    exercise(&client).await;
}

/// A client made and dropped inside an async test has no runtime of its own to drop there.
#[tokio::test]
async fn a_client_lives_and_dies_inside_an_async_test() {
    for _ in 0..3 {
        let client = TestClient::new(app());
        assert_eq!(client.get("/").await.status(), StatusCode::OK);
    }
}

/// The blocking `send` says what to do instead of failing inside Tokio.
#[tokio::test]
#[should_panic(expected = "in an async test, `.await` the request")]
async fn blocking_send_in_an_async_test_says_to_await() {
    let client = TestClient::new(app());
    let _ = client.get("/").send();
}

/// The blocking client still serves plain tests, also after async use elsewhere.
#[test]
fn blocking_send_in_a_plain_test() {
    let client = TestClient::new(app());
    assert_eq!(client.get("/sleep").send().text(), "slept");
    assert_eq!(client.get("/blocking").send().text(), "blocked");
}
