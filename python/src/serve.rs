//! Serving over TCP: a listening socket bound once, before worker processes fork, and served
//! by the engine with one worker thread in each process.

use crate::app::AppCore;
use crate::app_service::AppService;
use crate::asgi_config::{AsgiApp, Interface};
use crate::dispatch::PyService;
use crate::tls_files::{TlsFiles, TlsPolicy};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use vireo_http::tls::TlsHandle;
use vireo_http::{Limits, Server, ShutdownHandle};

/// A bound listening socket (SO_REUSEADDR, backlog 4096). A forked worker inherits it and
/// serves it; the parent never does.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Listener {
    server: Mutex<Option<Server>>,
    handle: ShutdownHandle,
    /// With TLS: the live configuration and the files to read it from again.
    tls: Mutex<Option<(TlsHandle, Arc<TlsFiles>)>>,
    #[pyo3(get)]
    host: String,
    #[pyo3(get)]
    port: u16,
}

impl Listener {
    fn take(&self) -> PyResult<Server> {
        self.server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this listener is already served"))
    }
}

fn seconds(secs: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(secs)
        .map_err(|e| PyValueError::new_err(format!("invalid duration {secs}: {e}")))
}

#[pymethods]
impl Listener {
    #[new]
    fn new(host: &str, port: u16) -> PyResult<Self> {
        let server = Server::bind((host, port)).map_err(PyOSError::new_err)?;
        let addr = server.local_addr().map_err(PyOSError::new_err)?;
        Ok(Listener {
            handle: server.shutdown_handle(),
            server: Mutex::new(Some(server)),
            tls: Mutex::new(None),
            host: addr.ip().to_string(),
            port: addr.port(),
        })
    }

    /// A Unix domain socket at `path` (`host` is the path, `port` 0).
    #[staticmethod]
    fn unix(path: &str) -> PyResult<Self> {
        let server = Server::bind_unix(path).map_err(PyOSError::new_err)?;
        Ok(Listener {
            handle: server.shutdown_handle(),
            server: Mutex::new(Some(server)),
            tls: Mutex::new(None),
            host: path.to_owned(),
            port: 0,
        })
    }

    /// Serve HTTPS on this socket from now on, with the PEM certificate chain and private key
    /// in these files (the key encrypted with `password`, if given): TLS 1.2 and 1.3, ALPN
    /// offering `h2` and `http/1.1`. `cert_reqs` asks clients for a certificate signed by an
    /// authority in `ca_certs`, as Python's `ssl` does: 0 never, 1 optional, 2 required, and
    /// not revoked by a list in the `crls` files. `versions` ("1.2", "1.3") and `ciphers`
    /// (suite names) offer fewer than the defaults. Read here, before any worker forks, so a
    /// bad file or name is an error at start-up; read again on SIGHUP, when the worker handles
    /// signals, to renew the certificate (and the lists) without a restart.
    #[pyo3(signature = (certfile, keyfile, password=None, ca_certs=None, cert_reqs=0,
        crls=Vec::new(), versions=Vec::new(), ciphers=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn use_tls(
        &self,
        certfile: String,
        keyfile: String,
        password: Option<String>,
        ca_certs: Option<String>,
        cert_reqs: u8,
        crls: Vec<String>,
        versions: Vec<String>,
        ciphers: Vec<String>,
    ) -> PyResult<()> {
        let policy = TlsPolicy {
            crls,
            versions,
            cipher_suites: ciphers,
        };
        let files = TlsFiles::new(certfile, keyfile, password, ca_certs, cert_reqs, policy)?;
        let config = files
            .load()
            .map_err(|e| PyValueError::new_err(format!("TLS: {e}")))?;
        let files = Arc::new(files);
        let on_hangup = files.clone();
        let server = self
            .take()?
            .tls(config)
            .reload_tls_on_sighup(move || on_hangup.reload());
        let handle = server.tls_handle().expect("TLS was just set");
        *self.tls.lock().unwrap_or_else(|e| e.into_inner()) = Some((handle, files));
        *self.server.lock().unwrap_or_else(|e| e.into_inner()) = Some(server);
        Ok(())
    }

    /// Read the TLS files again and serve what they hold from the next handshake on, as on
    /// SIGHUP (the supervisor calls it, so that workers it forks later start with the new
    /// certificate). Logs how it went; whether it reloaded (`False` without TLS).
    fn reload_tls(&self, py: Python<'_>) -> bool {
        let Some((handle, files)) = self.tls.lock().unwrap_or_else(|e| e.into_inner()).clone()
        else {
            return false;
        };
        match py.detach(|| files.reload()) {
            Ok(config) => {
                handle.reload(config);
                true
            }
            Err(_) => false,
        }
    }

