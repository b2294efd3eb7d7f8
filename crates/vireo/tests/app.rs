//! The framework through its test client: routing, handlers, requests, middleware, errors.

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use vireo::http::{Method, StatusCode};
use vireo::middleware::{body_limit, compression, cors, request_id, timeout, RequestId};
use vireo::{
    blocking, App, Bytes, Cookie, Error, Html, Json, Next, Redirect, Request, Response,
    ResponseExt, Router, TestClient,
};

fn client(build: impl FnOnce(&mut App)) -> TestClient {
    let mut app = App::new();
    build(&mut app);
    TestClient::new(app)
}

#[test]
fn static_segments_win_over_params_and_wildcards_take_the_rest() {
    let c = client(|app| {
        app.get("/users/me", |_req| "me");
        app.get("/users/:id", |req: Request| {
            format!("id {}", req.param("id").unwrap())
        });
        app.get("/users/:id/posts/:post", |req: Request| {
            let params: Vec<String> = req.params().map(|(n, v)| format!("{n}={v}")).collect();
            params.join(",")
        });
        app.get("/files/*rest", |req: Request| {
            req.param("rest").unwrap().into_owned()
        });
    });
    assert_eq!(c.get("/users/me").send().text(), "me");
    assert_eq!(c.get("/users/42").send().text(), "id 42");
    assert_eq!(c.get("/users/a%20b").send().text(), "id a b");
    assert_eq!(c.get("/users/1/posts/2").send().text(), "id=1,post=2");
    assert_eq!(c.get("/files/a/b/c.txt").send().text(), "a/b/c.txt");
    assert_eq!(c.get("/users/42?x=1").send().text(), "id 42");
}

#[test]
fn not_found_method_not_allowed_and_head_fallback() {
    let c = client(|app| {
        app.get("/thing", |_req| "got it");
        app.post("/thing", |_req| "posted");
        app.delete("/other", |_req| "deleted");
    });
    assert_eq!(c.get("/nothing").send().status(), StatusCode::NOT_FOUND);
    let res = c.put("/thing").send();
    assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS, POST"));
    assert_eq!(
        c.get("/other").send().header("allow"),
        Some("DELETE, OPTIONS")
    );
    let unknown = Method::from_bytes(b"FOO").unwrap();
    assert_eq!(
        c.request(unknown.clone(), "/thing").send().status(),
        StatusCode::NOT_IMPLEMENTED
    );
    assert_eq!(
        c.request(unknown, "/nowhere").send().status(),
        StatusCode::NOT_IMPLEMENTED
    );
    assert_eq!(
        c.request(Method::TRACE, "/thing").send().status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
    let head = c.head("/thing").send();
    assert_eq!(head.status(), StatusCode::OK);
    assert!(head.bytes().is_empty());
    assert_eq!(
        head.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
}

/// RFC 9110 §9.3.7: OPTIONS on a known path is answered for the app with the path's methods,
/// unless the app answers it itself; `OPTIONS *` describes the whole server.
#[test]
fn options_is_answered_with_allow() {
    let c = client(|app| {
        app.get("/thing", |_req| "got it");
        app.post("/thing", |_req| "posted");
        app.put("/custom", |_req| "put");
        app.options("/custom", |_req| (StatusCode::OK, "custom options"));
        app.all("/any", |req: Request| req.method().to_string());
        app.get("/users/:id", |_req| "user");
        app.route(Method::from_bytes(b"PURGE").unwrap(), "/cache", |_req| {
            "purged"
        });
        let mut api = Router::new();
        api.delete("/items/:id", |_req| "deleted");
        app.mount("/api", api);
    });
    let options = |target: &str| c.options(target).send();

    let res = options("/thing");
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS, POST"));
    assert!(res.bytes().is_empty());
    // The same list as a 405 gives.
    assert_eq!(c.put("/thing").send().header("allow"), res.header("allow"));
    let res = options("/users/42");
    assert_eq!(
        (res.status(), res.header("allow")),
        (StatusCode::NO_CONTENT, Some("GET, HEAD, OPTIONS"))
    );
    let res = options("/api/items/7");
    assert_eq!(
        (res.status(), res.header("allow")),
        (StatusCode::NO_CONTENT, Some("DELETE, OPTIONS"))
    );
    let res = options("/cache");
    assert_eq!(res.header("allow"), Some("OPTIONS, PURGE"));

    // A route of the app's own wins, and so does one for every method.
    let res = options("/custom");
    assert_eq!(
        (res.status(), res.text()),
        (StatusCode::OK, "custom options")
    );
    assert_eq!(options("/any").text(), "OPTIONS");

    // The server as a whole: every method some route answers.
    let res = options("*");
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        res.header("allow"),
        Some("DELETE, GET, HEAD, OPTIONS, POST, PURGE, PUT")
    );
    assert!(res.bytes().is_empty());

    assert_eq!(options("/nowhere").status(), StatusCode::NOT_FOUND);
    assert_eq!(options("/api/nowhere").status(), StatusCode::NOT_FOUND);
}

/// An app with no routes still says what `OPTIONS *` may do.
#[test]
fn options_asterisk_without_routes() {
    let res = client(|_app| {}).options("*").send();
    assert_eq!(
        (res.status(), res.header("allow")),
        (StatusCode::NO_CONTENT, Some("OPTIONS"))
    );
}

/// App-wide middleware sees the automatic OPTIONS answers, as it sees 404s.
#[test]
fn middleware_sees_automatic_options() {
    let c = client(|app| {
        app.r#use(|req: Request, next: Next| async move {
            let mut res = next.run(req).await;
            res.headers_mut()
                .insert("x-seen", vireo::http::HeaderValue::from_static("yes"));
            res
        });
        app.get("/", |_req| "home");
    });
    for target in ["/", "*"] {
        let res = c.request(Method::OPTIONS, target).send();
        assert_eq!(res.status(), StatusCode::NO_CONTENT, "{target}");
        assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS"), "{target}");
        assert_eq!(res.header("x-seen"), Some("yes"), "{target}");
    }
}

