//! Route matching: any request target against a fixed set of routes never panics, and a
//! match's parameters come from the path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use vireo::{App, Request, TestClient};

fn client() -> &'static TestClient {
    static CLIENT: OnceLock<TestClient> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let mut app = App::new();
        app.get("/", |_req| "root");
        app.get("/users/me", |_req| "me");
        app.get("/users/:id", |req: Request| req.param("id").unwrap().into_owned());
        app.get("/users/:id/posts/:post", |req: Request| req.param("post").unwrap().into_owned());
        app.get("/a/b/c", |_req| "abc");
        app.get("/a/:x/d", |req: Request| req.param("x").unwrap().into_owned());
        app.get("/files/*rest", |req: Request| req.param("rest").unwrap().into_owned());
        let mut api = vireo::Router::new();
        api.get("/v/:n", |req: Request| req.path().to_owned());
        app.mount("/api", api);
        TestClient::new(app)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else { return };
    // Only targets a client could send: visible ASCII without a fragment, starting with `/`.
    let sendable = path.bytes().all(|b| b.is_ascii_graphic() && b != b'#');
    if !path.starts_with('/') || !sendable || path.len() > 512 {
        return;
    }
    let res = client().get(path).send();
    assert!(matches!(res.status().as_u16(), 200 | 404), "{path}: {}", res.status());
    // `/users/{seg}` (with an optional trailing slash) answers the segment, percent-decoded.
    let path_only = path.split_once('?').map_or(path, |(p, _)| p);
    let segment = path_only.strip_prefix("/users/").map(|s| s.strip_suffix('/').unwrap_or(s));
    if let Some(seg) = segment.filter(|s| !s.is_empty() && !s.contains('/') && *s != "me") {
        let decoded = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
        assert_eq!(res.text(), decoded, "{path}");
    }
});
