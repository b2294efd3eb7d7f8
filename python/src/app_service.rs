//! An ASGI or WSGI application as the engine's service, with `vireo serve`'s per-request
//! options: the concurrency limit and the access log.

use crate::asgi_config::{AppConfig, Interface};
use crate::{asgi_service, wsgi_service};
use pyo3::prelude::*;
use std::sync::Arc;
use vireo_http::http::StatusCode;
use vireo_http::{ContentType, Response, Service};

pub(crate) struct AppService(pub Arc<AppConfig>);

impl Service for AppService {
    async fn call(&self, req: vireo_http::Request<'_>) -> Response {
        let config = &self.0;
        let (running, before) = config.running.start();
        if config
            .limit_concurrency
            .is_some_and(|limit| before >= limit)
        {
            return Response::typed(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable",
                ContentType::Text,
            );
        }
        // Held here until the answer is made, and by an ASGI app's task until it ends.
        let running = Arc::new(running);
        let access = config.access_log.as_ref().map(|_| {
            let head = req.head();
            (
                req.remote_addr().map(|a| a.to_string()),
                head.method().as_str().to_owned(),
                head.path_and_query().to_owned(),
                crate::asgi_scope::http_version(head),
            )
        });
        let res = match config.interface {
            Interface::Asgi => asgi_service::serve(config, req, &running).await,
            Interface::Wsgi => wsgi_service::serve(config, req).await,
        };
        drop(running);
        if let (Some(log), Some((client, method, path, version))) = (&config.access_log, access) {
            let status = res.status().as_u16();
            Python::attach(|py| {
                if let Err(e) = log.call1(py, (client, method, path, version, status)) {
                    e.print(py);
                }
            });
        }
        res
    }

    /// Once the connections are closed: the ASGI apps' tasks that outlived their answers
    /// (background tasks, a stream the client left) get to end.
    async fn drained(&self) {
        self.0.running.all_ended().await;
    }
}