/// A mounted router's middleware sees the automatic OPTIONS answers at its routes' paths (a
/// route's own middleware does not), so `cors` on a router answers its preflights.
#[test]
fn a_routers_middleware_sees_automatic_options_at_its_paths() {
    let c = client(|app| {
        let mut inner = Router::new();
        inner.r#use(|req: Request, next: Next| async move {
            let seen = format!("{} {}", req.path(), req.original_path());
            let mut res = next.run(req).await;
            let value = vireo::http::HeaderValue::from_str(&seen).unwrap();
            res.headers_mut().insert("x-inner", value);
            res
        });
        inner
            .get("/items/:id", |_req| "item")
            .with(|_req: Request, _next: Next| async { "route middleware" });
        inner.post("/items/:id", |_req| "posted");
        let mut api = Router::new();
        api.r#use(cors().allow_origins(["https://app.example"]));
        api.mount("/v1", inner);
        app.mount("/api", api);
        app.get("/plain", |_req| "plain");
    });

    let preflight = c
        .options("/api/v1/items/7")
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .send();
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert!(preflight.header("access-control-allow-methods").is_some());
    // The inner router's middleware runs after the outer's cors, which answered.
    assert_eq!(preflight.header("x-inner"), None);

    // A plain OPTIONS passes through both routers' middleware to the automatic answer, with
    // the path as the inner router sees it; the route's own middleware is not run.
    let res = c.options("/api/v1/items/7").send();
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS, POST"));
    assert_eq!(res.header("x-inner"), Some("/items/7 /api/v1/items/7"));
    assert!(res.bytes().is_empty());

    // Paths outside the routers are answered as before.
    let res = c.options("/plain").send();
    assert_eq!(
        (res.status(), res.header("allow"), res.header("x-inner")),
        (StatusCode::NO_CONTENT, Some("GET, HEAD, OPTIONS"), None)
    );
    assert_eq!(
        c.options("/api/v1/nowhere").send().status(),
        StatusCode::NOT_FOUND
    );
}

#[test]
fn every_method_function_and_all() {
    let c = client(|app| {
        app.put("/r", |_req| "put");
        app.patch("/r", |_req| "patch");
        app.options("/r", |_req| "options");
        app.head("/h", |_req| StatusCode::IM_A_TEAPOT);
        app.all("/any", |req: Request| req.method().to_string());
        app.route(Method::from_bytes(b"PURGE").unwrap(), "/r", |_req| "purged");
    });
    assert_eq!(c.put("/r").send().text(), "put");
    assert_eq!(c.patch("/r").send().text(), "patch");
    assert_eq!(c.request(Method::OPTIONS, "/r").send().text(), "options");
    assert_eq!(c.head("/h").send().status(), StatusCode::IM_A_TEAPOT);
    assert_eq!(c.delete("/any").send().text(), "DELETE");
    assert_eq!(
        c.request(Method::from_bytes(b"PURGE").unwrap(), "/r")
            .send()
            .text(),
        "purged"
    );
}

#[test]
fn mounted_routers_strip_the_prefix_but_keep_the_original_path() {
    let mut api = Router::new();
    api.get("/", |_req| "api root");
    api.get("/users/:id", |req: Request| {
        format!(
            "{} {} {}",
            req.path(),
            req.original_path(),
            req.param("id").unwrap()
        )
    });
    let mut v2 = Router::new();
    v2.get("/ping", |req: Request| {
        format!("{} {}", req.path(), req.original_path())
    });
    api.mount("/v2", v2);
    let c = client(|app| {
        app.mount("/api", api);
    });
    assert_eq!(c.get("/api").send().text(), "api root");
    assert_eq!(
        c.get("/api/users/5").send().text(),
        "/users/5 /api/users/5 5"
    );
    assert_eq!(c.get("/api/v2/ping").send().text(), "/ping /api/v2/ping");
}

#[test]
#[should_panic(expected = "conflicts with the same route registered at crates/vireo/tests/app.rs")]
fn a_duplicate_route_panics_naming_both_lines() {
    let mut app = App::new();
    app.get("/a", |_req| "one");
    app.get("/a", |_req| "two");
    TestClient::new(app);
}

#[test]
#[should_panic(expected = "parameter `name` conflicts with `id`")]
fn differently_named_params_at_one_place_panic() {
    let mut app = App::new();
    app.get("/users/:id", |_req| "one");
    app.post("/users/:name", |_req| "two");
    TestClient::new(app);
}

#[test]
#[should_panic(expected = "registered at crates/vireo/tests/app.rs")]
fn an_invalid_pattern_panics_with_the_callers_line() {
    let mut app = App::new();
    app.get("no-slash", |_req| "x");
    TestClient::new(app);
}

#[test]
fn sync_async_and_blocking_handlers_share_one_shape() {
    async fn async_fn(req: Request) -> String {
        tokio::time::sleep(Duration::from_millis(1)).await;
        format!("async {}", req.path())
    }
    fn sync_fn(req: Request) -> String {
        format!("sync {}", req.path())
    }
    let c = client(|app| {
        app.get("/sync", sync_fn);
        app.get("/async", async_fn);
        app.get("/closure", |_req| async { "async closure" });
        app.get(
            "/blocking",
            blocking(|req: Request| {
                std::thread::sleep(Duration::from_millis(1));
                format!("blocking {}", req.path())
            }),
        );
        app.post(
            "/blocking-body",
            blocking(|req: Request| req.body().cloned()),
        );
    });
    assert_eq!(c.get("/sync").send().text(), "sync /sync");
    assert_eq!(c.get("/async").send().text(), "async /async");
    assert_eq!(c.get("/closure").send().text(), "async closure");
    assert_eq!(c.get("/blocking").send().text(), "blocking /blocking");
    assert_eq!(c.post("/blocking-body").body("data").send().text(), "data");
}