    /// Serve `app` (a Vireo app's `AppCore`, or an ASGI or WSGI application's `AsgiApp`) on
    /// this socket until a graceful shutdown (SIGTERM or SIGINT when `handle_signals`, or
    /// `shutdown()`), then return. `on_ready(address)` is called once the worker accepts. The
    /// GIL is released throughout; handlers attach as they run. The engine's keep-alive and
    /// graceful-shutdown timeouts (seconds), body limit and blocking pool size are its
    /// defaults unless given. `batch_threads` runs the blocking pool's threads under
    /// `SCHED_BATCH` (the engine's `batch_blocking_threads`); by default, for a WSGI app only.
    #[pyo3(signature = (app, on_ready, handle_signals=true, keep_alive_timeout=None,
        shutdown_timeout=None, max_body_size=None, blocking_threads=None, batch_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn serve(
        &self,
        py: Python<'_>,
        app: &Bound<'_, PyAny>,
        on_ready: Py<PyAny>,
        handle_signals: bool,
        keep_alive_timeout: Option<f64>,
        shutdown_timeout: Option<f64>,
        max_body_size: Option<u64>,
        blocking_threads: Option<usize>,
        batch_threads: Option<bool>,
    ) -> PyResult<()> {
        let options = EngineOptions {
            keep_alive_timeout,
            shutdown_timeout,
            max_body_size,
            blocking_threads,
        };
        if let Ok(core) = app.cast::<AppCore>() {
            let service = PyService(core.get().inner.clone());
            let server = options
                .apply(self.take()?)?
                .batch_blocking_threads(batch_threads.unwrap_or(false));
            return serve_one_worker(py, server, service, on_ready, handle_signals);
        }
        let Ok(gateway) = app.cast::<AsgiApp>() else {
            return Err(PyTypeError::new_err(format!(
                "serve takes an AppCore or an AsgiApp, not {}",
                app.get_type().name()?
            )));
        };
        let config = gateway.get().config.clone();
        // A WSGI app runs on the blocking pool, its threads taking turns at the GIL: threads
        // that do not preempt the worker or each other switch far less often.
        let wsgi = matches!(config.interface, Interface::Wsgi);
        let server = options
            .apply(self.take()?)?
            .batch_blocking_threads(batch_threads.unwrap_or(wsgi));
        serve_one_worker(py, server, AppService(config), on_ready, handle_signals)
    }

    /// Start a graceful shutdown of `serve`.
    fn shutdown(&self) {
        self.handle.shutdown();
    }

    /// Close the socket in a process that will not serve it (the supervising parent).
    fn close(&self) {
        self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// The engine settings `serve` takes; each left at the engine's default
/// when not given.
struct EngineOptions {
    keep_alive_timeout: Option<f64>,
    shutdown_timeout: Option<f64>,
    max_body_size: Option<u64>,
    blocking_threads: Option<usize>,
}

impl EngineOptions {
    fn apply(self, server: Server) -> PyResult<Server> {
        let mut limits = Limits::default();
        if let Some(bytes) = self.max_body_size {
            limits.max_body_size = bytes;
        }
        if let Some(secs) = self.keep_alive_timeout {
            limits.keep_alive_timeout = seconds(secs)?;
        }
        // Refused here, as a `ValueError`, rather than when the server starts.
        limits
            .check()
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        let mut server = server.limits(limits);
        if let Some(secs) = self.shutdown_timeout {
            server = server.shutdown_timeout(seconds(secs)?);
        }
        if let Some(threads) = self.blocking_threads {
            if threads == 0 {
                return Err(PyValueError::new_err("blocking_threads must be at least 1"));
            }
            server = server.max_blocking_threads(threads);
        }
        Ok(server)
    }
}

/// Serve `service` with one worker thread until a graceful shutdown, calling `on_ready(address)`
/// once it accepts. The GIL is released throughout.
fn serve_one_worker<S: vireo_http::Service>(
    py: Python<'_>,
    server: Server,
    service: S,
    on_ready: Py<PyAny>,
    handle_signals: bool,
) -> PyResult<()> {
    // As uvicorn: a client that closes its side is gone. An ASGI app hears `http.disconnect`,
    // and a streamed response waiting on its producer stops.
    let server = server
        .workers(1)
        .half_close(false)
        .handle_signals(handle_signals)
        .on_ready(move |addr| {
            Python::attach(|py| {
                if let Err(e) = on_ready.call1(py, (addr.to_string(),)) {
                    e.print(py);
                }
            })
        });
    py.detach(move || server.serve(service))
        .map_err(PyOSError::new_err)
}
