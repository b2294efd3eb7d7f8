//! An app served over HTTP/2 (h2c with prior knowledge, the `http2` feature) answers as over
//! HTTP/1.1: routes with parameters, middleware, cookies split into several fields, a body read
//! whole, and the app's body limit.

use bytes::Bytes;
use http::{Method, StatusCode};
use vireo::{App, Limits, Next, Request, Server};

/// Send one request on `client`; the status and the body.
async fn exchange(
    client: &h2::client::SendRequest<Bytes>,
    req: http::Request<()>,
    body: Option<&'static [u8]>,
) -> (StatusCode, String) {
    let mut ready = client.clone().ready().await.unwrap();
    let (response, mut send) = ready.send_request(req, body.is_none()).unwrap();
    if let Some(body) = body {
        send.send_data(Bytes::from_static(body), true).unwrap();
    }
    let response = response.await.unwrap();
    let status = response.status();
    let mut recv = response.into_body();
    let mut out = Vec::new();
    while let Some(chunk) = recv.data().await {
        let chunk = chunk.unwrap();
        let _ = recv.flow_control().release_capacity(chunk.len());
        out.extend_from_slice(&chunk);
    }
    (status, String::from_utf8(out).unwrap())
}

fn request(method: Method, path: &str) -> http::Request<()> {
    http::Request::builder()
        .method(method)
        .uri(format!("http://example.test{path}"))
        .body(())
        .unwrap()
}

#[test]
fn an_app_answers_over_h2c_as_over_http_1_1() {
    let mut app = App::new();
    app.limits(Limits {
        max_body_size: 64,
        ..Limits::default()
    });
    app.r#use(|mut req: Request, next: Next| {
        req.set("middleware ran");
        next.run(req)
    });
    app.get("/users/:id", |req: Request| {
        format!(
            "user {} {:?} host={} {} a={} b={}",
            req.param("id").unwrap_or_default(),
            req.head().version(),
            req.header("host").unwrap_or_default(),
            req.get::<&str>().copied().unwrap_or_default(),
            req.cookie("a").unwrap_or_default(),
            req.cookie("b").unwrap_or_default(),
        )
    });
    app.post("/echo", |req: Request| match req.text() {
        Ok(text) => format!("echo {text}"),
        Err(error) => format!("error {error}"),
    });
    let service = app.into_service();
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .limits(service.limits().clone())
        .spawn(service)
        .unwrap();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
        let (client, conn) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });

        let mut get = request(Method::GET, "/users/42");
        get.headers_mut().append("cookie", "a=1".parse().unwrap());
        get.headers_mut().append("cookie", "b=2".parse().unwrap());
        let (status, body) = exchange(&client, get, None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body,
            "user 42 HTTP/2.0 host=example.test middleware ran a=1 b=2"
        );

        let post = request(Method::POST, "/echo");
        let (status, body) = exchange(&client, post, Some(b"over h2")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "echo over h2"));

        let (status, _) = exchange(&client, request(Method::GET, "/nowhere"), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        let big: &'static [u8] = &[b'x'; 200];
        let (status, _) = exchange(&client, request(Method::POST, "/echo"), Some(big)).await;
        assert_eq!(
            status,
            StatusCode::PAYLOAD_TOO_LARGE,
            "the app's body limit"
        );
    });
}