#[test]
fn return_types_become_the_right_responses() {
    #[derive(Serialize)]
    struct Out {
        n: u32,
    }
    let c = client(|app| {
        app.get("/str", |_req| "text");
        app.get("/string", |_req| String::from("owned"));
        app.get("/vec", |_req| vec![0u8, 159, 146, 150, 255]);
        app.get("/bytes", |_req| Bytes::from_static(b"\x00\xff"));
        app.get("/status", |_req| StatusCode::ACCEPTED);
        app.get("/tuple", |_req| (StatusCode::CREATED, "made"));
        app.get("/json", |_req| Json(Out { n: 7 }));
        app.get("/html", |_req| Html("<p>hi</p>"));
        app.get("/redirect", |_req| Redirect::to("/str"));
        app.get("/response", |_req| -> Result<Response, Error> {
            let mut res = Response::new(StatusCode::OK, "custom");
            res.set_cookie(&Cookie::new("k", "v").http_only())?;
            Ok(res)
        });
        app.get("/ok", |_req| -> Result<&'static str, Error> { Ok("fine") });
        app.get("/err", |_req| -> Result<&'static str, Error> {
            Err(Error::new(StatusCode::CONFLICT, "taken"))
        });
        app.get("/io-err", |_req| -> Result<&'static str, Error> {
            Err(std::io::Error::other("disk on fire"))?
        });
    });
    let res = c.get("/str").send();
    assert_eq!(
        (res.text(), res.header("content-type")),
        ("text", Some("text/plain; charset=utf-8"))
    );
    assert_eq!(c.get("/string").send().text(), "owned");
    let res = c.get("/vec").send();
    assert_eq!(
        res.bytes().as_ref(),
        &[0u8, 159, 146, 150, 255],
        "binary stays binary"
    );
    assert_eq!(res.header("content-type"), Some("application/octet-stream"));
    assert_eq!(c.get("/bytes").send().bytes().as_ref(), b"\x00\xff");
    assert_eq!(c.get("/status").send().status(), StatusCode::ACCEPTED);
    let res = c.get("/tuple").send();
    assert_eq!((res.status(), res.text()), (StatusCode::CREATED, "made"));
    let res = c.get("/json").send();
    assert_eq!(
        (res.text(), res.header("content-type")),
        (r#"{"n":7}"#, Some("application/json"))
    );
    assert_eq!(
        c.get("/html").send().header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let res = c.get("/redirect").send();
    assert_eq!(
        (res.status(), res.header("location")),
        (StatusCode::SEE_OTHER, Some("/str"))
    );
    assert_eq!(
        c.get("/response").send().header("set-cookie"),
        Some("k=v; HttpOnly; Path=/")
    );
    assert_eq!(c.get("/ok").send().text(), "fine");
    let res = c.get("/err").send();
    assert_eq!((res.status(), res.text()), (StatusCode::CONFLICT, "taken"));
    let res = c.get("/io-err").send();
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert!(
        !res.text().contains("disk"),
        "the cause is logged, not sent"
    );
}

#[derive(Deserialize, Serialize, Debug, PartialEq)]
struct Item {
    name: String,
    qty: u32,
}

#[test]
fn bodies_as_bytes_text_json_and_form_with_precise_rejections() {
    let c = client(|app| {
        app.post("/bytes", |req: Request| {
            req.body().map(|b| b.len().to_string())
        });
        app.post("/text", |req: Request| req.text().map(str::to_uppercase));
        app.post("/json", |req: Request| req.json::<Item>().map(Json));
        app.post("/form", |req: Request| {
            req.form::<Item>().map(|i| format!("{} x{}", i.name, i.qty))
        });
    });
    assert_eq!(c.post("/bytes").body(vec![0u8; 1000]).send().text(), "1000");
    assert_eq!(c.post("/text").body("abc").send().text(), "ABC");
    assert_eq!(c.post("/text").body(vec![0xff, 0xfe]).send().status(), 400);

    let good = Item {
        name: "pen".into(),
        qty: 2,
    };
    assert_eq!(c.post("/json").json(&good).send().json::<Item>(), good);
    let res = c.post("/json").body(r#"{"name":"pen","qty":2}"#).send();
    assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let res = c
        .post("/json")
        .header("content-type", "application/json")
        .body("{nope")
        .send();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(res.text().starts_with("Malformed JSON: "), "{}", res.text());
    let res = c
        .post("/json")
        .header("content-type", "application/json; charset=utf-8")
        .body(r#"{"name":"pen","qty":-1}"#)
        .send();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let form = c
        .post("/form")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("name=blue+pen&qty=3")
        .send();
    assert_eq!(form.text(), "blue pen x3");
    assert_eq!(c.post("/form").body("name=a&qty=1").send().status(), 415);
    let res = c
        .post("/form")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("name=a")
        .send();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
}

#[test]
fn body_limits_default_and_per_route() {
    let c = client(|app| {
        app.limits(vireo::Limits {
            max_body_size: 100,
            ..vireo::Limits::default()
        });
        app.post("/small", |req: Request| {
            req.body().map(|b| b.len().to_string())
        });
        app.post("/smaller", |req: Request| {
            req.body().map(|b| b.len().to_string())
        })
        .with(body_limit(10));
        app.post("/upload", |req: Request| {
            req.body().map(|b| b.len().to_string())
        })
        .with(body_limit(1000));
    });
    assert_eq!(c.post("/small").body(vec![1u8; 100]).send().text(), "100");
    assert_eq!(c.post("/small").body(vec![1u8; 101]).send().status(), 413);
    assert_eq!(c.post("/smaller").body(vec![1u8; 11]).send().status(), 413);
    assert_eq!(
        c.post("/upload").body(vec![1u8; 1000]).send().text(),
        "1000"
    );
}

#[test]
fn query_headers_and_cookies() {
    #[derive(Deserialize)]
    struct Page {
        page: u32,
        tag: Option<String>,
    }
    let c = client(|app| {
        app.get("/q", |req: Request| -> Result<String, Error> {
            let page: Page = req.query()?;
            Ok(format!(
                "{} {:?} {:?} {:?}",
                page.page,
                page.tag,
                req.query_param("tag").as_deref(),
                req.query_string()
            ))
        });
        app.get("/h", |req: Request| {
            let all = req.headers().get_all("x-multi").iter().count();
            format!("{:?} {all}", req.header("X-One"))
        });
        app.get("/c", |req: Request| {
            format!(
                "{:?} {:?} {}",
                req.cookie("a"),
                req.cookie("missing"),
                req.cookies().count()
            )
        });
    });
    assert_eq!(
        c.get("/q?page=2&tag=a%20b").send().text(),
        r#"2 Some("a b") Some("a b") Some("page=2&tag=a%20b")"#
    );
    assert_eq!(c.get("/q?page=x").send().status(), StatusCode::BAD_REQUEST);
    let res = c
        .get("/h")
        .header("x-one", "1")
        .header("x-multi", "a")
        .header("x-multi", "b")
        .send();
    assert_eq!(res.text(), r#"Some("1") 2"#);
    let res = c
        .get("/c")
        .header("cookie", "a=1; b=2")
        .header("cookie", "c=3")
        .send();
    assert_eq!(res.text(), r#"Some("1") None 3"#);
}

#[test]
fn repeated_query_and_form_keys_fill_a_vec() {
    #[derive(Deserialize)]
    struct Filter {
        #[serde(default)]
        tag: Vec<String>,
        #[serde(default)]
        page: Option<u32>,
    }
    let c = client(|app| {
        app.get("/q", |req: Request| -> Result<String, Error> {
            let filter: Filter = req.query()?;
            Ok(format!("{:?} {:?}", filter.tag, filter.page))
        });
        app.post("/f", |req: Request| -> Result<String, Error> {
            let filter: Filter = req.form()?;
            Ok(format!("{:?}", filter.tag))
        });
    });
    assert_eq!(
        c.get("/q?tag=a&page=3&tag=b%20c").send().text(),
        r#"["a", "b c"] Some(3)"#
    );
    assert_eq!(c.get("/q?tag=only").send().text(), r#"["only"] None"#);
    assert_eq!(c.get("/q").send().text(), r#"[] None"#);
    let res = c
        .post("/f")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("tag=x&tag=y")
        .send();
    assert_eq!(res.text(), r#"["x", "y"]"#);
}

#[test]
fn state_and_extensions() {
    struct Config {
        name: &'static str,
    }
    #[derive(Clone)]
    struct User(&'static str);
    let c = client(|app| {
        app.state(Config { name: "vireo" });
        app.r#use(|mut req: Request, next: Next| {
            req.set(User("ann"));
            next.run(req)
        });
        app.get("/", |req: Request| -> Result<String, Error> {
            Ok(format!(
                "{} {}",
                req.state::<Config>()?.name,
                req.get::<User>().unwrap().0
            ))
        });
        app.get("/missing", |req: Request| req.state::<String>().cloned());
    });
    assert_eq!(c.get("/").send().text(), "vireo ann");
    let res = c.get("/missing").send();
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert!(
        res.text().contains("alloc::string::String"),
        "{}",
        res.text()
    );
}

#[test]
fn state_fetched_at_registration_is_the_state_requests_see() {
    #[derive(Debug)]
    struct Config {
        name: &'static str,
    }
    let mut app = App::new();
    let missing = app.state_of::<Config>().unwrap_err();
    assert!(missing.to_string().contains("Config"), "{missing}");
    assert!(missing.type_name().ends_with("Config"));
    app.state(Config { name: "vireo" });
    let config = app.state_of::<Config>().unwrap();
    let seen = config.clone();
    app.get("/", move |req: Request| -> Result<String, Error> {
        let same = std::ptr::eq(&*seen, req.state::<Config>()?);
        Ok(format!("{} {same}", seen.name))
    });
    let client = TestClient::new(app);
    assert_eq!(client.get("/").send().text(), "vireo true");
    assert_eq!(config.name, "vireo");
    // One value: the app's, the handler's and this handle.
    assert_eq!(Arc::strong_count(config.arc()), 3);
}

#[test]
fn middleware_runs_in_order_can_answer_early_and_change_the_response() {
    let c = client(|app| {
        app.r#use(|req: Request, next: Next| async move {
            let mut res = next.run(req).await;
            res.headers_mut()
                .append("x-trace", "outer".parse().unwrap());
            res
        });
        app.r#use(|req: Request, next: Next| async move {
            if req.header("x-block").is_some() {
                return (StatusCode::FORBIDDEN, "blocked").into_response_helper();
            }
            let mut res = next.run(req).await;
            res.headers_mut()
                .append("x-trace", "inner".parse().unwrap());
            res
        });
        app.get("/", |_req| "handler");
        app.get("/route-mw", |req: Request| format!("{:?}", req.get::<u8>()))
            .with(|mut req: Request, next: Next| {
                req.set(7u8);
                next.run(req)
            });
    });
    let res = c.get("/").send();
    let trace: Vec<_> = res
        .headers()
        .get_all("x-trace")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(trace, ["inner", "outer"]);
    assert_eq!(res.text(), "handler");
    let res = c.get("/").header("x-block", "1").send();
    assert_eq!(
        (res.status(), res.text()),
        (StatusCode::FORBIDDEN, "blocked")
    );
    assert_eq!(c.get("/route-mw").send().text(), "Some(7)");
    let res = c.get("/missing").send();
    assert_eq!(res.status(), 404);
    assert_eq!(
        res.headers().get_all("x-trace").iter().count(),
        2,
        "app middleware sees 404s"
    );
}

trait IntoResponseHelper {
    fn into_response_helper(self) -> Response;
}
impl<T: vireo::IntoResponse> IntoResponseHelper for T {
    fn into_response_helper(self) -> Response {
        self.into_response()
    }
}

#[test]
fn router_middleware_applies_to_its_routes_only() {
    let mut admin = Router::new();
    admin.r#use(|req: Request, next: Next| async move {
        if req.header("authorization") == Some("let me in") {
            next.run(req).await
        } else {
            StatusCode::UNAUTHORIZED.into_response_helper()
        }
    });
    admin.get("/panel", |_req| "panel");
    let c = client(|app| {
        app.mount("/admin", admin);
        app.get("/public", |_req| "public");
    });
    assert_eq!(c.get("/admin/panel").send().status(), 401);
    assert_eq!(
        c.get("/admin/panel")
            .header("authorization", "let me in")
            .send()
            .text(),
        "panel"
    );
    assert_eq!(c.get("/public").send().text(), "public");
}

#[test]
fn the_error_handler_reshapes_every_error() {
    let c = client(|app| {
        app.post("/json", |req: Request| req.json::<Item>().map(Json));
        app.get("/fail", |_req| -> Result<&'static str, Error> {
            Err(Error::bad_request("nope"))
        });
        // An async handler's error reaches the handler after the reply was pending.
        app.get("/fail-later", |_req| async {
            tokio::task::yield_now().await;
            Err::<&'static str, Error>(Error::bad_request("later"))
        });
        app.on_error(|err| {
            (err.status(), Json(serde_json::json!({"error": err.message(), "rejection": format!("{:?}", err.as_rejection())})))
        });
    });
    let res = c.get("/missing").send();
    assert_eq!(
        res.text(),
        r#"{"error":"Not Found","rejection":"Some(NotFound)"}"#
    );
    assert_eq!(
        c.get("/fail").send().text(),
        r#"{"error":"nope","rejection":"None"}"#
    );
    assert_eq!(
        c.get("/fail-later").send().text(),
        r#"{"error":"later","rejection":"None"}"#
    );
    let res = c.post("/json").json(&serde_json::json!({"name": 1})).send();
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<serde_json::Value>()["rejection"],
        "Some(JsonShape)"
    );
}

