//! Query-string and percent decoding: any query never panics, and typed and raw access agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use std::sync::OnceLock;
use vireo::{App, Request, TestClient};

fn client() -> &'static TestClient {
    static CLIENT: OnceLock<TestClient> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let mut app = App::new();
        app.get("/q/:p", |req: Request| {
            let typed = req.query::<HashMap<String, String>>();
            let first = req.query_param("k").map(|v| v.into_owned());
            let param = req.param("p").map(|v| v.into_owned());
            // A query of the single pair `k=...` reads the same typed and raw.
            let single = req.query_string().is_some_and(|q| q.starts_with("k=") && !q.contains('&'));
            if let (true, Ok(map)) = (single, &typed) {
                assert_eq!(map.get("k"), first.as_ref());
            }
            format!("{} {:?} {:?}", typed.is_ok(), first, param)
        });
        TestClient::new(app)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else { return };
    if !query.bytes().all(|b| b.is_ascii_graphic()) || query.len() > 512 || query.contains('#') {
        return;
    }
    let (param, query) = query.split_once('?').unwrap_or(("x", query));
    if param.is_empty() || param.contains('/') {
        return;
    }
    let res = client().get(&format!("/q/{param}?{query}")).send();
    assert_eq!(res.status(), 200);
});
