//! actix-web peer: the benchmark routes on one worker thread.
use std::time::Duration;

use actix_web::{dev::Service, web, App, HttpMessage, HttpRequest, HttpResponse, HttpServer};
use serde::{Deserialize, Serialize};

/// Marks stored on the request by the two middlewares; the /users handler reads both.
#[derive(Clone)]
struct One(bool);
#[derive(Clone)]
struct Two(bool);

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Deserialize)]
struct Wait {
    ms: Option<u64>,
}

async fn hello() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("Hello, World!")
}

async fn json() -> HttpResponse {
    HttpResponse::Ok().json(Message { message: "Hello, World!" })
}

async fn user(req: HttpRequest, id: web::Path<String>) -> HttpResponse {
    let ext = req.extensions();
    match (ext.get::<One>(), ext.get::<Two>()) {
        (Some(One(true)), Some(Two(true))) => {
            HttpResponse::Ok().content_type("text/plain").body(format!("User: {id}"))
        }
        _ => HttpResponse::InternalServerError().finish(),
    }
}

async fn favicon() -> HttpResponse {
    HttpResponse::NoContent().finish()
}

async fn compute() -> HttpResponse {
    // black_box keeps LLVM from folding the loop into a constant at compile time.
    let n = std::hint::black_box(1000u64);
    let sum: u64 = (0..n).map(|i| i * i).sum();
    HttpResponse::Ok().content_type("text/plain").body(sum.to_string())
}

async fn wait(q: web::Query<Wait>) -> HttpResponse {
    let ms = q.ms.unwrap_or(0);
    actix_web::rt::time::sleep(Duration::from_millis(ms)).await;
    HttpResponse::Ok().content_type("text/plain").body(format!("waited {ms}"))
}

fn port() -> u16 {
    std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    HttpServer::new(|| {
        App::new()
            .wrap_fn(|req, srv| {
                req.extensions_mut().insert(One(true));
                srv.call(req)
            })
            .wrap_fn(|req, srv| {
                req.extensions_mut().insert(Two(true));
                srv.call(req)
            })
            .route("/", web::get().to(hello))
            .route("/json", web::get().to(json))
            .route("/users/{id}", web::get().to(user))
            .route("/favicon.ico", web::get().to(favicon))
            .route("/compute", web::get().to(compute))
            .route("/async", web::get().to(wait))
    })
    .workers(1)
    .bind(("127.0.0.1", port()))?
    .run()
    .await
}