#[test]
fn builtin_timeout_cors_request_id_and_compression() {
    let c = client(|app| {
        app.r#use(cors());
        app.r#use(request_id());
        app.r#use(compression());
        app.get("/slow", |_req| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            "late"
        })
        .with(timeout(Duration::from_millis(20)));
        app.get("/id", |req: Request| {
            req.get::<RequestId>().unwrap().0.clone()
        });
        app.get("/big", |_req| "compress me ".repeat(500));
        app.get("/small", |_req| "tiny");
    });
    let res = c.get("/slow").send();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.header("connection"), Some("close"));

    let res = c
        .request(Method::OPTIONS, "/id")
        .header("origin", "https://a.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "x-custom")
        .send();
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    assert_eq!(res.header("access-control-allow-headers"), Some("x-custom"));

    let a = c.get("/id").send();
    let b = c.get("/id").send();
    assert_ne!(a.text(), b.text(), "fresh ids are unique");
    assert_eq!(a.header("x-request-id"), Some(a.text()));
    let replaced = c.get("/id").header("x-request-id", "bad id!").send();
    assert!(
        !replaced.text().contains('!'),
        "an unsafe incoming id is replaced"
    );

    let res = c.get("/big").header("accept-encoding", "br, gzip").send();
    assert_eq!(res.header("content-encoding"), Some("br"));
    let mut plain = String::new();
    std::io::Read::read_to_string(
        &mut brotli::Decompressor::new(&res.bytes()[..], 4096),
        &mut plain,
    )
    .unwrap();
    assert_eq!(plain, "compress me ".repeat(500));
    let res = c.get("/big").header("accept-encoding", "gzip").send();
    let mut plain = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(&res.bytes()[..]),
        &mut plain,
    )
    .unwrap();
    assert_eq!(plain, "compress me ".repeat(500));
    assert_eq!(
        c.get("/small")
            .header("accept-encoding", "gzip")
            .send()
            .header("content-encoding"),
        None
    );
    assert_eq!(c.get("/big").send().header("content-encoding"), None);
}

