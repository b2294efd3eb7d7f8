//! Liveness and readiness endpoints, for load balancers and orchestrators.
//!
//! ```no_run
//! use std::time::Duration;
//! let mut app = vireo::App::new();
//! app.get("/healthz", vireo::health::liveness);
//! app.get("/readyz", vireo::health::readiness);
//! // Keep serving for 5 s after SIGTERM with /readyz at 503, then drain.
//! let server = vireo::Server::bind("0.0.0.0:8080")?.drain_delay(Duration::from_secs(5));
//! app.serve(server)
//! # ; Ok::<(), std::io::Error>(())
//! ```

use crate::Request;
use vireo_http::http::StatusCode;
use vireo_http::ShutdownHandle;

/// What an app knows of the server it is served on, kept in the app's state.
pub(crate) struct Serving {
    pub(crate) shutdown: ShutdownHandle,
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) stats: vireo_http::ServerStats,
}

impl Serving {
    pub(crate) fn of(server: &vireo_http::Server) -> Self {
        Serving {
            shutdown: server.shutdown_handle(),
            stats: server.stats(),
        }
    }
}

/// `200 ok` while the process can serve at all: a liveness probe.
pub fn liveness(_req: Request) -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok")
}

/// `200 ready`, or `503 shutting down` from the moment a graceful shutdown of the server that
/// serves the app is requested (SIGTERM, SIGINT or its handle), so a load balancer stops
/// sending before connections drain. With [`Server::drain_delay`](crate::Server::drain_delay)
/// the server goes on serving during that time. An app not served by a server (the test
/// client) is always ready.
pub fn readiness(req: Request) -> (StatusCode, &'static str) {
    match req.state::<Serving>() {
        Ok(serving) if serving.shutdown.is_requested() => {
            (StatusCode::SERVICE_UNAVAILABLE, "shutting down")
        }
        _ => (StatusCode::OK, "ready"),
    }
}