#[test]
fn compression_leaves_partial_and_no_transform_responses_alone() {
    let c = client(|app| {
        app.r#use(compression());
        app.get("/part", |_req| {
            let mut res = vireo::Response::new(StatusCode::PARTIAL_CONTENT, "part ".repeat(500));
            res.headers_mut().insert(
                "content-range",
                http::HeaderValue::from_static("bytes 0-2499/10000"),
            );
            res
        });
        app.get("/no-transform", |_req| {
            let mut res = vireo::Response::new(StatusCode::OK, "keep ".repeat(500));
            res.headers_mut().insert(
                "cache-control",
                http::HeaderValue::from_static("public, No-Transform"),
            );
            res
        });
    });
    for path in ["/part", "/no-transform"] {
        let res = c.get(path).header("accept-encoding", "gzip, br").send();
        assert_eq!(res.header("content-encoding"), None, "{path}");
        assert_eq!(res.bytes().len(), 2500, "{path}");
    }
}

#[test]
fn streaming_and_sse() {
    let c = client(|app| {
        app.get("/iter", |_req| {
            vireo::stream_iter((0..3).map(|k| format!("chunk {k}\n")))
        });
        app.get("/sse", |_req| {
            vireo::Sse::from_iter([
                vireo::Event::new("a\nb").id("1"),
                vireo::Event::new("c").event("x"),
            ])
        });
    });
    assert_eq!(c.get("/iter").send().text(), "chunk 0\nchunk 1\nchunk 2\n");
    let res = c.get("/sse").send();
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        res.text(),
        "id: 1\ndata: a\ndata: b\n\nevent: x\ndata: c\n\n"
    );
}

#[test]
fn trailers_follow_a_streamed_body_and_can_depend_on_it() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    /// Counts the bytes of the chunks it passes on.
    struct Counted(std::vec::IntoIter<&'static str>, Arc<AtomicUsize>);
    impl futures_core::Stream for Counted {
        type Item = Result<&'static str, std::io::Error>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            let next = self.0.next();
            if let Some(chunk) = next {
                self.1.fetch_add(chunk.len(), Ordering::SeqCst);
            }
            std::task::Poll::Ready(next.map(Ok))
        }
    }
    let c = client(|app| {
        app.get("/t", |_req| {
            let sent = Arc::new(AtomicUsize::new(0));
            let counted = Counted(vec!["ab", "cde"].into_iter(), sent.clone());
            vireo::Body::stream_with_trailers(counted, async move {
                let mut trailers = vireo::http::HeaderMap::new();
                let total = sent.load(Ordering::SeqCst).to_string();
                trailers.insert("x-bytes", total.parse().unwrap());
                trailers
            })
        });
    });
    let res = c.get("/t").send();
    assert_eq!(res.text(), "abcde");
    assert_eq!(res.header("x-bytes"), None, "a trailer, not a header");
    assert_eq!(res.trailers().get("x-bytes").unwrap(), "5");
}

#[test]
fn static_files_precompressed_siblings_and_cache_control() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.js"), "plain").unwrap();
    std::fs::write(dir.path().join("app.js.gz"), "gzipped").unwrap();
    std::fs::write(dir.path().join("app.js.br"), "brotli").unwrap();
    std::fs::write(dir.path().join("only.txt"), "text").unwrap();
    std::fs::write(dir.path().join("pic.webp"), "img").unwrap();
    let root = dir.path().to_owned();
    let c = client(move |app| {
        app.get(
            "/s/*path",
            vireo::serve_dir(root)
                .precompressed()
                .cache_control("public, max-age=60"),
        );
    });
    let br = c
        .get("/s/app.js")
        .header("accept-encoding", "gzip, br")
        .send();
    assert_eq!(br.text(), "brotli");
    assert_eq!(br.header("content-encoding"), Some("br"));
    assert_eq!(
        br.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(br.header("vary"), Some("accept-encoding"));
    assert_eq!(br.header("cache-control"), Some("public, max-age=60"));
    let gz = c
        .get("/s/app.js")
        .header("accept-encoding", "br;q=0, gzip")
        .send();
    assert_eq!(gz.text(), "gzipped");
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_ne!(
        br.header("etag"),
        gz.header("etag"),
        "each encoding has its own tag"
    );
    // `*` stands only for codings not named: an explicit `br;q=0` still refuses br.
    let star = c
        .get("/s/app.js")
        .header("accept-encoding", "br;q=0, *")
        .send();
    assert_eq!(star.header("content-encoding"), Some("gzip"));
    let plain = c.get("/s/app.js").send();
    assert_eq!(plain.text(), "plain");
    assert_eq!(plain.header("content-encoding"), None);
    let no_sibling = c
        .get("/s/only.txt")
        .header("accept-encoding", "gzip")
        .send();
    assert_eq!(no_sibling.text(), "text");
    assert_eq!(no_sibling.header("content-encoding"), None);
    // Content types come from mime_guess, which knows far more than a short table.
    assert_eq!(
        c.get("/s/pic.webp").send().header("content-type"),
        Some("image/webp")
    );
}

#[test]
fn static_files_keep_symlinked_indexes_siblings_and_dotfiles_in() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "secret").unwrap();
    // A directory whose index, and a file whose precompressed sibling, lead out of the root.
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        dir.path().join("docs/index.html"),
    )
    .unwrap();
    std::fs::write(dir.path().join("app.js"), "plain").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("app.js.gz"))
        .unwrap();
    std::fs::write(dir.path().join(".env"), "SECRET=1").unwrap();
    std::fs::create_dir(dir.path().join(".well-known")).unwrap();
    std::fs::write(dir.path().join(".well-known/token"), "t").unwrap();
    let (root, shown) = (dir.path().to_owned(), dir.path().to_owned());
    let c = client(move |app| {
        app.get("/s/*path", vireo::serve_dir(root).precompressed());
        app.get("/dot/*path", vireo::serve_dir(shown).dotfiles());
        app.all("/any/*path", vireo::serve_dir("."));
    });
    assert_eq!(c.get("/s/docs/").send().status(), 404);
    let js = c.get("/s/app.js").header("accept-encoding", "gzip").send();
    assert_eq!((js.text(), js.header("content-encoding")), ("plain", None));
    assert_eq!(c.get("/s/.env").send().status(), 404);
    assert_eq!(c.get("/s/.well-known/token").send().status(), 404);
    assert_eq!(c.get("/dot/.well-known/token").send().text(), "t");
    let refused = c.request(Method::POST, "/any/x").send();
    assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(refused.header("allow"), Some("GET, HEAD"));
}

#[test]
fn static_files_with_validators_ranges_index_and_no_traversal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/index.html"), "<h1>docs</h1>").unwrap();
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("big.bin"), &big).unwrap();
    std::fs::write(dir.path().join("style.css"), "body{}").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
    let root = dir.path().to_owned();
    let c = client(move |app| {
        app.get("/s/*path", vireo::serve_dir(root));
    });
    let css = c.get("/s/style.css").send();
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    let etag = css.header("etag").unwrap().to_owned();
    let modified = css.header("last-modified").unwrap().to_owned();
    assert_eq!(
        c.get("/s/style.css")
            .header("if-none-match", &etag)
            .send()
            .status(),
        304
    );
    assert_eq!(
        c.get("/s/style.css")
            .header("if-modified-since", &modified)
            .send()
            .status(),
        304
    );
    let bare = c.get("/s/docs?x=1").send();
    assert_eq!(
        bare.status(),
        301,
        "a directory without its slash is redirected"
    );
    assert_eq!(bare.header("location"), Some("/s/docs/?x=1"));
    assert_eq!(c.get("/s/docs/").send().text(), "<h1>docs</h1>");
    assert_eq!(c.get("/s/big.bin").send().bytes().as_ref(), &big[..]);
    let part = c.get("/s/big.bin").header("range", "bytes=100-199").send();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.header("content-range"), Some("bytes 100-199/200000"));
    assert_eq!(part.bytes().as_ref(), &big[100..200]);
    let tail = c.get("/s/big.bin").header("range", "bytes=-5").send();
    assert_eq!(tail.bytes().as_ref(), &big[big.len() - 5..]);
    assert_eq!(
        c.get("/s/big.bin")
            .header("range", "bytes=300000-")
            .send()
            .status(),
        416
    );
    for evil in [
        "/s/../Cargo.toml",
        "/s/%2e%2e/%2e%2e/etc/passwd",
        "/s/docs/..%2f..%2fx",
        "/s/link",
        "/s/nope",
    ] {
        assert_eq!(c.get(evil).send().status(), StatusCode::NOT_FOUND, "{evil}");
    }
}

#[test]
fn dropping_the_test_client_frees_the_app_it_served() {
    let held = Arc::new(());
    let mut app = App::new();
    app.state(held.clone());
    let in_middleware = held.clone();
    app.r#use(move |req: Request, next: Next| {
        let _keep = &in_middleware;
        next.run(req)
    });
    app.get("/", |_req| "ok");
    let client = TestClient::new(app);
    assert_eq!(client.get("/").send().text(), "ok");
    assert_eq!(client.get("/").send().text(), "ok");
    assert_eq!(
        Arc::strong_count(&held),
        3,
        "the app holds its middleware and state"
    );
    drop(client);
    assert_eq!(
        Arc::strong_count(&held),
        1,
        "what the thread kept of the app went with the client"
    );
}

/// Header names are case-insensitive, so `set_header` takes them in any case; an invalid name
/// or value is an error to return (a 500 whose cause is logged), never a panic.
#[test]
fn set_header_takes_any_valid_name_and_refuses_invalid_ones() {
    let mut res = Response::new(StatusCode::OK, "x");
    res.set_header("X-Custom-Header", "one").unwrap();
    res.set_header("x-custom-header", "two").unwrap();
    assert_eq!(res.headers().get_all("x-custom-header").iter().count(), 1);
    assert_eq!(res.headers()["x-custom-header"], "two");
    res.set_header("Content-Type", "text/csv").unwrap();
    assert_eq!(res.headers()["content-type"], "text/csv");
    let name = String::from("X-Built-At-Run-Time");
    res.set_header(&name, "yes").unwrap();
    assert_eq!(res.headers()["x-built-at-run-time"], "yes");

    for (name, value) in [
        ("bad name", "v"),
        ("", "v"),
        ("x:y", "v"),
        ("caf\u{e9}", "v"),
        ("x-ok", "line\r\nInjected: 1"),
        ("x-ok", "nul\0"),
    ] {
        let error = res.set_header(name, value).unwrap_err();
        assert_eq!(
            error.status(),
            StatusCode::INTERNAL_SERVER_ERROR,
            "{name:?}"
        );
        assert!(
            error.source().is_some(),
            "{name:?}: the cause is kept for the log"
        );
    }
    assert!(res.headers().get("injected").is_none());

    // In a handler, `?` turns the error into the 500.
    let c = client(|app| {
        app.get("/h", |_req| -> Result<Response, Error> {
            let mut res = Response::new(StatusCode::OK, "fine");
            res.set_header("X-Upper", "1")?;
            Ok(res)
        });
        app.get("/bad", |_req| -> Result<Response, Error> {
            let mut res = Response::new(StatusCode::OK, "fine");
            res.set_header("Bad Name", "1")?;
            Ok(res)
        });
    });
    assert_eq!(c.get("/h").send().header("x-upper"), Some("1"));
    assert_eq!(
        c.get("/bad").send().status(),
        StatusCode::INTERNAL_SERVER_ERROR
    );
}

/// A cookie's value is data, never attributes: `;` and the rest are percent-encoded, and read
/// back decoded.
#[test]
fn cookie_values_cannot_add_attributes() {
    let evil = "x; Domain=evil.example; Path=/admin; Max-Age=99999";
    let c = client(|app| {
        app.get("/set", |_req| {
            let mut res = Response::new(StatusCode::OK, "set");
            res.set_cookie(&Cookie::new(
                "session",
                "x; Domain=evil.example; Path=/admin; Max-Age=99999",
            ))
            .expect("any value can be sent");
            res
        });
        app.get("/read", |req: Request| {
            format!("{:?}", req.cookie("session"))
        });
    });
    let res = c.get("/set").send();
    let set_cookie = res.header("set-cookie").expect("a Set-Cookie field");
    let mut parts = set_cookie.split("; ");
    let pair = parts.next().unwrap();
    assert_eq!(parts.collect::<Vec<_>>(), ["Path=/"], "{set_cookie}");
    assert!(pair.starts_with("session=x%3B"), "{set_cookie}");
    assert!(!pair[8..].contains([';', ' ', ',', '"']), "{set_cookie}");
    assert_eq!(
        c.get("/read").header("cookie", pair).send().text(),
        format!("Some({evil:?})")
    );
}

/// Attributes are checked too: one that would split the field is refused, not sent.
#[test]
fn cookie_attributes_that_would_inject_are_refused() {
    let mut res = Response::new(StatusCode::OK, "x");
    for cookie in [
        Cookie::new("a", "b").path("/; Domain=evil.example"),
        Cookie::new("a", "b").domain("example.com; HttpOnly"),
        Cookie::new("a", "b").path("/\r\nX-Injected: 1"),
        Cookie::new("", "b"),
    ] {
        let error = res.set_cookie(&cookie).unwrap_err();
        assert_eq!(
            error.status(),
            StatusCode::INTERNAL_SERVER_ERROR,
            "{cookie:?}"
        );
    }
    assert!(res.headers().get("set-cookie").is_none());
    // Names are encoded like values.
    res.set_cookie(&Cookie::new("my name;", "v")).unwrap();
    assert_eq!(res.headers()["set-cookie"], "my%20name%3B=v; Path=/");
}

/// Cookie values a client sends are decoded; quoted ones lose their quotes; malformed pairs
/// are skipped, not fatal.
#[test]
fn request_cookies_are_decoded() {
    let c = client(|app| {
        app.get("/c", |req: Request| {
            let all: Vec<String> = req.cookies().map(|(n, v)| format!("{n}={v}")).collect();
            all.join("|")
        });
    });
    let res = c
        .get("/c")
        .header(
            "cookie",
            "a=%3Bx%20y; b=\"quoted\"; novalue; =nameless; c=caf%C3%A9; d=%FF",
        )
        .send();
    assert_eq!(res.text(), "a=;x y|b=quoted|c=café");
}

fn cookie_app(key: vireo::Key) -> TestClient {
    client(move |app| {
        app.state(key);
        app.get("/set", |req: Request| -> Result<Response, Error> {
            let key = req.state::<vireo::Key>()?;
            let value = req.query_param("v").unwrap_or_default().into_owned();
            let mut res = Response::new(StatusCode::OK, "set");
            res.set_signed_cookie(key, &Cookie::new("signed", value.clone()).http_only())?;
            res.set_private_cookie(key, &Cookie::new("private", value.clone()))?;
            res.set_signed_cookie(key, &Cookie::new("other", value))?;
            Ok(res)
        });
        app.get("/get", |req: Request| -> Result<String, Error> {
            let key = req.state::<vireo::Key>()?;
            Ok(format!(
                "{:?} {:?}",
                req.signed_cookie(key, "signed"),
                req.private_cookie(key, "private")
            ))
        });
    })
}

/// The name=value pairs a response sets, in order.
fn set_cookie_pairs(res: &vireo::TestResponse) -> Vec<String> {
    res.headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .collect()
}

#[test]
fn signed_and_private_cookies_round_trip() {
    let c = cookie_app(vireo::Key::generate());
    let value = "ada; role=admin \"quoted\" café";
    let res = c
        .get("/set?v=ada%3B+role%3Dadmin+%22quoted%22+caf%C3%A9")
        .send();
    assert!(res.header("set-cookie").unwrap().contains("; HttpOnly"));
    let pairs = set_cookie_pairs(&res);
    let (signed, private) = (&pairs[0], &pairs[1]);
    assert!(signed.starts_with("signed="));
    // The private value cannot be read on the wire; the signed one can, encoded.
    assert!(!private.contains("ada"), "{private}");
    assert!(signed.contains("ada%3B%20role%3Dadmin"), "{signed}");

    let cookies = format!("{signed}; {private}");
    let got = c.get("/get").header("cookie", &cookies).send();
    assert_eq!(got.text(), format!("Some({value:?}) Some({value:?})"));

    // Another key reads neither.
    let other = cookie_app(vireo::Key::generate());
    let got = other.get("/get").header("cookie", &cookies).send();
    assert_eq!(got.text(), "None None");
}

#[test]
fn tampered_signed_and_private_cookies_are_rejected() {
    let c = cookie_app(vireo::Key::generate());
    let pairs = set_cookie_pairs(&c.get("/set?v=user").send());
    let (signed, private, other) = (&pairs[0], &pairs[1], &pairs[2]);
    let get = |cookie: &str| {
        c.get("/get")
            .header("cookie", cookie)
            .send()
            .text()
            .to_owned()
    };
    assert_eq!(
        get(&format!("{signed}; {private}")),
        r#"Some("user") Some("user")"#
    );

    // The value changed after the signature.
    let changed = signed.replace("user", "admin");
    assert_ne!(&changed, signed);
    assert_eq!(get(&changed), "None None");
    // The signature changed, one character at a time.
    let value_at = "signed=".len();
    for at in value_at..value_at + 44 {
        let mut bytes = signed.clone().into_bytes();
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        assert_eq!(get(&tampered), "None None", "{tampered}");
    }
    // Cut short, plain, or empty.
    assert_eq!(get(&signed[..signed.len() - 1]), "None None");
    assert_eq!(get("signed=user"), "None None");
    assert_eq!(get("signed="), "None None");
    // A value signed for another cookie name does not pass for this one.
    assert_eq!(get(&other.replacen("other=", "signed=", 1)), "None None");
    // Private: changed ciphertext, or moved to another name.
    let mut bytes = private.clone().into_bytes();
    let near_end = bytes.len() - 3;
    bytes[near_end] = if bytes[near_end] == b'A' { b'B' } else { b'A' };
    let changed = String::from_utf8(bytes).unwrap();
    assert_eq!(get(&format!("{changed}; {signed}")), r#"Some("user") None"#);
    let moved = private.replacen("private=", "signed=", 1);
    assert_eq!(get(&moved), "None None");
    // A forged cookie of the same name before the genuine one does not hide it.
    assert_eq!(
        get(&format!("signed=forged; {signed}")),
        r#"Some("user") None"#
    );
}

#[test]
#[should_panic(expected = "a prefix is literal")]
fn a_mount_prefix_with_a_parameter_is_refused_at_setup() {
    let mut app = App::new();
    let mut users = vireo::Router::new();
    users.get("/", |_req| "user");
    app.mount("/users/:id", users);
}

#[test]
fn cors_says_vary_origin_whenever_its_answer_depends_on_it() {
    let c = client(|app| {
        app.r#use(cors().allow_origins(["https://a.example"]));
        app.get("/data", |_req| "data");
    });
    let allowed = c.get("/data").header("origin", "https://a.example").send();
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://a.example")
    );
    // Refused, or without Origin at all: no grant, but the answer still varies by Origin.
    for res in [
        c.get("/data").header("origin", "https://b.example").send(),
        c.get("/data").send(),
    ] {
        assert_eq!(res.header("access-control-allow-origin"), None);
        assert_eq!(res.header("vary"), Some("origin"));
    }
}

#[test]
fn cors_never_grants_credentials_to_the_null_origin() {
    let c = client(|app| {
        app.r#use(cors().allow_credentials());
        app.get("/me", |_req| "me");
    });
    let site = c.get("/me").header("origin", "https://a.example").send();
    assert_eq!(
        site.header("access-control-allow-origin"),
        Some("https://a.example")
    );
    let opaque = c.get("/me").header("origin", "null").send();
    assert_eq!(opaque.header("access-control-allow-origin"), None);
    assert_eq!(opaque.header("access-control-allow-credentials"), None);
}
